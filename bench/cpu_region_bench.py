#!/usr/bin/env python3
"""score_mod region costs: each region against the plain kernel and PyTorch.

One run measures, with one thread count, back to back in each of --rounds
rounds (best of each reported: the machine is shared and noise only ever
slows a run down), causal attention (B=1, H=8, D=64, L=S, f32 or bf16)
five ways:

  plain     attn.sdpa {is_causal}, no region
  softcap   Gemma-2 soft-capping region: 30 * tanh(s / 30)
  alibi     ALiBi region: s + slope[h] * (j - i) (slopes an extra operand,
            2^(-8 (h+1) / H))
  relative  relative-position region: s + (i - j) (FlexAttention's example)
  window256 Mistral's sliding window: causal, the last 256 keys (no region;
            the lowering skips blocks outside the band)

each through attn-run (--backend=flash, JIT for the host or --mattr), against
PyTorch FlexAttention compiled by Inductor (torch.compile(flex_attention),
the same score_mod, a causal or sliding-window block mask) and, where it
takes the variant, F.scaled_dot_product_attention (plain: is_causal; window:
a boolean mask; alibi/relative: the bias materialised as an additive
[H, L, S] mask). Ratios are times from the same run. Not a test.

--dynamic writes the batch and sequence dims as `?` (what the Python
exporter emits for a dynamic sequence length; attn-run gets the sizes with
--shape). --mcpu=x86-64-v3 compiles for AVX2 without AVX-512 on any x86
host. --baseline-attn-run times the same modules through a second attn-run
(another build) in the same rounds, alternated with this one. --no-torch
leaves out FlexAttention and SDPA (their compiles take minutes).

  python3 bench/cpu_region_bench.py [--threads 1] [--sizes 512,2048]
      [--variants plain,softcap,alibi,relative,window256] [--rounds 3]
      [--dtype f32|bf16] [--dynamic] [--mcpu=x86-64-v3] [--mattr=-avx512f]
      [--baseline-attn-run OLD/build/bin/attn-run] [--no-torch]
      [--markdown out.md]
"""

import argparse
import os
import sys
import tempfile

from cpu_attention_bench import (add_common_args, lscpu, print_table,
                                 run_attn_run)
from cpu_matmul_bench import best_time

B, H, D = 1, 8, 64
VARIANTS = ["plain", "softcap", "alibi", "relative", "window256"]
WINDOW = 256

REGIONS = {
    "softcap": """  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32""",
    "alibi": """  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: f32):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = math.fma %m, %df, %s : f32
    attn.yield %r : f32""",
    "relative": """  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = arith.addf %s, %df : f32
    attn.yield %r : f32""",
}


def module_text(variant, l, dtype="f32", dynamic=False):
    t = (f"tensor<?x{H}x?x{D}x{dtype}>" if dynamic
         else f"tensor<{B}x{H}x{l}x{D}x{dtype}>")
    args, operands, types = f"%q: {t}, %k: {t}, %v: {t}", "%q, %k, %v", \
        f"{t}, {t}, {t}"
    attrs = "{is_causal = true}"
    if variant == "alibi":
        slope = f"tensor<1x{H}x1x1xf32>"
        args += f", %slope: {slope}"
        operands += " extras(%slope)"
        types += f", {slope}"
    if variant.startswith("window"):
        attrs = "{is_causal = true, window_left = %d : i64}" % (WINDOW - 1)
    region = ""
    if variant in REGIONS:
        region = f" score_mod {{\n{REGIONS[variant]}\n  }}"
    return (f"func.func @attention({args}) -> {t} {{\n"
            f"  %o = attn.sdpa {operands} {attrs} : ({types}) -> {t}"
            f"{region}\n  return %o : {t}\n}}\n")


def slopes(torch):
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)])


def write_slopes(torch, path):
    """The ALiBi slopes as a [1, H, 1, 1] f32 .npy (attn-run --input)."""
    data = slopes(torch).numpy().astype("<f4").reshape(1, H, 1, 1)
    import numpy
    numpy.save(path, data)


def attn_run_args(args, torch, tmp, variant, l):
    """attn-run's flags for one module: backend, target, sizes, slopes."""
    extra = ["--backend=flash"]
    if args.mcpu:
        extra.append(f"--mcpu={args.mcpu}")
    if args.dynamic:
        extra += [f"--shape={i}={B}x{H}x{l}x{D}" for i in range(3)]
    if variant == "alibi":
        npy = os.path.join(tmp, "slopes.npy")
        write_slopes(torch, npy)
        extra += ["--input", f"3={npy}"]
    return extra


