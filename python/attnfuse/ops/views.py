"""Shapes and views: reshapes as tensor.expand_shape/collapse_shape,
permutations as linalg.transpose (attn.transpose for a float swap of two
dims, which the fusion reads), slices as tensor.extract_slice, cat as
tensor.insert_slice, expand as a broadcasting linalg.generic."""

from __future__ import annotations

import torch

from .. import mlir
from ..mlir import TensorType, Value, i64_attr
from . import positions
from .registry import handles

aten = torch.ops.aten


def _is_int(d) -> bool:
    return isinstance(d, int) or bool(getattr(d, "is_Integer", False))


def _same_size(a, b) -> bool:
    if _is_int(a) and _is_int(b):
        return int(a) == int(b)
    import sympy
    return sympy.simplify(sympy.sympify(a) - sympy.sympify(b)) == 0


def plain_dim(d):
    """A size as an int where it is one (a sympy Integer too), else the
    expression itself."""
    return int(d) if _is_int(d) else d


def reassociation(src, dst):
    """Groups of the higher-rank shape's dims, one per dim of the lower-rank
    shape, whose sizes multiply to it (trailing 1s join the last group), or
    None when the reshape is not a pure expand or collapse."""
    large, small = (dst, src) if len(dst) >= len(src) else (src, dst)
    if len(large) == len(small):
        return None
    if not small:
        return [] if all(_is_int(d) and int(d) == 1 for d in large) else None
    groups, j = [], 0
    for d in small:
        group, prod = [], 1
        while j < len(large):
            group.append(j)
            prod = prod * large[j]
            j += 1
            if _same_size(prod, d):
                break
        else:
            return None
        groups.append(group)
    while j < len(large) and _is_int(large[j]) and int(large[j]) == 1 and groups:
        groups[-1].append(j)
        j += 1
    return groups if j == len(large) else None


def collapse_shape(ex, x: Value, groups, out: TensorType) -> Value:
    if x.type.rank == 1 and out.rank == 1:
        return x
    return ex.b.collapse_shape(x, groups, out)


def expand_shape(ex, x: Value, groups, out: TensorType) -> Value:
    """tensor.expand_shape; a group that splits a dim into two dynamic dims
    (the rows [B * T] of a projection back to [B, T]) is a tensor.reshape
    instead (MLIR 22's expand-strided-metadata crashes on such a group)."""
    if x.type.rank == 1 and out.rank == 1:
        return x
    if any(sum(not out.is_static(i) for i in g) > 1 for g in groups):
        return ex.b.reshape(x, out)
    return ex.b.expand_shape(x, groups, out)


def reshape_to(ex, x: Value, out: TensorType) -> Value:
    """A row-major reshape as one tensor.expand_shape or collapse_shape
    grouping the dims whose products agree, else a collapse to 1-D and an
    expand."""
    if x.type.dims == out.dims:
        return x
    groups = reassociation(x.type.dims, out.dims)
    if groups is not None and out.rank > x.type.rank:
        return expand_shape(ex, x, groups, out)
    if groups is not None:
        return collapse_shape(ex, x, groups, out)
    n = 1
    for d in x.type.dims:
        n = n * d
    flat_type = TensorType((plain_dim(n),), x.type.dtype)
    flat = collapse_shape(ex, x, [list(range(x.type.rank))], flat_type)
    return expand_shape(ex, flat, [list(range(out.rank))], out)


@handles(aten.view.default, aten.reshape.default, aten._unsafe_view.default,
         aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
         aten.squeeze.default, aten.flatten.using_ints, aten.unflatten.int)
def reshape(ex, x, *_):
    x = ex.tensor(x)
    out = ex.out_type()
    src = _unit_dims_map(x.type.dims, out.dims)
    if src is not None and is_positional(ex, x):
        return relayout(ex, x, src)
    result = reshape_to(ex, x, out)
    positions.view(ex, x, result)
    return result


