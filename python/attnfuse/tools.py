"""Finding and running the AttnFuse command-line tools.

The package does not link MLIR: Debian's LLVM/MLIR 22 ships no MLIR Python
bindings, so it writes MLIR as text and runs ``attn-opt`` and
``attn-compile`` as subprocesses. A tool is looked up, in this order:

1. ``$ATTNFUSE_TOOLS_DIR/<tool>`` when that variable is set (an error if the
   tool is not there, or if the variable is empty: a set variable is never
   silently ignored);
2. ``<checkout>/build/bin/<tool>`` when the package runs from a source
   checkout (``python/attnfuse`` inside the AttnFuse repository, editable
   install or ``PYTHONPATH``), or ``$ATTN_BUILD_DIR/bin`` when set, as
   ``scripts/build.sh`` uses it;
3. ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .errors import ToolError

_CHECKOUT = Path(__file__).resolve().parent.parent.parent


def _candidates(tool: str):
    build = os.environ.get("ATTN_BUILD_DIR")
    if build:
        yield Path(build) / "bin" / tool
    yield _CHECKOUT / "build" / "bin" / tool


def find_tool(tool: str) -> str:
    """The path of ``tool`` (``attn-opt``, ``attn-compile``, ``attn-run``)."""
    tools_dir = os.environ.get("ATTNFUSE_TOOLS_DIR")
    if tools_dir is not None and not tools_dir.strip():
        raise ToolError("ATTNFUSE_TOOLS_DIR is set but empty: set it to the "
                        "directory that holds the tools, or unset it to use "
                        "the checkout's build/bin or PATH")
    if tools_dir:
        path = Path(tools_dir) / tool
        if not os.access(path, os.X_OK):
            raise ToolError(
                f"ATTNFUSE_TOOLS_DIR={tools_dir} has no executable {tool}")
        return str(path)
    for path in _candidates(tool):
        if os.access(path, os.X_OK):
            return str(path)
    found = shutil.which(tool)
    if found:
        return found
    raise ToolError(
        f"cannot find {tool}: set ATTNFUSE_TOOLS_DIR to the directory that "
        f"holds it, build the repository (scripts/build.sh puts it in "
        f"build/bin), or put it on PATH")


def tool_identity(tool: str) -> str:
    """A cheap fingerprint of a tool binary (path, size, mtime) for cache
    keys: a rebuilt compiler must not reuse libraries the old one made."""
    path = find_tool(tool)
    st = os.stat(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def run_tool(tool: str, args, input_text: str | None = None,
             what: str | None = None) -> subprocess.CompletedProcess:
    """Runs a tool; a non-zero exit raises ToolError with its diagnostics."""
    cmd = [find_tool(tool), *map(str, args)]
    proc = subprocess.run(cmd, input=input_text, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise ToolError(
            f"{what or tool} failed (exit {proc.returncode}): "
            f"{' '.join(cmd)}\n{proc.stderr.strip()}")
    return proc
