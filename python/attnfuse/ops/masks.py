"""Comparisons, boolean logic, where, constant fills, arange, tril/triu,
and how the masks models build reach attn.sdpa.

Transformers builds an attention mask as a conjunction: `causal(i, j) &
window(i, j) & padding[b, j]`, broadcast to `[B, 1, L, S]` (boolean for
SDPA, `where(mask, 0, finfo.min)` added to the scores for eager
attention). Materialised, it is read once per score. Instead the exporter
remembers the terms of every conjunction (`ex.conjuncts`) and of every
`where(conjunction, c1, c2)` with scalar branches (`ex.selects`):

- SDPA (ops/attention.py) takes the terms apart: a constant term that is a
  band becomes `is_causal`/`window_left`/`window_right` (`band_of`), the
  others are and-ed into the mask operand, a `[B, 1, 1, S]` padding mask
  in transformers' case.
- An additive `scores + where(t1 & t2 & ..., c1, c2)` is distributed over
  the terms, exactly (`distribute_additive_select`): `where(t1, scores +
  where(t2 & ..., c1, c2), scores + c2)`; band terms are written from
  `attn.iota` positions, so the fusion computes them per tile in the
  score_mod region and reads only the small terms.

The materialised mask is written too; when nothing else reads it, it is
dead code the pipeline removes."""

from __future__ import annotations

import math

import torch

from .. import mlir
from ..mlir import TensorType, Value
from ..values import Const
from . import positions
from .registry import handles

aten = torch.ops.aten


# ---- comparisons ------------------------------------------------------------
def _like(ex, x):
    """A stand-in with x's dtype and dim-ness for torch.result_type."""
    if isinstance(x, Value):
        return torch.empty((1,) * x.type.rank, dtype=x.type.dtype)
    if isinstance(x, Const) and isinstance(x.value, torch.Tensor):
        return x.value
    return ex.concrete(x)


def compute_dtype(ex, lhs, rhs):
    return torch.result_type(_like(ex, lhs), _like(ex, rhs))


_NEGATED = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt",
            "gt": "le"}


def compare(ex, pred, lhs, rhs, negate=False, out=None) -> Value:
    """torch.eq/lt/... as a generic; `negate` gives the exact negation
    (true where an operand is NaN)."""
    out = out or ex.out_type()
    ctype = compute_dtype(ex, lhs, rhs)
    operands = [ex.tensor(v, ctype) for v in (lhs, rhs)]

    def body(b, x, y):
        r = b.cmp(pred, x, y)
        if negate:
            r = b.arith("xori", r, b.constant(1, torch.bool))
        return r

    result = ex.map(operands, out, body)
    if negate:
        return result
    ex.inverses[result.name] = lambda: compare(
        ex, pred, lhs, rhs, negate=True, out=out)
    lpos, rpos = positions.of(ex, lhs), positions.of(ex, rhs)
    if lpos is not None and rpos is not None:
        known = positions.compare(pred, lpos, rpos, out.dims)
        if known == ("all", True):
            ex.all_true.add(result.name)
        elif known is not None and known[0] == "band":
            ex.bands[result.name] = known[1:]
    else:
        _predicate_of_select(ex, result, lhs, rhs,
                             lambda x, y: getattr(torch, pred)(x, y))
    return result


def _predicate_of_select(ex, result: Value, lhs, rhs, fn):
    """`where(cond, c1, c2) pred k` (or `k pred where(...)`) with scalars
    is cond, its negation or a constant: recorded so that a mask built as
    `additive_mask < -1` or `.to(torch.bool)` (Falcon, MPT) keeps the
    terms of `cond`. `fn(x, y)` evaluates the predicate with PyTorch."""
    for sel, other, swap in ((lhs, rhs, False), (rhs, lhs, True)):
        if not (isinstance(sel, Value) and sel.name in ex.selects):
            continue
        k = _scalar_value(ex, other) if other is not None else None
        if other is not None and k is None:
            continue
        cond, _, c1, c2, dtype = ex.selects[sel.name]
        values = []
        for c in (c1, c2):
            x = torch.tensor(c, dtype=dtype)
            y = x if other is None else torch.tensor(k)
            values.append(bool(fn(y, x) if swap else fn(x, y)))
        if values == [True, False]:
            ex.conjuncts[result.name] = terms_of(ex, cond)
        elif values == [False, True]:
            ex.inverses[result.name] = lambda: cond
        elif values == [True, True]:
            ex.all_true.add(result.name)
        return


