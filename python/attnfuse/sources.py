"""Where a torch.fx node came from in the user's Python: the source line
its stack trace names, as the exporter's error messages quote it
(`describe`), as an MLIR location (`location`), and the text of a line
(`source_line`, for `attnfuse.explain`'s remarks).

Its own module so that the exporter and the op handlers (`attnfuse.ops`)
share it without importing each other."""

from __future__ import annotations

import linecache
import os
import re
import weakref

import torch
import torch.fx

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


# Generated code of the GraphModules torch.export made (the bodies of
# higher-order ops such as the `torch.no_grad()` regions of a rotary
# embedding): source text -> the module. Once torch.export's decomposition
# has inlined them, their nodes' stack traces name the generated code
# (`<eval_with_key>.42`, line 12) instead of the user's line.
_GENERATED = weakref.WeakValueDictionary()


def remember_generated(gm: torch.fx.GraphModule):
    """Records the code of `gm` and its submodules, so that `source_of`
    can follow a frame in that code to the node it came from."""
    for m in gm.modules():
        code = getattr(m, "_code", None)
        if isinstance(m, torch.fx.GraphModule) and code:
            _GENERATED[code] = m


def _generated_node(file: str, line: int):
    """The node of a remembered GraphModule whose generated code `file`,
    line `line`, is (None when unknown)."""
    from torch.fx.graph_module import _loader
    gm = _GENERATED.get(_loader.eval_cache.get(file))
    lines = getattr(gm, "_lineno_map", None)
    if not lines:
        return None
    index = lines.get(line - getattr(gm, "_prologue_start", 0))
    nodes = list(gm.graph.nodes)
    if index is None or not 0 <= index < len(nodes):
        return None
    return nodes[index]


def source_of(node: torch.fx.Node, depth: int = 0):
    """(file, line, code) of the innermost frame of the node's stack trace
    outside torch: the module's own source line. A frame in generated FX
    code is followed to the node that code runs, and that node's own
    source line."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)',
                        trace)
    if not frames:
        return None
    user = [f for f in frames if not f[0].startswith(_TORCH_DIR)]
    file, line, code = (user or frames)[-1]
    if file.startswith("<") and depth < 4:
        inner = _generated_node(file, int(line))
        found = source_of(inner, depth + 1) if inner is not None else None
        if found is not None:
            return found
    return file, int(line), code.strip()


def describe(node: torch.fx.Node) -> str:
    """`file:line: code` of the node's source line (`node <name>` when its
    stack trace has none), for error messages."""
    src = source_of(node)
    if not src:
        return f"node {node.name}"
    file, line, code = src
    return f"{file}:{line}: {code}"


def location(node: torch.fx.Node) -> str:
    """The MLIR location of the node's source line (`loc("file":line:1)`),
    else one naming the node."""
    src = source_of(node)
    if not src:
        return f'loc("{node.name}")'
    file = src[0].replace("\\", "\\\\").replace('"', '\\"')
    return f'loc("{file}":{src[1]}:1)'


def source_line(file: str, line: int) -> str:
    return linecache.getline(file, line).strip()
