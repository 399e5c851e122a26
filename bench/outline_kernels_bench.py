#!/usr/bin/env python3
"""Run time of repeated layers with their kernels outlined (one noinline
function per distinct GEMM, attention and loop: attn-cpu-outline-kernels)
and lowered in place (attn-compile --no-outline-kernels), side by side:
shared libraries from attn-compile, as the Python package builds them, run
by attn-run --so.

Each layer: three attn.matmul projections [T, H] x [H, H], causal attn.sdpa
over 4 heads, a linalg.matmul output projection onto a zero fill, residual
add and tanh; f32, batch 1. Best time of attn-run --repeat per variant,
variants alternating over --rounds rounds. Not a test.

    python3 bench/outline_kernels_bench.py [--tokens 512] [--hidden 512]
        [--layers 4] [--threads 1] [--rounds 3] [--mattr=-avx512f]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cpu_attention_bench import add_common_args  # noqa: E402


def layers_module(layers: int, t: int, h: int, heads: int) -> str:
    x, w, m = f"tensor<1x{t}x{h}xf32>", f"tensor<{h}x{h}xf32>", \
        f"tensor<{t}x{h}xf32>"
    d = h // heads
    hd = f"tensor<1x{t}x{heads}x{d}xf32>"
    ht = f"tensor<1x{heads}x{t}x{d}xf32>"
    args = ", ".join(f"%w{n}{i}: {w}" for i in range(layers) for n in "qkvo")
    body = ["  %zero = arith.constant 0.0 : f32"]
    cur = "x"
    for i in range(layers):
        p = f"l{i}_"
        for n in "qkv":
            body += [
                f"  %{p}{n} = attn.matmul %{cur}, %w{n}{i} : ({x}, {w}) -> {x}",
                f"  %{p}{n}4 = tensor.expand_shape %{p}{n} [[0], [1], [2, 3]]"
                f" output_shape [1, {t}, {heads}, {d}] : {x} into {hd}",
                f"  %{p}{n}h = attn.transpose %{p}{n}4 dims(1, 2) : {hd} -> "
                f"{ht}"]
        body += [
            f"  %{p}a = attn.sdpa %{p}qh, %{p}kh, %{p}vh {{is_causal = true}}"
            f" : ({ht}, {ht}, {ht}) -> {ht}",
            f"  %{p}at = attn.transpose %{p}a dims(1, 2) : {ht} -> {hd}",
            f"  %{p}a2 = tensor.collapse_shape %{p}at [[0, 1], [2, 3]] : "
            f"{hd} into {m}",
            f"  %{p}e = tensor.empty() : {m}",
            f"  %{p}f = linalg.fill ins(%zero : f32) outs(%{p}e : {m}) -> {m}",
            f"  %{p}o = linalg.matmul ins(%{p}a2, %wo{i} : {m}, {w}) "
            f"outs(%{p}f : {m}) -> {m}",
            f"  %{p}o3 = tensor.expand_shape %{p}o [[0, 1], [2]] "
            f"output_shape [1, {t}, {h}] : {m} into {x}",
            f"  %{p}r = attn.add %{cur}, %{p}o3 : ({x}, {x}) -> {x}",
            f"  %{p}t = attn.tanh %{p}r : {x}"]
        cur = f"{p}t"
    return (f"func.func @f(%x: {x}, {args}) -> {x} {{\n" + "\n".join(body) +
            f"\n  return %{cur} : {x}\n}}\n")


def build_so(attn_run, path, threads, extra, mattr):
    """attn-compile (beside attn-run) of `path` into a shared library."""
    out = path.replace(".mlir", f"{len(extra)}.so")
    cmd = [os.path.join(os.path.dirname(attn_run), "attn-compile"), path,
           "-o", out, "--emit=so", f"--num-threads={threads}", *extra]
    if mattr:
        cmd.append(f"--mattr={mattr}")
    subprocess.run(cmd, check=True)
    return out


def run_so(attn_run, path, so, repeat, entry="f"):
    """The best time in seconds of `repeat` runs (attn-run's min)."""
    proc = subprocess.run([attn_run, path, "--entry", entry, "--so", so,
                           f"--repeat={repeat}"], capture_output=True,
                          text=True, check=True)
    return float(re.search(r"min=([0-9.]+) ms", proc.stdout).group(1)) * 1e-3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    path = os.path.join(tempfile.mkdtemp(), "layers.mlir")
    with open(path, "w") as f:
        f.write(layers_module(args.layers, args.tokens, args.hidden,
                              args.heads))
    variants = {"outlined": (), "in place": ("--no-outline-kernels",)}
    libs = {name: build_so(args.attn_run, path, args.threads, extra,
                           args.mattr) for name, extra in variants.items()}
    best = {name: float("inf") for name in variants}
    for _ in range(args.rounds):
        for name in variants:
            best[name] = min(best[name], run_so(args.attn_run, path,
                                                libs[name], args.repeat))
    print(f"T={args.tokens} H={args.hidden} heads={args.heads} "
          f"layers={args.layers} threads={args.threads}")
    print("| kernels | best ms |")
    print("|---|---:|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e3:.2f} |")


if __name__ == "__main__":
    main()
