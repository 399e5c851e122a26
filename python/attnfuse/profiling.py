"""The ops of a compiled module as torch.profiler events
(`attnfuse.compile(..., profile=True)`; docs/python.md, "Profiling").

A library compiled for profiling (`attn-compile --trace
--trace-locations --trace-linalg-ops`) calls the runtime's
`attnrt_trace_begin(id)` and `attnrt_trace_end(id)` around the code of
each op of the fused module (each `attn.sdpa`, each product, attn or linalg,
each elementwise op) and names the spans in its `attn_trace_names`, with
the op's Python source line: the mechanism of `attn-run --trace`. While torch.profiler records, a call installs a hook
in the library's runtime (`attnrt_trace_set_hook`) that opens a
`record_function` event at each begin and closes it at the end, on the
thread that runs the op, so the events nest under the call's own
`attnfuse.<function>` event in the profiler's table and Chrome trace.
With the profiler off the hook is not installed and each trace call costs
two loads and two branches; a library compiled without `profile=True` has
no trace calls at all.
"""

from __future__ import annotations

import ctypes
import os
import threading
from contextlib import contextmanager

import torch

from .errors import AttnFuseError

# void (*attnrt_trace_hook)(int64_t id, int isBegin)
_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int)


def trace_names(library: ctypes.CDLL) -> list[str]:
    """The library's span names by id (`attn_trace_names`); an
    AttnFuseError when it was compiled without trace calls."""
    try:
        count = ctypes.c_int64.in_dll(library, "attn_trace_num_names").value
        array = (ctypes.c_char_p * count).in_dll(library, "attn_trace_names")
    except ValueError as e:
        raise AttnFuseError(
            f"{library._name} has no trace calls to profile: compile with "
            f"profile=True") from e
    return [array[i].decode(errors="replace") for i in range(count)]


def event_name(span: str) -> str:
    """The profiler event of a span: `sdpa /path/model.py:12` (attn-compile
    --trace-locations) as `attn.sdpa model.py:12`, `linalg.matmul
    /path/model.py:30` (--trace-linalg-ops) as `linalg.matmul
    model.py:30`, an op without a Python location as `attn.sdpa`."""
    op, _, where = span.partition(" ")
    if "." not in op:
        op = f"attn.{op}"
    if not where:
        return op
    file, _, line = where.rpartition(":")
    return f"{op} {os.path.basename(file)}:{line}"


def _enter(name: str):
    return torch.ops.profiler._record_function_enter_new(name, None)


def _exit(handle) -> None:
    # As torch.autograd.profiler.record_function.__exit__ closes its event.
    with torch._C.DisableTorchFunctionSubclass():
        torch.ops.profiler._record_function_exit._RecordFunction(handle)


class OpProfiler:
    """Turns a profiled library's trace spans into torch.profiler events
    during the calls made under `events()`."""

    def __init__(self, library: ctypes.CDLL, func_name: str):
        self.names = [event_name(n) for n in trace_names(library)]
        self.call_name = f"attnfuse.{func_name}"
        self._set_hook = library.attnrt_trace_set_hook
        self._set_hook.argtypes = [ctypes.c_void_p]
        self._set_hook.restype = None
        self._hook = _HOOK(self._event)
        self._hook_pointer = ctypes.cast(self._hook, ctypes.c_void_p)
        self._open = threading.local()
        self._lock = threading.Lock()
        self._active = 0

    def _event(self, span: int, begin: int) -> None:
        # Called from the compiled code (ctypes takes the GIL); an exception
        # here could not reach the caller, so none may escape.
        try:
            stack = getattr(self._open, "stack", None)
            if stack is None:
                stack = self._open.stack = []
            if begin:
                name = (self.names[span] if 0 <= span < len(self.names)
                        else f"attn.span{span}")
                stack.append(_enter(name))
            elif stack:
                _exit(stack.pop())
        except Exception:  # noqa: BLE001 - see above
            pass

    @contextmanager
    def events(self):
        """Around one call: its ops become events when torch.profiler is
        recording (the hook is installed while any such call runs)."""
        if not torch.autograd.profiler._is_profiler_enabled:
            yield
            return
        handle = _enter(self.call_name)
        with self._lock:
            self._active += 1
            if self._active == 1:
                self._set_hook(self._hook_pointer)
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    self._set_hook(None)
            # A failed run-time check leaves spans open: close them.
            stack = getattr(self._open, "stack", None) or []
            while stack:
                _exit(stack.pop())
            _exit(handle)
