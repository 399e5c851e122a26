"""Typed builders for the MLIR text the exporter writes.

Handlers never format MLIR themselves: they call `FunctionBuilder` for ops
on tensors (attn ops in generic form, whose op and attribute names are the
dialect's contract; upstream tensor/linalg/arith ops in their custom form)
and `Body` for the scalar code of `linalg.generic` regions. Every op carries
the location of the PyTorch source line it came from, so diagnostics of
attn-opt and attn-compile point at the user's Python."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np
import sympy
import torch

from .errors import ExportError

ELEMENT_TYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.bool: "i1",
    torch.int8: "i8",
    torch.uint8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
}
FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
_BITS = {torch.float16: 16, torch.bfloat16: 16, torch.float32: 32,
         torch.float64: 64, torch.bool: 1, torch.int8: 8, torch.uint8: 8,
         torch.int16: 16, torch.int32: 32, torch.int64: 64}
INDEX = "index"  # the dtype of `index` scalars in a Body


def element_type(dtype) -> str:
    if dtype == INDEX:
        return "index"
    try:
        return ELEMENT_TYPES[dtype]
    except KeyError:
        raise ExportError(f"element type {dtype} has no AttnFuse mapping "
                          f"(supported: {', '.join(map(str, ELEMENT_TYPES))})")


def is_float(dtype) -> bool:
    return dtype in FLOAT_DTYPES


def attn_result_dtype(types) -> torch.dtype | None:
    """The element type an attn elementwise op infers from its operands'
    `TensorType`s (the dialect's rule: the first float operand of rank > 0,
    else the first float rank-0 one). PyTorch's promotion ranks a 0-d
    tensor above a Python scalar instead, so an op whose float operands
    all have rank 0 may need them written otherwise to get PyTorch's
    type."""
    floats = [t for t in types if is_float(t.dtype)]
    ranked = [t for t in floats if t.rank > 0] or floats
    return ranked[0].dtype if ranked else None


def opmath(dtype):
    """The type PyTorch's CPU kernels compute a dtype's elementwise ops in:
    f32 for f16/bf16 (rounded once at the end), else the dtype itself."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def as_dim(size):
    """A torch size (int or SymInt) as an int or a sympy expression."""
    if isinstance(size, int):
        return size
    expr = size.node.expr
    if expr.is_Integer:
        return int(expr)
    # A size whose expression has one value over the symbols' ranges
    # (`x[..., -T:]` of a dim of 1, T >= 1: Min(1, T)) is that value.
    env = getattr(size.node, "shape_env", None)
    if env is None:
        return expr
    # A symbol the export specialised to one value (a batch dim the graph
    # guards on) may stay in the expressions of other sizes: substitute it.
    fixed = {}
    for s in expr.free_symbols:
        r = env.var_to_range.get(s)
        if r is not None and r.lower == r.upper and \
                getattr(r.lower, "is_Integer", False):
            fixed[s] = r.lower
    if fixed:
        expr = expr.xreplace(fixed)
        if expr.is_Integer:
            return int(expr)
    bound = env.bound_sympy(expr)
    if bound.lower == bound.upper and getattr(bound.lower, "is_Integer",
                                              False):
        return int(bound.lower)
    return expr


@dataclass(frozen=True)
class TensorType:
    dims: tuple  # int, or a sympy expression for a dynamic dim
    dtype: torch.dtype

    @staticmethod
    def of(fake) -> "TensorType":
        return TensorType(tuple(as_dim(s) for s in fake.shape), fake.dtype)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def elt(self) -> str:
        return element_type(self.dtype)

    def is_static(self, i: int) -> bool:
        return isinstance(self.dims[i], int)

    def has_static_shape(self) -> bool:
        return all(isinstance(d, int) for d in self.dims)

    def with_dtype(self, dtype) -> "TensorType":
        return TensorType(self.dims, dtype)

    def with_dims(self, dims) -> "TensorType":
        return TensorType(tuple(dims), self.dtype)

    def __str__(self) -> str:
        shape = "".join(
            (str(d) if isinstance(d, int) else "?") + "x" for d in self.dims)
        return f"tensor<{shape}{self.elt}>"