def predicate_of_select(ex, result: Value, x, fn):
    """The same for a one-operand predicate (`fn(x)`: a conversion to
    bool)."""
    _predicate_of_select(ex, result, x, None, lambda a, _: fn(a))


def _compare(pred):
    return lambda ex, lhs, rhs: compare(ex, pred, lhs, rhs)


for _pred in ("eq", "ne", "lt", "le", "gt", "ge"):
    handles(getattr(aten, _pred).Scalar,
            getattr(aten, _pred).Tensor)(_compare(_pred))


@handles(aten.isnan.default)
def isnan(ex, x):
    x = ex.tensor(x)
    return ex.map([x], ex.out_type(), lambda b, a: b.isnan(a))


# ---- boolean logic ----------------------------------------------------------
def terms_of(ex, x) -> list:
    """The conjunction terms of a boolean operand (itself if none)."""
    if isinstance(x, Value):
        return list(ex.conjuncts.get(x.name, [x]))
    return [x]


def logical(ex, op, *operands) -> Value:
    out = ex.out_type()
    if op == "not":
        if out.dtype == torch.bool:
            inner = ex.tensor(operands[0], torch.bool)
            result = ex.map([inner], out, lambda b, a: b.arith(
                "xori", a, b.constant(1, torch.bool)))
            ex.inverses[result.name] = lambda: inner
            return result
        x = ex.tensor(operands[0], out.dtype)
        return ex.map([x], out, lambda b, a: b.arith(
            "xori", a, b.constant(-1, out.dtype)))
    vals = [ex.tensor(v, out.dtype) for v in operands]
    result = ex.map(vals, out, lambda b, x, y: b.arith(f"{op}i", x, y))
    if op == "and" and out.dtype == torch.bool:
        ex.conjuncts[result.name] = terms_of(ex, operands[0]) + \
            terms_of(ex, operands[1])
    return result


@handles(aten.bitwise_not.default, aten.logical_not.default)
def logical_not(ex, x):
    out = ex.out_type()
    if out.dtype != torch.bool and ex.node.target is aten.logical_not.default:
        ex.unsupported(f"logical_not to {out.dtype}")
    return logical(ex, "not", x)


@handles(aten.bitwise_and.Tensor, aten.logical_and.default,
         aten.bitwise_and.Scalar)
def logical_and(ex, a, b):
    return logical(ex, "and", a, b)


@handles(aten.bitwise_or.Tensor, aten.logical_or.default,
         aten.bitwise_or.Scalar)
def logical_or(ex, a, b):
    return logical(ex, "or", a, b)


@handles(aten.bitwise_xor.Tensor, aten.logical_xor.default)
def logical_xor(ex, a, b):
    return logical(ex, "xor", a, b)


# ---- where ------------------------------------------------------------------
@handles(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther,
         aten.where.Scalar)
def where(ex, cond, a, b):
    out = ex.out_type()
    cond_v = ex.tensor(cond, torch.bool)
    if not mlir.is_float(out.dtype):
        x, y = ex.tensor(a, out.dtype), ex.tensor(b, out.dtype)
        return ex.map([cond_v, x, y], out, lambda bd, c, p, q: bd.select(
            c, p, q))
    # PyTorch's where converts both branches to the promoted type (the
    # node's) before selecting: a 0-d tensor or Python scalar at compute
    # precision would give attn.where another type where neither branch
    # has dims (GPT-OSS's bf16 mask: where(mask, 0-d 0, 0-d min)).
    result = write_where(ex, cond, ex.tensor(a, out.dtype),
                         ex.tensor(b, out.dtype), out)
    scalars = [_scalar_value(ex, v) for v in (a, b)]
    if None not in scalars and isinstance(cond, Value):
        ex.selects[result.name] = (cond, terms_of(ex, cond), scalars[0],
                                   scalars[1], out.dtype)
    return result


