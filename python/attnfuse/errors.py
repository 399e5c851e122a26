"""Exceptions raised by attnfuse."""


class AttnFuseError(Exception):
    """Base class of every attnfuse error."""


class ExportError(AttnFuseError):
    """The module cannot be written as AttnFuse MLIR (an op without a
    mapping, train-mode dropout, a dynamic size where a static one is
    needed). The message names the aten op and the module's source line."""


class ToolError(AttnFuseError):
    """attn-opt or attn-compile is missing or failed."""


class RunTimeCheckError(AttnFuseError):
    """A run-time check of compiled code failed during a call (a dynamic
    size that differs from the one it must equal, an allocation that
    failed, an index out of range). The message is the check's. Buffers
    the failed call had allocated are leaked; the library stays usable."""
