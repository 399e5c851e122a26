"""Index tensors known as functions of their own indices.

With static sizes, `torch.arange` and everything built from it is folded
at export time, and masks are recognised from the folded constants. With a
run-time size (`torch.export.Dim`) the same tensors are computed at run
time, so the exporter keeps, next to each such value, the affine function
of the element's index that it holds: `offset + sum(coeffs[d] * x[d])`
(`Positions`). It follows `arange`, views that add or drop unit dims,
`expand`, integer `+`, `-`, negation and scaling by a constant, and
widening integer conversions, the steps transformers takes from
`torch.arange(L)` to `q_idx[None, None, :, None]`.

A comparison of two such values over the score dims is then known exactly:
`kv_idx <= q_idx` is a band (`is_causal`), `kv_idx > q_idx - w` a sliding
window, `q_idx >= 0` always true (ops/masks.py); and an index tensor that
reads each position once (`padding_mask[batch_idx, kv_idx]`) is a view
(ops/indexing.py)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..mlir import Value
from ..values import Const

# Integer dtypes whose values positions are tracked in, widest last.
_INT_BITS = {torch.int32: 32, torch.int64: 64}


@dataclass(frozen=True)
class Positions:
    """Element x of an integer tensor is offset + sum(coeffs[d] * x[d])."""
    coeffs: tuple
    offset: int

    def aligned(self, rank: int) -> "Positions":
        """The same function over `rank` dims (NumPy: leading dims added)."""
        return Positions((0,) * (rank - len(self.coeffs)) + self.coeffs,
                         self.offset)

    def combine(self, other: "Positions", sign: int, rank: int) -> "Positions":
        a, b = self.aligned(rank), other.aligned(rank)
        return Positions(tuple(x + sign * y for x, y in zip(a.coeffs,
                                                               b.coeffs)),
                         a.offset + sign * b.offset)

    def scaled(self, k: int) -> "Positions":
        return Positions(tuple(k * c for c in self.coeffs), k * self.offset)


def _normalised(pos: Positions, dims) -> Positions:
    """Coefficients of size-1 dims are 0: their index is always 0."""
    return Positions(tuple(0 if d == 1 else c
                           for c, d in zip(pos.coeffs, dims)), pos.offset)


def record(ex, value: Value, pos: Positions | None):
    if pos is not None and isinstance(value, Value):
        ex.positions[value.name] = _normalised(pos, value.type.dims)


def of(ex, x) -> Positions | None:
    """The positions `x` holds: a tracked value, an integer constant that is
    affine in its indices, or a Python int; None otherwise."""
    if isinstance(x, Value):
        return ex.positions.get(x.name)
    v = x.value if isinstance(x, Const) else x
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Positions((), v)
    if isinstance(v, torch.Tensor) and v.dtype in _INT_BITS:
        return _fit(v)
    return None


def _fit(t: torch.Tensor) -> Positions | None:
    if t.numel() == 0:
        return None
    origin = (0,) * t.dim()
    offset = int(t[origin]) if t.dim() else int(t)
    coeffs = []
    for d in range(t.dim()):
        if t.shape[d] < 2:
            coeffs.append(0)
            continue
        step = list(origin)
        step[d] = 1
        coeffs.append(int(t[tuple(step)]) - offset)
    pos = Positions(tuple(coeffs), offset)
    grid = torch.full(t.shape, offset, dtype=torch.int64)
    for d, c in enumerate(coeffs):
        shape = [1] * t.dim()
        shape[d] = t.shape[d]
        grid = grid + c * torch.arange(t.shape[d]).view(shape)
    return pos if bool((grid == t.long()).all()) else None


def arange(ex, value: Value, start: int, step: int):
    if value.type.dtype in _INT_BITS:
        record(ex, value, Positions((step,), start))


def view(ex, x: Value, result: Value):
    """A reshape that only adds or drops unit dims keeps the positions."""
    pos = of(ex, x)
    if pos is None:
        return
    src = [(c, d) for c, d in zip(pos.coeffs, x.type.dims) if d != 1]
    dst = [i for i, d in enumerate(result.type.dims) if d != 1]
    if len(src) != len(dst) or any(
            not _same(d, result.type.dims[i]) for (_, d), i in zip(src, dst)):
        return
    coeffs = [0] * result.type.rank
    for (c, _), i in zip(src, dst):
        coeffs[i] = c
    record(ex, result, Positions(tuple(coeffs), pos.offset))


def expand(ex, x: Value, result: Value):
    pos = of(ex, x)
    if pos is not None:
        record(ex, result, pos.aligned(result.type.rank))


def binary(ex, op: str, lhs, rhs, result: Value):
    """Integer +, - and * by a constant (PyTorch's int64 arithmetic, exact
    for positions)."""
    if result.type.dtype not in _INT_BITS:
        return
    a, b = of(ex, lhs), of(ex, rhs)
    if a is None or b is None:
        return
    r = result.type.rank
    if op in ("add", "sub"):
        record(ex, result, a.combine(b, 1 if op == "add" else -1, r))
    elif op == "mul":
        for p, k in ((a, b), (b, a)):
            if not any(k.coeffs):
                record(ex, result, p.aligned(r).scaled(k.offset))
                return


def negate(ex, x, result: Value):
    pos = of(ex, x)
    if pos is not None and result.type.dtype in _INT_BITS:
        record(ex, result, pos.scaled(-1))


def convert(ex, x: Value, result: Value):
    """A widening integer conversion keeps every value."""
    pos = of(ex, x)
    src, dst = x.type.dtype, result.type.dtype
    if pos is not None and src in _INT_BITS and dst in _INT_BITS and \
            _INT_BITS[dst] >= _INT_BITS[src]:
        record(ex, result, pos)


def _same(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return not isinstance(a, int) and not isinstance(b, int) and a == b


def _range(c: int, size):
    """The range of c * x for x in [0, size): None for an unbounded end."""
    if c == 0 or size == 1:
        return 0, 0
    top = c * (size - 1) if isinstance(size, int) else None
    return (0, top) if c > 0 else (top, 0)


def compare(pred: str, lhs: Positions, rhs: Positions, dims):
    """What `lhs pred rhs` is over a tensor of `dims`: ("all", bool) when
    the same everywhere, ("band", left, right) when it keeps exactly the
    positions i - left <= j <= i + right of the last two dims (i the row,
    j the column; None is unbounded), else None."""
    r = len(dims)
    d = _normalised(lhs.combine(rhs, -1, r), dims)  # lhs - rhs
    lo = hi = d.offset
    for c, size in zip(d.coeffs, dims):
        a, b = _range(c, size)
        lo = None if lo is None or a is None else lo + a
        hi = None if hi is None or b is None else hi + b
    verdict = _constant_verdict(pred, lo, hi)
    if verdict is not None:
        return ("all", verdict)
    if r < 2 or any(d.coeffs[:-2]):
        return None
    ci, cj = d.coeffs[-2:]
    if (ci, cj) == (1, -1):  # i - j + c: flip to j - i - c
        d = d.scaled(-1)
        pred = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}.get(pred,
                                                                    pred)
    elif (ci, cj) != (-1, 1):
        return None
    k = -d.offset  # keeps j - i  pred  k
    band = {"le": (None, k), "lt": (None, k - 1), "ge": (-k, None),
            "gt": (-(k + 1), None), "eq": (-k, k)}.get(pred)
    return None if band is None else ("band",) + band


def _constant_verdict(pred, lo, hi):
    """`v pred 0` for every v in [lo, hi] (None ends unbounded), when it
    is the same for all."""
    def known(x):
        return x is not None
    always = {
        "ge": known(lo) and lo >= 0, "gt": known(lo) and lo > 0,
        "le": known(hi) and hi <= 0, "lt": known(hi) and hi < 0,
        "eq": known(lo) and known(hi) and lo == hi == 0,
        "ne": (known(lo) and lo > 0) or (known(hi) and hi < 0)}[pred]
    never = {
        "ge": known(hi) and hi < 0, "gt": known(hi) and hi <= 0,
        "le": known(lo) and lo > 0, "lt": known(lo) and lo >= 0,
        "eq": (known(lo) and lo > 0) or (known(hi) and hi < 0),
        "ne": known(lo) and known(hi) and lo == hi == 0}[pred]
    if always:
        return True
    if never:
        return False
    return None


def view_indices(ex, x: Value, p: int, tensors, out_dims):
    """For x[:p dims, t_0, ..., t_k-1]: when each index tensor t_k holds the
    position along its own dim e_k of the broadcast index shape (offset 0,
    step 1, the e_k increasing) and that dim has x's size, the result only
    views x. Returns (e_0, ..., e_k-1), or None."""
    bdims = out_dims[p:p + len(out_dims) - (x.type.rank - len(tensors))]
    nb = len(bdims)
    axes = []
    for k, t in enumerate(tensors):
        pos = of(ex, t)
        if pos is None or pos.offset != 0:
            return None
        pos = _normalised(pos.aligned(nb), bdims)
        nonzero = [e for e, c in enumerate(pos.coeffs) if c]
        if len(nonzero) != 1 or pos.coeffs[nonzero[0]] != 1:
            return None
        e = nonzero[0]
        if not _same(bdims[e], x.type.dims[p + k]):
            return None
        axes.append(e)
    if axes != sorted(set(axes)):
        return None
    # The other broadcast dims must be 1: the view adds them, it does not
    # repeat x along them.
    if any(bdims[e] != 1 for e in range(nb) if e not in axes):
        return None
    return axes