def write_where(ex, cond, a: Value, b: Value, out: TensorType) -> Value:
    """attn.where(cond, a, b), over the terms of a conjunction `cond`
    (exactly the same values): where(band, where(others, a, b), b). The
    inner select has the shape of the other terms and the branches (a
    [B, 1, 1, S] padding mask, an ALiBi [B, H, 1, S] bias), the band is
    computed from positions, and a result smaller than `out` (a mask that
    was only expanded) is broadcast at the end, so the fusion reads the
    small tensors and computes the band per tile instead of reading a
    materialised [B, H, L, S] mask."""
    band, rest = split_terms(ex, terms_of(ex, cond))

    def select(c, x):
        dims = mlir.broadcast_dims(mlir.broadcast_dims(c.type.dims,
                                                       x.type.dims),
                                   b.type.dims)
        return ex.b.attn("where", [c, x, b], out.with_dims(dims))

    result = select(and_all(ex, rest), a) if rest else a
    for t in (band_terms(ex, band, out.rank) if band is not None else []):
        result = select(t, result)
    if result.type.dims == out.dims:
        return result
    if mlir.broadcast_dims(result.type.dims, out.dims) == out.dims and \
            result.type.rank <= out.rank:
        return ex.map([result], out, lambda bd, x: x)
    return ex.b.attn("where", [ex.tensor(cond, torch.bool), a, b], out)


def _scalar_value(ex, x):
    v = ex.concrete(x)
    if isinstance(v, torch.Tensor):
        return v.item() if v.numel() == 1 and v.dim() == 0 else None
    return v if isinstance(v, (int, float, bool)) else None


# ---- bands ------------------------------------------------------------------
def band_of(t: torch.Tensor):
    """(window_left, window_right) when the constant boolean `t` (leading
    dims broadcast) keeps exactly the band i - left <= j <= i + right of
    its last two dims (None: unbounded), else None."""
    if t.dtype != torch.bool or t.dim() < 2:
        return None
    keep = t.reshape(-1, *t.shape[-2:])
    if not bool((keep == keep[0:1]).all()):
        return None
    keep = keep[0]
    L, S = keep.shape
    i = torch.arange(L)[:, None]
    j = torch.arange(S)[None, :]
    if not bool(keep.any()):
        return None
    d = (j - i)[keep]
    right, left = int(d.max()), int(-d.min())
    band = (j - i <= right) & (j - i >= -left)
    if not bool((band == keep).all()):
        return None
    return (None if left >= L - 1 else left,
            None if right >= S - 1 else right)


def band_terms(ex, band, scores_rank) -> list:
    """A band as masks computed from attn.iota positions (the form the
    fusion computes per tile), shaped [L, 1] against [1, S]."""
    key = ("band", band)
    if key in ex.memo:
        return ex.memo[key]
    left, right, L, S = band
    # Positions are exact in f32 up to 2^24; a run-time size needs f64.
    static = isinstance(L, int) and isinstance(S, int)
    ft = torch.float32 if static else torch.float64
    i = ex.b.iota(0, TensorType((L, 1), ft))
    j = ex.b.iota(1, TensorType((1, S), ft))
    out = TensorType((L, S), torch.bool)
    terms = []
    # attn.cmp's predicate in generic form: its I64EnumAttr value.
    for bound, pred, sign in ((right, 3, 1), (left, 5, -1)):  # le, ge
        if bound is None:
            continue
        off = ex.b.attn("add", [i, ex.b.scalar_tensor(sign * bound, ft)],
                        i.type)
        terms.append(ex.b.attn("cmp", [j, off], out,
                               [f"predicate = {pred} : i64"]))
    ex.memo[key] = terms
    return terms


def split_mask_terms(ex, mask):
    """A boolean mask's terms: (band, others). `band` is (left, right, L,
    S) of the intersection of the band terms, or None; all-true terms
    go."""
    return split_terms(ex, terms_of(ex, mask))