# ---- expressions of positions in another layout ----------------------------
def is_positional(ex, v) -> bool:
    """True when `v` is an attn expression that reads attn.iota positions
    (a band, a relative-position bias): the fusion computes it per tile,
    as long as it stays an expression of attn ops."""
    if not isinstance(v, Value):
        return False
    key = ("positional", v.name)
    if key not in ex.memo:
        d = v.defn
        ex.memo[key] = d is not None and (d.op == "iota" or (
            d.op in ELEMENTWISE_ATTN_OPS and
            any(is_positional(ex, o) for o in d.operands)))
    return ex.memo[key]


# The attn ops that compute each element from the same element of their
# (broadcast) operands: an expression of them can change layout.
ELEMENTWISE_ATTN_OPS = frozenset((
    "add", "sub", "mul", "div", "maximum", "minimum", "tanh", "exp", "neg",
    "abs", "cmp", "where", "masked_fill", "cast"))


def _unit_dims_map(src, dst):
    """For a reshape that only adds or drops size-1 dims: per dim of `dst`,
    the dim of `src` it is (None for a new unit dim), else None."""
    kept = [k for k, d in enumerate(src) if d != 1]
    out, it = [], iter(kept)
    for d in dst:
        if d == 1:
            out.append(None)
            continue
        k = next(it, None)
        if k is None or not _same_size(src[k], d):
            return None
        out.append(k)
    return tuple(out) if next(it, None) is None else None


def relayout(ex, v: Value, src) -> Value:
    """`v` viewed with dims `src` (per new dim, the dim of `v` it is, or None
    for a new unit dim; dims left out have size 1): a permutation, an
    unsqueeze, a squeeze. An expression of positions is written again in
    the new layout (positions along the moved dims, its small operands
    viewed), so that it stays one the fusion computes per tile; anything
    else is transposed and reshaped."""
    key = ("relayout", v.name, src)
    if key in ex.memo:
        return ex.memo[key]
    out = v.type.with_dims(tuple(1 if k is None else v.type.dims[k]
                                 for k in src))
    d = v.defn
    if v.type.rank == 0:
        result = v
    elif not is_positional(ex, v) or (d.op == "iota" and
                                      d.dimension not in src):
        result = _view_leaf(ex, v, src, out)
    elif d.op == "iota":
        result = ex.b.iota(src.index(d.dimension), out)
    else:
        r = v.type.rank
        new = []
        for o in d.operands:
            shift = r - o.type.rank  # NumPy: o's dims are v's last ones
            new.append(relayout(ex, o, tuple(
                None if k is None or k < shift else k - shift for k in src)))
        result = ex.b.attn(d.op, new, out, d.attrs)
    ex.memo[key] = result
    return result


def _view_leaf(ex, x: Value, src, out: TensorType) -> Value:
    present = [k for k in src if k is not None]
    perm = present + [k for k in range(x.type.rank) if k not in present]
    if perm != list(range(x.type.rank)):
        x = linalg_permute(ex, x, perm, x.type.with_dims(
            tuple(x.type.dims[k] for k in perm)))
    return reshape_to(ex, x, out)


@handles(aten.expand.default)
def expand(ex, x, sizes, implicit=False):
    x = ex.tensor(x)
    out = ex.out_type()
    if x.type.dims == out.dims:
        result = x
    else:
        result = ex.map([x], out, lambda b, a: a)
    # A broadcast mask keeps its conjunction terms (ops/masks.py), and
    # broadcast positions stay positions.
    if x.name in ex.conjuncts:
        ex.conjuncts[result.name] = ex.conjuncts[x.name]
    positions.expand(ex, x, result)
    return result


def linalg_permute(ex, x: Value, perm, out: TensorType) -> Value:
    return ex.b.transpose(x, perm, out)


