"""What an aten op's arguments are, once the exporter has resolved them:
besides SSA tensors (`mlir.Value`) and Python scalars, values known at
export time (`Const`, folded with PyTorch) and dynamic sizes (`SymSize`).

Its own module so that the exporter and the op handlers (`attnfuse.ops`)
share these types without importing each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Const:
    """A value known at export time (folded with PyTorch)."""
    value: object


@dataclass
class SymSize:
    """A dynamic size (a sympy expression); never folded."""
    expr: object


@dataclass
class Complex:
    """A complex tensor, as the real tensor of its (real, imaginary) pairs
    (`torch.view_as_real`'s layout: one trailing dim of 2); `pairs` is an
    `mlir.Value`. The exporter maps complex ops to real arithmetic on it
    (ops/complex.py)."""
    pairs: object
