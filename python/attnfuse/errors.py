"""Exceptions raised by attnfuse."""


class AttnFuseError(Exception):
    """Base class of every attnfuse error."""


class ExportError(AttnFuseError):
    """The module cannot be written as AttnFuse MLIR (an op without a
    mapping, train-mode dropout, a dynamic size where a static one is
    needed). The message names the aten op and the module's source line."""


class ToolError(AttnFuseError):
    """attn-opt or attn-compile is missing or failed."""