@dataclass(frozen=True)
class AttnDef:
    """The attn op that defined a value, as its builder was given it: the
    op's name (without `attn.`), its operands (Values), its attributes
    (the `name = value` entries `FunctionBuilder.attn` takes) and, for
    attn.iota, its dimension. ops/views.py writes an expression of
    positions again in another layout from it (`relayout`); the region of
    an op that has one is not kept."""
    op: str
    operands: tuple = ()
    attrs: tuple = ()
    dimension: int | None = None


@dataclass(frozen=True)
class Value:
    """An SSA tensor value; `defn`: the attn op that defined it (None for
    a function argument or any other op), not part of its identity."""
    name: str
    type: TensorType
    defn: AttnDef | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Scalar:
    """An SSA scalar inside a region: its name and dtype (or INDEX)."""
    name: str
    dtype: object

    @property
    def elt(self) -> str:
        return element_type(self.dtype)


def f64_attr(value: float) -> str:
    """An exact f64 attribute (hex bits: covers inf, nan, -0.0)."""
    bits = struct.unpack(">Q", struct.pack(">d", float(value)))[0]
    return f"0x{bits:016X} : f64"


def i64_attr(value: int) -> str:
    return f"{int(value)} : i64"


MASK_POLARITIES = ("keep", "drop")
PADDING_SIDES = ("right", "left", "packed")


@dataclass(frozen=True)
class SdpaAttrs:
    """The attributes of attn.sdpa (docs/AttnOps.md), typed: the one place
    that spells their names and formats. An attribute left at its default
    here (None, False, 0) is left out of the op, which then has the
    dialect's default (scale 1/sqrt(E), no band, no dropout, masked_value
    -inf, mask_polarity keep)."""
    scale: float | None = None
    is_causal: bool = False
    window_left: int | None = None
    window_right: int | None = None
    dropout_p: float = 0.0
    seed: int | None = None
    safe_softmax: bool = False
    masked_value: float | None = None
    mask_polarity: str | None = None  # one of MASK_POLARITIES
    padding_side: str | None = None  # one of PADDING_SIDES (with lengths)

    def __post_init__(self):
        if self.mask_polarity not in (None, *MASK_POLARITIES):
            raise ValueError(f"mask_polarity must be one of "
                             f"{MASK_POLARITIES}, not {self.mask_polarity!r}")
        if self.padding_side not in (None, *PADDING_SIDES):
            raise ValueError(f"padding_side must be one of "
                             f"{PADDING_SIDES}, not {self.padding_side!r}")

    def to_mlir(self) -> list[str]:
        """The `name = value` entries of the op's attribute dictionary, in
        a fixed order (floats as exact f64 bits)."""
        attrs = []
        if self.scale is not None:
            attrs.append(f"scale = {f64_attr(self.scale)}")
        if self.is_causal:
            attrs.append("is_causal = true")
        if self.window_right is not None:
            attrs.append(f"window_right = {i64_attr(self.window_right)}")
        if self.window_left is not None:
            attrs.append(f"window_left = {i64_attr(self.window_left)}")
        if self.dropout_p:
            attrs.append(f"dropout_p = {f64_attr(self.dropout_p)}")
        if self.seed is not None:
            attrs.append(f"seed = {i64_attr(self.seed)}")
        if self.safe_softmax:
            attrs.append("safe_softmax = true")
        if self.masked_value is not None:
            attrs.append(f"masked_value = {f64_attr(self.masked_value)}")
        if self.mask_polarity is not None:
            attrs.append(f"mask_polarity = "
                         f"#attn.mask_polarity<{self.mask_polarity}>")
        if self.padding_side not in (None, "right"):
            attrs.append(f"padding_side = "
                         f"#attn.padding_side<{self.padding_side}>")
        return attrs


def _scalar_bits(value, dtype) -> str:
    """One element as an exact MLIR literal of its element type."""
    if dtype == torch.bool:
        return "true" if bool(value) else "false"
    if not is_float(dtype):
        return str(int(value))
    t = torch.tensor(float(value), dtype=dtype)
    width = t.element_size() * 8
    int_dtype = {16: torch.int16, 32: torch.int32, 64: torch.int64}[width]
    bits = int(t.view(int_dtype)) & ((1 << width) - 1)
    return f"0x{bits:0{width // 4}X}"


