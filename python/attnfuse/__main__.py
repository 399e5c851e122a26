"""Command line:

    python -m attnfuse export FILE.py:NAME --shape 2x8x32 [--shape ...] -o out.mlir
    python -m attnfuse compile FILE.py:NAME --shape 2x8x32 -o out.so
    python -m attnfuse explain FILE.py:NAME --shape 2x8x32

NAME is an nn.Module class or a function returning a module, called with
no arguments (or with --kwargs JSON). Each --shape is one input tensor of
random normal values (--dtype, default f32; a shape suffixed `:bool` gives a
boolean input); `--dynamic 0=batch` makes dim 0 of every input that has
one dynamic. Malformed options are usage errors (exit status 2).
`compile` writes the shared library, its C header (out.h) and the MLIR
(out.mlir) next to it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
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


def parse_shape(text: str):
    """`--shape`: `2x8x32` (sizes separated by x; empty for a 0-d input),
    suffixed `:bool` for a boolean input -> (dims, kind)."""
    shape, _, kind = text.partition(":")
    if kind not in ("", "bool"):
        raise argparse.ArgumentTypeError(
            f"unknown input kind {kind!r} in {text!r} (only :bool)")
    sizes = shape.split("x") if shape else []
    if not all(re.fullmatch(r"[0-9]+", d) for d in sizes):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a shape: sizes are non-negative integers "
            f"separated by x, such as 2x8x32 (or 2x8:bool)")
    return [int(d) for d in sizes], kind


def parse_dynamic(text: str):
    """`--dynamic`: `DIM=NAME` (or `DIM`), DIM a non-negative integer, NAME
    a Python identifier (default dDIM) -> (dim, name)."""
    index, _, name = text.partition("=")
    if not re.fullmatch(r"[0-9]+", index):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected DIM=NAME with DIM a non-negative integer, "
            f"such as 0=batch")
    name = name or f"d{index}"
    if not name.isidentifier():
        raise argparse.ArgumentTypeError(
            f"{text!r}: the name {name!r} is not a Python identifier")
    return int(index), name


def parse_kwargs(text: str) -> dict:
    """`--kwargs`: a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON: {e}")
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a JSON object")
    return value


def make_inputs(shapes, dtype):
    """One random input per parsed `--shape` (dims, kind)."""
    inputs = []
    for dims, kind in shapes:
        if kind == "bool":
            inputs.append(torch.rand(dims) < 0.5)
        else:
            inputs.append(torch.randn(dims, dtype=dtype))
    return tuple(inputs)


def dynamic_shapes(specs, inputs):
    """torch.export's dynamic shapes for parsed `--dynamic` (dim, name)
    pairs: each dim is dynamic in every input that has it. ValueError for a
    dim given twice or one that no input has."""
    if not specs:
        return None
    dims = {}
    for index, name in specs:
        if index in dims:
            raise ValueError(f"--dynamic: dim {index} is given twice")
        if not any(index < t.dim() for t in inputs):
            ranks = ", ".join(str(t.dim()) for t in inputs) or "no inputs"
            raise ValueError(f"--dynamic {index}={name}: no input has dim "
                             f"{index} (ranks: {ranks})")
        dims[index] = torch.export.Dim(name)
    return tuple({i: d for i, d in dims.items() if i < t.dim()}
                 for t in inputs)


def main(argv=None):
    import attnfuse

    p = argparse.ArgumentParser(prog="python -m attnfuse",
                                description="Export or compile a PyTorch "
                                "attention module with AttnFuse.")
    p.add_argument("command", choices=["export", "compile", "explain"])
    p.add_argument("module", help="FILE.py:ClassOrFactory")
    p.add_argument("--shape", action="append", default=[], type=parse_shape,
                   help="an input shape, e.g. 2x8x32 (repeat per input; "
                   "suffix :bool for a boolean input)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    p.add_argument("--kwargs", default={}, type=parse_kwargs,
                   help="JSON keyword arguments for the class or factory")
    p.add_argument("--dynamic", action="append", default=[],
                   type=parse_dynamic,
                   help="DIM=NAME: that dim of every input that has it is "
                   "dynamic")
    p.add_argument("--constants", choices=["none", "buffers", "all"],
                   default="none", help="fold state into the module")
    p.add_argument("--backend", choices=["auto", "flash", "math"],
                   default="auto")
    p.add_argument("-o", "--output", help="output file (export: - is stdout)")
    args = p.parse_args(argv)

    dtype = DTYPES[args.dtype]
    inputs = make_inputs(args.shape, dtype)
    try:
        dynamic = dynamic_shapes(args.dynamic, inputs)
    except ValueError as e:
        p.error(str(e))
    module = load_module(args.module, args.kwargs).to(dtype)
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
