"""Exceptions raised by attnfuse."""


class AttnFuseError(Exception):
    """Base class of every attnfuse error."""


class ExportError(AttnFuseError):
    """The module cannot be written as AttnFuse MLIR (an op without a
    mapping, train-mode dropout, a dynamic size where a static one is
    needed). The message names the aten op and the module's source line."""


class ToolError(AttnFuseError):
    """attn-opt or attn-compile is missing or failed."""


class RunTimeCheckError(AttnFuseError, RuntimeError):
    """A run-time check of compiled code failed during a call (a dynamic
    size that differs from the one it must equal, an allocation that
    failed, an index out of range, an integer division by zero), on the
    calling thread or on any thread of a parallel loop. The message is the
    check's. It is a RuntimeError, as the errors eager PyTorch raises for
    the same inputs are. Buffers the failed call had allocated are leaked;
    the library stays usable."""


class InputError(AttnFuseError, ValueError):
    """An argument of a call is malformed (a dtype, rank or size the
    compiled code does not take, sizes that disagree with each other, a
    value out of range). Raised before the compiled code runs; the message
    names the argument and its sizes."""


class BusyError(AttnFuseError, RuntimeError):
    """An object that owns mutable state (a Generator and its KV cache) was
    called while another call was using it: from another thread, or from a
    callback of that call. Concurrent calls would corrupt the state."""


class InPlaceError(AttnFuseError, RuntimeError):
    """A tensor the compiled module writes in place cannot be written: a
    leaf that requires grad, with grad mode on (eager PyTorch raises a
    RuntimeError for the module's in-place op)."""


class PackageError(AttnFuseError):
    """A saved package (`CompiledModule.save`, `Generator.save`) cannot be
    loaded or written: a file missing, truncated or changed since it was
    saved, a manifest edited by hand or of another format, a package from
    another attnfuse version, code for CPU features this host lacks, a
    library that does not match its manifest. The message names the file
    and what is wrong; `path` is that file (or the package directory)."""

    def __init__(self, path, message: str):
        super().__init__(f"{path}: {message}")
        self.path = str(path)
