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

import torch
import torch.fx

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def source_of(node: torch.fx.Node):
    """(file, line, code) of the innermost frame of the node's stack trace
    outside torch: the module's own source line."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in [^\n]*\n\s*([^\n]*)',
                        trace)
    if not frames:
        return None
    user = [f for f in frames if not f[0].startswith(_TORCH_DIR)]
    file, line, code = (user or frames)[-1]
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
