#!/usr/bin/env python3
"""The code around attention in whole models, alone: Llama's RMSNorm,
nn.LayerNorm and the SwiGLU gate SiLU(g) * u over [B, T, H] activations,
exported from PyTorch as the package exports them, compiled by attn-compile
into shared libraries with attn-cpu-tile-and-fuse (parallel row blocks, a
norm's statistics computed per block) and without it
(--no-tile-and-fuse: each loop nest whole), run by attn-run --so, side by
side with eager PyTorch at the same thread count. Achieved bandwidth
(bytes of the inputs and outputs / time) against a triad measured in the
same run. Best of attn-run --repeat per variant, variants alternating over
--rounds rounds. Not a test.

    PYTHONPATH=python python3 bench/norm_rows_bench.py [--batch 4]
        [--tokens 2048] [--hidden 896] [--inner 4864] [--dtype f32|bf16]
        [--threads 1] [--rounds 3]
"""

import argparse
import os
import re
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cpu_attention_bench import add_common_args  # noqa: E402
from generate import timed, triad  # noqa: E402
from outline_kernels_bench import build_so, run_so  # noqa: E402


class RMSNorm(torch.nn.Module):
    """transformers' LlamaRMSNorm, as written there."""

    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(dtype)


class SwiGLUGate(torch.nn.Module):
    def forward(self, g, u):
        return torch.nn.functional.silu(g) * u


def cases(b, t, h, inner, dtype):
    """name -> (module, inputs)."""
    x = torch.randn(b, t, h, dtype=dtype)
    g, u = (torch.randn(b, t, inner, dtype=dtype) for _ in range(2))
    return {
        "RMSNorm": (RMSNorm(h).to(dtype), (x,)),
        "LayerNorm": (torch.nn.LayerNorm(h).to(dtype), (x,)),
        "SiLU(g) * u": (SwiGLUGate(), (g, u)),
    }


def moved_bytes(inputs, output):
    return sum(a.numel() * a.element_size() for a in (*inputs, output))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--tokens", type=int, default=2048)
    p.add_argument("--hidden", type=int, default=896)
    p.add_argument("--inner", type=int, default=4864)
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    from attnfuse.compiler import _export

    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    torch.set_num_threads(args.threads)
    bw = triad(args.threads)
    tmp = tempfile.mkdtemp()
    variants = {"tiled": (), "whole": ("--no-tile-and-fuse",)}
    print(f"B={args.batch} T={args.tokens} H={args.hidden} "
          f"inner={args.inner} {args.dtype} threads={args.threads}; "
          f"triad {bw:.1f} GB/s")
    print("| op | attnfuse tiled ms | attnfuse whole ms | eager ms | "
          "tiled / whole | eager / tiled | tiled GB/s (of triad) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (module, inputs) in cases(args.batch, args.tokens, args.hidden,
                                       args.inner, dtype).items():
        module.eval()
        mlir = os.path.join(tmp, re.sub(r"\W", "", name) + ".mlir")
        with open(mlir, "w") as f:
            f.write(_export(module, inputs, None, False, "error").mlir)
        libs = {v: build_so(args.attn_run, mlir, args.threads, extra,
                            args.mattr) for v, extra in variants.items()}
        best = {v: float("inf") for v in (*variants, "eager")}
        with torch.no_grad():
            output = module(*inputs)
            for _ in range(args.rounds):
                for v in variants:
                    best[v] = min(best[v], run_so(args.attn_run, mlir,
                                                  libs[v], args.repeat,
                                                  "forward"))
                best["eager"] = min(best["eager"], timed(
                    {"eager": lambda: module(*inputs)}, args.repeat)["eager"])
        gbs = moved_bytes(inputs, output) / best["tiled"] / 1e9
        print(f"| {name} | {best['tiled'] * 1e3:.2f} | "
              f"{best['whole'] * 1e3:.2f} | {best['eager'] * 1e3:.2f} | "
              f"{best['whole'] / best['tiled']:.2f}x | "
              f"{best['eager'] / best['tiled']:.2f}x | "
              f"{gbs:.1f} ({100 * gbs / bw:.0f}%) |", flush=True)
    print(f"# triad at the end {triad(args.threads):.1f} GB/s "
          f"({time.strftime('%H:%M')})")


if __name__ == "__main__":
    main()