def scalar_literal(value, dtype) -> str:
    """`arith.constant` operand text for a scalar of `dtype`."""
    if dtype == torch.bool:  # `true : i1` does not parse
        return f"{int(bool(value))} : i1"
    if dtype == INDEX:
        return f"{int(value)} : index"
    return f"{_scalar_bits(value, dtype)} : {element_type(dtype)}"


def dense_literal(t: torch.Tensor) -> str:
    """`dense<...>` for a constant tensor: a splat when all elements agree,
    else hex bytes (i1 packed one bit per element, as MLIR reads it)."""
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.uint8:
        t = t.view(torch.int8)
    flat = t.reshape(-1)
    if flat.numel() > 0 and bool((flat == flat[0]).all()) and not (
            is_float(t.dtype) and bool(torch.isnan(flat[0]))):
        return f"dense<{_scalar_bits(flat[0].item(), t.dtype)}>"
    if flat.numel() == 0:
        return "dense<>"
    if t.dtype == torch.bool:
        data = np.packbits(flat.numpy(), bitorder="little").tobytes()
    elif t.dtype == torch.bfloat16:
        data = flat.view(torch.int16).numpy().astype("<i2").tobytes()
    else:
        arr = flat.numpy()
        data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    return f'dense<"0x{data.hex().upper()}">'


def affine_map(num_dims: int, results) -> str:
    dims = ", ".join(f"d{i}" for i in range(num_dims))
    return f"affine_map<({dims}) -> ({', '.join(map(str, results))})>"


def identity_map(rank: int) -> str:
    return affine_map(rank, [f"d{i}" for i in range(rank)])


def broadcast_dims(a, b) -> tuple:
    """NumPy broadcasting of two shapes (a `?` dim meets its equal or 1)."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def broadcast_map(in_type: TensorType, out_type: TensorType) -> str:
    """The indexing map that reads `in_type` broadcast NumPy style to
    `out_type` inside a generic over the output's dims."""
    n, r = out_type.rank, in_type.rank
    results = []
    for i, d in enumerate(in_type.dims):
        j = n - r + i
        broadcast = d == 1 and out_type.dims[j] != 1
        results.append("0" if broadcast else f"d{j}")
    return affine_map(n, results)


_FLOAT_CMP = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt",
              "ge": "oge"}
_INT_CMP = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt",
            "ge": "sge"}
_UINT_CMP = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt",
             "ge": "uge"}
# Integer dtypes whose values are unsigned, and the unsigned twin of each
# signed arith op (a floor division of non-negative values truncates).
UNSIGNED = (torch.uint8, torch.bool)
_UNSIGNED_OPS = {"maxsi": "maxui", "minsi": "minui", "divsi": "divui",
                 "remsi": "remui", "floordivsi": "divui", "shrsi": "shrui",
                 "ceildivsi": "ceildivui"}


