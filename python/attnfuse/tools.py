"""Finding and running the AttnFuse command-line tools.

The package does not link MLIR: Debian's LLVM/MLIR 22 ships no MLIR Python
bindings, so it writes MLIR as text and runs ``attn-opt`` and
``attn-compile`` as subprocesses. A tool is looked up, in this order:

1. ``$ATTNFUSE_TOOLS_DIR/<tool>`` when that variable is set (an error if the
   tool is not there, or if the variable is empty: a set variable is never
   silently ignored);
2. ``$ATTN_BUILD_DIR/bin`` when set, as ``scripts/build.sh`` uses it;
3. ``attnfuse/_native/bin`` inside the package, where a wheel built by
   ``pip install ./python`` or ``python -m build --wheel ./python`` puts
   them (with the runtime archive and the C API of packages beside, in
   ``_native/lib`` and ``_native/include``);
4. ``<checkout>/build/bin/<tool>`` when the package runs from a source
   checkout (``python/attnfuse`` inside the AttnFuse repository,
   ``PYTHONPATH``);
5. ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .errors import ToolError

_CHECKOUT = Path(__file__).resolve().parent.parent.parent
# What the wheel installs (python/pyproject.toml: CMake's component
# "attnfuse" under attnfuse/_native).
NATIVE_DIR = Path(__file__).resolve().parent / "_native"


def _candidates(tool: str):
    build = os.environ.get("ATTN_BUILD_DIR")
    if build:
        yield Path(build) / "bin" / tool
    yield NATIVE_DIR / "bin" / tool
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
        f"cannot find {tool}: install the package with pip (pip install "
        f"./python builds the tools into it), set ATTNFUSE_TOOLS_DIR to the "
        f"directory that holds it, build the repository (scripts/build.sh "
        f"puts it in build/bin), or put it on PATH")


def c_api_dirs() -> tuple[str, str]:
    """``(include_dir, lib_dir)`` of the C API of packages
    (``attn/Package/AttnPackage.h``, ``libAttnPackage.so``) that a C
    program compiles and links against: the wheel's ``_native``, else the
    checkout's ``include`` and the build's ``lib`` (``$ATTN_BUILD_DIR`` or
    ``build``). ToolError when neither has the library."""
    candidates = [(NATIVE_DIR / "include", NATIVE_DIR / "lib")]
    build = os.environ.get("ATTN_BUILD_DIR")
    for b in ([Path(build)] if build else []) + [_CHECKOUT / "build"]:
        candidates.append((_CHECKOUT / "include", b / "lib"))
    for include, lib in candidates:
        if ((include / "attn" / "Package" / "AttnPackage.h").is_file()
                and (lib / "libAttnPackage.so").is_file()):
            return str(include), str(lib)
    raise ToolError("cannot find libAttnPackage.so and its header: install "
                    "the package with pip (pip install ./python) or build "
                    "the repository (scripts/build.sh)")


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
