"""Normalisation: layer_norm and group_norm as PyTorch's CPU kernels
compute them (mean and biased variance in f32 for f16/bf16, then (x -
mean) * rstd * weight + bias, rounded once). RMSNorm as models write it (pow, mean, rsqrt, mul)
needs no handler of its own: it is elementwise ops and a mean."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType
from .registry import handles
from .reductions import reduce
from .views import reshape_to

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


@handles(aten.native_group_norm.default)
def group_norm(ex, x, weight, bias, n, c, hw, groups, eps):
    """F.group_norm: statistics per sample and group of C / G channels
    (x viewed as [N, G, C / G * HxW]), then the per-channel weight and
    bias; also the mean and rstd [N, G] that native_group_norm returns."""
    out, mean_t, rstd_t = ex.out_types()
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"group_norm on {out.dtype}")
    x = ex.tensor(x)
    dims = x.type.dims
    if not all(isinstance(d, int) for d in dims[1:]):
        ex.unsupported("group_norm over dynamic channels or spatial dims")
    per_group = 1
    for d in dims[1:]:
        per_group *= d
    per_group //= groups
    wide = mlir.opmath(out.dtype)
    xg = reshape_to(ex, x, x.type.with_dims((dims[0], groups, per_group)))
    stat = TensorType((dims[0], groups, 1), wide)

    def mean_of(v):
        acc = reduce(ex, v, [2], wide, 0, lambda b, o, a: b.sum_step(o, a))
        m = ex.map([acc], acc.type, lambda b, a: b.arith(
            "divf", a, b.constant(float(per_group), wide)))
        return reshape_to(ex, m, stat)

    mean = mean_of(xg)
    sq = ex.map([xg, mean], xg.type.with_dtype(wide), lambda b, a, m: (
        lambda d: b.arith("mulf", d, d))(b.arith("subf", b.convert(a, wide),
                                                  m)))
    rstd = ex.map([mean_of(sq)], stat, lambda b, v: b.math(
        "rsqrt", b.arith("addf", v, b.constant(float(eps), wide))))
    normed = ex.map([xg, mean, rstd], xg.type.with_dtype(wide),
                    lambda b, a, m, r: b.arith("mulf", b.arith(
                        "subf", b.convert(a, wide), m), r))
    y = reshape_to(ex, normed, x.type.with_dtype(wide))
    # weight and bias [C] along dim 1.
    channel = TensorType((dims[1],) + (1,) * (len(dims) - 2), wide)
    inputs = [y] + [reshape_to(ex, ex.tensor(t, wide), channel)
                    for t in (weight, bias) if t is not None]

    def affine(b, v, *wb):
        rest = list(wb)
        if weight is not None:
            v = b.arith("mulf", v, rest.pop(0))
        if bias is not None:
            v = b.arith("addf", v, rest.pop(0))
        return b.convert(v, out.dtype)
    result = ex.map(inputs, out, affine)

    def stat_out(v, t):
        v = ex.map([v], v.type.with_dtype(t.dtype),
                   lambda b, a: b.convert(a, t.dtype))
        return reshape_to(ex, v, t)
    return [result, stat_out(mean, mean_t), stat_out(rstd, rstd_t)]
