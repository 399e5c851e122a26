"""The registry of aten op handlers, one module per op family.

A handler is `fn(ex, *args, **kwargs)`: `ex` is the Exporter (its builder
`ex.b`, the node being exported `ex.node`, value helpers), the arguments
are the aten op's, with graph values resolved to `mlir.Value`s, folded
`Const`s or Python scalars. It returns the op's result (a Value, or a list
for several). Adding an op is one decorated function in its family's
module:

    @handles(aten.sin.default)
    def sin(ex, x):
        return unary_math(ex, x, "sin")
"""

from __future__ import annotations

HANDLERS: dict = {}


def handles(*targets):
    """Registers the decorated function as the handler of `targets`: aten
    overloads, or the qualified name (`"transformers.grouped_mm_fallback.
    default"`) of an op a library registers only once it is imported."""
    def register(fn):
        for t in targets:
            if t in HANDLERS:
                raise RuntimeError(f"two handlers for {t}")
            HANDLERS[t] = fn
        return fn
    return register


def handler_of(target):
    """The handler of an op overload, by identity or by qualified name."""
    return HANDLERS.get(target) or HANDLERS.get(str(target))


# Importing the families fills HANDLERS.
from . import (attention, convolutions, elementwise, indexing, masks,  # noqa
               norms, products, reductions, routing, state, views)
