"""The typed MLIR builders of attnfuse/mlir.py on their own: attn.sdpa's
attributes (`SdpaAttrs`, the one place that spells them), the attn op that
defined a value (`Value.defn`, what ops/views.py writes again in another
layout), and the region code of `Body`."""

import pytest
import torch

from attnfuse.errors import ToolError
from attnfuse.mlir import (INDEX, AttnDef, Body, FunctionBuilder, SdpaAttrs,
                           TensorType, Value)
from attnfuse.tools import find_tool, run_tool

F32 = torch.float32
QKV = TensorType((1, 2, 4, 8), F32)
MASK = TensorType((1, 1, 4, 4), torch.bool)

EVERY_ATTRIBUTE = SdpaAttrs(scale=0.125, is_causal=True, window_left=3,
                            window_right=2, dropout_p=0.1, seed=4,
                            safe_softmax=True, masked_value=-1e4,
                            mask_polarity="drop")


def test_sdpa_attrs_spelling():
    assert SdpaAttrs().to_mlir() == []
    assert EVERY_ATTRIBUTE.to_mlir() == [
        "scale = 0x3FC0000000000000 : f64", "is_causal = true",
        "window_right = 2 : i64", "window_left = 3 : i64",
        "dropout_p = 0x3FB999999999999A : f64", "seed = 4 : i64",
        "safe_softmax = true", "masked_value = 0xC0C3880000000000 : f64",
        "mask_polarity = #attn.mask_polarity<drop>"]
    # Left out at their defaults; a zero window and a zero seed are not.
    assert SdpaAttrs(scale=1.0, dropout_p=0.0, window_left=0,
                     seed=0).to_mlir() == [
        "scale = 0x3FF0000000000000 : f64", "window_left = 0 : i64",
        "seed = 0 : i64"]
    with pytest.raises(ValueError, match="mask_polarity"):
        SdpaAttrs(mask_polarity="true")


def _function(b: FunctionBuilder, args, result: Value) -> str:
    params = ", ".join(f"{a.name}: {a.type}" for a in args)
    body = "\n".join(b.lines)
    return (f"module {{\n  func.func @f({params}) -> {result.type} {{\n"
            f"{body}\n    return {result.name} : {result.type}\n  }}\n}}\n")


def test_sdpa_attrs_parse():
    """attn-opt reads every attribute as written, with the meaning given."""
    try:
        find_tool("attn-opt")
    except ToolError as e:
        pytest.skip(str(e))
    q, k, v = (Value(f"%arg{i}", QKV) for i in range(3))
    mask = Value("%arg3", MASK)
    b = FunctionBuilder()
    out = b.sdpa(q, k, v, mask, QKV, EVERY_ATTRIBUTE)
    text = run_tool("attn-opt", ["-"],
                    input_text=_function(b, [q, k, v, mask], out)).stdout
    for attr in ("dropout_p = 1.000000e-01 : f64", "is_causal = true",
                 "mask_polarity = #attn.mask_polarity<drop>",
                 "masked_value = -1.000000e+04 : f64",
                 "safe_softmax = true", "scale = 1.250000e-01 : f64",
                 "seed = 4 : i64", "window_left = 3 : i64",
                 "window_right = 2 : i64"):
        assert attr in text


def test_attn_results_carry_their_op():
    b = FunctionBuilder()
    x = Value("%arg0", TensorType((4, 4), F32))
    i = b.iota(1, TensorType((4, 4), torch.int64))
    assert i.defn == AttnDef("iota", dimension=1)
    y = b.attn("mul", [x, x], x.type, ["foo = 1 : i64"])
    assert y.defn == AttnDef("mul", (x, x), ("foo = 1 : i64",))
    s = b.sdpa(Value("%q", QKV), Value("%k", QKV), Value("%v", QKV), None,
               QKV, SdpaAttrs(scale=0.5))
    assert s.defn.op == "sdpa" and len(s.defn.operands) == 3
    assert s.defn.attrs == ("scale = 0x3FE0000000000000 : f64",)
    # Other ops and arguments have none; the op is not part of a value's
    # identity.
    assert x.defn is None and b.copy(x).defn is None
    assert y == Value(y.name, y.type) and hash(y) == hash(Value(y.name,
                                                                y.type))
    assert repr(y) == repr(Value(y.name, y.type))


def test_body_scalars():
    b = Body()
    t = Value("%arg0", TensorType((3, 5), F32))
    n = b.dim(t, 1)
    nan = b.isnan(b.constant(0.0, F32))
    assert n.dtype == INDEX and nan.dtype == torch.bool
    assert b.lines == [
        "%s1 = arith.constant 1 : index",
        "%s2 = tensor.dim %arg0, %s1 : tensor<3x5xf32>",
        "%s3 = arith.constant 0x00000000 : f32",
        "%s4 = arith.cmpf uno, %s3, %s3 : f32"]
