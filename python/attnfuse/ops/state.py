"""Writes into a tensor: the functional forms torch.export gives in-place
updates (`cache[:, :, pos] = k`, `cache[..., a:b].copy_(k)`,
`cache.index_copy_(2, pos, k)`, `x.fill_(v)`): `slice_scatter`,
`select_scatter`, `index_put`, `index_copy` and `copy`. Each is a
`tensor.insert_slice` into the destination (one per index for `index_put`
and `index_copy`, in an `scf.forall`), so that when the destination is an
argument written in place (a KV cache) bufferization writes only the
updated rows into the caller's buffer."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import INDEX, TensorType, Value
from .registry import handles
from .views import plain_dim, reshape_to

aten = torch.ops.aten


def _offset(ex, value, size):
    """A start index (int or dynamic size) made non-negative: negative ints
    count from the end of a static dim, as PyTorch's slicing does."""
    value = ex.concrete(value)
    if value is None:
        return 0
    if hasattr(value, "expr"):  # a SymSize
        return value.expr
    if isinstance(value, int) and value < 0:
        if not isinstance(size, int):
            ex.unsupported("a negative start on a dynamic dim")
        return max(value + size, 0)
    if not isinstance(value, int):
        ex.unsupported(f"a run-time start {value!r}")
    return value


def _as_type(ex, src, out: TensorType) -> Value:
    """`src` converted to out's dtype and broadcast to its shape (the
    source of a copy or a scatter, as PyTorch broadcasts it)."""
    v = ex.tensor(src, out.dtype)
    if v.type.dims == out.dims:
        return v
    return ex.map([v], out, lambda b, a: a)


@handles(aten.copy.default)
def copy(ex, dest, src, non_blocking=False):
    """Functional `dest.copy_(src)`: src in dest's dtype and shape."""
    return _as_type(ex, src, ex.out_type())


@handles(aten.slice_scatter.default)
def slice_scatter(ex, x, src, dim=0, start=None, end=None, step=1):
    """`x` with `x[..., start:end:step, ...]` replaced by `src`."""
    x = ex.tensor(x)
    out = ex.out_type()
    dim %= out.rank
    start = _offset(ex, start, x.type.dims[dim])
    sizes = list(out.dims)
    v = ex.tensor(src, out.dtype)
    sizes[dim] = v.type.dims[dim]
    v = _as_type(ex, v, out.with_dims(sizes))
    offsets = [0] * out.rank
    offsets[dim] = start
    strides = [1] * out.rank
    strides[dim] = ex.concrete(step)
    if not isinstance(strides[dim], int):
        ex.unsupported("slice_scatter with a run-time step")
    return ex.b.insert_slice(v, x, offsets, sizes, strides)


@handles(aten.select_scatter.default)
def select_scatter(ex, x, src, dim, index):
    """`x` with `x.select(dim, index)` replaced by `src`."""
    x = ex.tensor(x)
    out = ex.out_type()
    dim %= out.rank
    index = _offset(ex, index, x.type.dims[dim])
    sizes = list(out.dims)
    sizes[dim] = 1
    row = TensorType(tuple(d for i, d in enumerate(out.dims) if i != dim),
                     out.dtype)
    v = _as_type(ex, src, row)
    v = ex.b.expand_shape(v, _unit_groups(row.rank, dim),
                          out.with_dims(sizes))
    offsets = [0] * out.rank
    offsets[dim] = index
    return ex.b.insert_slice(v, x, offsets, sizes)


@handles(aten.index_copy.default)
def index_copy(ex, x, dim, index, source):
    """`x.index_copy(dim, index, source)`: row index[t] along `dim` gets
    source's row t, as index_put, except that a negative index is out of
    range (eager raises IndexError where index_put counts from the end):
    negative indices become the dtype's largest value, which the rows'
    run-time check refuses."""
    x = ex.tensor(x)
    out = ex.out_type()
    if out.rank == 0:
        ex.unsupported("index_copy of a 0-d tensor")
    dim %= out.rank
    idx = ex.tensor(index)
    if mlir.is_float(idx.type.dtype) or idx.type.dtype == torch.bool:
        ex.fail("index_copy indices must be integers")
    if idx.type.rank == 0:
        idx = reshape_to(ex, idx, TensorType((1,), idx.type.dtype))
    if idx.type.rank != 1:
        ex.fail("index_copy takes a 0-d or 1-d index")
    dtype = idx.type.dtype
    largest = torch.iinfo(dtype).max

    def refuse_negative(b, i):
        negative = b.cmp("lt", i, b.constant(0, dtype))
        return b.select(negative, b.constant(largest, dtype), i)
    idx = ex.map([idx], idx.type, refuse_negative)
    shape = out.dims[:dim] + idx.type.dims + out.dims[dim + 1:]
    rows = _as_type(ex, source, TensorType(shape, out.dtype))
    return ex.b.scatter_rows(x, rows, idx, dim)