class Body:
    """The scalar code of one linalg.generic region, written through typed
    methods (each returns a Scalar)."""

    def __init__(self):
        self.lines: list[str] = []
        self._n = 0

    def _emit(self, rhs: str, dtype) -> Scalar:
        self._n += 1
        name = f"%s{self._n}"
        self.lines.append(f"{name} = {rhs}")
        return Scalar(name, dtype)

    def constant(self, value, dtype) -> Scalar:
        return self._emit(f"arith.constant {scalar_literal(value, dtype)}",
                          dtype)

    def index(self, dim: int) -> Scalar:
        return self._emit(f"linalg.index {dim} : index", INDEX)

    def convert(self, x: Scalar, dtype) -> Scalar:
        """x as `dtype` with PyTorch's conversion (round to nearest even
        between floats; truncation toward zero float -> int; != 0 to
        bool)."""
        src = x.dtype
        if src == dtype:
            return x
        if dtype == torch.bool:
            zero = self.constant(0, src)
            op = "arith.cmpf une" if is_float(src) else "arith.cmpi ne"
            return self._emit(f"{op}, {x.name}, {zero.name} : {x.elt}", dtype)
        d = element_type(dtype)
        if src == INDEX or dtype == INDEX:
            if is_float(dtype) or is_float(src):
                mid = self.convert(x, torch.int64)
                return self.convert(mid, dtype)
            return self._emit(f"arith.index_cast {x.name} : {x.elt} to {d}",
                              dtype)
        if is_float(src) and is_float(dtype):
            if _BITS[src] == _BITS[dtype]:  # f16 <-> bf16 through f32
                return self.convert(self.convert(x, torch.float32), dtype)
            op = "arith.extf" if _BITS[dtype] > _BITS[src] else "arith.truncf"
            return self._emit(f"{op} {x.name} : {x.elt} to {d}", dtype)
        if is_float(dtype):
            op = "arith.uitofp" if src in (torch.bool, torch.uint8) \
                else "arith.sitofp"
            return self._emit(f"{op} {x.name} : {x.elt} to {d}", dtype)
        if is_float(src):
            return self._emit(f"arith.fptosi {x.name} : {x.elt} to {d}", dtype)
        if _BITS[dtype] > _BITS[src]:
            op = "arith.extui" if src in (torch.bool, torch.uint8) \
                else "arith.extsi"
            return self._emit(f"{op} {x.name} : {x.elt} to {d}", dtype)
        return self._emit(f"arith.trunci {x.name} : {x.elt} to {d}", dtype)

    def arith(self, op: str, a: Scalar, b: Scalar) -> Scalar:
        """`arith.<op>` on two scalars of one type: addf, mulf, maximumf,
        addi, andi, divsi, ... A signed integer op on uint8 or bool is its
        unsigned twin (bool's true is all ones: signed, it is -1)."""
        if a.dtype in UNSIGNED:
            op = _UNSIGNED_OPS.get(op, op)
        return self._emit(f"arith.{op} {a.name}, {b.name} : {a.elt}", a.dtype)

    def sum_step(self, acc: Scalar, x: Scalar) -> Scalar:
        """acc + x as the step of a sum whose order PyTorch leaves open (its
        CPU kernels add in vector lanes): a float add may be reassociated,
        so LLVM vectorises the reduction loop; integers add exactly."""
        if not is_float(acc.dtype):
            return self.arith("addi", acc, x)
        return self._emit(f"arith.addf {acc.name}, {x.name} "
                          f"fastmath<reassoc> : {acc.elt}", acc.dtype)

    def math(self, fn: str, *xs: Scalar) -> Scalar:
        names = ", ".join(x.name for x in xs)
        return self._emit(f"math.{fn} {names} : {xs[0].elt}", xs[0].dtype)

    def negf(self, x: Scalar) -> Scalar:
        return self._emit(f"arith.negf {x.name} : {x.elt}", x.dtype)

    def cmp(self, pred: str, a: Scalar, b: Scalar) -> Scalar:
        """PyTorch's comparison (`eq`, `lt`, ...): false with a NaN operand
        except `ne`."""
        if is_float(a.dtype):
            return self._emit(f"arith.cmpf {_FLOAT_CMP[pred]}, {a.name}, "
                              f"{b.name} : {a.elt}", torch.bool)
        preds = _UINT_CMP if a.dtype in UNSIGNED else _INT_CMP
        return self._emit(f"arith.cmpi {preds[pred]}, {a.name}, {b.name} "
                          f": {a.elt}", torch.bool)

    def isnan(self, x: Scalar) -> Scalar:
        """Whether a float scalar is NaN (`arith.cmpf uno` with itself)."""
        return self._emit(f"arith.cmpf uno, {x.name}, {x.name} : {x.elt}",
                          torch.bool)

    def select(self, c: Scalar, a: Scalar, b: Scalar) -> Scalar:
        return self._emit(f"arith.select {c.name}, {a.name}, {b.name} : "
                          f"{a.elt}", a.dtype)

    def check(self, ok: Scalar, message: str):
        """A run-time check: where `ok` is false the call fails with
        `message` (RunTimeCheckError). Inside a parallel loop the rest of
        the failing iteration does not run (attn-check-failure-calls)."""
        self.lines.append(f'cf.assert {ok.name}, "{message}"')

    def dim(self, t: Value, dim: int) -> Scalar:
        """The run-time size of dim `dim` of a tensor defined outside the
        region (`tensor.dim`), an `index`."""
        c = self.constant(dim, INDEX)
        return self._emit(f"tensor.dim {t.name}, {c.name} : {t.type}", INDEX)

    def extract(self, t: Value, indices) -> Scalar:
        """One element of a tensor defined outside the region."""
        names = ", ".join(i.name for i in indices)
        return self._emit(f"tensor.extract {t.name}[{names}] : {t.type}",
                          t.type.dtype)


