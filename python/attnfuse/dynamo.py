"""`torch.compile(model, backend="attnfuse")`.

Dynamo hands over each captured graph (a GraphModule taking the parameters
and inputs it needs as arguments). The backend compiles a graph with
`attnfuse.compile` when the exporter maps every op in it, and otherwise runs
that graph eagerly, with a warning naming what fell back and why.
"""

from __future__ import annotations

import warnings

import torch

from .errors import AttnFuseError


class FallbackWarning(UserWarning):
    """A graph torch.compile gave the attnfuse backend runs eagerly."""


def attnfuse_backend(gm: torch.fx.GraphModule, example_inputs, **options):
    from .compiler import compile as attnfuse_compile

    if not all(isinstance(x, torch.Tensor) for x in example_inputs):
        kinds = sorted({type(x).__name__ for x in example_inputs
                        if not isinstance(x, torch.Tensor)})
        warnings.warn(f"attnfuse: graph with non-tensor inputs ({', '.join(kinds)}"
                      f", e.g. dynamic sizes) runs eagerly", FallbackWarning)
        return gm.forward
    try:
        compiled = attnfuse_compile(gm, tuple(example_inputs), **options)
    except AttnFuseError as e:
        first = str(e).splitlines()
        warnings.warn(f"attnfuse: graph of {len(gm.graph.nodes)} nodes runs "
                      f"eagerly: {' '.join(l.strip() for l in first)}",
                      FallbackWarning)
        return gm.forward

    def run(*args):
        out = compiled(*args)
        # Dynamo graphs return a tuple of outputs.
        return out if isinstance(out, tuple) else (out,)

    run.attnfuse_compiled = compiled
    return run


def register():
    from torch._dynamo.backends.registry import _BACKENDS, register_backend
    if "attnfuse" not in _BACKENDS or _BACKENDS["attnfuse"] is None:
        register_backend(name="attnfuse")(attnfuse_backend)
