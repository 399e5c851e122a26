"""Elementwise arithmetic, activations and dtype conversions.

Float arithmetic on tensors becomes attn ops (`attn.add`, `attn.mul`,
`attn.tanh`, ...), which the fusion can raise into score_mod regions; other
float functions (sin, rsqrt, gelu, silu, ...) become a linalg.generic that
computes in PyTorch's opmath type (f32 for f16/bf16) and rounds once, as
PyTorch's CPU kernels do. Integer arithmetic is a linalg.generic of arith
integer ops. The result dtype is the one PyTorch inferred (type promotion
included); operands are converted to it, Python scalars and 0-d constants
taking part at compute precision in mul and div (add and sub round them to
the result type first, as PyTorch's CPU kernels do)."""

from __future__ import annotations

import math

import torch

from .. import mlir
from ..mlir import TensorType, Value
from . import positions
from .masks import (constant_band_select, distribute_additive_select,
                    predicate_of_select)
from .registry import handles

aten = torch.ops.aten


# ---- binary ---------------------------------------------------------------
_INT_OPS = {"add": "addi", "sub": "subi", "mul": "muli",
            "maximum": "maxsi", "minimum": "minsi"}
# PyTorch's bool arithmetic: + and max are or, * and min are and.
_BOOL_OPS = {"add": "ori", "maximum": "ori", "mul": "andi", "minimum": "andi"}


def binary(ex, op: str, lhs, rhs, out: TensorType | None = None) -> Value:
    """lhs <op> rhs with PyTorch's promotion: an attn op on floats, a
    generic of arith integer ops otherwise."""
    out = out or ex.out_type()
    if mlir.is_float(out.dtype):
        if op in ("add", "sub"):
            # PyTorch's CPU add and sub round a scalar operand to the
            # result type first (the iterator's promotion); mul and div
            # read it at compute precision.
            a, b = ex.tensor(lhs, out.dtype), ex.tensor(rhs, out.dtype)
        else:
            a = ex.scalar_operand(lhs, out.dtype)
            b = ex.scalar_operand(rhs, out.dtype)
        if mlir.attn_result_dtype([a.type, b.type]) == out.dtype:
            return ex.b.attn(op, [a, b], out)
        # Rank-0 operands only, the first at compute precision (`0.5 * x`,
        # x a 0-d bf16 tensor): the op would take that type. It computes
        # there and rounds once to PyTorch's type, as PyTorch does.
        wide = mlir.opmath(out.dtype)
        result = ex.b.attn(op, [ex.convert(a, wide), ex.convert(b, wide)],
                           out.with_dtype(wide))
        return ex.convert(result, out.dtype)
    if out.dtype == torch.bool and op in _BOOL_OPS:
        iop = _BOOL_OPS[op]
    elif op in _INT_OPS:
        iop = _INT_OPS[op]
    else:
        ex.unsupported(f"{op} on {out.dtype}")
    a, b = ex.tensor(lhs, out.dtype), ex.tensor(rhs, out.dtype)
    result = ex.map([a, b], out, lambda body, x, y: body.arith(iop, x, y))
    positions.binary(ex, op, lhs, rhs, result)
    return result


def _scaled(ex, x, alpha):
    if alpha == 1:
        return x
    if ex.is_scalar(x):
        return ex.concrete(x) * alpha
    v = ex.tensor(x)
    return binary(ex, "mul", v, alpha, v.type.with_dtype(ex.out_type().dtype))


@handles(aten.add.Tensor, aten.add.Scalar)
def add(ex, lhs, rhs, alpha=1):
    rhs = _scaled(ex, rhs, alpha)
    distributed = distribute_additive_select(ex, lhs, rhs)
    if distributed is not None:
        return distributed
    # A constant causal mask added to run-time scores or biases.
    if isinstance(lhs, Value) != isinstance(rhs, Value):
        lhs = constant_band_select(ex, lhs) or lhs
        rhs = constant_band_select(ex, rhs) or rhs
    return binary(ex, "add", lhs, rhs)


@handles(aten.sub.Tensor, aten.sub.Scalar)
def sub(ex, lhs, rhs, alpha=1):
    return binary(ex, "sub", lhs, _scaled(ex, rhs, alpha))


@handles(aten.rsub.Scalar, aten.rsub.Tensor)
def rsub(ex, x, other, alpha=1):
    return binary(ex, "sub", other, _scaled(ex, x, alpha))


