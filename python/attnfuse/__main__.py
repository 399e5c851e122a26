"""Command line:

    python -m attnfuse export FILE.py:NAME --shape 2x8x32 [--shape ...] -o out.mlir
    python -m attnfuse compile FILE.py:NAME --shape 2x8x32 -o out.so
    python -m attnfuse explain FILE.py:NAME --shape 2x8x32

NAME is an nn.Module class or a function returning a module, called with
no arguments (or with --kwargs JSON). Each --shape is one input tensor of
random normal values (--dtype, default f32; a shape suffixed `:bool` gives a
boolean input); `--dynamic 0=batch` makes dim 0 of every input dynamic.
`compile` writes the shared library, its C header (out.h) and the MLIR
(out.mlir) next to it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "f64": torch.float64}


def load_module(spec: str, kwargs: dict):
    file, _, name = spec.rpartition(":")
    if not file or not name:
        raise SystemExit(f"error: expected FILE.py:NAME, got {spec!r}")
    path = Path(file)
    if not path.exists():
        raise SystemExit(f"error: {file} does not exist")
    sys.path.insert(0, str(path.resolve().parent))
    mod_spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(mod_spec)
    sys.modules[path.stem] = mod
    mod_spec.loader.exec_module(mod)
    factory = getattr(mod, name, None)
    if factory is None:
        raise SystemExit(f"error: {file} has no {name}")
    try:
        module = factory(**kwargs)
    except TypeError as e:
        raise SystemExit(f"error: {name}(**{kwargs}) failed: {e}")
    if not isinstance(module, torch.nn.Module):
        raise SystemExit(f"error: {name}() is not an nn.Module")
    return module.eval()


def make_inputs(shapes, dtype):
    inputs = []
    for s in shapes:
        shape, _, kind = s.partition(":")
        dims = [int(d) for d in shape.split("x")] if shape else []
        if kind == "bool":
            inputs.append(torch.rand(dims) < 0.5)
        elif kind:
            raise SystemExit(f"error: unknown input kind {kind!r} in {s!r}")
        else:
            inputs.append(torch.randn(dims, dtype=dtype))
    return tuple(inputs)


def dynamic_shapes(specs, inputs):
    if not specs:
        return None
    dims = {}
    for s in specs:
        index, _, name = s.partition("=")
        dims[int(index)] = torch.export.Dim(name or f"d{index}")
    return tuple({i: d for i, d in dims.items() if i < t.dim()}
                 for t in inputs)


def main(argv=None):
    import attnfuse

    p = argparse.ArgumentParser(prog="python -m attnfuse",
                                description="Export or compile a PyTorch "
                                "attention module with AttnFuse.")
    p.add_argument("command", choices=["export", "compile", "explain"])
    p.add_argument("module", help="FILE.py:ClassOrFactory")
    p.add_argument("--shape", action="append", default=[],
                   help="an input shape, e.g. 2x8x32 (repeat per input; "
                   "suffix :bool for a boolean input)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    p.add_argument("--kwargs", default="{}",
                   help="JSON keyword arguments for the class or factory")
    p.add_argument("--dynamic", action="append", default=[],
                   help="DIM=NAME: that dim of every input is dynamic")
    p.add_argument("--constants", choices=["none", "buffers", "all"],
                   default="none", help="fold state into the module")
    p.add_argument("--backend", choices=["auto", "flash", "math"],
                   default="auto")
    p.add_argument("-o", "--output", help="output file (export: - is stdout)")
    args = p.parse_args(argv)

    dtype = DTYPES[args.dtype]
    module = load_module(args.module, json.loads(args.kwargs)).to(dtype)
    inputs = make_inputs(args.shape, dtype)
    dynamic = dynamic_shapes(args.dynamic, inputs)
    constants = {"none": False, "buffers": "buffers", "all": True}[
        args.constants]
    try:
        if args.command == "export":
            text = attnfuse.export(module, inputs, dynamic_shapes=dynamic,
                                   constants=constants)
            if not args.output or args.output == "-":
                sys.stdout.write(text)
            else:
                Path(args.output).write_text(text)
        elif args.command == "explain":
            print(attnfuse.explain(module, inputs, dynamic_shapes=dynamic,
                                   constants=constants))
        else:
            if not args.output:
                raise SystemExit("error: compile needs -o OUT.so")
            compiled = attnfuse.compile(module, inputs, backend=args.backend,
                                        dynamic_shapes=dynamic,
                                        constants=constants)
            out = Path(args.output)
            shutil.copy(compiled.library_path, out)
            shutil.copy(compiled.header_path, out.with_suffix(".h"))
            out.with_suffix(".mlir").write_text(compiled.mlir)
            n = attnfuse.count_sdpa(compiled.mlir)
            print(f"wrote {out} ({out.with_suffix('.h')}): @forward, "
                  f"{n} attn.sdpa, arguments: " + ", ".join(
                      f"{s.name} {s.type}" for s in compiled.exported.args))
    except attnfuse.AttnFuseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
