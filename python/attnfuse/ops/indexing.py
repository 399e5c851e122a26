"""Indexing: embedding lookups, torch.gather and advanced indexing
(`aten.index.Tensor`) as linalg.generic reads (`tensor.extract` at the
computed index, which the generated code checks against the bounds: an
index out of range is a run-time check failure, not a wild read). Indices
known at export time that only view the tensor (transformers'
`padding_mask[batch_arange, kv_arange]`) become reshapes and broadcasts.
masked_scatter (a vision-language model merging image features into its
token embeddings) is a gather at the running count of the mask."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import INDEX, TensorType, Value
from ..values import Const
from . import positions
from .registry import handles
from .reductions import prefix_sum
from .views import extract_slice, reshape_to

aten = torch.ops.aten


def _checked_index(ex, b, i, size, wrap=False):
    """An integer index as `index`, asserted to lie in [0, n) for the size
    n of dim size[1] of tensor size[0]; with `wrap`, negative ones count
    from the end first (advanced indexing does, embedding and gather
    refuse them, as in PyTorch)."""
    idx = b.convert(i, INDEX)
    n = b.dim(size[0], size[1])
    zero = b.constant(0, INDEX)
    if wrap:
        neg = b.cmp("lt", idx, zero)
        idx = b.select(neg, b.arith("addi", idx, n), idx)
    ok = b.arith("andi", b.cmp("ge", idx, zero), b.cmp("lt", idx, n))
    b.check(ok, "index out of range")
    return idx


def _checked_indices(ex, idx: Value, size) -> Value:
    """The integer index tensor `idx` as int64, each index checked once
    (`_checked_index`, against dim size[1] of tensor size[0]) and clamped
    into range: a gather that reads rows at these indices then copies them
    with no check per element (a check in its inner loop keeps LLVM from
    vectorizing the copy), and reads inside the tensor even where a check
    has failed."""
    t = idx.type.with_dtype(torch.int64)

    def body(b, a, o):
        i = _checked_index(ex, b, a[0], size)
        n = b.dim(size[0], size[1])
        last = b.arith("maxsi", b.arith("subi", n, b.constant(1, INDEX)),
                       b.constant(0, INDEX))
        clamped = b.arith("minsi", b.arith("maxsi", i, b.constant(0, INDEX)),
                          last)
        return b.convert(clamped, torch.int64)
    return ex.b.generic([idx], [mlir.identity_map(t.rank)] * 2, t,
                        ["parallel"] * t.rank, body)


@handles(aten.embedding.default)
def embedding(ex, weight, indices, padding_idx=-1, scale_grad=False,
              sparse=False):
    out = ex.out_type()
    w = ex.tensor(weight)
    fmt = ex.quantized.get(w.name)
    if fmt is not None:
        # A table read quantized: its rows dequantized as they are looked
        # up, the indices checked as below.
        rows = ex.quantized_rows[w.name]
        return ex.b.attn("quantized_embedding", [ex.tensor(indices), w], out,
                         attrs=[f"format = {fmt}", f"num_rows = {rows} : i64"])
    if isinstance(indices, Const) and w.type.rank == 2:
        relative = relative_embedding(ex, w, indices.value, out)
        if relative is not None:
            return relative
    idx = _checked_indices(ex, ex.tensor(indices), (w, 0))
    r = out.rank

    def body(b, i):
        row = b.convert(i, INDEX)
        return b.extract(w, [row, b.index(r - 1)])
    in_map = mlir.affine_map(r, [f"d{k}" for k in range(r - 1)])
    return ex.b.generic([idx], [in_map, mlir.identity_map(r)], out,
                        ["parallel"] * r, lambda b, a, o: body(b, a[0]))


@handles(aten.gather.default)
def gather(ex, x, dim, index, sparse_grad=False):
    out = ex.out_type()
    x, idx = ex.tensor(x), ex.tensor(index)
    r = out.rank
    dim %= r

    def body(b, a, o):
        pos = _checked_index(ex, b, a[0], (x, dim))
        coords = [pos if k == dim else b.index(k) for k in range(r)]
        return b.extract(x, coords)
    return ex.b.generic([idx], [mlir.identity_map(r), mlir.identity_map(r)],
                        out, ["parallel"] * r, body)


def _last_writer(ex, x: Value, idx: Value, dim: int) -> Value:
    """For each element of x, the last position t along `dim` of `idx`
    whose index (checked against x's dim, negative ones out of range as in
    PyTorch's scatter) points at it, -1 for none: a reduction over a copy
    of `dim` of the index tensor."""
    r = x.type.rank
    elems = [f"d{k}" for k in range(r)]
    along = [f"d{r}" if k == dim else f"d{k}" for k in range(r)]
    which_t = x.type.with_dtype(torch.int64)

    def body(b, a, o):
        pos = _checked_index(ex, b, a[0], (x, dim))
        hit = b.cmp("eq", pos, b.index(dim))
        return b.select(hit, b.convert(b.index(r), torch.int64), o)
    return ex.b.generic([idx], [mlir.affine_map(r + 1, along),
                                mlir.affine_map(r + 1, elems)], which_t,
                        ["parallel"] * r + ["reduction"], body,
                        init=ex.b.fill(-1, which_t))


@handles(aten.scatter.value, aten.scatter.src)
def scatter(ex, x, dim, index, value):
    """x with x[..., index[..., t, ...], ...] = value (a scalar, or src[...,
    t, ...]) along `dim`. Where indices repeat, the last t writes (PyTorch
    leaves it open). The index must span x's other dims (DeepSeek's group
    mask); a narrower one is not mapped."""
    out = ex.out_type()
    x, idx = ex.tensor(x, out.dtype), ex.tensor(index)
    r = out.rank
    if r == 0:
        ex.unsupported("scatter into a 0-d tensor")
    dim %= r
    if any(idx.type.dims[k] != x.type.dims[k] for k in range(r) if k != dim):
        ex.unsupported("scatter with an index narrower than the tensor in "
                       "a dim other than `dim`")
    which = _last_writer(ex, x, idx, dim)
    if isinstance(value, Value):
        src = ex.tensor(value, out.dtype)

        def pick(b, a, o):
            t = b.convert(b.arith("maxsi", a[1], b.constant(0, torch.int64)),
                          INDEX)
            v = b.extract(src, [t if k == dim else b.index(k)
                                for k in range(r)])
            return b.select(b.cmp("ge", a[1], b.constant(0, torch.int64)),
                            v, a[0])
        return ex.b.generic([x, which], [mlir.identity_map(r)] * 3, out,
                            ["parallel"] * r, pick)
    v = ex.concrete(value)
    return ex.map([x, which], out, lambda b, a, w: b.select(
        b.cmp("ge", w, b.constant(0, torch.int64)), b.constant(v, out.dtype),
        a))


@handles(aten.index_select.default)
def index_select(ex, x, dim, index):
    """x's slices at `index` (1-D, or 0-d for one) along `dim`, each index
    checked against the dim (negative ones are out of range, as in
    PyTorch)."""
    out = ex.out_type()
    x, idx = ex.tensor(x), ex.tensor(index)
    r = out.rank
    if r == 0:
        ex.unsupported("index_select of a 0-d tensor")
    dim %= r

    idx = _checked_indices(ex, idx, (x, dim))

    def body(b, a, o):
        pos = b.convert(a[0], INDEX)
        return b.extract(x, [pos if k == dim else b.index(k)
                             for k in range(r)])
    idx_map = mlir.affine_map(r, [f"d{dim}"] if idx.type.rank else [])
    return ex.b.generic([idx], [idx_map, mlir.identity_map(r)], out,
                        ["parallel"] * r, body)


def _constant_view(ex, x: Value, p: int, consts, out: TensorType):
    """x[:p-dims, i1, ..., ik] with constant index tensors that only view
    x: the positions they read are an arange broadcast along some dims.
    Returns the reshaped and broadcast x, or None."""
    k = len(consts)
    shape = x.type.dims[p:p + k]
    if not all(isinstance(d, int) for d in shape):
        return None
    flat = torch.arange(int(torch.tensor(shape).prod())).view(shape)
    try:
        pos = flat[tuple(c.long() for c in consts)]
    except IndexError:
        return None
    reduced = pos
    for d in range(pos.dim()):
        first = reduced.narrow(d, 0, 1)
        if bool((reduced == first).all()):
            reduced = first
    if reduced.numel() != flat.numel() or not bool(
            (reduced.flatten() == flat.flatten()).all()):
        return None
    view = TensorType(x.type.dims[:p] + tuple(reduced.shape) +
                      x.type.dims[p + k:], x.type.dtype)
    v = reshape_to(ex, x, view)
    if view.dims == out.dims:
        return v
    result = ex.map([v], out, lambda b, a: a)
    if v.name in ex.conjuncts:
        ex.conjuncts[result.name] = ex.conjuncts[v.name]
    return result


@handles(aten.index.Tensor)
def index(ex, x, indices):
    """x[..., i1, ..., ik, ...] with adjacent index tensors (None for the
    whole dims before them): the result has x's leading dims, the index
    tensors' broadcast shape, then x's trailing dims (PyTorch's rule for
    adjacent advanced indices)."""
    out = ex.out_type()
    x = ex.tensor(x)
    p = 0
    while p < len(indices) and indices[p] is None:
        p += 1
    tensors = list(indices[p:])
    while tensors and tensors[-1] is None:
        tensors.pop()
    if not tensors or any(t is None for t in tensors):
        ex.unsupported("non-adjacent advanced indices")
    if any(ex.dtype_of(t) == torch.bool for t in tensors):
        ex.unsupported("indexing with a boolean mask (data-dependent shape)")
    if all(isinstance(t, Const) for t in tensors):
        view = _constant_view(ex, x, p, [t.value for t in tensors], out)
        if view is not None:
            return view
    elif positions.view_indices(ex, x, p, tensors, out.dims) is not None:
        # Run-time aranges along distinct dims, in x's order: x viewed with
        # the index shape's unit dims.
        return reshape_to(ex, x, out)
    k = len(tensors)
    idx_vals = [ex.tensor(t) for t in tensors]
    r = out.rank
    bdims = r - p - (x.type.rank - p - k)  # rank of the broadcast indices

    def body(b, a, o):
        coords = [b.index(d) for d in range(p)]
        for j, s in enumerate(a):
            coords.append(_checked_index(ex, b, s, (x, p + j), wrap=True))
        coords += [b.index(d) for d in range(p + bdims, r)]
        return b.extract(x, coords)

    maps = []
    for v in idx_vals:
        sub = TensorType(out.dims[p:p + bdims], v.type.dtype)
        m = mlir.broadcast_map(v.type, sub)
        # Shift the map's dims by p: the index tensors cover out dims
        # p .. p + bdims.
        inner = m.split("-> (")[1].rstrip(")>")
        res = [e.strip() for e in inner.split(",")] if inner.strip() else []
        res = [f"d{int(e[1:]) + p}" if e.startswith("d") else e for e in res]
        maps.append(mlir.affine_map(r, res))
    maps.append(mlir.identity_map(r))
    return ex.b.generic(idx_vals, maps, out, ["parallel"] * r, body)


# ---- relative-position tables -----------------------------------------------
# A table row per score chosen by a function of j - i (T5's bucketed
# relative position bias) is written as a chain of selects on j - i: no
# [L, S] index tensor, and the rows are small operands. At most this many
# segments of equal rows (T5 has 32 buckets); more stay a gather.
MAX_RELATIVE_SEGMENTS = 64


def relative_segments(t: torch.Tensor):
    """For integer indices t[..., i, j] = g(j - i) (leading dims of size
    1): [(d_0, g_0), (d_1, g_1), ...], g taking the value g_k for d_k <=
    j - i < d_k+1 over the whole [L, S] grid; None otherwise."""
    if t.dim() < 2 or any(n != 1 for n in t.shape[:-2]) or t.numel() == 0:
        return None
    t2 = t.reshape(t.shape[-2:])
    L, S = t2.shape
    segments = []
    for d in range(-(L - 1), S):
        diag = torch.diagonal(t2, offset=d)
        if not bool((diag == diag[0]).all()):
            return None
        g = int(diag[0])
        if not segments or segments[-1][1] != g:
            segments.append((d, g))
            if len(segments) > MAX_RELATIVE_SEGMENTS:
                return None
    return segments


def relative_embedding(ex, w: Value, t: torch.Tensor, out: TensorType):
    """embedding(w, t) with t a function of j - i: where(j - i >= d_k,
    w[g_k], ...) over the segments of t, each row w[g_k] a [1, ..., 1, E]
    operand, j - i from attn.iota positions (exact in f32 at static
    sizes). The fusion computes it per score from the rows; the rows of a
    table that is a function argument stay arguments (no folding)."""
    segments = relative_segments(t)
    if segments is None or len(segments) < 2 or not all(
            0 <= g < w.type.dims[0] for _, g in segments):
        return None
    r = out.rank
    f32 = torch.float32
    i = ex.b.iota(r - 3, TensorType((1,) * (r - 3) + (out.dims[-3], 1, 1),
                                    f32))
    j = ex.b.iota(r - 2, TensorType((1,) * (r - 2) + (out.dims[-2], 1), f32))
    d = ex.b.attn("sub", [j, i], TensorType(out.dims[:-1] + (1,), f32))
    cond_type = d.type.with_dtype(torch.bool)
    row_type = TensorType((1,) * (r - 1) + (w.type.dims[1],), w.type.dtype)

    def row(g):
        key = ("row", w.name, g, r)
        if key not in ex.memo:
            sliced = extract_slice(ex, w, [g, 0], [1, w.type.dims[1]])
            ex.memo[key] = reshape_to(ex, sliced, row_type)
        return ex.memo[key]

    result = row(segments[0][1])
    for start, g in segments[1:]:
        bound = ex.b.scalar_tensor(float(start), f32)
        cond = ex.b.attn("cmp", [d, bound], cond_type,
                         ["predicate = 5 : i64"])  # ge
        dims = mlir.broadcast_dims(cond.type.dims, result.type.dims)
        result = ex.b.attn("where", [cond, row(g), result],
                           out.with_dims(dims))
    return result if result.type.dims == out.dims else None


@handles(aten.masked_scatter.default)
def masked_scatter(ex, x, mask, source):
    """x with its elements where `mask` (broadcast to x's shape) is true
    replaced, in row-major order, by source's first elements (source read
    flattened): element e takes source[c(e) - 1], c the running count of
    the mask (a linear cumsum). A mask with more true elements than source
    has is a run-time check failure (PyTorch raises the same)."""
    out = ex.out_type()
    x = ex.tensor(x, out.dtype)
    keep = ex.tensor(mask, torch.bool)
    src = ex.tensor(source, out.dtype)
    n = 1
    for d in out.dims:
        n = n * d
    m = 1
    for d in src.type.dims:
        m = m * d
    if keep.type.dims != out.dims:
        keep = ex.map([keep], out.with_dtype(torch.bool), lambda b, a: a)
    if x.type.dims != out.dims:
        x = ex.map([x], out, lambda b, a: a)
    flat = reshape_to(ex, keep, TensorType((n,), torch.bool))
    counts = prefix_sum(ex, ex.convert(flat, torch.int64), 0,
                        TensorType((n,), torch.int64))
    counts = reshape_to(ex, counts, out.with_dtype(torch.int64))
    # source flattened after one zero: element c of it is source[c - 1],
    # and every element reads a valid index (0 where the mask is false).
    src_flat = reshape_to(ex, src, TensorType((m,), out.dtype))
    ext = ex.b.fill(0, TensorType((m + 1,), out.dtype))
    ext = ex.b.insert_slice(src_flat, ext, [1], [m])

    def body(b, a, o):
        at = b.select(a[1], a[2], b.constant(0, torch.int64))
        idx = b.convert(at, INDEX)
        b.check(b.cmp("lt", idx, b.dim(ext, 0)),
                "masked_scatter: the mask has more true elements than "
                "source has elements")
        return b.select(a[1], b.extract(ext, [idx]), a[0])
    identity = mlir.identity_map(out.rank)
    return ex.b.generic([x, keep, counts], [identity] * 4, out,
                        ["parallel"] * out.rank, body)
