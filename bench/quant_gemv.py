"""Decode GEMVs (one row) of a 0.5B Llama's MLP projections with quantized
weights (attn.quantized_matmul) against the same product with bf16
weights (linalg.matmul of x and W^T, the GEMV of GemvToCpu.cpp): the
weight bytes and weights read per second. Not a test.

  python3 bench/quant_gemv.py [--threads 1 2] [--repeat 50] [--rounds 3]
      [--shapes 5632x1024 1024x5632] [--mb 96] [--attn-run build/bin/attn-run]
      [--cc cc] [--ymm-rows] [--weights q4_k q6_k] [--rows 8]
      [--prefill 128 512]

Each timed call multiplies one row (--rows R: R rows, a batch of R
sequences' decode step) by L distinct copies of the weight
(separate buffers, about --mb MiB in all: more than the L3, so that they
stream from memory as a model's layers do) and returns the L results;
GB/s = L x the weight's bytes / the median time of a call (attn-run
--repeat), the fastest of --rounds interleaved rounds. The activations are bf16 (the results bf16, or f32 for the bf16
GEMV, as the exporter's nn.Linear); q8_0 and q4_0 are llama.cpp's blocks,
int4_sym has f16 scales per group of 128, q4_k and q6_k (the types of a
Q4_K_M file) are random valid blocks, int8_asym (`weights="int8"`,
NNCF's INT8_ASYM) has one f32 scale and zero point per row. The rows
marked "int8 act" are
the same products compiled with --quantized-activations=int8 (integer dot
products on a VNNI host; the f32 path, so the same numbers, elsewhere).
With --ymm-rows, the int8 rows of the 4-bit and q8_0 weights are also
measured with attn-run --mattr=-avx512vnni ("int8 act, ymm"): on a host
with AVX512-VNNI and AVX-VNNI (Zen 5, Sapphire Rapids) that is the 8-lane
step (AVX-VNNI's vpdpbusd on ymm) beside the default wide step of two
units on zmm. Each round also runs bench/cpu_peak.c's triad (built with --cc) with each
thread count; "% triad" is GB/s over the best triad of the run.

With --prefill R [R ...], the prefill products instead: [R, K] bf16 rows
times the quantized [N, K] weight (one copy, from cache: the product is
bound by arithmetic), the f32 GEMM on dequantized panels against the
same product with --quantized-activations=int8 (the integer GEMM on a
VNNI host, for q8_0, q4_0, int4_sym, q4_k and q6_k; the k-quants are
random valid blocks, as a Q4_K_M file stores its projections), GOP/s = 2
R N K / the median time, the fastest of --rounds rounds.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from attnfuse import quant  # noqa: E402

# (scheme, group, --quantized-activations)
SCHEMES = [("bf16", None, None), ("q8_0", None, None), ("q8_0", None, "int8"),
           ("q4_0", None, None), ("q4_0", None, "int8"),
           ("int4_sym", 128, None), ("int4_sym", 128, "int8"),
           ("q4_k", None, None), ("q4_k", None, "int8"),
           ("q6_k", None, None), ("q6_k", None, "int8"),
           ("int8_asym", None, None), ("int8_asym", None, "int8")]


def quant_module(qt, copies, rows=1):
    n, k = qt.shape
    s = qt.scheme
    fmt = (f"#attn.quant<{s.name}>" if s.is_gguf else
           f"#attn.quant<{s.name}, group = {qt.group_size}, scale = {s.scale_dtype}>")
    x, w, y = (f"tensor<{rows}x{k}xbf16>", f"tensor<{qt.nbytes}xi8>",
               f"tensor<{rows}x{n}xbf16>")
    args = ", ".join(f"%w{i}: {w}" for i in range(copies))
    body = "".join(
        f"  %y{i} = attn.quantized_matmul %x, %w{i} {{format = {fmt}}} "
        f": ({x}, {w}) -> {y}\n" for i in range(copies))
    results = ", ".join(f"%y{i}" for i in range(copies))
    return (f"func.func @main(%x: {x}, {args}) -> ({', '.join([y] * copies)}) {{\n"
            f"{body}  return {results} : {', '.join([y] * copies)}\n}}\n")


def bf16_module(n, k, copies, rows=1):
    x, w, wt = f"tensor<{rows}x{k}xbf16>", f"tensor<{n}x{k}xbf16>", f"tensor<{k}x{n}xbf16>"
    acc = f"tensor<{rows}x{n}xf32>"
    args = ", ".join(f"%w{i}: {w}" for i in range(copies))
    body = (f"  %z = arith.constant 0.0 : f32\n  %e = tensor.empty() : {acc}\n"
            f"  %i = linalg.fill ins(%z : f32) outs(%e : {acc}) -> {acc}\n")
    for i in range(copies):
        body += (f"  %t{i} = tensor.empty() : {wt}\n"
                 f"  %wt{i} = linalg.transpose ins(%w{i} : {w}) outs(%t{i} : {wt}) "
                 f"permutation = [1, 0]\n"
                 f"  %y{i} = linalg.matmul ins(%x, %wt{i} : {x}, {wt}) "
                 f"outs(%i : {acc}) -> {acc}\n")
    results = ", ".join(f"%y{i}" for i in range(copies))
    return (f"func.func @main(%x: {x}, {args}) -> ({', '.join([acc] * copies)}) {{\n"
            f"{body}  return {results} : {', '.join([acc] * copies)}\n}}\n")


def measure(attn_run, tmp, name, module, weight_npy, copies, threads, repeat,
            activations=None):
    """The median time of a call (attn-run --repeat), in seconds."""
    path = os.path.join(tmp, name + ".mlir")
    Path(path).write_text(module)
    cmd = [attn_run, path, "--entry", "main", f"--num-threads={threads}",
           "--repeat", str(repeat), "--input", "0=" + os.path.join(tmp, "x.npy")]
    if activations == "int8-ymm":
        cmd += ["--quantized-activations=int8", "--mattr=-avx512vnni"]
    elif activations:
        cmd.append(f"--quantized-activations={activations}")
    for i in range(copies):
        cmd += ["--input", f"{i + 1}={weight_npy}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"time: median=([0-9.]+) ms", out).group(1)) * 1e-3


def prepare(a, tmp, n, k, w, scheme, group, rng):
    """Writes the weight's .npy; returns (module, .npy path, bytes, copies)."""
    npy = os.path.join(tmp, f"w_{scheme}_{n}x{k}.npy")
    if scheme == "bf16":
        nbytes = n * k * 2
        np.save(npy, w.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))
    else:
        qt = (random_kquant(scheme, n, k, rng) if scheme in KQUANTS
              else quant.quantize(w, scheme, group))
        nbytes = qt.nbytes
        np.save(npy, qt.data.view(np.int8))
    copies = max(1, math.ceil(a.mb * 2 ** 20 / nbytes))
    module = (bf16_module(n, k, copies, a.rows) if scheme == "bf16"
              else quant_module(qt, copies, a.rows))
    return module, npy, nbytes, copies


