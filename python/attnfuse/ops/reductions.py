"""Reductions: sum, mean, amax/amin along dims, and cumsum, as
linalg.generic reductions accumulated in the opmath type (f32 for
f16/bf16, int64 for integers) and rounded once, as PyTorch's CPU kernels
accumulate."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType, Value, affine_map
from ..values import Const
from .registry import handles
from .views import reshape_to

aten = torch.ops.aten


def _dims(x: Value, dims) -> list[int]:
    r = x.type.rank
    if dims is None or dims == []:
        return list(range(r))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % max(r, 1) for d in dims})


def reduce(ex, x: Value, dims, acc_dtype, init_value, combine,
           finish=None) -> Value:
    """Reduces x over `dims` into a tensor without them: `combine(b, acc,
    element)` in `acc_dtype` from `init_value`; `finish(b, acc)` maps the
    result elementwise (None: keep)."""
    r = x.type.rank
    kept = [i for i in range(r) if i not in dims]
    acc_type = TensorType(tuple(x.type.dims[i] for i in kept), acc_dtype)
    init = ex.b.fill(init_value, acc_type)
    maps = [affine_map(r, [f"d{i}" for i in range(r)]),
            affine_map(r, [f"d{i}" for i in kept])]
    iters = ["reduction" if i in dims else "parallel" for i in range(r)]
    acc = ex.b.generic([x], maps, acc_type, iters,
                       lambda b, a, o: combine(b, o, b.convert(a[0],
                                                               acc_dtype)),
                       init=init)
    return acc if finish is None else finish(acc)


def _finish(ex, acc: Value, out: TensorType, fn=None) -> Value:
    """acc (reduced dims dropped) -> out (keepdim or not), with fn(b, a)
    applied per element and the dtype rounded."""
    shaped = acc.type.with_dims(out.dims)
    if fn is not None or acc.type.dtype != out.dtype:
        acc = ex.map([acc], acc.type.with_dtype(out.dtype), lambda b, a: b.convert(
            fn(b, a) if fn else a, out.dtype))
    return reshape_to(ex, acc, shaped.with_dtype(out.dtype))


def _acc_dtype(dtype):
    if mlir.is_float(dtype):
        return mlir.opmath(dtype)
    return torch.int64


@handles(aten.sum.dim_IntList, aten.sum.default)
def sum_(ex, x, dims=None, keepdim=False, dtype=None):
    out = ex.out_type()
    x = ex.tensor(x, dtype or (out.dtype if mlir.is_float(out.dtype) else None))
    acc_dtype = _acc_dtype(out.dtype)
    acc = reduce(ex, x, _dims(x, dims), acc_dtype, 0,
                 lambda b, o, a: b.sum_step(o, a))
    return _finish(ex, acc, out)


@handles(aten.mean.dim, aten.mean.default)
def mean(ex, x, dims=None, keepdim=False, dtype=None):
    out = ex.out_type()
    if not mlir.is_float(out.dtype):
        ex.unsupported(f"mean to {out.dtype}")
    x = ex.tensor(x, dtype)
    dims = _dims(x, dims)
    n = 1
    for d in dims:
        n = n * x.type.dims[d]
    acc_dtype = mlir.opmath(out.dtype)
    acc = reduce(ex, x, dims, acc_dtype, 0,
                 lambda b, o, a: b.sum_step(o, a))
    if not isinstance(n, int):
        ex.unsupported("mean over a dynamic dim")
    return _finish(ex, acc, out, lambda b, a: b.arith(
        "divf", a, b.constant(float(n), acc_dtype)))


def _extremum_step(dtype, is_max):
    """The arith op and start value of a max (min) reduction over `dtype`:
    NaN-propagating for floats; the integer ops are the signed ones, which
    Body.arith makes unsigned for uint8 and bool."""
    if mlir.is_float(dtype):
        return ("maximumf", float("-inf")) if is_max else \
            ("minimumf", float("inf"))
    if dtype == torch.bool:
        return ("maxsi", 0) if is_max else ("minsi", 1)
    info = torch.iinfo(dtype)
    return ("maxsi", info.min) if is_max else ("minsi", info.max)


def _extremum(ex, x, dims, keepdim, is_max, out=None):
    out = out or ex.out_type()
    x = ex.tensor(x)
    op, init = _extremum_step(out.dtype, is_max)
    acc = reduce(ex, x, _dims(x, dims), out.dtype, init,
                 lambda b, o, a: b.arith(op, o, a))
    return _finish(ex, acc, out)


@handles(aten.amax.default)
def amax(ex, x, dims=(), keepdim=False):
    return _extremum(ex, x, dims, keepdim, True)


@handles(aten.amin.default)
def amin(ex, x, dims=(), keepdim=False):
    return _extremum(ex, x, dims, keepdim, False)


@handles(aten.max.default)
def max_(ex, x):
    return _extremum(ex, x, None, False, True)


@handles(aten.min.default)
def min_(ex, x):
    return _extremum(ex, x, None, False, False)


def _arg_extremum(ex, x, dim, is_max):
    """The extremum along `dim` (all elements when None: x flattened) and
    the first index holding it, NaN counting as the extremum, as PyTorch
    does: the extremum (NaN-propagating) first, then the least index
    holding it or a NaN. Both with `dim` dropped."""
    x = ex.tensor(x)
    if dim is None or x.type.rank == 0:
        n = 1
        for d in x.type.dims:
            n = n * d
        x = reshape_to(ex, x, x.type.with_dims((n,)))
        dim = 0
    r = x.type.rank
    dim %= r
    op, init = _extremum_step(x.type.dtype, is_max)
    best = reduce(ex, x, [dim], x.type.dtype, init,
                  lambda b, o, a: b.arith(op, o, a))
    kept = [f"d{i}" for i in range(r) if i != dim]
    maps = [mlir.identity_map(r), affine_map(r, kept), affine_map(r, kept)]
    iters = ["reduction" if i == dim else "parallel" for i in range(r)]
    acc_type = best.type.with_dtype(torch.int64)
    flt = mlir.is_float(x.type.dtype)

    def body(b, a, o):
        hit = b.cmp("eq", a[0], a[1])
        if flt:
            hit = b.arith("ori", hit, b.cmp("ne", a[0], a[0]))
        k = b.convert(b.index(dim), torch.int64)
        return b.select(hit, b.arith("minsi", o, k), o)
    index = ex.b.generic([x, best], maps, acc_type, iters, body,
                         init=ex.b.fill(torch.iinfo(torch.int64).max,
                                        acc_type))
    return best, index


def _arg_index(ex, x, dim, is_max):
    return _finish(ex, _arg_extremum(ex, x, dim, is_max)[1], ex.out_type())


@handles(aten.argmax.default)
def argmax(ex, x, dim=None, keepdim=False):
    return _arg_index(ex, x, dim, True)


@handles(aten.argmin.default)
def argmin(ex, x, dim=None, keepdim=False):
    return _arg_index(ex, x, dim, False)


def _extremum_and_index(ex, x, dim, is_max):
    """torch.max/min(x, dim): the values and the first index holding each,
    from one reduction."""
    values, indices = ex.out_types()
    best, index = _arg_extremum(ex, x, dim, is_max)
    return [_finish(ex, best, values), _finish(ex, index, indices)]


@handles(aten.max.dim)
def max_dim(ex, x, dim, keepdim=False):
    return _extremum_and_index(ex, x, dim, True)


@handles(aten.min.dim)
def min_dim(ex, x, dim, keepdim=False):
    return _extremum_and_index(ex, x, dim, False)


def _cumsum_acc_dtype(dtype):
    """The type PyTorch's CPU cumsum carries its running sum in
    (`at::acc_type<T, false>`): f64 for f32 and f64, f32 for f16/bf16,
    int64 for integers."""
    if dtype in (torch.float32, torch.float64):
        return torch.float64
    return _acc_dtype(dtype)


@handles(aten.cumsum.default)
def cumsum(ex, x, dim, dtype=None):
    """out[.., i, ..] = x[.., 0, ..] + ... + x[.., i, ..], added in order
    in PyTorch's accumulator type (f64 for f32) and rounded per output: an
    scf.for along `dim` whose step k adds slice k of x to slice k - 1 of
    the sums so far (one add per element: linear in the length of
    `dim`)."""
    out = ex.out_type()
    return prefix_sum(ex, ex.tensor(x, out.dtype), dim, out)


def prefix_sum(ex, x: Value, dim: int, out: TensorType) -> Value:
    """cumsum of `x` (of out's dtype) along `dim`."""
    r = x.type.rank
    if r == 0:
        return x
    dim %= r
    acc_dtype = _cumsum_acc_dtype(out.dtype)
    acc_t = out.with_dtype(acc_dtype)
    b = ex.b
    slice_t = TensorType(tuple(1 if i == dim else d
                               for i, d in enumerate(out.dims)), acc_dtype)
    # Every size the loop body uses is made before it (the builder's index
    # cache must not hand out names defined inside the loop).
    zero, one, count = b.index(0), b.index(1), b.index(out.dims[dim])
    sizes = [1 if i == dim else (d if isinstance(d, int) else b.index(d))
             for i, d in enumerate(out.dims)]
    b.dynamic_sizes(slice_t)
    sums0 = b.empty(acc_t)
    loop, k, sums = b.fresh(), b.fresh(), b.fresh()
    b.lines.append(
        f"    {loop} = scf.for {k} = {zero} to {count} step {one} "
        f"iter_args({sums} = {sums0.name}) -> ({acc_t}) {{")
    first, back, prev_k = b.fresh(), b.fresh(), b.fresh()
    b.lines += [
        f"      {first} = arith.cmpi eq, {k}, {zero} : index {b.loc}",
        f"      {back} = arith.subi {k}, {one} : index {b.loc}",
        f"      {prev_k} = arith.maxsi {back}, {zero} : index {b.loc}"]

    def at(k_name):
        return "[" + ", ".join(k_name if i == dim else "0"
                               for i in range(r)) + "]"
    size_list = "[" + ", ".join(str(s) for s in sizes) + "]"
    ones = "[" + ", ".join("1" for _ in range(r)) + "]"
    in_slice = slice_t.with_dtype(x.type.dtype)
    piece, prev = b.fresh(), b.fresh()
    b.lines += [
        f"      {piece} = tensor.extract_slice {x.name}{at(k)} {size_list} "
        f"{ones} : {x.type} to {in_slice} {b.loc}",
        f"      {prev} = tensor.extract_slice {sums}{at(prev_k)} "
        f"{size_list} {ones} : {acc_t} to {slice_t} {b.loc}"]
    flt = mlir.is_float(acc_dtype)
    is_first = mlir.Scalar(first, torch.bool)

    def add(bb, a, o):
        before = bb.select(is_first, bb.constant(0, acc_dtype), a[1])
        return bb.arith("addf" if flt else "addi", before,
                        bb.convert(a[0], acc_dtype))
    total = b.elementwise([Value(piece, in_slice), Value(prev, slice_t)],
                          slice_t, add)
    new = b.fresh()
    b.lines += [
        f"      {new} = tensor.insert_slice {total.name} into {sums}"
        f"{at(k)} {size_list} {ones} : {slice_t} into {acc_t} {b.loc}",
        f"      scf.yield {new} : {acc_t} {b.loc}",
        f"    }} {b.loc}"]
    result = Value(loop, acc_t)
    if acc_dtype == out.dtype:
        return result
    return ex.map([result], out, lambda bb, a: bb.convert(a, out.dtype))


def _all_or_any(ex, x, dims, is_all):
    out = ex.out_type()
    x = ex.tensor(x, torch.bool)
    op = "andi" if is_all else "ori"
    acc = reduce(ex, x, _dims(x, dims), torch.bool, 1 if is_all else 0,
                 lambda b, o, a: b.arith(op, o, a))
    return _finish(ex, acc, out)


@handles(aten._is_all_true.default)
def is_all_true(ex, x):
    """Whether every element is true: a 0-d bool. Only torch's
    `_check_tensor_all` calls it (transformers' `torch_compilable_check`,
    the placeholder count of a vision-language model's image tokens), and
    its `.item()` is the check (`local_scalar_dense`)."""
    result = _all_or_any(ex, x, None, True)
    ex.memo[("tensor_all_check", result.name)] = True
    return result


@handles(aten._local_scalar_dense.default)
def local_scalar_dense(ex, x):
    """`.item()` of `_is_all_true`, which torch._check_tensor_all asserts:
    a run-time check (RunTimeCheckError where it is false), after which
    the value is true. Any other `.item()` is a data-dependent Python
    value, not mapped."""
    if not isinstance(x, Value) or \
            ("tensor_all_check", x.name) not in ex.memo:
        ex.unsupported("a tensor's value read as a Python number")
    value = ex.b.emit(f"tensor.extract {x.name}[] : {x.type}")
    ex.b.lines.append(f'    cf.assert {value}, "torch._check_tensor_all '
                      f'failed: a condition the model checks is false" '
                      f'{ex.b.loc}')
    ex.checked.add(ex.node)
    return Const(True)


@handles(aten.any.default, aten.any.dim, aten.any.dims)
def any_(ex, x, dim=None, keepdim=False):
    """Whether any element is true (torch.export writes `all` as `not
    any(not x)`)."""
    return _all_or_any(ex, x, dim, False)
