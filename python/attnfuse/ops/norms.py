"""Normalisation: layer_norm as PyTorch's CPU kernel computes it (mean and
biased variance in f32 for f16/bf16, then (x - mean) * rstd * weight +
bias, rounded once). RMSNorm as models write it (pow, mean, rsqrt, mul)
needs no handler of its own: it is elementwise ops and a mean."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType
from . import handles
from .reductions import reduce

aten = torch.ops.aten


@handles(aten.layer_norm.default)
def layer_norm(ex, x, normalized_shape, weight=None, bias=None, eps=1e-5,
               cudnn_enable=True):
    out = ex.out_type()
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"layer_norm on {out.dtype}")
    x = ex.tensor(x)
    r = x.type.rank
    dims = list(range(r - len(normalized_shape), r))
    n = 1
    for d in dims:
        n = n * x.type.dims[d]
    if not isinstance(n, int):
        ex.unsupported("layer_norm over a dynamic dim")
    wide = mlir.opmath(out.dtype)
    stat_dims = tuple(x.type.dims[i] if i not in dims else 1 for i in range(r))
    stat = TensorType(stat_dims, wide)

    def mean_of(v):
        acc = reduce(ex, v, dims, wide, 0, lambda b, o, a: b.sum_step(o, a))
        m = ex.map([acc], acc.type, lambda b, a: b.arith(
            "divf", a, b.constant(float(n), wide)))
        from .views import reshape_to
        return reshape_to(ex, m, stat)

    mean = mean_of(x)
    sq = ex.map([x, mean], x.type.with_dtype(wide), lambda b, a, m: (
        lambda d: b.arith("mulf", d, d))(b.arith("subf", b.convert(a, wide), m)))
    var = mean_of(sq)
    rstd = ex.map([var], stat, lambda b, v: b.math("rsqrt", b.arith(
        "addf", v, b.constant(float(eps), wide))))
    inputs = [x, mean, rstd]
    if weight is not None:
        inputs.append(ex.tensor(weight))
    if bias is not None:
        inputs.append(ex.tensor(bias))

    def body(b, a, m, s, *wb):
        y = b.arith("mulf", b.arith("subf", b.convert(a, wide), m), s)
        rest = list(wb)
        if weight is not None:
            y = b.arith("mulf", y, b.convert(rest.pop(0), wide))
        if bias is not None:
            y = b.arith("addf", y, b.convert(rest.pop(0), wide))
        return b.convert(y, out.dtype)
    return ex.map(inputs, out, body)
