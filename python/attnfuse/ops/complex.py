"""Complex tensors as real arithmetic: a complex value is the real tensor
of its (real, imaginary) pairs (`values.Complex`, `torch.view_as_real`'s
layout), so `view_as_complex` and `view_as_real` are the identity on it.
Llama-4's rotary embedding (`torch.polar`, a complex product of the
queries' pairs, `view_as_real`) is the first user; the mappings are the
general ones. A real operand is promoted to `x + 0i` and complex products
are `(ac - bd) + (ad + bc)i`, as PyTorch computes them; views move the
pair dim along. Any other op on a complex tensor is an ExportError naming
it.

An aten op whose arguments or result are complex goes to the handler
registered here (`complex_handler_of`), not to the real one."""

from __future__ import annotations

import torch

from ..mlir import TensorType, Value, as_dim
from ..values import Complex, Const

aten = torch.ops.aten

COMPLEX_HANDLERS: dict = {}


def handles_complex(*targets):
    def register(fn):
        for t in targets:
            COMPLEX_HANDLERS[t] = fn
        return fn
    return register


def involves_complex(node, args, kwargs) -> bool:
    """Whether an op's arguments or result are complex."""
    def is_complex(v):
        if isinstance(v, Complex):
            return True
        if isinstance(v, Const):
            v = v.value
        if isinstance(v, torch.Tensor):
            return v.is_complex()
        if isinstance(v, complex):
            return True
        if isinstance(v, (list, tuple)):
            return any(is_complex(x) for x in v)
        return False
    return is_complex(node.meta.get("val")) or is_complex(list(args)) or \
        is_complex(list(kwargs.values()))


def complex_handler_of(target):
    return COMPLEX_HANDLERS.get(target)


def _part_dtype(ex, dtype):
    if dtype not in (torch.complex64, torch.complex128):
        ex.unsupported(f"complex dtype {dtype}")
    return dtype.to_real()


def _out(ex):
    """The result's complex shape and the dtype of its parts."""
    fake = ex.node.meta.get("val")
    return tuple(as_dim(s) for s in fake.shape), _part_dtype(ex, fake.dtype)


def _pairs_type(shape, dtype) -> TensorType:
    return TensorType(tuple(shape) + (2,), dtype)


def pairs_of(ex, x, dtype) -> Value:
    """x (Complex, a complex constant, a real tensor or a Python number)
    as the pairs of a complex tensor of part dtype `dtype`; a real one
    with imaginary part +0."""
    if isinstance(x, Complex):
        return ex.convert(x.pairs, dtype)
    value = x.value if isinstance(x, Const) else x
    if isinstance(value, (complex, int, float, bool)) and \
            not isinstance(value, torch.Tensor):
        value = torch.tensor(complex(value))
    if isinstance(value, torch.Tensor) and value.is_complex():
        return ex.tensor(Const(torch.view_as_real(
            value.to(torch.complex128)).to(dtype).contiguous()))
    real = ex.tensor(x, dtype)
    zero = ex.b.scalar_tensor(0.0, dtype)
    shape = real.type.dims
    return _pack(ex, real, ex.map([zero], real.type, lambda b, a: a), shape)


def _parts(ex, pairs: Value):
    """The real and imaginary parts of pairs `[..., 2]`, each `[...]`."""
    shape = pairs.type.dims[:-1]
    part = TensorType(shape, pairs.type.dtype)
    r = pairs.type.rank
    return [ex.b.extract_slice(pairs, [0] * (r - 1) + [k], list(shape) + [1],
                               [1] * r, part) for k in (0, 1)]


def _pack(ex, re: Value, im: Value, shape) -> Value:
    """The pairs `[..., 2]` of parts `re` and `im` (of shape `shape`)."""
    t = _pairs_type(shape, re.type.dtype)
    dest = ex.b.empty(t)
    r = t.rank
    for k, part in enumerate((re, im)):
        dest = ex.b.op(
            f"tensor.insert_slice {part.name} into {dest.name}"
            f"{ex.b.mixed_sizes([0] * (r - 1) + [k])} "
            f"{ex.b.mixed_sizes(list(shape) + [1])} "
            f"{ex.b.mixed_sizes([1] * r)} : {part.type} into {t}", t)
    return dest


def _binary(ex, lhs, rhs, fn):
    """A complex elementwise op: fn(body, a, b, c, d) -> (re, im) of
    (a + bi) op (c + di), operands broadcast."""
    shape, dtype = _out(ex)
    a, b = _parts(ex, pairs_of(ex, lhs, dtype))
    c, d = _parts(ex, pairs_of(ex, rhs, dtype))
    part = TensorType(shape, dtype)
    re = ex.map([a, b, c, d], part, lambda body, *s: fn(body, *s)[0])
    im = ex.map([a, b, c, d], part, lambda body, *s: fn(body, *s)[1])
    return Complex(_pack(ex, re, im, shape))


@handles_complex(aten.mul.Tensor, aten.mul.Scalar)
def mul(ex, lhs, rhs):
    def product(body, a, b, c, d):
        ac, bd = body.arith("mulf", a, c), body.arith("mulf", b, d)
        ad, bc = body.arith("mulf", a, d), body.arith("mulf", b, c)
        return body.arith("subf", ac, bd), body.arith("addf", ad, bc)
    return _binary(ex, lhs, rhs, product)