KQUANTS = ("q4_k", "q6_k")


def random_kquant(scheme, n, k, rng):
    """Random valid q4_k / q6_k blocks (attnfuse.quant has no k-quant
    quantizer): any codes and sub-block scales, f16 super-block scales of
    a sensible size."""
    size, scales = {"q4_k": (144, (0, 2)), "q6_k": (210, (208,))}[scheme]
    blocks = rng.integers(0, 256, size=(n * k // 256, size), dtype=np.uint8)
    for at in scales:
        d = rng.uniform(0.001, 0.01, (len(blocks), 1)).astype("<f2")
        blocks[:, at:at + 2] = d.view(np.uint8)
    return quant.QuantizedTensor(blocks.reshape(-1), (n, k),
                                 quant.get_scheme(scheme))


# The weights of the --prefill table (scheme, group).
PREFILL_WEIGHTS = [("q4_0", None), ("q8_0", None), ("int4_sym", 128),
                   ("q4_k", None), ("q6_k", None)]


def prefill(a, rng):
    """The --prefill table: f32 GEMM against the int8 activations' GEMM."""
    configs = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes:
            n, k = (int(d) for d in shape.split("x"))
            w = torch.from_numpy(rng.standard_normal((n, k)).astype(np.float32))
            for scheme, group in PREFILL_WEIGHTS:
                if a.weights and scheme not in a.weights:
                    continue
                qt = (random_kquant(scheme, n, k, rng)
                      if scheme in KQUANTS
                      else quant.quantize(w, scheme, group))
                npy = os.path.join(tmp, f"w_{scheme}_{n}x{k}.npy")
                np.save(npy, qt.data.view(np.int8))
                for rows in a.prefill:
                    for act in (None, "int8"):
                        for threads in a.threads:
                            configs.append((n, k, scheme, group, rows, act,
                                            threads, qt, npy))
        best = {}
        for _ in range(a.rounds):
            for n, k, scheme, group, rows, act, threads, qt, npy in configs:
                x = rng.uniform(-1, 1, (rows, k)).astype(np.float32)
                np.save(os.path.join(tmp, "x.npy"),
                        torch.from_numpy(x).to(torch.bfloat16)
                        .view(torch.int16).numpy().view(np.uint16))
                t = measure(a.attn_run, tmp, f"{scheme}_{rows}x{n}x{k}",
                            quant_module(qt, 1, rows), npy, 1, threads,
                            a.repeat, act)
                key = (n, k, scheme, rows, act, threads)
                best[key] = min(best.get(key, t), t)
    print("| R x N x K | weights | threads | f32 GEMM ms | GOP/s "
          "| int8 act ms | GOP/s | int8 / f32 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for n, k, scheme, group, rows, act, threads, qt, npy in configs:
        if act:
            continue
        f32 = best[(n, k, scheme, rows, None, threads)]
        int8 = best[(n, k, scheme, rows, "int8", threads)]
        ops = 2 * rows * n * k / 1e9
        label = scheme + ("" if group is None else f" g{group}")
        print(f"| {rows} x {n} x {k} | {label} | {threads} | {f32 * 1e3:.3f} | "
              f"{ops / f32:.1f} | {int8 * 1e3:.3f} | {ops / int8:.1f} | "
              f"{f32 / int8:.2f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--shapes", nargs="+", default=["5632x1024", "1024x5632"])
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds over every configuration; the "
                        "fastest round's median counts (the host is shared)")
    p.add_argument("--mb", type=float, default=96)
    p.add_argument("--attn-run", default=str(Path(__file__).resolve().parent.parent
                                             / "build" / "bin" / "attn-run"))
    p.add_argument("--cc", default="cc", help="C compiler for cpu_peak.c")
    p.add_argument("--ymm-rows", action="store_true",
                   help="also the int8 rows with --mattr=-avx512vnni")
    p.add_argument("--weights", nargs="+",
                   choices=sorted({s for s, _, _ in SCHEMES}),
                   help="the weights to time (default: all; bf16, the "
                        "GEMV table's baseline, is always timed)")
    p.add_argument("--prefill", type=int, nargs="+", default=None,
                   help="rows of the prefill products to time instead")
    p.add_argument("--rows", type=int, default=1,
                   help="input rows of the decode products (a batch of "
                        "1-8 sequences' decode step)")
    a = p.parse_args()
    if a.prefill:
        prefill(a, np.random.default_rng(0))
        return
    schemes = [c for c in SCHEMES
               if c[0] == "bf16" or not a.weights or c[0] in a.weights]
    schemes += ([(s, g, "int8-ymm") for s, g, act in schemes
                 if act == "int8"] if a.ymm_rows else [])
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        peak = os.path.join(tmp, "cpu_peak")
        subprocess.run([a.cc, "-O2", "-march=native", "-fopenmp",
                        str(Path(__file__).resolve().parent / "cpu_peak.c"),
                        "-o", peak], check=True)
        triad = {}
        configs = []
        for shape in a.shapes:
            n, k = (int(d) for d in shape.split("x"))
            w = torch.from_numpy(rng.standard_normal((n, k)).astype(np.float32))
            x = torch.from_numpy(rng.uniform(-1, 1, (a.rows, k)).astype(np.float32))
            np.save(os.path.join(tmp, f"x_{k}.npy"),
                    x.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))
            prepared = {}
            for scheme, group, act in schemes:
                if scheme not in prepared:
                    prepared[scheme] = prepare(a, tmp, n, k, w, scheme,
                                               group, rng)
                for threads in a.threads:
                    configs.append(((n, k), scheme, group, act, threads,
                                    prepared[scheme]))
        best = {}
        for _ in range(a.rounds):
            for threads in a.threads:
                out = subprocess.run([peak, "triad", str(threads)],
                                     capture_output=True, text=True,
                                     check=True).stdout
                triad[threads] = max(triad.get(threads, 0.0),
                                     float(out.split()[1]))
            for (n, k), scheme, group, act, threads, (module, npy, nbytes, copies) in configs:
                os.replace(os.path.join(tmp, f"x_{k}.npy"), os.path.join(tmp, "x.npy"))
                t = measure(a.attn_run, tmp, f"{scheme}_{n}x{k}", module, npy,
                            copies, threads, a.repeat, act)
                os.replace(os.path.join(tmp, "x.npy"), os.path.join(tmp, f"x_{k}.npy"))
                key = ((n, k), scheme, act, threads)
                best[key] = min(best.get(key, t), t)
        print("triad: " + ", ".join(f"{t} thread(s) {g:.1f} GB/s"
                                    for t, g in sorted(triad.items())))
        print("| N x K | weights | bytes | copies | threads | ms per call | GB/s "
              "| % triad | G weights/s | weights/s / bf16's |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for (n, k), scheme, group, act, threads, (module, npy, nbytes, copies) in configs:
            t = best[((n, k), scheme, act, threads)]
            gbs = copies * nbytes / t / 1e9
            base = best[((n, k), "bf16", None, threads)]
            base_gbs = math.ceil(a.mb * 2 ** 20 / (n * k * 2)) * n * k * 2 / base / 1e9
            label = scheme + ("" if group is None else f" g{group}")
            label += {None: "", "int8": ", int8 act",
                      "int8-ymm": ", int8 act, ymm"}[act]
            weights = copies * n * k / t / 1e9
            base_weights = base_gbs / 2
            print(f"| {n} x {k} | {label} | {nbytes} | {copies} | {threads} | "
                  f"{t * 1e3:.3f} | {gbs:.1f} | {100 * gbs / triad[threads]:.0f} | "
                  f"{weights:.1f} | "
                  f"{weights / base_weights:.2f} |")


if __name__ == "__main__":
    main()