class FunctionBuilder:
    """Accumulates the body of one func.func."""

    def __init__(self):
        self.lines: list[str] = []
        self._counter = 0
        self.loc = "loc(unknown)"
        self.symbols: dict = {}  # sympy.Symbol -> SSA index name
        self._index_cache: dict = {}

    def fresh(self) -> str:
        self._counter += 1
        return f"%v{self._counter}"

    def emit(self, rhs: str) -> str:
        name = self.fresh()
        self.lines.append(f"    {name} = {rhs} {self.loc}")
        return name

    def op(self, rhs: str, type_: TensorType) -> Value:
        return Value(self.emit(rhs), type_)

    def attn(self, name: str, operands, out: TensorType, attrs=(),
             region=None) -> Value:
        """An attn op in generic form (the dialect's contract); `region`:
        the lines of its one region's block, if it has one. The result
        carries the op as its `defn`."""
        names = ", ".join(v.name for v in operands)
        types = ", ".join(str(v.type) for v in operands)
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        body = ""
        if region is not None:
            body = " ({\n" + "\n".join(f"      {line}" for line in region) \
                + "\n    })"
        result = self.emit(f'"attn.{name}"({names}){body}{attr} : ({types}) '
                           f'-> {out}')
        return Value(result, out, AttnDef(name, tuple(operands), tuple(attrs)))

    def iota(self, dim: int, out: TensorType) -> Value:
        """attn.iota: positions along `dim`, sized by the output's dims."""
        sizes = self.dynamic_sizes(out)
        types = ", ".join("index" for _ in sizes)
        result = self.emit(f'"attn.iota"({", ".join(sizes)}) {{dimension = '
                           f'{dim} : i64}} : ({types}) -> {out}')
        return Value(result, out, AttnDef("iota", dimension=dim))

    def sdpa(self, q: Value, k: Value, v: Value, mask: Value | None,
             out: TensorType, attrs: SdpaAttrs, region=None,
             q_lengths: Value | None = None,
             kv_lengths: Value | None = None,
             sinks: Value | None = None) -> Value:
        """attn.sdpa of `q`, `k`, `v` and the optional `mask`, with the
        attributes `attrs` and the lines of a score_mod region's block, if
        it has one; `q_lengths`/`kv_lengths`: the sequence lengths of a
        padded batch, `sinks`: one sink logit per query head (the op's
        segment sizes are then spelt out)."""
        operands = [q, k, v] + ([mask] if mask is not None else [])
        attr_list = attrs.to_mlir()
        optional = (q_lengths, kv_lengths, sinks)
        if any(x is not None for x in optional):
            if region is not None and (q_lengths is not None or
                                       kv_lengths is not None):
                raise ValueError("sequence lengths with a score_mod region "
                                 "are not written by the exporter")
            sizes = [1, 1, 1, int(mask is not None),
                     *(int(x is not None) for x in optional), 0]
            operands += [x for x in optional if x is not None]
            attr_list.append("operandSegmentSizes = array<i32: " +
                             ", ".join(map(str, sizes)) + ">")
        return self.attn("sdpa", operands, out, attr_list, region=region)

    # ---- index arithmetic for dynamic sizes ------------------------------
    def index(self, dim) -> str:
        """The SSA `index` value of a size: an int or a sympy expression
        over the symbols of the function's dynamic input dims."""
        key = dim if isinstance(dim, int) else sympy.sympify(dim)
        if key in self._index_cache:
            return self._index_cache[key]
        if isinstance(key, int) or key.is_Integer:
            name = self.emit(f"arith.constant {int(key)} : index")
        elif key.is_Symbol:
            if key not in self.symbols:
                raise ExportError(f"dynamic size {key} is not the size of any "
                                  f"input dim")
            return self.symbols[key]
        elif key.is_Add or key.is_Mul:
            op = "arith.addi" if key.is_Add else "arith.muli"
            terms = [self.index(a) for a in key.args]
            name = terms[0]
            for t in terms[1:]:
                name = self.emit(f"{op} {name}, {t} : index")
        elif type(key).__name__ in ("Max", "Min"):
            # A sliding window's first key: max(0, n - w) (sympy's Max, or
            # torch.utils._sympy's own, which torch.export's sizes use).
            op = "arith.maxsi" if type(key).__name__ == "Max" else \
                "arith.minsi"
            terms = [self.index(a) for a in key.args]
            name = terms[0]
            for t in terms[1:]:
                name = self.emit(f"{op} {name}, {t} : index")
        elif type(key).__name__ == "FloorDiv":
            a, b = (self.index(x) for x in key.args)
            name = self.emit(f"arith.floordivsi {a}, {b} : index")
        else:
            raise ExportError(f"dynamic size expression {key} has no "
                              f"AttnFuse mapping")
        self._index_cache[key] = name
        return name

    def dynamic_sizes(self, type_: TensorType) -> list[str]:
        return [self.index(d) for d in type_.dims if not isinstance(d, int)]

    def mixed_sizes(self, dims) -> str:
        """`[2, %v3, 8]`: static sizes inline, dynamic ones as SSA values."""
        return "[" + ", ".join(
            str(d) if isinstance(d, int) else self.index(d)
            for d in dims) + "]"

    # ---- tensors ---------------------------------------------------------
    def empty(self, type_: TensorType) -> Value:
        sizes = ", ".join(self.dynamic_sizes(type_))
        return self.op(f"tensor.empty({sizes}) : {type_}", type_)

    def constant(self, t: torch.Tensor) -> Value:
        type_ = TensorType(tuple(t.shape), t.dtype)
        return self.op(f"arith.constant {dense_literal(t)} : {type_}", type_)

    def scalar_tensor(self, value, dtype) -> Value:
        type_ = TensorType((), dtype)
        return self.op(
            f"arith.constant dense<{_scalar_bits(value, dtype)}> : {type_}",
            type_)

    def fill(self, value, type_: TensorType) -> Value:
        init = self.empty(type_)
        cst = self.emit(f"arith.constant {scalar_literal(value, type_.dtype)}")
        return self.op(f"linalg.fill ins({cst} : {type_.elt}) outs("
                       f"{init.name} : {type_}) -> {type_}", type_)

    def extract_slice(self, x: Value, offsets, sizes, strides,
                      result: TensorType) -> Value:
        return self.op(
            f"tensor.extract_slice {x.name}{self.mixed_sizes(offsets)} "
            f"{self.mixed_sizes(sizes)} {self.mixed_sizes(strides)} : "
            f"{x.type} to {result}", result)

    def insert_slice(self, x: Value, into: Value, offsets, sizes,
                     strides=None) -> Value:
        strides = strides or [1] * len(sizes)
        return self.op(
            f"tensor.insert_slice {x.name} into {into.name}"
            f"{self.mixed_sizes(offsets)} {self.mixed_sizes(sizes)} "
            f"{self.mixed_sizes(strides)} : {x.type} into {into.type}",
            into.type)

    def scatter_rows(self, dest: Value, rows: Value, index: Value,
                     dim: int) -> Value:
        """dest with, for each t, its slice index[t] along `dim` replaced by
        slice t of `rows` (same shape as dest but n along `dim`; index is
        1-D of n integers), each index checked to lie in [-size, size)
        (negative ones count from the end). An scf.forall whose
        parallel_insert_slices go into dest (an scf.for carrying dest would
        keep bufferization from writing an argument in place); with
        repeated indices which row wins is unspecified, as in PyTorch."""
        t = dest.type
        sizes = [1 if i == dim else d for i, d in enumerate(t.dims)]
        # Every value the body uses from outside is made first (the index
        # cache must not hand out names defined inside the loop).
        zero = self.index(0)
        count = self.index(index.type.dims[0])
        size = self.index(t.dims[dim])
        dyn = {i: self.index(d) for i, d in enumerate(sizes)
               if not isinstance(d, int)}
        loop, it, acc = self.fresh(), self.fresh(), self.fresh()
        self.lines.append(
            f"    {loop} = scf.forall ({it}) in ({count}) "
            f"shared_outs({acc} = {dest.name}) -> ({t}) {{")
        raw, pos = self.fresh(), self.fresh()
        body = [f"{raw} = tensor.extract {index.name}[{it}] : {index.type}",
                f"{pos} = arith.index_cast {raw} : {index.type.elt} to index"]
        neg, wrapped, row = self.fresh(), self.fresh(), self.fresh()
        lo, hi, ok = self.fresh(), self.fresh(), self.fresh()
        body += [f"{neg} = arith.cmpi slt, {pos}, {zero} : index",
                 f"{wrapped} = arith.addi {pos}, {size} : index",
                 f"{row} = arith.select {neg}, {wrapped}, {pos} : index",
                 f"{lo} = arith.cmpi sge, {row}, {zero} : index",
                 f"{hi} = arith.cmpi slt, {row}, {size} : index",
                 f"{ok} = arith.andi {lo}, {hi} : i1"]

        def mixed(values):
            return "[" + ", ".join(str(v) for v in values) + "]"
        size_list = [dyn.get(i, d) for i, d in enumerate(sizes)]
        src_off = [it if i == dim else 0 for i in range(t.rank)]
        dst_off = [row if i == dim else 0 for i in range(t.rank)]
        ones = [1] * t.rank
        piece_type = TensorType(tuple(sizes), t.dtype)
        piece = self.fresh()
        body.append(f"{piece} = tensor.extract_slice {rows.name}"
                    f"{mixed(src_off)} {mixed(size_list)} {mixed(ones)} : "
                    f"{rows.type} to {piece_type}")
        self.lines.extend(f"      {line} {self.loc}" for line in body)
        self.lines += [
            f'      cf.assert {ok}, "index out of range" {self.loc}',
            "      scf.forall.in_parallel {",
            f"        tensor.parallel_insert_slice {piece} into {acc}"
            f"{mixed(dst_off)} {mixed(size_list)} {mixed(ones)} : "
            f"{piece_type} into {t} {self.loc}",
            "      }",
            f"    }} {self.loc}"]
        return Value(loop, t)

    def size_tensor(self, size, dtype) -> Value:
        """A rank-0 tensor of `dtype` holding a size (an int or a sympy
        expression over the dynamic dims)."""
        i64 = self.emit(f"arith.index_cast {self.index(size)} : index to i64")
        t = self.op(f"tensor.from_elements {i64} : tensor<i64>",
                    TensorType((), torch.int64))
        if dtype == torch.int64:
            return t
        out = TensorType((), dtype)
        return self.elementwise([t], out,
                                lambda b, a, o: b.convert(a[0], dtype))

    def reshape(self, x: Value, out: TensorType) -> Value:
        """tensor.reshape to `out`'s sizes (a shape tensor): any row-major
        reshape of a dense tensor, dynamic sizes included."""
        sizes = []
        for d in out.dims:
            if isinstance(d, int):
                sizes.append(self.emit(f"arith.constant {d} : i64"))
            else:
                sizes.append(self.emit(f"arith.index_cast {self.index(d)} : "
                                       f"index to i64"))
        shape = self.emit(f"tensor.from_elements {', '.join(sizes)} : "
                          f"tensor<{out.rank}xi64>")
        return self.op(f"tensor.reshape {x.name}({shape}) : ({x.type}, "
                       f"tensor<{out.rank}xi64>) -> {out}", out)

    def cast(self, x: Value, out: TensorType) -> Value:
        """tensor.cast: the same tensor with static dims made dynamic or
        dynamic ones static (checked at run time)."""
        return self.op(f"tensor.cast {x.name} : {x.type} to {out}", out)

    def copy(self, x: Value) -> Value:
        """A new tensor with the values of `x` (a clone that must not share
        a buffer with `x`, whose buffer is written later)."""
        init = self.empty(x.type)
        return self.op(f"linalg.copy ins({x.name} : {x.type}) outs("
                       f"{init.name} : {x.type}) -> {x.type}", x.type)

    def materialize_in_destination(self, x: Value, dest: Value) -> Value:
        """`x` written into the buffer of `dest` (a function argument
        written in place: bufferization does it in place or fails)."""
        return self.op(f"bufferization.materialize_in_destination {x.name} "
                       f"in {dest.name} : ({x.type}, {dest.type}) -> "
                       f"{dest.type}", dest.type)

    def collapse_shape(self, x: Value, groups, out: TensorType) -> Value:
        return self.op(f"tensor.collapse_shape {x.name} {groups} : "
                       f"{x.type} into {out}", out)

    def expand_shape(self, x: Value, groups, out: TensorType) -> Value:
        return self.op(
            f"tensor.expand_shape {x.name} {groups} output_shape "
            f"{self.mixed_sizes(out.dims)} : {x.type} into {out}", out)

    def transpose(self, x: Value, perm, out: TensorType) -> Value:
        init = self.empty(out)
        name = self.fresh()
        self.lines.append(
            f"    {name} = linalg.transpose ins({x.name} : {x.type}) "
            f"outs({init.name} : {out}) permutation = {list(perm)} {self.loc}")
        return Value(name, out)

    def named(self, op: str, inputs, init: Value, attrs: str = "") -> Value:
        """A linalg named op (`linalg.matmul`, `linalg.conv_2d_nchw_fchw`)
        onto `init`."""
        ins = ", ".join(v.name for v in inputs)
        types = ", ".join(str(v.type) for v in inputs)
        attr = f" {attrs}" if attrs else ""
        return self.op(f"{op}{attr} ins({ins} : {types}) outs({init.name} : "
                       f"{init.type}) -> {init.type}", init.type)

    def generic(self, inputs, maps, out_type: TensorType, iterators, body,
                init: Value | None = None) -> Value:
        """A linalg.generic over `inputs` (with indexing `maps`, the
        output's map last). `body(b, args, out)` writes the region with the
        Body `b` from the input scalars `args` and the output scalar `out`
        and returns the Scalar to yield."""
        init = init or self.empty(out_type)
        region = Body()
        args = [Scalar(f"%a{i}", v.type.dtype) for i, v in enumerate(inputs)]
        out = Scalar("%out", out_type.dtype)
        result = body(region, args, out)
        block_args = ", ".join([f"{a.name}: {a.elt}" for a in args] +
                               [f"{out.name}: {out.elt}"])
        ins = ""
        if inputs:
            ins = (f" ins({', '.join(v.name for v in inputs)} : "
                   f"{', '.join(str(v.type) for v in inputs)})")
        iters = ", ".join(f'"{i}"' for i in iterators)
        name = self.fresh()
        self.lines.append(
            f"    {name} = linalg.generic {{indexing_maps = [{', '.join(maps)}],"
            f" iterator_types = [{iters}]}}{ins} outs({init.name} : {init.type}) {{")
        self.lines.append(f"    ^bb0({block_args}):")
        self.lines.extend(f"      {line}" for line in region.lines)
        self.lines.append(f"      linalg.yield {result.name} : {out_type.elt}")
        self.lines.append(f"    }} -> {out_type} {self.loc}")
        return Value(name, out_type)

    def elementwise(self, inputs, out_type: TensorType, body) -> Value:
        """A parallel generic over the output's dims, inputs broadcast."""
        maps = [broadcast_map(v.type, out_type) for v in inputs]
        maps.append(identity_map(out_type.rank))
        return self.generic(inputs, maps, out_type,
                            ["parallel"] * out_type.rank, body)
