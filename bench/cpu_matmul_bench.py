#!/usr/bin/env python3
"""Matrix products and the unfused attention chain, side by side with
PyTorch and the machine's FMA peak (goal 5 of the CPU performance work).

One run measures, with one thread count, back to back in each of --rounds
rounds (the best time of each contender is reported):

  peak         bench/cpu_peak.c (see cpu_attention_bench.py)
  attn         attn-run of an attn.matmul (the register-tiled GEMM)
  linalg       attn-run of the same product written as linalg.matmul /
               linalg.batch_matmul (what a front end emits for projections)
  torch        torch.matmul (MKL/oneDNN on CPU)
  linear       --linear: nn.Linear's x . W^T with W [N, K] as stored
               (linalg.matmul of x and linalg.transpose(W), what the
               exporter emits), against torch.nn.functional.linear; with
               --baseline-attn-run, the same module through a second
               attn-run (an older build) in the same rounds
  chain        --chain: the unfused attention chain (q @ k^T, scale,
               masked_fill with a boolean mask, softmax, @ v; B=1, H=8,
               D=64) compiled with attn-run --no-fuse, against the same
               chain in eager PyTorch, and the fused attn.sdpa (attn-run)

GFLOP/s = 2*M*N*K per product / time; for the chain 4*H*L*S*D / time (the
two products). Not a test: nothing here is timed by the test suite.

  python3 bench/cpu_matmul_bench.py [--threads 1] [--sizes 256,512,1024,2048]
      [--batched 1024,4096] [--chain 1024,4096] [--rounds 3] [--mattr=-avx512f]
      [--linear 128x768x768,...] [--baseline-attn-run OLD/build/bin/attn-run]
      [--linear-mcpu cooperlake]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cpu_attention_bench import (add_common_args, build_peak,  # noqa: E402
                                 lscpu, run_attn_run, run_peak)


def matmul_module(form, batch, m, k, n):
    pre = "".join(f"{d}x" for d in batch)
    a, b, c = (f"tensor<{pre}{m}x{k}xf32>", f"tensor<{pre}{k}x{n}xf32>",
               f"tensor<{pre}{m}x{n}xf32>")
    if form == "attn":
        body = f"  %c = attn.matmul %a, %b : ({a}, {b}) -> {c}\n"
    else:
        op = "linalg.batch_matmul" if batch else "linalg.matmul"
        body = (f"  %z = arith.constant 0.0 : f32\n"
                f"  %e = tensor.empty() : {c}\n"
                f"  %i = linalg.fill ins(%z : f32) outs(%e : {c}) -> {c}\n"
                f"  %c = {op} ins(%a, %b : {a}, {b}) outs(%i : {c}) -> {c}\n")
    return (f"func.func @main(%a: {a}, %b: {b}) -> {c} {{\n{body}"
            f"  return %c : {c}\n}}\n")


def linear_module(m, k, n, dtype):
    """x[M, K] . W^T + 0 with W [N, K] (f32 accumulator, rounded to dtype
    like the exporter's nn.Linear)."""
    x, w, wt = (f"tensor<{m}x{k}x{dtype}>", f"tensor<{n}x{k}x{dtype}>",
                f"tensor<{k}x{n}x{dtype}>")
    acc = f"tensor<{m}x{n}xf32>"
    body = (f"  %z = arith.constant 0.0 : f32\n"
            f"  %t = tensor.empty() : {wt}\n"
            f"  %wt = linalg.transpose ins(%w : {w}) outs(%t : {wt}) "
            f"permutation = [1, 0]\n"
            f"  %e = tensor.empty() : {acc}\n"
            f"  %i = linalg.fill ins(%z : f32) outs(%e : {acc}) -> {acc}\n"
            f"  %c = linalg.matmul ins(%x, %wt : {x}, {wt}) outs(%i : {acc}) "
            f"-> {acc}\n")
    return (f"func.func @main(%x: {x}, %w: {w}) -> {acc} {{\n{body}"
            f"  return %c : {acc}\n}}\n")


def chain_module(h, l, s, d, fused):
    q = f"tensor<1x{h}x{l}x{d}xf32>"
    kv = f"tensor<1x{h}x{s}x{d}xf32>"
    mask = f"tensor<{l}x{s}xi1>"
    if fused:
        return (f"func.func @main(%q: {q}, %k: {kv}, %v: {kv}, %m: {mask}) "
                f"-> {q} {{\n"
                f"  %o = attn.sdpa %q, %k, %v, %m : ({q}, {kv}, {kv}, {mask}) "
                f"-> {q}\n  return %o : {q}\n}}\n")
    kt = f"tensor<1x{h}x{d}x{s}xf32>"
    sc = f"tensor<1x{h}x{l}x{s}xf32>"
    return (f"func.func @main(%q: {q}, %k: {kv}, %v: {kv}, %m: {mask}) -> {q} {{\n"
            f"  %kt = attn.transpose %k dims(-2, -1) : {kv} -> {kt}\n"
            f"  %s = attn.matmul %q, %kt : ({q}, {kt}) -> {sc}\n"
            f"  %c = arith.constant dense<{d ** -0.5!r}> : tensor<f32>\n"
            f"  %ss = attn.mul %s, %c : ({sc}, tensor<f32>) -> {sc}\n"
            f"  %drop = arith.constant dense<true> : tensor<{l}x{s}xi1>\n"
            f"  %inv = arith.xori %m, %drop : tensor<{l}x{s}xi1>\n"
            f"  %mf = attn.masked_fill %ss, %inv value(0xFFF0000000000000) : ({sc}, "
            f"tensor<{l}x{s}xi1>) -> {sc}\n"
            f"  %p = attn.softmax %mf dim(-1) : {sc}\n"
            f"  %o = attn.matmul %p, %v : ({sc}, {kv}) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def run_attn(attn_run, path, threads, repeat, extra=(), mattr=""):
    return run_attn_run(attn_run, path, "main", threads, repeat, extra, mattr)


def best_time(fn, repeat):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def torch_chain(torch, h, l, s, d):
    import torch.nn.functional as F
    g = torch.Generator().manual_seed(1)
    q = torch.randn(1, h, l, d, generator=g)
    k = torch.randn(1, h, s, d, generator=g)
    v = torch.randn(1, h, s, d, generator=g)
    keep = torch.rand(l, s, generator=g) > 0.1

    def chain():
        with torch.no_grad():
            sc = q @ k.transpose(-2, -1) * d ** -0.5
            sc = sc.masked_fill(~keep, float("-inf"))
            return F.softmax(sc, dim=-1) @ v
    return chain


def run_linear(args, torch, tmp, shape, record):
    """Times x . W^T through attn-run (and the baseline) and F.linear."""
    m, k, n = shape
    repeat = max(2, min(20, int(2e10 / (2.0 * m * n * k))))
    path = os.path.join(tmp, "linear.mlir")
    with open(path, "w") as f:
        f.write(linear_module(m, k, n, args.linear_dtype))
    runs = [("attn", args.attn_run)]
    if args.baseline_attn_run:
        runs.append(("baseline", args.baseline_attn_run))
    extra = (f"--mcpu={args.linear_mcpu}",) if args.linear_mcpu else ()
    for form, tool in runs:
        record(("linear", shape, form),
               run_attn(tool, path, args.threads, repeat, extra, args.mattr))
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16,
             "f16": torch.float16}[args.linear_dtype]
    x, w = torch.randn(m, k).to(dtype), torch.randn(n, k).to(dtype)
    linear = torch.nn.functional.linear
    record(("linear", shape, "torch"),
           best_time(lambda: linear(x, w), repeat))


def bf16_peak(peak_bin, kind, threads):
    """GFLOP/s of cpu_peak's `kind` (dpbf16: vdpbf16ps chains; amx:
    tdpbf16ps on register-resident tiles), 0 where the peak's build or the
    machine lacks it."""
    proc = subprocess.run([peak_bin, kind, str(threads)],
                          capture_output=True, text=True)
    return float(proc.stdout.split()[1]) if proc.returncode == 0 else 0.0


def print_linear_table(args, linears, best, peak, dot_peak, amx_peak):
    gf = lambda flops, t: flops / t * 1e-9  # noqa: E731
    base = bool(args.baseline_attn_run)
    print()
    print(f"nn.Linear x . W^T ({args.linear_dtype}; W [N, K] as stored)")
    if dot_peak:
        print(f"vdpbf16ps peak {dot_peak:.1f} GFLOP/s (cpu_peak dpbf16: 2 bf16 "
              "products per f32 lane), against the FMA peak above")
    if amx_peak:
        print(f"AMX peak {amx_peak:.1f} GFLOP/s (cpu_peak amx: tdpbf16ps on "
              "tiles that never leave the registers)")
    print()
    print("| M | K | N | AttnFuse GFLOP/s | % of FMA peak | "
          + ("baseline GFLOP/s | AttnFuse / baseline | " if base else "")
          + "F.linear GFLOP/s | AttnFuse / torch |")
    print("|---:|---:|---:|---:|---:|" + ("---:|---:|" if base else "")
          + "---:|---:|")
    for m, k, n in linears:
        flops = 2.0 * m * n * k
        key = ("linear", (m, k, n))
        ga, gt = gf(flops, best[key + ("attn",)]), gf(flops,
                                                      best[key + ("torch",)])
        cells = [f"{m}", f"{k}", f"{n}", f"{ga:.1f}",
                 f"{100 * ga / peak:.0f}%" if peak else "-"]
        if base:
            gb = gf(flops, best[key + ("baseline",)])
            cells += [f"{gb:.1f}", f"{ga / gb:.2f}"]
        cells += [f"{gt:.1f}", f"{ga / gt:.2f}"]
        print("| " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p)
    p.add_argument("--sizes", default="256,512,1024,2048",
                   help="square M = N = K products")
    p.add_argument("--batched", default="1024,4096",
                   help="L of the attention-shaped products (8 heads, D=64): "
                        "q @ k^T [8,L,64]x[8,64,L] and p @ v [8,L,L]x[8,L,64]")
    p.add_argument("--chain", default="1024,4096")
    p.add_argument("--linear", default="",
                   help="nn.Linear products MxKxN (x [M, K], W [N, K]), e.g. "
                        "a prefill's projections 128x768x768,128x768x3072")
    p.add_argument("--linear-dtype", default="f32",
                   choices=["f32", "bf16", "f16"])
    p.add_argument("--baseline-attn-run", default="",
                   help="a second attn-run (an older build) timed on the "
                        "--linear products in the same rounds")
    p.add_argument("--linear-mcpu", default="",
                   help="--mcpu of both attn-runs on the --linear products, "
                        "e.g. cooperlake (with --mattr=-pku where a virtual "
                        "machine hides PKU) for the bf16 vdpbf16ps path")
    args = p.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    model, flags = lscpu()
    cases = [("square", (), n, n, n) for n in
             map(int, filter(None, args.sizes.split(",")))]
    for l in map(int, filter(None, args.batched.split(","))):
        cases += [("q@k^T", (8,), l, 64, l), ("p@v", (8,), l, l, 64)]
    chains = list(map(int, filter(None, args.chain.split(","))))
    linears = [tuple(map(int, spec.split("x")))
               for spec in filter(None, args.linear.split(","))]
    best, peak, dot_peak, amx_peak = {}, 0.0, 0.0, 0.0

    def record(key, t):
        best[key] = min(best.get(key, float("inf")), t)

    with tempfile.TemporaryDirectory() as tmp:
        peak_bin = os.path.join(tmp, "cpu_peak")
        ok, width = (build_peak(args.cc, peak_bin, args.mattr)
                     if cases or linears else (True, "not measured"))
        if not ok:
            print("cpu_peak: the FMA loop is not 12 register-only vfmadd",
                  file=sys.stderr)
            return 1
        for rnd in range(args.rounds):
            if cases or linears:
                peak = max(peak, run_peak(peak_bin, "fma", args.threads))
            if linears and args.linear_dtype == "bf16":
                dot_peak = max(dot_peak,
                               bf16_peak(peak_bin, "dpbf16", args.threads))
                amx_peak = max(amx_peak,
                               bf16_peak(peak_bin, "amx", args.threads))
            for case in cases:
                name, batch, m, k, n = case
                flops = 2.0 * m * n * k * (batch[0] if batch else 1)
                repeat = max(2, min(20, int(2e10 / flops)))
                for form in ("attn", "linalg"):
                    path = os.path.join(tmp, f"{form}.mlir")
                    with open(path, "w") as f:
                        f.write(matmul_module(form, batch, m, k, n))
                    record(case + (form,),
                           run_attn(args.attn_run, path, args.threads, repeat,
                                    mattr=args.mattr))
                a = torch.randn(*batch, m, k)
                b = torch.randn(*batch, k, n)
                record(case + ("torch",),
                       best_time(lambda: torch.matmul(a, b), repeat))
                print(f"round {rnd}: {name} {case[1:]} done", flush=True)
            for m, k, n in linears:
                run_linear(args, torch, tmp, (m, k, n), record)
                print(f"round {rnd}: linear {m}x{k}x{n} done", flush=True)
            for l in chains:
                repeat = 5 if l <= 2048 else 2
                for fused in (False, True):
                    path = os.path.join(tmp, f"chain{int(fused)}.mlir")
                    with open(path, "w") as f:
                        f.write(chain_module(8, l, l, 64, fused))
                    extra = () if fused else ("--no-fuse",)
                    record(("chain", l, "fused" if fused else "unfused"),
                           run_attn(args.attn_run, path, args.threads, repeat,
                                    extra, args.mattr))
                record(("chain", l, "torch"),
                       best_time(torch_chain(torch, 8, l, l, 64), repeat))
                print(f"round {rnd}: chain L=S={l} done", flush=True)

    gf = lambda flops, t: flops / t * 1e-9  # noqa: E731
    print(f"Machine: {model}; flags: {flags}")
    print(f"Threads: {args.threads}; f32; best of {args.rounds} rounds; FMA "
          f"peak {peak:.1f} GFLOP/s ({width}); PyTorch {torch.__version__}")
    print("Command: python3 bench/cpu_matmul_bench.py " + " ".join(sys.argv[1:]))
    if cases:
        print()
        print("| product | batch | M | K | N | attn.matmul GFLOP/s | % of peak | "
              "linalg GFLOP/s | torch.matmul GFLOP/s | attn / torch | "
              "linalg / torch |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for case in cases:
            name, batch, m, k, n = case
            flops = 2.0 * m * n * k * (batch[0] if batch else 1)
            ga, gl, gt = (gf(flops, best[case + (f,)])
                          for f in ("attn", "linalg", "torch"))
            print(f"| {name} | {batch[0] if batch else 1} | {m} | {k} | {n} | "
                  f"{ga:.1f} | {100 * ga / peak:.0f}% | {gl:.1f} | {gt:.1f} | "
                  f"{ga / gt:.2f} | {gl / gt:.2f} |")
    if linears:
        print_linear_table(args, linears, best, peak, dot_peak, amx_peak)
    if chains:
        print()
        print("| chain (H=8, D=64, bool mask) | L=S | AttnFuse unfused ms | "
              "PyTorch eager ms | unfused / eager speed | AttnFuse fused ms | "
              "fused / unfused speed |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for l in chains:
            u, t, f = (best[("chain", l, c)]
                       for c in ("unfused", "torch", "fused"))
            print(f"| unfused chain | {l} | {u * 1e3:.1f} | {t * 1e3:.1f} | "
                  f"{t / u:.2f} | {f * 1e3:.1f} | {u / f:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