def split_terms(ex, terms):
    """Band terms are constants that keep a band, or run-time comparisons
    of positions known to (ops/positions.py)."""
    band, rest = None, []
    for t in terms:
        if isinstance(t, Const) and isinstance(t.value, torch.Tensor):
            if bool(t.value.all()):
                continue
            b = band_of(t.value)
            if b is not None:
                L, S = t.value.shape[-2:]
                band = _intersect(band, b, L, S)
                continue
        if isinstance(t, Value):
            if t.name in ex.all_true:
                continue
            if t.name in ex.bands and t.type.rank >= 2:
                L, S = t.type.dims[-2:]
                band = _intersect(band, ex.bands[t.name], L, S)
                continue
        rest.append(t)
    return band, rest


def _intersect(band, b, L, S):
    if isinstance(L, int) and isinstance(S, int):
        # The same normal form as band_of: a side that keeps every key is
        # unbounded.
        b = (None if b[0] is not None and b[0] >= L - 1 else b[0],
             None if b[1] is not None and b[1] >= S - 1 else b[1])
    if band is None:
        return (b[0], b[1], L, S)
    lo = [x for x in (band[0], b[0]) if x is not None]
    hi = [x for x in (band[1], b[1]) if x is not None]
    return (min(lo) if lo else None, min(hi) if hi else None, L, S)


def and_all(ex, terms, shape_of=None) -> Value:
    """The conjunction of boolean terms, broadcast to their common shape."""
    vals = [ex.tensor(t, torch.bool) for t in terms]
    result = vals[0]
    for v in vals[1:]:
        out = TensorType(mlir.broadcast_dims(result.type.dims, v.type.dims),
                         torch.bool)
        result = ex.map([result, v], out, lambda b, x, y: b.arith("andi",
                                                                 x, y))
    return result


def constant_band_select(ex, x):
    """A constant float mask that holds one value inside a band of its
    last two dims and another outside (a causal mask folded at export
    time, expanded over the batch: BART's and T5's decoders) as
    where(band, c_in, c_out) from positions, exactly the same values,
    carried to the constant's batch dims by a where on an all-true splat.
    The fusion computes it per tile instead of reading [B, 1, L, S]. None
    for any other operand."""
    t = x.value if isinstance(x, Const) else None
    if not isinstance(t, torch.Tensor) or not mlir.is_float(t.dtype) or \
            t.dim() < 2 or bool(t.isnan().any()):
        return None
    flat = t.reshape(-1, *t.shape[-2:])
    values = torch.unique(flat[0])
    if values.numel() != 2 or not bool((flat == flat[0:1]).all()):
        return None
    L, S = t.shape[-2:]
    for c_in, c_out in ((values[0], values[1]), (values[1], values[0])):
        b = band_of(flat[0] == c_in)
        if b is None or c_in.item() == 0 and math.copysign(1, c_in) < 0:
            continue
        band = _intersect(None, b, L, S)
        if band[0] is None and band[1] is None:
            continue
        out = ex.b.scalar_tensor(c_out.item(), t.dtype)
        result = ex.b.scalar_tensor(c_in.item(), t.dtype)
        for term in band_terms(ex, band, t.dim()):
            result = ex.b.attn("where", [term, result, out],
                               TensorType((L, S), t.dtype))
        lead = tuple(t.shape[:-2])
        if any(n != 1 for n in lead):
            ones = ex.b.constant(torch.ones(lead + (1, 1), dtype=torch.bool))
            result = ex.b.attn("where", [ones, result, out],
                               TensorType(tuple(t.shape), t.dtype))
        return result
    return None


def distribute_additive_select(ex, lhs, rhs):
    """`x + where(t1 & t2 & ..., c1, c2)` (either order) as `where(t1, x +
    where(t2 & ..., c1, c2), x + c2)`, exactly: the fusion then reads the
    small terms and computes band terms from positions instead of one
    materialised [B, 1, L, S] mask. None when it does not apply."""
    for x, w in ((lhs, rhs), (rhs, lhs)):
        if not (isinstance(x, Value) and isinstance(w, Value) and
                w.name in ex.selects):
            continue
        _, terms, c1, c2, wdtype = ex.selects[w.name]
        out = ex.out_type()
        if x.type.dims != out.dims or not mlir.is_float(out.dtype) or \
                out.dtype != x.type.dtype:
            continue
        band, rest = split_terms(ex, terms)
        if band is None and len(rest) < 2:
            continue
        if band is not None:
            rest = band_terms(ex, band, out.rank) + rest
        # The constants as the where rounded them, added in the add's type.
        k1 = ex.b.scalar_tensor(c1, wdtype)
        k2 = ex.b.scalar_tensor(c2, wdtype)
        masked = ex.b.attn("add", [x, k2], out)
        result = ex.b.attn("add", [x, k1], out)
        for t in reversed(rest):
            cond = ex.tensor(t, torch.bool)
            result = ex.b.attn("where", [cond, result, masked], out)
        return result
    return None