@handles(aten.mul.Tensor, aten.mul.Scalar)
def mul(ex, lhs, rhs):
    return binary(ex, "mul", lhs, rhs)


@handles(aten.maximum.default)
def maximum(ex, lhs, rhs):
    return binary(ex, "maximum", lhs, rhs)


@handles(aten.minimum.default)
def minimum(ex, lhs, rhs):
    return binary(ex, "minimum", lhs, rhs)


@handles(aten.div.Tensor, aten.div.Scalar, aten.div.Tensor_mode,
         aten.div.Scalar_mode)
def div(ex, lhs, rhs, rounding_mode=None):
    out = ex.out_type()
    if rounding_mode is None:
        if not mlir.is_float(out.dtype):
            ex.unsupported(f"true division to {out.dtype}")
        return binary(ex, "div", lhs, rhs, out)
    if rounding_mode not in ("floor", "trunc"):
        ex.unsupported(f"div with rounding_mode={rounding_mode!r}")
    a, b = ex.tensor(lhs, out.dtype), ex.tensor(rhs, out.dtype)
    if mlir.is_float(out.dtype):
        fn = "floor" if rounding_mode == "floor" else "trunc"

        def body(bd, x, y):
            w = mlir.opmath(out.dtype)
            q = bd.arith("divf", bd.convert(x, w), bd.convert(y, w))
            return bd.convert(bd.math(fn, q), out.dtype)
    else:
        op = "floordivsi" if rounding_mode == "floor" else "divsi"

        def body(bd, x, y):
            return bd.arith(op, x, _checked_divisor(bd, x, y, out.dtype))
    return ex.map([a, b], out, body)


def _checked_divisor(bd, x, y, dtype):
    """The divisor of an integer division or remainder, checked as eager
    PyTorch does: a zero divisor is an error (RunTimeCheckError, a
    RuntimeError as eager's "ZeroDivisionError"); the one signed overflow,
    the type's minimum divided by -1, divides by 1 instead, which gives
    eager's results (the minimum, and remainder 0) without the trap."""
    zero = bd.constant(0, dtype)
    bd.check(bd.cmp("ne", y, zero), "ZeroDivisionError: integer division "
             "or remainder by zero")
    if dtype in mlir.UNSIGNED:
        return y
    lowest = bd.constant(torch.iinfo(dtype).min, dtype)
    overflow = bd.arith("andi", bd.cmp("eq", x, lowest),
                        bd.cmp("eq", y, bd.constant(-1, dtype)))
    return bd.select(overflow, bd.constant(1, dtype), y)


@handles(aten.remainder.Scalar, aten.remainder.Tensor)
def remainder(ex, lhs, rhs):
    out = ex.out_type()
    if mlir.is_float(out.dtype):
        ex.unsupported("float remainder")
    a, b = ex.tensor(lhs, out.dtype), ex.tensor(rhs, out.dtype)

    def body(bd, x, y):
        # Python's modulo: the sign of the divisor.
        y = _checked_divisor(bd, x, y, out.dtype)
        r = bd.arith("remsi", x, y)
        zero = bd.constant(0, out.dtype)
        fix = bd.arith("andi", bd.cmp("ne", r, zero),
                       bd.cmp("ne", bd.cmp("lt", r, zero),
                              bd.cmp("lt", y, zero)))
        return bd.select(fix, bd.arith("addi", r, y), r)
    return ex.map([a, b], out, body)


# ---- unary ----------------------------------------------------------------
def unary_float(ex, x, fn) -> Value:
    """fn(body, element in opmath) -> opmath scalar, rounded once to the
    result dtype (PyTorch's CPU unary kernels)."""
    out = ex.out_type()
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"on {out.dtype}")
    x = ex.tensor(x, out.dtype)
    wide = mlir.opmath(out.dtype)
    return ex.map([x], out, lambda b, a: b.convert(fn(b, b.convert(a, wide)),
                                                   out.dtype))


def _attn_unary(name):
    def handler(ex, x):
        out = ex.out_type()
        if not mlir.is_float(out.dtype):
            ex.unsupported(f"{name} on {out.dtype}")
        return ex.b.attn(name, [ex.tensor(x, out.dtype)], out)
    return handler


handles(aten.tanh.default)(_attn_unary("tanh"))
handles(aten.exp.default)(_attn_unary("exp"))