@handles_complex(aten.add.Tensor, aten.add.Scalar)
def add(ex, lhs, rhs, alpha=1):
    if alpha != 1:
        ex.unsupported("complex add with alpha")
    return _binary(ex, lhs, rhs, lambda body, a, b, c, d: (
        body.arith("addf", a, c), body.arith("addf", b, d)))


@handles_complex(aten.sub.Tensor, aten.sub.Scalar)
def sub(ex, lhs, rhs, alpha=1):
    if alpha != 1:
        ex.unsupported("complex sub with alpha")
    return _binary(ex, lhs, rhs, lambda body, a, b, c, d: (
        body.arith("subf", a, c), body.arith("subf", b, d)))


@handles_complex(aten.polar.default)
def polar(ex, magnitude, angle):
    """abs * (cos(angle) + i sin(angle)), as PyTorch's kernel."""
    shape, dtype = _out(ex)
    m, t = ex.tensor(magnitude, dtype), ex.tensor(angle, dtype)
    part = TensorType(shape, dtype)
    re = ex.map([m, t], part, lambda b, x, y: b.arith("mulf", x,
                                                      b.math("cos", y)))
    im = ex.map([m, t], part, lambda b, x, y: b.arith("mulf", x,
                                                      b.math("sin", y)))
    return Complex(_pack(ex, re, im, shape))


@handles_complex(aten.complex.default)
def complex_(ex, real, imag):
    shape, dtype = _out(ex)
    part = TensorType(shape, dtype)
    re = ex.map([ex.tensor(real, dtype)], part, lambda b, a: a)
    im = ex.map([ex.tensor(imag, dtype)], part, lambda b, a: a)
    return Complex(_pack(ex, re, im, shape))


@handles_complex(aten.view_as_complex.default)
def view_as_complex(ex, x):
    return Complex(ex.tensor(x))


@handles_complex(aten.view_as_real.default)
def view_as_real(ex, x):
    if not isinstance(x, Complex):
        return pairs_of(ex, x, _out_real(ex))
    return x.pairs


def _out_real(ex):
    return ex.node.meta["val"].dtype


@handles_complex(aten.real.default, aten.imag.default)
def real_or_imag(ex, x):
    k = 0 if ex.node.target is aten.real.default else 1
    return _parts(ex, pairs_of(ex, x, _out_real(ex)))[k]


# ---- views: the pair dim moves along -----------------------------------------
@handles_complex(aten.view.default, aten.reshape.default,
                 aten._unsafe_view.default, aten.unsqueeze.default,
                 aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
                 aten.flatten.using_ints, aten.unflatten.int)
def reshape(ex, x, *_):
    from .views import reshape_to
    shape, dtype = _out(ex)
    return Complex(reshape_to(ex, pairs_of(ex, x, dtype),
                              _pairs_type(shape, dtype)))


@handles_complex(aten.expand.default)
def expand(ex, x, *_):
    shape, dtype = _out(ex)
    pairs = pairs_of(ex, x, dtype)
    out = _pairs_type(shape, dtype)
    if pairs.type.dims == out.dims:
        return Complex(pairs)
    return Complex(ex.map([pairs], out, lambda b, a: a))


@handles_complex(aten.permute.default)
def permute(ex, x, dims):
    from .views import linalg_permute
    shape, dtype = _out(ex)
    pairs = pairs_of(ex, x, dtype)
    r = pairs.type.rank - 1
    perm = [d % r for d in dims] + [r]
    return Complex(linalg_permute(ex, pairs, perm, _pairs_type(shape, dtype)))


@handles_complex(aten.transpose.int)
def transpose(ex, x, dim0, dim1):
    from .views import linalg_permute
    shape, dtype = _out(ex)
    pairs = pairs_of(ex, x, dtype)
    r = pairs.type.rank - 1
    perm = list(range(r + 1))
    perm[dim0 % r], perm[dim1 % r] = perm[dim1 % r], perm[dim0 % r]
    return Complex(linalg_permute(ex, pairs, perm, _pairs_type(shape, dtype)))


@handles_complex(aten.slice.Tensor)
def slice_(ex, x, dim=0, start=None, end=None, step=1):
    from .views import slice_
    shape, dtype = _out(ex)
    pairs = pairs_of(ex, x, dtype)
    return Complex(_with_pairs_out(ex, shape, dtype, lambda: slice_(
        ex, pairs, dim % (pairs.type.rank - 1), start, end, step)))


@handles_complex(aten.select.int)
def select(ex, x, dim, index):
    from .views import select
    shape, dtype = _out(ex)
    pairs = pairs_of(ex, x, dtype)
    return Complex(_with_pairs_out(ex, shape, dtype, lambda: select(
        ex, pairs, dim % (pairs.type.rank - 1), index)))


def _with_pairs_out(ex, shape, dtype, fn):
    """Runs a real view handler on the pairs, with the node's result seen
    as the pairs' type (the handlers read it from `ex.out_type()`)."""
    node = ex.node
    fake = node.meta["val"]
    node.meta["val"] = torch.view_as_real(fake) if fake.is_complex() \
        else fake
    try:
        return fn()
    finally:
        node.meta["val"] = fake


@handles_complex(aten._to_copy.default, aten.to.dtype,
                 aten.to.dtype_layout, aten.clone.default,
                 aten.contiguous.default, aten.alias.default)
def to_copy(ex, x, *args, **kwargs):
    if not ex.node.meta["val"].is_complex():
        ex.unsupported("a complex tensor converted to a real dtype")
    shape, dtype = _out(ex)
    return Complex(pairs_of(ex, x, dtype))