def _unit_groups(rank: int, dim: int):
    """The reassociation that inserts a unit dim at `dim` into a rank-`rank`
    shape."""
    if rank == 0:
        return []
    groups = [[i] if i < dim else [i + 1] for i in range(rank)]
    if dim < rank:
        groups[dim] = [dim, dim + 1]
    else:
        groups[-1].append(dim)
    return groups


@handles(aten.index_put.default)
def index_put(ex, x, indices, values, accumulate=False):
    """`x[..., idx, ...] = values` with one integer index tensor (the other
    indices None): for each element t of idx, row idx[t] along that dim
    gets values' row t (values broadcast to the indexed shape first). An
    index is checked against the dim's size (negative ones count from the
    end); with repeated indices the last write wins."""
    x = ex.tensor(x)
    out = ex.out_type()
    given = [(d, i) for d, i in enumerate(indices) if i is not None]
    if accumulate:
        ex.unsupported("index_put with accumulate=True")
    if not given:
        ex.unsupported("index_put without an index tensor")
    if len(given) > 1:
        return _index_put_several(ex, x, given, values, out)
    dim, idx = given[0]
    idx = ex.tensor(idx)
    if idx.type.dtype == torch.bool:
        ex.unsupported("index_put with a boolean mask (data-dependent rows)")
    if mlir.is_float(idx.type.dtype):
        ex.fail("index_put indices must be integers")
    # values broadcast to x[..., idx, ...]: x's dims with idx's shape at dim.
    shape = out.dims[:dim] + idx.type.dims + out.dims[dim + 1:]
    vals = _as_type(ex, values, TensorType(shape, out.dtype))
    # One index dim: idx and values flattened along it.
    n = 1
    for d in idx.type.dims:
        n = n * d
    if idx.type.rank != 1:
        idx = reshape_to(ex, idx, TensorType((n,), idx.type.dtype))
        vals = reshape_to(ex, vals, TensorType(
            out.dims[:dim] + (n,) + out.dims[dim + 1:], out.dtype))
    return ex.b.scatter_rows(x, vals, idx, dim)


def _index_put_several(ex, x, given, values, out):
    """index_put with index tensors on adjacent dims d .. d + k - 1
    (`mask[(arange(B), lengths - 1)] = 1`): they broadcast to one shape S,
    and x[..., i1[s], ..., ik[s], ...] = values[..., s, ...]. Those dims
    are collapsed into one and each s's components into one row index
    (each normalised from the end and checked against its own dim: an
    index out of range becomes one the row write's check refuses), then
    the one-index form writes the rows."""
    dims = [d for d, _ in given]
    d0, k = dims[0], len(dims)
    if dims != list(range(d0, d0 + k)):
        ex.unsupported("index_put with index tensors on dims that are not "
                       "adjacent (the indexed dims then move to the front)")
    idxs = [ex.tensor(i) for _, i in given]
    if any(mlir.is_float(i.type.dtype) or i.type.dtype == torch.bool
           for i in idxs):
        ex.unsupported("index_put with boolean or float index tensors "
                       "among several")
    fakes = [a.meta["val"] for a in ex.node.args[1] if a is not None]
    shape = tuple(mlir.as_dim(d) for d in
                  torch.broadcast_shapes(*(f.shape for f in fakes)))
    n = 1
    for d in shape:
        n = n * d
    n = plain_dim(n)
    largest = torch.iinfo(torch.int64).max

    def flat_index(b, *components):
        zero = b.constant(0, INDEX)
        flat, bad = None, None
        for j, c in enumerate(components):
            size = b.dim(x, d0 + j)
            i = b.convert(c, INDEX)
            i = b.select(b.cmp("lt", i, zero), b.arith("addi", i, size), i)
            out_of_range = b.arith("ori", b.cmp("lt", i, zero),
                                   b.cmp("ge", i, size))
            bad = out_of_range if bad is None else \
                b.arith("ori", bad, out_of_range)
            flat = i if flat is None else \
                b.arith("addi", b.arith("muli", flat, size), i)
        flat = b.convert(flat, torch.int64)
        return b.select(bad, b.constant(largest, torch.int64), flat)
    rows = ex.map(idxs, TensorType((n,) if len(shape) == 1 else shape,
                                   torch.int64), flat_index)
    if len(shape) != 1:
        rows = reshape_to(ex, rows, TensorType((n,), torch.int64))
    merged = 1
    for d in out.dims[d0:d0 + k]:
        merged = merged * d
    collapsed = TensorType(out.dims[:d0] + (plain_dim(merged),) +
                           out.dims[d0 + k:], out.dtype)
    vals = _as_type(ex, values, TensorType(
        out.dims[:d0] + shape + out.dims[d0 + k:], out.dtype))
    vals = reshape_to(ex, vals, collapsed.with_dims(
        out.dims[:d0] + (n,) + out.dims[d0 + k:]))
    written = ex.b.scatter_rows(reshape_to(ex, x, collapsed), vals, rows, d0)
    return reshape_to(ex, written, out)