@handles(aten.neg.default)
def neg(ex, x):
    out = ex.out_type()
    if mlir.is_float(out.dtype):
        return ex.b.attn("neg", [ex.tensor(x)], out)
    result = ex.map([ex.tensor(x)], out, lambda b, a: b.arith(
        "subi", b.constant(0, out.dtype), a))
    positions.negate(ex, x, result)
    return result


@handles(aten.abs.default)
def abs_(ex, x):
    out = ex.out_type()
    if mlir.is_float(out.dtype):
        return ex.b.attn("abs", [ex.tensor(x)], out)
    return ex.map([ex.tensor(x)], out, lambda b, a: b.math("absi", a))


def _math(fn):
    return lambda ex, x: unary_float(ex, x, lambda b, a: b.math(fn, a))


for _op, _fn in ((aten.sin.default, "sin"), (aten.cos.default, "cos"),
                 (aten.sqrt.default, "sqrt"), (aten.rsqrt.default, "rsqrt"),
                 (aten.log.default, "log"), (aten.log1p.default, "log1p"),
                 (aten.expm1.default, "expm1"), (aten.erf.default, "erf"),
                 (aten.floor.default, "floor"), (aten.ceil.default, "ceil"),
                 (aten.exp2.default, "exp2"), (aten.log2.default, "log2")):
    handles(_op)(_math(_fn))


@handles(aten.reciprocal.default)
def reciprocal(ex, x):
    return unary_float(ex, x, lambda b, a: b.arith(
        "divf", b.constant(1.0, a.dtype), a))


def _sigmoid(b, a):
    one = b.constant(1.0, a.dtype)
    e = b.math("exp", b.negf(a))
    return b.arith("divf", one, b.arith("addf", one, e))


@handles(aten.sigmoid.default)
def sigmoid(ex, x):
    return unary_float(ex, x, _sigmoid)


@handles(aten.silu.default)
def silu(ex, x):
    # PyTorch: x / (1 + exp(-x)).
    def fn(b, a):
        one = b.constant(1.0, a.dtype)
        return b.arith("divf", a, b.arith("addf", one, b.math("exp",
                                                              b.negf(a))))
    return unary_float(ex, x, fn)


@handles(aten.relu.default)
def relu(ex, x):
    out = ex.out_type()
    if not mlir.is_float(out.dtype):
        return ex.map([ex.tensor(x)], out, lambda b, a: b.arith(
            "maxsi", a, b.constant(0, out.dtype)))
    # maximumf propagates NaN, as torch.relu does.
    return unary_float(ex, x, lambda b, a: b.arith(
        "maximumf", a, b.constant(0.0, a.dtype)))


