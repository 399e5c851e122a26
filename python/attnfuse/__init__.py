"""AttnFuse's Python front end: PyTorch attention modules in, fused
ahead-of-time compiled callables out.

    import attnfuse
    compiled = attnfuse.compile(CausalSelfAttention(cfg).eval(), (x,))
    y = compiled(x)

`export` writes the module as MLIR text (attention as `attn` ops, the rest as
upstream linalg/tensor/arith); `compile` fuses it with `attn-opt
--attn-fuse-sdpa`, compiles it with `attn-compile` into a cached shared
library and loads it with ctypes; `explain` lists which attention blocks
fused and why the others did not, at their Python source lines;
`CompiledModule.save` and `Generator.save` write a package directory that
`load` gives back in another process; `compile(..., profile=True)` shows
each op of the compiled module in torch.profiler. Importing
the package registers the `torch.compile(model, backend="attnfuse")`
backend. The tools are found as `attnfuse.tools` says (ATTNFUSE_TOOLS_DIR,
else ATTN_BUILD_DIR/bin, else the wheel's own attnfuse/_native/bin, else
the checkout's build/bin, else PATH).
"""

from .compiler import (CompiledModule, Explanation, Remark, compile,
                       count_sdpa, explain, export, fuse)
from .errors import (AttnFuseError, BusyError, ExportError, InPlaceError,
                     InputError, PackageError, RunTimeCheckError, ToolError)
from .generation import Generator, compile_generator
from .gguf_file import GGUFError, compile_generator_from_gguf
from .quantized_weights import dequantized_model
from .loading import load
from .package import VERSION as __version__
from .tools import find_tool
from . import dynamo as _dynamo

_dynamo.register()

__all__ = ["compile", "export", "explain", "fuse", "count_sdpa", "find_tool",
           "compile_generator", "compile_generator_from_gguf",
           "dequantized_model", "GGUFError", "load", "CompiledModule", "Explanation",
           "Generator", "Remark", "AttnFuseError", "BusyError",
           "ExportError", "InPlaceError", "InputError", "PackageError",
           "RunTimeCheckError", "ToolError"]