@handles(aten.transpose.int)
def transpose(ex, x, dim0, dim1):
    out = ex.out_type()
    x = ex.tensor(x)
    if x.name in ex.quantized_stacks:
        # The experts' weights read quantized: only grouped products read
        # this swap, taking each matrix as an nn.Linear weight
        # (quantized_weights._expert_uses; ops/products.py).
        return x
    r = x.type.rank
    d0, d1 = dim0 % max(r, 1), dim1 % max(r, 1)
    if d0 == d1:
        return x
    if is_positional(ex, x):
        perm = list(range(r))
        perm[d0], perm[d1] = d1, d0
        return relayout(ex, x, tuple(perm))
    if not mlir.is_float(x.type.dtype):
        perm = list(range(r))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return linalg_permute(ex, x, perm, out)
    # Negative dims as written (the seed's k.transpose(-2, -1)); the fusion
    # reads either.
    if dim0 >= 0 and dim1 >= 0:
        dim0, dim1 = d0, d1
    else:
        dim0, dim1 = d0 - r, d1 - r
    return ex.b.attn("transpose", [x], out, [f"dim0 = {i64_attr(dim0)}",
                                             f"dim1 = {i64_attr(dim1)}"])


@handles(aten.permute.default)
def permute(ex, x, dims):
    x = ex.tensor(x)
    if x.name in ex.quantized_stacks:
        # The experts' weights read quantized: only grouped products read
        # this swap, taking each matrix as an nn.Linear weight
        # (quantized_weights._expert_uses; ops/products.py).
        return x
    r = x.type.rank
    perm = [d % r for d in dims]
    moved = [i for i in range(r) if perm[i] != i]
    if not moved:
        return x
    if is_positional(ex, x):
        return relayout(ex, x, tuple(perm))
    if len(moved) == 2 and mlir.is_float(x.type.dtype):
        return transpose(ex, x, moved[0], moved[1])
    return linalg_permute(ex, x, perm, ex.out_type())


@handles(aten.t.default)
def t(ex, x):
    x = ex.tensor(x)
    return x if x.type.rank < 2 else transpose(ex, x, 0, 1)


def extract_slice(ex, x: Value, offsets, sizes, strides=None,
                  result: TensorType | None = None) -> Value:
    strides = strides or [1] * len(sizes)
    result = result or TensorType(tuple(sizes), x.type.dtype)
    if any(_is_int(d) and int(d) == 0 for d in result.dims):
        # No element to read; the offset may be the dim's size (`q[...,
        # n:]` of a dim of n, Phi-3's rotary pass-through when the rotary
        # dim is the whole head), which tensor.extract_slice refuses.
        return ex.b.empty(result)
    return ex.b.extract_slice(x, offsets, sizes, strides, result)


@handles(aten.repeat.default)
def repeat(ex, x, repeats):
    """Tensor.repeat: `repeats[i]` copies of `x` along dim i (repeats beyond
    x's rank add leading dims): x viewed as [1, d0, 1, d1, ...], broadcast
    to [r0, d0, r1, d1, ...] and viewed as [r0 * d0, r1 * d1, ...]."""
    x = ex.tensor(x)
    out = ex.out_type()
    reps = []
    for r in ex.concrete(repeats):
        r = getattr(r, "expr", r)
        if not (_is_int(r) or hasattr(r, "free_symbols")):
            ex.unsupported("repeat with a run-time count")
        reps.append(plain_dim(r))
    dims = (1,) * (len(reps) - x.type.rank) + tuple(x.type.dims)
    if all(_is_int(r) and int(r) == 1 for r in reps):
        return reshape_to(ex, x, out)
    unit = x.type.with_dims(tuple(d for dim in dims for d in (1, dim)))
    tiled = x.type.with_dims(tuple(d for rd in zip(reps, dims) for d in rd))
    return reshape_to(ex, ex.map([reshape_to(ex, x, unit)], tiled,
                                 lambda b, a: a), out)


@handles(aten.flip.default)
def flip(ex, x, dims):
    """x read backwards along `dims` (static sizes): a generic whose input
    map is size - 1 - d on the flipped dims."""
    x = ex.tensor(x)
    r = x.type.rank
    dims = {d % max(r, 1) for d in dims}
    if not all(_is_int(x.type.dims[d]) for d in dims):
        ex.unsupported("flip of a dynamic dim")
    reads = [f"{int(x.type.dims[d]) - 1} - d{d}" if d in dims else f"d{d}"
             for d in range(r)]
    return ex.b.generic([x], [mlir.affine_map(r, reads),
                              mlir.identity_map(r)], ex.out_type(),
                        ["parallel"] * r, lambda b, a, o: a[0])


