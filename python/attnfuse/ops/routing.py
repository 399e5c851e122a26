"""The routing ops of mixture-of-experts layers: `topk`, `sort` and
`histc` (transformers' grouped experts sort the token-expert pairs by
expert and count them per expert; the grouped products are in
products.py).

Orders are PyTorch's: NaN is the largest value (last ascending, first
descending). Among equal values PyTorch leaves the order open (its CPU
`topk` and unstable `sort` return ties in no fixed order); here the lower
index always comes first, which is also what `sort(stable=True)` asks
for."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType, Value, affine_map
from .registry import handles
from .views import reshape_to

aten = torch.ops.aten


def _is_nan(b, a):
    return b.cmp("ne", a, a)


def _precedes(b, a, c, descending):
    """Whether value a comes strictly before value c in the order."""
    if descending:
        before = b.cmp("gt", a, c)
        nan_first = (a, c)
    else:
        before = b.cmp("lt", a, c)
        nan_first = (c, a)
    if not mlir.is_float(a.dtype):
        return before
    nan, other = nan_first
    # NaN is the largest: before every number descending, after ascending.
    ahead = b.arith("andi", _is_nan(b, nan), b.cmp("eq", other, other))
    return b.arith("ori", before, ahead)


def _same(b, a, c):
    """a == c, NaN equal to NaN (it holds one place in the order)."""
    eq = b.cmp("eq", a, c)
    if not mlir.is_float(a.dtype):
        return eq
    both = b.arith("andi", _is_nan(b, a), _is_nan(b, c))
    return b.arith("ori", eq, both)


def _after(b, v, i, prev_v, prev_i, descending):
    """Whether the element (v at index i) comes after (prev_v, prev_i) in
    the order of values, ties by index."""
    later = b.arith("andi", _same(b, v, prev_v), b.cmp("gt", i, prev_i))
    return b.arith("ori", _precedes(b, prev_v, v, descending), later)


def _last_value(dtype, descending):
    """The value every other one precedes (the start of a search for the
    first)."""
    if mlir.is_float(dtype):
        return float("-inf") if descending else float("nan")
    if dtype == torch.bool:
        return 0 if descending else 1
    info = torch.iinfo(dtype)
    return info.min if descending else info.max


def _next_in_order(ex, x: Value, dim: int, prev, descending: bool):
    """Per row along `dim` (dropped), the value and least index of the
    first element after `prev` (value and index tensors, None for the very
    first) in the order."""
    r = x.type.rank
    kept = [f"d{i}" for i in range(r) if i != dim]
    row_map = affine_map(r, kept)
    row_type = TensorType(tuple(d for i, d in enumerate(x.type.dims)
                                if i != dim), x.type.dtype)
    iters = ["reduction" if i == dim else "parallel" for i in range(r)]
    extra = list(prev) if prev else []

    def eligible(b, a):
        if not prev:
            return None
        i = b.convert(b.index(dim), torch.int64)
        return _after(b, a[0], i, a[-2], a[-1], descending)

    def value_body(b, a, o):
        take = _precedes(b, a[0], o, descending)
        ok = eligible(b, a)
        if ok is not None:
            take = b.arith("andi", take, ok)
        return b.select(take, a[0], o)
    maps = [mlir.identity_map(r)] + [row_map] * (len(extra) + 1)
    init = ex.b.fill(_last_value(x.type.dtype, descending), row_type)
    best = ex.b.generic([x] + extra, maps, row_type, iters, value_body,
                        init=init)

    def index_body(b, a, o):
        hit = _same(b, a[0], a[1])
        args = [a[0]] + a[2:]
        ok = eligible(b, args)
        if ok is not None:
            hit = b.arith("andi", hit, ok)
        i = b.convert(b.index(dim), torch.int64)
        return b.select(hit, b.arith("minsi", o, i), o)
    index_type = row_type.with_dtype(torch.int64)
    maps = [mlir.identity_map(r)] + [row_map] * (len(extra) + 2)
    index = ex.b.generic([x, best] + extra, maps, index_type, iters,
                         index_body, init=ex.b.fill(
                             torch.iinfo(torch.int64).max, index_type))
    return best, index


def _stack_along(ex, pieces, dim: int, out: TensorType) -> Value:
    """out with pieces[j] (out's dims without `dim`) at position j of dim."""
    result = ex.b.empty(out)
    one = out.with_dims(tuple(1 if i == dim else d
                              for i, d in enumerate(out.dims)))
    for j, piece in enumerate(pieces):
        piece = reshape_to(ex, piece, one.with_dtype(piece.type.dtype))
        offsets = [j if i == dim else 0 for i in range(out.rank)]
        result = ex.b.insert_slice(piece, result, offsets, list(one.dims))
    return result


@handles(aten.topk.default)
def topk(ex, x, k, dim=-1, largest=True, sorted=True):
    """The k first elements along `dim` in descending (largest) or
    ascending order, and their indices: k searches for the next element
    after the last one found (a router picks k of a few experts)."""
    values_t, indices_t = ex.out_types()
    x = ex.tensor(x)
    if not isinstance(k, int):
        ex.unsupported("topk with a dynamic k")
    if x.type.rank == 0:
        x = reshape_to(ex, x, x.type.with_dims((1,)))
    dim %= x.type.rank
    values, indices, prev = [], [], None
    for _ in range(k):
        prev = _next_in_order(ex, x, dim, prev, largest)
        values.append(prev[0])
        indices.append(prev[1])
    shape = values_t.with_dims(x.type.dims[:dim] + (k,) +
                               x.type.dims[dim + 1:])
    v = _stack_along(ex, values, dim, shape)
    i = _stack_along(ex, indices, dim, shape.with_dtype(torch.int64))
    return [reshape_to(ex, v, values_t), reshape_to(ex, i, indices_t)]


def _sorted(ex, x, dim, descending):
    values_t, indices_t = ex.out_types()
    x = ex.tensor(x)
    if x.type.rank == 0:
        return [x, ex.b.fill(0, indices_t)]
    r = x.type.rank
    dim %= r
    # rank[e] = how many elements come before element e (value, then
    # index): a reduction over a second copy j of the sorted dim.
    elems = [f"d{i}" for i in range(r)]
    others = [f"d{r}" if i == dim else f"d{i}" for i in range(r)]
    rank_t = x.type.with_dtype(torch.int64)

    def rank_body(b, a, o):
        e = b.convert(b.index(dim), torch.int64)
        j = b.convert(b.index(r), torch.int64)
        ahead = b.arith("ori", _precedes(b, a[1], a[0], descending),
                        b.arith("andi", _same(b, a[1], a[0]),
                                b.cmp("lt", j, e)))
        return b.select(ahead, b.arith("addi", o, b.constant(1, torch.int64)),
                        o)
    rank = ex.b.generic(
        [x, x], [affine_map(r + 1, elems), affine_map(r + 1, others),
                 affine_map(r + 1, elems)], rank_t,
        ["parallel"] * r + ["reduction"], rank_body, init=ex.b.fill(0, rank_t))

    # indices[p] = the element e whose rank is p (ranks are a permutation).
    def index_body(b, a, o):
        p = b.convert(b.index(dim), torch.int64)
        e = b.convert(b.index(r), torch.int64)
        return b.select(b.cmp("eq", a[0], p), e, o)
    indices = ex.b.generic(
        [rank], [affine_map(r + 1, others), affine_map(r + 1, elems)], rank_t,
        ["parallel"] * r + ["reduction"], index_body, init=ex.b.fill(0, rank_t))

    def gather(b, a, o):
        at = [b.convert(a[0], mlir.INDEX) if i == dim else b.index(i)
              for i in range(r)]
        return b.extract(x, at)
    values = ex.b.elementwise([indices], x.type, gather)
    return [reshape_to(ex, values, values_t), reshape_to(ex, indices,
                                                         indices_t)]


@handles(aten.sort.default)
def sort(ex, x, dim=-1, descending=False):
    """Values along `dim` in order and the index each came from, ties by
    index. Each element's place is the count of elements before it: O(n^2)
    comparisons per row, meant for routing (a few thousand token-expert
    pairs), not for long sorts."""
    return _sorted(ex, x, dim, descending)


@handles(aten.sort.stable)
def sort_stable(ex, x, *, stable=None, dim=-1, descending=False):
    return _sorted(ex, x, dim, descending)


@handles(aten.histc.default)
def histc(ex, x, bins=100, min=0, max=0):
    """Counts of x's elements in `bins` equal bins over [min, max]: bin
    int((v - min) * bins / (max - min)) computed in x's dtype as PyTorch's
    CPU kernel does, v == max in the last bin, values outside (and NaN)
    left out. min == max takes the range from the data in PyTorch: not
    mapped."""
    out = ex.out_type()
    x = ex.tensor(x)
    if not isinstance(min, (int, float)) or not isinstance(max, (int, float)):
        ex.unsupported("histc with a range computed at run time")
    if not min < max:
        ex.unsupported("histc with min >= max (the range from the data)")
    if x.type.dtype not in (torch.float32, torch.float64):
        # PyTorch counts half-precision histograms in that precision, per
        # thread: its counts depend on the thread count.
        ex.unsupported(f"{x.type.dtype} histc")
    n = 1
    for d in x.type.dims:
        n = n * d
    flat = reshape_to(ex, x, x.type.with_dims((n,)))
    lo = torch.tensor(min, dtype=x.type.dtype)
    hi = torch.tensor(max, dtype=x.type.dtype)
    width = float(hi - lo)  # rounded in x's dtype, as the kernel's edges

    def body(b, a, o):
        v = a[0]
        low, high = b.constant(float(lo), v.dtype), b.constant(float(hi),
                                                               v.dtype)
        scaled = b.arith("mulf", b.arith("subf", v, low),
                         b.constant(float(bins), v.dtype))
        pos = b.convert(b.arith("divf", scaled, b.constant(width, v.dtype)),
                        torch.int64)
        last = b.constant(bins - 1, torch.int64)
        pos = b.arith("minsi", pos, last)
        inside = b.arith("andi", b.cmp("ge", v, low), b.cmp("le", v, high))
        hit = b.arith("andi", inside,
                      b.cmp("eq", pos, b.convert(b.index(0), torch.int64)))
        return b.select(hit, b.arith("addf", o, b.constant(1.0, o.dtype)), o)
    maps = [affine_map(2, ["d1"]), affine_map(2, ["d0"])]
    return ex.b.generic([flat], maps, out, ["parallel", "reduction"], body,
                        init=ex.b.fill(0, out))
