#!/usr/bin/env python3
"""Scaling of `attn-opt --attn-fuse-sdpa` with module size.

Generates modules of N attention blocks in mixed forms (generic op syntax, as
frontends write it), runs the pass with -mlir-timing, checks that every block
fused, and prints the pass's wall time per block (fastest of --repeat runs: the
machine is shared). Two layouts: one function
per block, and one function with N chained blocks (each block's output is the
next block's query), which stresses one region's worklist. As a baseline,
the last column times upstream --canonicalize on the same module.

    python3 bench/fusion_scale.py [--attn-opt build/bin/attn-opt] [--sizes 1000 10000]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

Q = "tensor<2x4x16x32xf32>"
KT = "tensor<2x4x32x16xf32>"
S = "tensor<2x4x16x16xf32>"
FORMS = ["mul_fill_causal", "div", "qscale", "where_pad", "additive", "dropout",
         "kt_given", "fill_finite_then_scale"]

TRIU = ("dense<[" + ", ".join(
    "[" + ", ".join("true" if j > i else "false" for j in range(16)) + "]"
    for i in range(16)) + "]> : tensor<16x16xi1>")


def block(lines, n, form, q, k, v, pad, bias):
    """Appends one attention block in `form`; returns its output value."""
    def op(text):
        lines.append(f"  {text}")
    if form == "qscale":
        op(f'%{n}q = "attn.mul"({q}, %c) : ({Q}, tensor<f32>) -> {Q}')
        q = f"%{n}q"
    if form == "kt_given":
        kt = "%kt_given"
    else:
        op(f'%{n}kt = "attn.transpose"({k}) {{dim0 = -2 : i64, dim1 = -1 : i64}} : ({Q}) -> {KT}')
        kt = f"%{n}kt"
    op(f'%{n}s = "attn.matmul"({q}, {kt}) : ({Q}, {KT}) -> {S}')
    s = f"%{n}s"
    if form in ("mul_fill_causal", "where_pad", "additive", "dropout", "kt_given"):
        op(f'%{n}ss = "attn.mul"({s}, %c) : ({S}, tensor<f32>) -> {S}')
        s = f"%{n}ss"
    if form == "div":
        op(f'%{n}ss = "attn.div"({s}, %c8) : ({S}, tensor<f32>) -> {S}')
        s = f"%{n}ss"
    if form == "mul_fill_causal":
        op(f'%{n}m = "attn.masked_fill"({s}, %triu) {{value = 0xFFF0000000000000 : f64}} : ({S}, tensor<16x16xi1>) -> {S}')
        s = f"%{n}m"
    if form == "where_pad":
        op(f'%{n}m = "attn.where"({pad}, {s}, %ninf) : (tensor<2x1x1x16xi1>, {S}, tensor<f32>) -> {S}')
        s = f"%{n}m"
    if form == "additive":
        op(f'%{n}m = "attn.add"({s}, {bias}) : ({S}, tensor<16x16xf32>) -> {S}')
        s = f"%{n}m"
    if form == "fill_finite_then_scale":
        op(f'%{n}m = "attn.masked_fill"({s}, %triu) {{value = -1.0e9 : f64}} : ({S}, tensor<16x16xi1>) -> {S}')
        op(f'%{n}ss = "attn.mul"(%{n}m, %c) : ({S}, tensor<f32>) -> {S}')
        s = f"%{n}ss"
    op(f'%{n}p = "attn.softmax"({s}) {{dim = -1 : i64}} : ({S}) -> {S}')
    p = f"%{n}p"
    if form == "dropout":
        op(f'%{n}d = "attn.dropout"({p}) {{p = 0.1 : f64, train = true}} : ({S}) -> {S}')
        p = f"%{n}d"
    op(f'%{n}o = "attn.matmul"({p}, {v}) : ({S}, {Q}) -> {Q}')
    return f"%{n}o"


def constants(lines):
    lines.append('  %c = arith.constant dense<0.17677669> : tensor<f32>')
    lines.append('  %c8 = arith.constant dense<5.656854> : tensor<f32>')
    lines.append('  %ninf = arith.constant dense<0xFF800000> : tensor<f32>')
    lines.append(f'  %triu = arith.constant {TRIU}')


ARGS = (f"%q: {Q}, %k: {Q}, %v: {Q}, %kt_given: {KT}, "
        f"%pad: tensor<2x1x1x16xi1>, %bias: tensor<16x16xf32>")


def module(n, layout):
    lines = ["module {"]
    if layout == "functions":
        for i in range(n):
            lines.append(f"func.func @block{i}({ARGS}) -> {Q} {{")
            constants(lines)
            out = block(lines, f"b{i}_", FORMS[i % len(FORMS)],
                        "%q", "%k", "%v", "%pad", "%bias")
            lines.append(f"  return {out} : {Q}")
            lines.append("}")
    else:
        lines.append(f"func.func @chain({ARGS}) -> {Q} {{")
        constants(lines)
        cur = "%q"
        for i in range(n):
            cur = block(lines, f"b{i}_", FORMS[i % len(FORMS)],
                        cur, "%k", "%v", "%pad", "%bias")
        lines.append(f"  return {cur} : {Q}")
        lines.append("}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def timed(attn_opt, path, flag, name):
    """Runs one pass with -mlir-timing: (pass seconds, process seconds, IR)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [attn_opt, path, flag, "-mlir-timing", "-mlir-disable-threading"],
        capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    m = re.search(r"^\s*([0-9.]+)\s+\(\s*[0-9.]+%\)\s+" + name + r"\s*$",
                  proc.stderr, re.M)
    if not m:
        sys.exit(f"no {name} line in -mlir-timing output:\n" + proc.stderr)
    return float(m.group(1)), wall, proc.stdout


def run(attn_opt, path):
    return timed(attn_opt, path, "--attn-fuse-sdpa", "AttnFuseSdpa")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attn-opt",
                        default=os.path.join(here, "..", "build", "bin", "attn-opt"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per size; the fastest is reported")
    args = parser.parse_args()
    print(f"{'layout':<10} {'blocks':>7} {'fused':>7} {'pass s':>8} "
          f"{'us/block':>9} {'process s':>10} {'canon s':>8}")
    for layout in ("functions", "chain"):
        for n in args.sizes:
            with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
                f.write(module(n, layout))
                path = f.name
            try:
                runs = [run(args.attn_opt, path) for _ in range(args.repeat)]
                pass_s = min(r[0] for r in runs)
                wall = min(r[1] for r in runs)
                out = runs[0][2]
                # Baseline: upstream --canonicalize on the same module (one
                # greedy walk that changes almost nothing).
                canon = min(timed(args.attn_opt, path, "--canonicalize",
                                  "Canonicalizer")[0]
                            for _ in range(args.repeat))
            finally:
                os.unlink(path)
            fused = out.count("attn.sdpa")
            left = out.count("attn.softmax")
            if fused != n or left:
                sys.exit(f"{layout} n={n}: {fused} fused, {left} softmax left")
            print(f"{layout:<10} {n:>7} {fused:>7} {pass_s:>8.3f} "
                  f"{pass_s / n * 1e6:>9.1f} {wall:>10.2f} {canon:>8.3f}")


if __name__ == "__main__":
    main()