@handles(aten.constant_pad_nd.default)
def constant_pad(ex, x, pad, value=0):
    """F.pad with a constant: `pad` lists (before, after) pairs from the
    last dim backwards; negative amounts crop. In the result's coordinates
    x starts at `before`: the part of it inside the result is inserted
    into a fill of `value`."""
    x = ex.tensor(x)
    out = ex.out_type()
    pad = ex.concrete(pad)
    if not all(_is_int(p) for p in pad):
        ex.unsupported("padding by a run-time amount")
    r = x.type.rank
    lo = [0] * r
    for i in range(len(pad) // 2):
        d = r - 1 - i
        lo[d], hi = int(pad[2 * i]), int(pad[2 * i + 1])
        if _is_int(x.type.dims[d]) and \
                int(x.type.dims[d]) + min(lo[d], 0) + min(hi, 0) < 0:
            ex.fail(f"F.pad crops {-min(lo[d], 0) - min(hi, 0)} elements "
                    f"from dim {d} of size {x.type.dims[d]} (PyTorch "
                    f"refuses it)")
    padded = [d for d in range(r) if lo[d] or x.type.dims[d] != out.dims[d]]
    if not all(_is_int(x.type.dims[d]) for d in padded):
        ex.unsupported("padding a dynamic dim")
    offsets, sizes, at = [0] * r, list(x.type.dims), [0] * r
    for d in padded:
        first = max(lo[d], 0)
        last = min(lo[d] + int(x.type.dims[d]), int(out.dims[d]))
        at[d], offsets[d], sizes[d] = first, first - lo[d], max(last - first, 0)
    filled = ex.b.fill(ex.concrete(value), out)
    if any(_is_int(s) and int(s) == 0 for s in sizes):
        return filled
    if offsets != [0] * r or sizes != list(x.type.dims):
        x = extract_slice(ex, x, offsets, [plain_dim(s) for s in sizes])
    return ex.b.insert_slice(x, filled, at, list(x.type.dims))


@handles(aten.split.Tensor, aten.split_with_sizes.default,
         aten.chunk.default)
def split(ex, x, split_size, dim=0):
    x = ex.tensor(x)
    outs = ex.out_types()
    dim %= x.type.rank
    results, offset = [], 0
    for t in outs:
        offsets = [0] * x.type.rank
        offsets[dim] = offset
        results.append(extract_slice(ex, x, offsets, list(t.dims)))
        offset = offset + t.dims[dim]
    return results


@handles(aten.unbind.int)
def unbind(ex, x, dim=0):
    x = ex.tensor(x)
    outs = ex.out_types()
    dim %= x.type.rank
    results = []
    for i, t in enumerate(outs):
        offsets = [0] * x.type.rank
        offsets[dim] = i
        sizes = list(x.type.dims)
        sizes[dim] = 1
        results.append(extract_slice(ex, x, offsets, sizes, result=t))
    return results


@handles(aten.select.int)
def select(ex, x, dim, index):
    x = ex.tensor(x)
    dim %= x.type.rank
    index = ex.concrete(index)
    if not isinstance(index, int):
        ex.unsupported("select with a run-time index")
    if index < 0:
        if not x.type.is_static(dim):
            ex.unsupported("select with a negative index on a dynamic dim")
        index += x.type.dims[dim]
    offsets = [0] * x.type.rank
    offsets[dim] = index
    sizes = list(x.type.dims)
    sizes[dim] = 1
    return extract_slice(ex, x, offsets, sizes, result=ex.out_type())


@handles(aten.slice.Tensor)
def slice_(ex, x, dim=0, start=None, end=None, step=1):
    x = ex.tensor(x)
    out = ex.out_type()
    dim %= x.type.rank
    start = ex.concrete(start)
    if start is None:
        start = 0
    if isinstance(start, int) and start < 0:
        size = x.type.dims[dim]
        if x.type.is_static(dim):
            start = max(start + size, 0)
        else:
            import sympy
            # x[..., -k:] of a dynamic dim: from max(size - k, 0).
            start = sympy.Max(0, size + start)
    if hasattr(start, "expr"):
        # A start computed from dynamic sizes (a KV cache's filled length):
        # torch.export has checked it lies in the dim.
        start = start.expr
    elif not isinstance(start, int) and not hasattr(start, "free_symbols"):
        ex.unsupported("slice with a run-time start")
    if out.dims == x.type.dims and start == 0:
        return x
    offsets = [0] * x.type.rank
    offsets[dim] = start
    strides = [1] * x.type.rank
    strides[dim] = step
    return extract_slice(ex, x, offsets, list(out.dims), strides, out)


@handles(aten.cat.default)
def cat(ex, tensors, dim=0):
    """torch.cat: each input inserted at its offset along `dim` (inputs
    converted to the result dtype, empty 1-D inputs skipped as PyTorch
    does)."""
    out = ex.out_type()
    dim %= out.rank
    result = ex.b.empty(out)
    offset = 0
    for x in tensors:
        v = ex.tensor(x, out.dtype)
        if v.type.rank != out.rank or v.type.dims[dim] == 0:
            continue  # empty: nothing to insert (a legacy [0] input too)
        offsets = [0] * out.rank
        offsets[dim] = offset
        result = ex.b.insert_slice(v, result, offsets, list(v.type.dims))
        offset = offset + v.type.dims[dim]
    return result


@handles(aten.as_strided.default)
def as_strided(ex, x, size, stride, storage_offset=None):
    """out[i] = storage[offset + sum_k i_k * stride_k] of a tensor whose
    elements are its storage in row-major order (checked on the traced
    input: contiguous, from offset 0): a reshape where the strides are
    x's own (the adaptive average pooling torch.export writes for Swin's
    pooler), else a read of the flattened x at that affine position (a
    window, a broadcast with stride 0). Dynamic sizes or strides, a
    non-contiguous input (as_strided reads its storage, which a value
    does not have) and reads past the end are refused."""
    out = ex.out_type()
    x = ex.tensor(x)
    src = ex.node.args[0]
    fake = src.meta.get("val") if hasattr(src, "meta") else None
    offset = storage_offset or 0
    if not all(isinstance(v, int) for v in list(size) + list(stride) +
               [offset]) or not x.type.has_static_shape():
        ex.unsupported("as_strided with dynamic sizes or strides")
    if fake is None or not fake.is_contiguous() or \
            fake.storage_offset() != 0:
        ex.unsupported("as_strided of a view that is not contiguous from "
                       "its storage's start (it reads the storage, which "
                       "AttnFuse does not model)")
    numel = 1
    for d in x.type.dims:
        numel *= d
    if any(s < 0 for s in stride):
        ex.unsupported("as_strided with negative strides")
    if all(n > 0 for n in size):
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= numel:
            ex.fail(f"as_strided(size={list(size)}, stride={list(stride)}, "
                    f"storage_offset={offset}) reads element {last} of a "
                    f"tensor of {numel}")
    contiguous, step = [], 1
    for n in reversed(size):
        contiguous.insert(0, step)
        step *= n
    view = offset == 0 and all(n == 1 or s == c for n, s, c in
                               zip(size, stride, contiguous))
    if view and step == numel:
        return reshape_to(ex, x, out)
    flat = reshape_to(ex, x, TensorType((numel,), x.type.dtype))
    terms = [f"d{k} * {s}" for k, s in enumerate(stride) if s]
    position = " + ".join([str(offset)] * bool(offset or not terms) + terms)
    maps = [mlir.affine_map(out.rank, [position]),
            mlir.identity_map(out.rank)]
    return ex.b.generic([flat], maps, out, ["parallel"] * out.rank,
                        lambda b, a, o: a[0])