@handles(aten.gelu.default)
def gelu(ex, x, approximate="none"):
    """PyTorch's CPU formulas: x/2 (1 + erf(x/sqrt 2)), or with
    approximate='tanh' x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    def exact(b, a):
        half = b.constant(0.5, a.dtype)
        one = b.constant(1.0, a.dtype)
        inner = b.math("erf", b.arith("mulf", a, b.constant(
            1.0 / math.sqrt(2.0), a.dtype)))
        return b.arith("mulf", b.arith("mulf", a, half),
                       b.arith("addf", one, inner))

    def tanh(b, a):
        half = b.constant(0.5, a.dtype)
        one = b.constant(1.0, a.dtype)
        beta = b.constant(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5,
                          a.dtype)
        kappa = b.constant(0.044715, a.dtype)
        cube = b.arith("mulf", b.arith("mulf", a, a), a)
        inner = b.arith("mulf", beta, b.arith("addf", a, b.arith(
            "mulf", kappa, cube)))
        return b.arith("mulf", b.arith("mulf", half, a), b.arith(
            "addf", one, b.math("tanh", inner)))

    if approximate not in ("none", "tanh"):
        ex.unsupported(f"gelu approximate={approximate!r}")
    return unary_float(ex, x, exact if approximate == "none" else tanh)


@handles(aten.pow.Tensor_Scalar)
def pow_tensor_scalar(ex, x, exponent):
    """PyTorch special-cases the exponents 2, 3, 0.5, -0.5, -1, -2 (as
    products, sqrt, rsqrt, reciprocals); others are powf."""
    out = ex.out_type()
    e = ex.concrete(exponent)
    if not mlir.is_float(out.dtype):
        if not isinstance(e, int) or e < 0 or e > 64:
            ex.unsupported(f"integer pow with exponent {e}")

        def ipow(b, a):
            r = b.constant(1, out.dtype)
            for _ in range(e):
                r = b.arith("muli", r, a)
            return r
        return ex.map([ex.tensor(x, out.dtype)], out, ipow)

    def fn(b, a):
        if e == 2:
            return b.arith("mulf", a, a)
        if e == 3:
            return b.arith("mulf", b.arith("mulf", a, a), a)
        if e == 0.5:
            return b.math("sqrt", a)
        if e == -0.5:
            return b.math("rsqrt", a)
        one = b.constant(1.0, a.dtype)
        if e == -1:
            return b.arith("divf", one, a)
        if e == -2:
            return b.arith("divf", one, b.arith("mulf", a, a))
        if e == 1:
            return a
        return b.math("powf", a, b.constant(float(e), a.dtype))
    return unary_float(ex, x, fn)


@handles(aten.pow.Scalar)
def pow_scalar(ex, base, x):
    out = ex.out_type()
    c = float(ex.concrete(base))
    return unary_float(ex, ex.tensor(x, out.dtype),
                       lambda b, a: b.math("powf", b.constant(c, a.dtype), a))


@handles(aten.pow.Tensor_Tensor)
def pow_tensor_tensor(ex, x, y):
    out = ex.out_type()
    if not mlir.is_float(out.dtype):
        ex.unsupported("integer pow of tensors")
    a, b_ = ex.tensor(x, out.dtype), ex.tensor(y, out.dtype)
    wide = mlir.opmath(out.dtype)
    return ex.map([a, b_], out, lambda b, p, q: b.convert(b.math(
        "powf", b.convert(p, wide), b.convert(q, wide)), out.dtype))


@handles(aten.clamp.default, aten.clamp_min.default, aten.clamp_max.default)
def clamp(ex, x, min=None, max=None):
    out = ex.out_type()
    name = ex.node.target.__name__
    if "clamp_max" in name:
        min, max = None, min
    lo, hi = ex.concrete(min), ex.concrete(max)
    x = ex.tensor(x, out.dtype)
    flt = mlir.is_float(out.dtype)
    wide = mlir.opmath(out.dtype)

    def body(b, a):
        v = b.convert(a, wide)
        # PyTorch: NaN stays NaN (maximumf/minimumf propagate it).
        if lo is not None:
            v = b.arith("maximumf" if flt else "maxsi", v,
                        b.constant(lo, wide))
        if hi is not None:
            v = b.arith("minimumf" if flt else "minsi", v,
                        b.constant(hi, wide))
        return b.convert(v, out.dtype)
    return ex.map([x], out, body)


@handles(aten.clamp.Tensor, aten.clamp_min.Tensor, aten.clamp_max.Tensor)
def clamp_tensor(ex, x, min=None, max=None):
    """clamp with tensor bounds (broadcast): min(max(x, lo), hi), NaN in
    any operand propagated, hi where lo > hi, as PyTorch's kernel."""
    out = ex.out_type()
    if "clamp_max" in ex.node.target.__name__:
        min, max = None, min
    bounds = [(op, t) for op, t in (("max", min), ("min", max))
              if t is not None]
    flt = mlir.is_float(out.dtype)
    wide = mlir.opmath(out.dtype)
    inputs = [ex.tensor(x, out.dtype)] + [ex.tensor(t, out.dtype)
                                          for _, t in bounds]

    def body(b, v, *limits):
        v = b.convert(v, wide)
        for (op, _), lim in zip(bounds, limits):
            step = f"{op}imumf" if flt else f"{op}si"
            v = b.arith(step, v, b.convert(lim, wide))
        return b.convert(v, out.dtype)
    return ex.map(inputs, out, body)


# ---- conversions ----------------------------------------------------------
@handles(aten._to_copy.default, aten.to.dtype, aten.to.dtype_layout)
def to_dtype(ex, x, dtype=None, *_, **kwargs):
    dtype = dtype if isinstance(dtype, torch.dtype) else kwargs.get("dtype")
    result = ex.tensor(x, dtype or ex.out_type().dtype)
    if isinstance(x, Value) and result is not x:
        positions.convert(ex, x, result)
        if result.type.dtype == torch.bool:
            # An additive mask `.to(torch.bool)` (MPT): where it is not 0.
            predicate_of_select(ex, result, x, lambda a: a != 0)
    return result


@handles(aten.type_as.default)
def type_as(ex, x, other):
    return ex.tensor(x, ex.dtype_of(other))
