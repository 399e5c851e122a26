"""Writing MLIR as text: tensor types, constants, index arithmetic and
linalg.generic bodies. attn ops are written in generic form (their op and
attribute names are the dialect's contract), upstream ops in their custom
form. Every op carries the location of the PyTorch source line it came from,
so diagnostics of attn-opt and attn-compile point at the user's Python."""

from __future__ import annotations

import struct
from dataclasses import dataclass

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
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
}
FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def element_type(dtype: torch.dtype) -> str:
    try:
        return ELEMENT_TYPES[dtype]
    except KeyError:
        raise ExportError(f"element type {dtype} has no AttnFuse mapping "
                          f"(supported: {', '.join(map(str, ELEMENT_TYPES))})")


def is_float(dtype: torch.dtype) -> bool:
    return dtype in FLOAT_DTYPES


def as_dim(size):
    """A torch size (int or SymInt) as an int or a sympy expression."""
    if isinstance(size, int):
        return size
    expr = size.node.expr
    return int(expr) if expr.is_Integer else expr


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

    def with_dtype(self, dtype) -> "TensorType":
        return TensorType(self.dims, dtype)

    def __str__(self) -> str:
        shape = "".join(
            (str(d) if isinstance(d, int) else "?") + "x" for d in self.dims)
        return f"tensor<{shape}{self.elt}>"


@dataclass(frozen=True)
class Value:
    """An SSA tensor value."""
    name: str
    type: TensorType


def f64_attr(value: float) -> str:
    """An exact f64 attribute (hex bits: covers inf, nan, -0.0)."""
    bits = struct.unpack(">Q", struct.pack(">d", float(value)))[0]
    return f"0x{bits:016X} : f64"


def _scalar_bits(value, dtype: torch.dtype) -> str:
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


def scalar_literal(value, elt_dtype: torch.dtype) -> str:
    """`arith.constant` operand text for a scalar of `elt_dtype`."""
    if elt_dtype == torch.bool:  # `true : i1` does not parse
        return f"{int(bool(value))} : i1"
    return f"{_scalar_bits(value, elt_dtype)} : {element_type(elt_dtype)}"


def dense_literal(t: torch.Tensor) -> str:
    """`dense<...>` for a constant tensor: a splat when all elements agree,
    else hex bytes (i1 packed one bit per element, as MLIR reads it)."""
    t = t.detach().cpu().contiguous()
    flat = t.reshape(-1)
    if flat.numel() > 0 and bool((flat == flat[0]).all()) and not (
            is_float(t.dtype) and bool(torch.isnan(flat[0]))):
        return f"dense<{_scalar_bits(flat[0].item(), t.dtype)}>"
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
    return f"affine_map<({dims}) -> ({', '.join(results)})>"


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

    def attn(self, name: str, operands, out: TensorType, attrs=()) -> Value:
        """An attn op in generic form (the dialect's contract)."""
        names = ", ".join(v.name for v in operands)
        types = ", ".join(str(v.type) for v in operands)
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        return self.op(f'"attn.{name}"({names}){attr} : ({types}) -> {out}',
                       out)

    # Index arithmetic for dynamic sizes.
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

    def empty(self, type_: TensorType) -> Value:
        sizes = ", ".join(self.dynamic_sizes(type_))
        return self.op(f"tensor.empty({sizes}) : {type_}", type_)

    def constant(self, t: torch.Tensor) -> Value:
        type_ = TensorType(tuple(t.shape), t.dtype)
        return self.op(f"arith.constant {dense_literal(t)} : {type_}", type_)

    def scalar_tensor(self, value, dtype: torch.dtype) -> Value:
        type_ = TensorType((), dtype)
        return self.op(
            f"arith.constant dense<{_scalar_bits(value, dtype)}> : {type_}",
            type_)

    def generic(self, inputs, maps, out_type: TensorType, iterators, body,
                init: Value | None = None) -> Value:
        """A linalg.generic over `inputs` (with indexing `maps`, the
        output's map last) whose region is `body(args, out) -> (lines,
        yielded)`: `args` are the block argument names of the inputs, `out`
        the output's."""
        init = init or self.empty(out_type)
        args = [f"%a{i}" for i in range(len(inputs))]
        out = "%out"
        block_args = ", ".join(
            [f"{a}: {v.type.elt}" for a, v in zip(args, inputs)] +
            [f"{out}: {out_type.elt}"])
        lines, result = body(args, out)
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
        self.lines.extend(f"      {line}" for line in lines)
        self.lines.append(f"      linalg.yield {result} : {out_type.elt}")
        self.lines.append(f"    }} -> {out_type} {self.loc}")
        return Value(name, out_type)

    def elementwise(self, inputs, out_type: TensorType, body) -> Value:
        """A parallel generic over the output's dims, inputs broadcast."""
        maps = [broadcast_map(v.type, out_type) for v in inputs]
        maps.append(affine_map(out_type.rank,
                               [f"d{i}" for i in range(out_type.rank)]))
        return self.generic(inputs, maps, out_type,
                            ["parallel"] * out_type.rank, body)