# ---- fills and ranges -------------------------------------------------------
def fill(ex, value) -> Value:
    out = ex.out_type()
    v = ex.concrete(value)
    if isinstance(v, torch.Tensor):
        v = v.item()
    result = ex.b.fill(v, out)
    if out.dtype == torch.bool and v:
        ex.all_true.add(result.name)
    return result


@handles(aten.full.default)
def full(ex, size, value, **_):
    return fill(ex, value)


def _constant_fill(value):
    return lambda ex, *args, **kwargs: fill(ex, value)


for _op, _value in ((aten.ones.default, 1), (aten.zeros.default, 0),
                    (aten.ones_like.default, 1), (aten.zeros_like.default, 0),
                    (aten.new_ones.default, 1), (aten.new_zeros.default, 0)):
    handles(_op)(_constant_fill(_value))


@handles(aten.empty.memory_format, aten.empty_like.default,
         aten.empty_permuted.default, aten.new_empty.default,
         aten.empty_strided.default)
def empty(ex, *args, **kwargs):
    """An uninitialised tensor, as in PyTorch (what reads it before a write
    gets unspecified values in both)."""
    return ex.b.empty(ex.out_type())


@handles(aten.full_like.default)
def full_like(ex, x, value, **_):
    return fill(ex, value)


@handles(aten.new_full.default)
def new_full(ex, x, size, value, **_):
    return fill(ex, value)


@handles(aten.scalar_tensor.default)
def scalar_tensor(ex, value, **_):
    return fill(ex, value)


@handles(aten.arange.default, aten.arange.start, aten.arange.start_step)
def arange(ex, *args, **kwargs):
    """arange over a run-time size (a static one is folded)."""
    start, step = 0, 1
    if len(args) >= 2:
        start = ex.concrete(args[0])
    if len(args) >= 3:
        step = ex.concrete(args[2])
    out = ex.out_type()
    if not isinstance(start, int) or not isinstance(step, int):
        ex.unsupported("arange with a run-time start or step")

    def body(b, *_):
        i = b.convert(b.index(0), torch.int64)
        v = b.arith("addi", b.arith("muli", i, b.constant(step, torch.int64)),
                    b.constant(start, torch.int64))
        return b.convert(v, out.dtype)
    result = ex.map([], out, body)
    positions.arange(ex, result, start, step)
    return result


def tri(ex, upper, x, diagonal=0) -> Value:
    """tril/triu of a run-time tensor: keep x[.., i, j] where j - i <=
    diagonal (tril) or >= diagonal (triu), else 0."""
    x = ex.tensor(x)
    out = x.type
    r = out.rank

    def body(b, a):
        i, j = b.index(r - 2), b.index(r - 1)
        d = b.arith("subi", j, i)
        keep = b.cmp("ge" if upper else "le", d, b.constant(diagonal,
                                                            mlir.INDEX))
        return b.select(keep, a, b.constant(0, out.dtype))

    result = ex.map([x], out, body)
    if x.name in ex.all_true:
        # not triu(ones, k) == tril(ones, k - 1); not tril(ones, k) ==
        # triu(ones, k + 1).
        ex.inverses[result.name] = lambda: tri(
            ex, not upper, x, diagonal - 1 if upper else diagonal + 1)
    return result


@handles(aten.tril.default)
def tril(ex, x, diagonal=0):
    return tri(ex, False, x, diagonal)


@handles(aten.triu.default)
def triu(ex, x, diagonal=0):
    return tri(ex, True, x, diagonal)
