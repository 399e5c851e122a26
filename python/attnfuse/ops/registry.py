"""The registry of aten op handlers: `handles` registers a handler,
`handler_of` finds one. Its own module so that the op families register
into it without importing the package that imports them."""

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