class Torch:
    """FlexAttention (compiled) and SDPA for one variant and size."""

    def __init__(self, torch, variant, l, dtype):
        from torch.nn.attention.flex_attention import (create_block_mask,
                                                       flex_attention)
        self.torch = torch
        g = torch.Generator().manual_seed(1)
        dt = torch.bfloat16 if dtype == "bf16" else torch.float32
        self.q, self.k, self.v = (torch.randn(B, H, l, D, generator=g).to(dt)
                                  for _ in range(3))
        sl = slopes(torch)
        mods = {
            "softcap": lambda s, b, h, i, j: 30.0 * torch.tanh(s / 30.0),
            "alibi": lambda s, b, h, i, j: s + sl[h] * (j - i),
            "relative": lambda s, b, h, i, j: s + (i - j),
        }
        self.mod = mods.get(variant)

        def causal(b, h, i, j):
            return j <= i

        def window(b, h, i, j):
            return (j <= i) & (i - j < WINDOW)
        mask_mod = window if variant.startswith("window") else causal
        self.block_mask = create_block_mask(mask_mod, None, None, l, l,
                                            device="cpu")
        self.flex = torch.compile(flex_attention)
        i = torch.arange(l).unsqueeze(1)
        j = torch.arange(l).unsqueeze(0)
        keep = j <= i
        self.sdpa_mask = None
        self.sdpa = variant != "softcap"
        if variant.startswith("window"):
            self.sdpa_mask = keep & (i - j < WINDOW)
        elif variant in ("alibi", "relative"):
            bias = (sl.view(H, 1, 1) * (j - i) if variant == "alibi"
                    else (i - j).float().expand(H, l, l))
            self.sdpa_mask = bias.masked_fill(~keep, float("-inf")).to(dt)

    def time(self, fn, repeat):
        with self.torch.no_grad():
            return best_time(fn, repeat)

    def run_flex(self, repeat):
        return self.time(lambda: self.flex(self.q, self.k, self.v,
                                           score_mod=self.mod,
                                           block_mask=self.block_mask), repeat)

    def run_sdpa(self, repeat):
        import torch.nn.functional as F
        causal = self.sdpa_mask is None
        return self.time(lambda: F.scaled_dot_product_attention(
            self.q, self.k, self.v, attn_mask=self.sdpa_mask,
            is_causal=causal), repeat)


def measure(args, torch, tmp, variant, l, repeat, cache):
    path = os.path.join(tmp, f"{variant}_{l}.mlir")
    with open(path, "w") as f:
        f.write(module_text(variant, l, args.dtype, args.dynamic))
    extra = attn_run_args(args, torch, tmp, variant, l)
    runs = [("attnfuse", args.attn_run)]
    if args.baseline_attn_run:
        runs.append(("baseline", args.baseline_attn_run))
    times = {}
    for name, tool in runs:
        times[name] = run_attn_run(tool, path, "attention", args.threads,
                                   repeat, extra, args.mattr)
    if args.no_torch:
        return times
    key = (variant, l)
    if key not in cache:
        cache[key] = Torch(torch, variant, l, args.dtype)
    peer = cache[key]
    times["flex"] = peer.run_flex(repeat)
    if peer.sdpa:
        times["sdpa"] = peer.run_sdpa(repeat)
    return times


def ratio_cells(best, v, l, name):
    """`ms | / plain` of one attn-run build."""
    a = best[(v, l, name)]
    plain = best.get(("plain", l, name))
    return a, f"{a * 1e3:.2f} | " + (f"{a / plain:.2f}" if plain else "-")


def table(args, best, sizes, variants):
    model, flags = lscpu()
    base = bool(args.baseline_attn_run)
    lines = [f"Machine: {model}; AVX-512: {'avx512f' in flags}; "
             f"target: {args.mcpu or 'host'}{' ' + args.mattr if args.mattr else ''}",
             f"Threads: {args.threads}; {args.dtype}; "
             f"{'dynamic' if args.dynamic else 'static'} lengths; B={B}, "
             f"H={H}, D={D}, causal; best of {args.rounds} rounds",
             "Command: python3 bench/cpu_region_bench.py " +
             " ".join(sys.argv[1:]), "",
             "| L=S | variant | " + ("baseline ms | / plain | " if base else "")
             + "AttnFuse ms | / plain | FlexAttention ms | "
             "Flex / AttnFuse | SDPA ms | SDPA / AttnFuse |",
             "|---:|---|" + ("---:|---:|" if base else "")
             + "---:|---:|---:|---:|---:|---:|"]
    for l in sizes:
        for v in variants:
            a, cells = ratio_cells(best, v, l, "attnfuse")
            if base:
                cells = ratio_cells(best, v, l, "baseline")[1] + " | " + cells
            fl = best.get((v, l, "flex"))
            flex = f"{fl * 1e3:.1f} | {fl / a:.2f}" if fl else "- | -"
            sd = best.get((v, l, "sdpa"))
            sdpa = f"{sd * 1e3:.1f} | {sd / a:.2f}" if sd else "- | -"
            lines.append(f"| {l} | {v} | {cells} | {flex} | {sdpa} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p)
    p.add_argument("--sizes", default="512,2048")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--repeat", type=int, default=0,
                   help="timed runs per contender and round (default: by size)")
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    p.add_argument("--dynamic", action="store_true",
                   help="dynamic batch and sequence dims (--shape)")
    p.add_argument("--mcpu", default="",
                   help="attn-run's target CPU, e.g. x86-64-v3 (AVX2)")
    p.add_argument("--baseline-attn-run", default="",
                   help="a second build's attn-run, alternated with this one")
    p.add_argument("--no-torch", action="store_true",
                   help="leave out FlexAttention and SDPA")
    p.add_argument("--markdown")
    args = p.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    sizes = [int(s) for s in args.sizes.split(",")]
    variants = args.variants.split(",")
    best, cache = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for l in sizes:
                for v in variants:
                    repeat = args.repeat or (5 if l <= 1024 else 3)
                    times = measure(args, torch, tmp, v, l, repeat, cache)
                    for name, t in times.items():
                        k = (v, l, name)
                        best[k] = min(best.get(k, float("inf")), t)
                    print(f"round {rnd}: {v} L=S={l} " + " ".join(
                        f"{n}={t * 1e3:.1f}ms" for n, t in times.items()),
                        flush=True)
    print_table(table(args, best, sizes, variants), args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
