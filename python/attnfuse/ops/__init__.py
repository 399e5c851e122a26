"""The registry of aten op handlers, one module per op family.

A handler is `fn(ex, *args, **kwargs)`: `ex` is the Exporter (its builder
`ex.b`, the node being exported `ex.node`, value helpers), the arguments
are the aten op's, with graph values resolved to `mlir.Value`s, folded
`Const`s or Python scalars. It returns the op's result (a Value, or a list
for several). Adding an op is one decorated function in its family's
module (`handles` comes from `attnfuse.ops.registry`):

    @handles(aten.sin.default)
    def sin(ex, x):
        return unary_math(ex, x, "sin")
"""

from __future__ import annotations

from .registry import HANDLERS, handler_of, handles

# Importing the families fills HANDLERS.
from . import (attention, convolutions, elementwise, indexing, masks,  # noqa
               norms, products, reductions, routing, state, views)

__all__ = ["HANDLERS", "handler_of", "handles"]
