"""Matrix products around attention: nn.Linear (`linear`), GPT-2's Conv1D
(`addmm`), as one `linalg.matmul` onto an f32 (f64) accumulator that the
CPU lowering runs as its GEMM; f16/bf16 accumulate in f32 and round once,
as PyTorch does. (q.kT and p.v stay attn.matmul: ops/attention.py.)"""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType, Value, affine_map
from . import handles
from .views import _as_dim, collapse_shape, expand_shape

aten = torch.ops.aten


def _accumulator(ex, out: TensorType, bias) -> Value | None:
    """The f32 (f64) accumulator of `out`'s shape holding the bias
    broadcast; None for zero."""
    acc_dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
    acc_type = out.with_dtype(acc_dtype)
    if bias is None:
        return None
    bias = ex.tensor(bias)
    return ex.map([bias], acc_type, lambda b, a: b.convert(a, acc_dtype))


def _rows_matmul(ex, x: Value, wt: Value, init: Value | None,
                 acc_type: TensorType) -> Value:
    """linalg.matmul of x[lead..., K] (its leading dims collapsed into
    rows) and wt[K, N] onto init[lead..., N], or onto zeros (a fill of the
    2-D accumulator itself, which the CPU GEMM starts from without reading
    a buffer)."""
    r = x.type.rank
    lead = list(range(r - 1))
    groups = [lead, [r - 1]]
    rows = 1
    for i in lead:
        rows = rows * x.type.dims[i]
    rows = _as_dim(rows)
    x2 = collapse_shape(ex, x, groups, TensorType((rows, x.type.dims[-1]),
                                                  x.type.dtype))
    acc2 = TensorType((rows, acc_type.dims[-1]), acc_type.dtype)
    if init is None:
        init2 = ex.b.fill(0, acc2)
        y = ex.b.named("linalg.matmul", [x2, wt], init2)
        return expand_shape(ex, y, groups, acc_type)
    init2 = collapse_shape(ex, init, groups, acc2)
    y = ex.b.named("linalg.matmul", [x2, wt], init2)
    return expand_shape(ex, y, groups, init.type)


def _generic_matmul(ex, x: Value, wt: Value, init: Value) -> Value:
    """The same contraction as a linalg.generic, for a 1-D x."""
    r = init.type.rank
    loops = r + 1
    lead = [f"d{i}" for i in range(r - 1)]
    maps = [affine_map(loops, lead + [f"d{r - 1}"]),
            affine_map(loops, [f"d{r - 1}", f"d{r}"]),
            affine_map(loops, lead + [f"d{r}"])]
    iters = ["parallel"] * (r - 1) + ["reduction", "parallel"]
    acc = init.type.dtype

    def body(b, a, o):
        xa, wa = (b.convert(v, acc) for v in a)
        return b.arith("addf", o, b.arith("mulf", xa, wa))
    return ex.b.generic([x, wt], maps, init.type, iters, body, init=init)


def matmul_onto(ex, x: Value, wt: Value, init: Value | None,
                out: TensorType):
    """x[..., K] . wt[K, N] + init (None: zero), rounded to out's dtype."""
    r = out.rank
    lead = list(range(r - 1))
    acc_dtype = torch.float64 if out.dtype == torch.float64 else torch.float32
    acc_type = out.with_dtype(acc_dtype)
    if r >= 2:
        y = _rows_matmul(ex, x, wt, init, acc_type)
    else:
        y = _generic_matmul(ex, x, wt, init if init is not None
                            else ex.b.fill(0, acc_type))
    if y.type.dtype == out.dtype:
        return y
    return ex.map([y], out, lambda b, a: b.convert(a, out.dtype))


@handles(aten.linear.default)
def linear(ex, x, weight, bias=None):
    """x[..., K] . weight[N, K]^T + bias[N]: the weight transposed once to
    [K, N], then matmul_onto."""
    out = ex.out_type()
    x, w = ex.tensor(x), ex.tensor(weight)
    if not mlir.is_float(out.dtype) or w.type.rank != 2:
        ex.unsupported("linear needs a float 2-D weight")
    n, k = w.type.dims
    wt = ex.b.transpose(w, [1, 0], TensorType((k, n), w.type.dtype))
    return matmul_onto(ex, x, wt, _accumulator(ex, out, bias), out)


@handles(aten.addmm.default)
def addmm(ex, bias, x, w, beta=1, alpha=1):
    """bias + x . w (GPT-2's Conv1D); other beta/alpha are scaled steps."""
    out = ex.out_type()
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"{out.dtype} addmm")
    x, w = ex.tensor(x), ex.tensor(w)
    if beta != 1 or alpha != 1:
        from .elementwise import binary
        prod = matmul_onto(ex, x, w, _accumulator(ex, out, None), out)
        prod = binary(ex, "mul", prod, alpha) if alpha != 1 else prod
        scaled = binary(ex, "mul", bias, beta) if beta != 1 else bias
        return binary(ex, "add", scaled, prod)
    return matmul_onto(ex, x, w, _accumulator(ex, out, bias), out)

