#!/usr/bin/env python3
"""Fused CPU attention side by side with PyTorch and the machine's peak.

One run measures, with one thread count, back to back in each of --rounds
rounds (the best of each contender is reported, since the machine is shared
and the noise only ever slows a run down):

  peak      bench/cpu_peak.c: FMA peak (12 independent chains with distinct
            start values; its disassembly is checked: 12 vfmadd on vector
            registers in the loop, no memory operands) and, with --triad, a
            STREAM-like triad
  attnfuse  attn-run --backend=flash (JIT for the host) of one attn.sdpa
  torch     F.scaled_dot_product_attention (default CPU backend: flash)
  math      the same under sdpa_kernel(SDPBackend.MATH) (--torch-math)

GFLOP/s = 4*B*H*L*S*D / time (causal: half of that; windowW, causal
attention to the last W keys: the positions in the band; the work that is
done; PyTorch gets the band as a boolean mask, having no window argument). With --kv-len S (decode shapes: L from --sizes, S fixed) the table
also gives GB/s = bytes of k and v / time, against the triad. With
--kv-heads G, k and v have G heads (grouped-query attention: --heads / G
query heads per key/value head; PyTorch with enable_gqa=True), and GB/s
counts their G heads. With --attn-run-base, a second attn-run (another
build's) runs the same cases in the same rounds: columns "base" and
AttnFuse / base, the A/B of a change to the lowering.
Not a test: nothing here is timed by the test suite.

  python3 bench/cpu_attention_bench.py [--threads 1] [--sizes 1024,4096]
      [--dims 64,128] [--variants none,bool,add_ls,add_b11s,causal,window256]
      [--dtype f32|bf16|f16] [--rounds 3] [--markdown out.md]
      [--kv-len S --heads 32 --kv-heads 8 --triad] [--mattr=-avx512f]
      [--attn-run-base <base build>/bin/attn-run]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"f32": ("f32", "float32"), "bf16": ("bf16", "bfloat16"),
         "f16": ("f16", "float16")}


def window_of(variant):
    """`windowW`: causal attention to the last W keys (Mistral's window)."""
    return int(variant[len("window"):])


def done_keys(variant, l, s):
    """Score positions that take part (the work done, for GFLOP/s)."""
    if variant == "causal":
        return l * s / 2.0
    if variant.startswith("window"):
        w = window_of(variant)
        return sum(min(i + 1, w, s) for i in range(l))
    return float(l * s)


def module_text(variant, b, h, l, s, d, dtype, hkv=None):
    et = TYPES[dtype][0]
    q = f"tensor<{b}x{h}x{l}x{d}x{et}>"
    kv = f"tensor<{b}x{hkv or h}x{s}x{d}x{et}>"
    args = f"%q: {q}, %k: {kv}, %v: {kv}"
    operands, types, attrs = "%q, %k, %v", f"{q}, {kv}, {kv}", ""
    mask = {"bool": f"tensor<{l}x{s}xi1>", "add_ls": f"tensor<{l}x{s}x{et}>",
            "add_b11s": f"tensor<{b}x1x1x{s}x{et}>"}.get(variant)
    if mask:
        args += f", %m: {mask}"
        operands += ", %m"
        types += f", {mask}"
    if variant == "causal":
        attrs = " {is_causal = true}"
    if variant.startswith("window"):
        attrs = (" {is_causal = true, window_left = %d : i64}"
                 % (window_of(variant) - 1))
    return (f"func.func @attention({args}) -> {q} {{\n"
            f"  %o = attn.sdpa {operands}{attrs} : ({types}) -> {q}\n"
            f"  return %o : {q}\n}}\n")


def mattr_cflags(mattr):
    """gcc flags for LLVM target features ("-avx512f,+fma" -> -mno-avx512f
    -mfma), so that the peak is measured for the code attn-run makes."""
    flags = []
    for feature in filter(None, (mattr or "").split(",")):
        sign, name = feature[0], feature[1:]
        flags.append(("-mno-" if sign == "-" else "-m") + name)
    return flags


def build_peak(cc, out, mattr=""):
    src = os.path.join(HERE, "cpu_peak.c")
    subprocess.run([cc, "-O2", "-march=native", *mattr_cflags(mattr),
                    "-fopenmp", src, "-o", out], check=True)
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", out],
                         capture_output=True, text=True, check=True).stdout
    body = dis.split("<fma_chains>:", 1)[1].split("\n\n", 1)[0]
    fmas = [l for l in body.splitlines() if "vfmadd" in l]
    reg = re.compile(r"vfmadd\w+\s+%([xyz]mm)\d+,%[xyz]mm\d+,%[xyz]mm\d+$")
    ok = len(fmas) == 12 and all(reg.search(l.strip()) for l in fmas)
    width = reg.search(fmas[0].strip()).group(1) if fmas and ok else "?"
    return ok, width


def run_peak(binary, kind, threads):
    out = subprocess.run([binary, kind, str(threads)], capture_output=True,
                         text=True, check=True).stdout
    return float(out.split()[1])


def run_attn_run(attn_run, path, entry, threads, repeat, extra=(), mattr=""):
    """The best time in seconds of `repeat` runs of `entry` (attn-run's min)."""
    cmd = [attn_run, path, "--entry", entry, f"--num-threads={threads}",
           f"--repeat={repeat}", *extra]
    if mattr:
        cmd.append(f"--mattr={mattr}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"time: median=([0-9.]+) ms min=([0-9.]+) ms", proc.stdout)
    if proc.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.strip()[-300:]}")
    return float(m.group(2)) * 1e-3


def run_attnfuse(attn_run, path, threads, repeat, mattr=""):
    return run_attn_run(attn_run, path, "attention", threads, repeat,
                        ("--backend=flash",), mattr)


def torch_inputs(torch, variant, b, h, l, s, d, dtype, hkv=None):
    g = torch.Generator().manual_seed(1)
    t = getattr(torch, TYPES[dtype][1])
    q = torch.randn(b, h, l, d, generator=g).to(t)
    k = torch.randn(b, hkv or h, s, d, generator=g).to(t)
    v = torch.randn(b, hkv or h, s, d, generator=g).to(t)
    mask = None
    if variant == "bool":
        mask = torch.rand(l, s, generator=g) > 0.1
    elif variant == "add_ls":
        mask = torch.randn(l, s, generator=g).to(t)
    elif variant == "add_b11s":
        mask = torch.randn(b, 1, 1, s, generator=g).to(t)
    elif variant.startswith("window"):
        # PyTorch has no window argument: the band as a boolean mask.
        i = torch.arange(l).unsqueeze(1)
        j = torch.arange(s).unsqueeze(0)
        mask = (j <= i) & (j > i - window_of(variant))
    return q, k, v, mask


def run_torch(torch, inputs, causal, repeat, math):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v, mask = inputs

    gqa = {"enable_gqa": True} if k.shape[1] != q.shape[1] else {}

    def once():
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                              is_causal=causal, **gqa)
    best = float("inf")
    with torch.no_grad():
        if math:
            with sdpa_kernel(SDPBackend.MATH):
                once()
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    once()
                    best = min(best, time.perf_counter() - t0)
        else:
            once()
            for _ in range(repeat):
                t0 = time.perf_counter()
                once()
                best = min(best, time.perf_counter() - t0)
    return best


def lscpu():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    fields = dict((k.strip(), v.strip()) for k, _, v in
                  (line.partition(":") for line in out.splitlines()))
    return fields.get("Model name", "?"), fields.get("Flags", "?")


def add_common_args(p):
    """The arguments every CPU bench driver takes: the tools, the thread
    count, the rounds and the target features (shared with
    cpu_matmul_bench.py)."""
    p.add_argument("--attn-run",
                   default=os.path.join(HERE, "..", "build", "bin", "attn-run"))
    # gcc turns the FMA peak loop into something other than 12
    # register-only vfmadd chains, and the bench then stops.
    p.add_argument("--cc", default="clang-22",
                   help="compiles bench/cpu_peak.c")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--mattr", default="",
                   help="target features for attn-run and the peak, e.g. "
                        "-avx512f for the AVX2 code on an AVX-512 host")


def print_table(text, markdown=None):
    """Prints a result table, and writes it to the file `markdown` too."""
    print(text)
    if markdown:
        with open(markdown, "w") as f:
            f.write(text + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_args(p)
    p.add_argument("--sizes", default="1024,2048,4096")
    p.add_argument("--dims", default="64,128")
    p.add_argument("--variants", default="none,bool,add_ls,add_b11s,causal")
    p.add_argument("--dtype", default="f32", choices=sorted(TYPES))
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=0,
                   help="key/value heads (default: --heads); a divisor of it")
    p.add_argument("--attn-run-base",
                   help="another build's attn-run, timed in the same rounds")
    p.add_argument("--kv-len", type=int, default=0,
                   help="S for every case (default: S = L)")
    p.add_argument("--repeat", type=int, default=0,
                   help="timed runs per contender and round (default: by size)")
    p.add_argument("--torch-math", action="store_true")
    p.add_argument("--triad", action="store_true")
    p.add_argument("--markdown")
    args = p.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    model, flags = lscpu()
    b, h = args.batch, args.heads
    hkv = args.kv_heads or h
    if h % hkv:
        p.error("--kv-heads must divide --heads")
    with tempfile.TemporaryDirectory() as tmp:
        peak_bin = os.path.join(tmp, "cpu_peak")
        ok, width = build_peak(args.cc, peak_bin, args.mattr)
        if not ok:
            print("cpu_peak: the FMA loop is not 12 register-only vfmadd; "
                  "the peak would be wrong", file=sys.stderr)
            return 1
        cases = [(v, l, d) for d in map(int, args.dims.split(","))
                 for l in map(int, args.sizes.split(","))
                 for v in args.variants.split(",")]
        best = {}
        peak = triad = 0.0
        for rnd in range(args.rounds):
            peak = max(peak, run_peak(peak_bin, "fma", args.threads))
            if args.triad:
                triad = max(triad, run_peak(peak_bin, "triad", args.threads))
            for variant, l, d in cases:
                s = args.kv_len or l
                path = os.path.join(tmp, f"{variant}_{l}_{d}.mlir")
                with open(path, "w") as f:
                    f.write(module_text(variant, b, h, l, s, d, args.dtype,
                                        hkv))
                repeat = args.repeat or (5 if l * s <= 2048 * 2048 else 2)
                inputs = torch_inputs(torch, variant, b, h, l, s, d,
                                      args.dtype, hkv)
                causal = variant == "causal"
                times = {"attnfuse": run_attnfuse(args.attn_run, path,
                                                  args.threads, repeat,
                                                  args.mattr),
                         "torch": run_torch(torch, inputs, causal, repeat,
                                            False)}
                if args.attn_run_base:
                    times["base"] = run_attnfuse(args.attn_run_base, path,
                                                 args.threads, repeat,
                                                 args.mattr)
                if args.torch_math:
                    times["math"] = run_torch(torch, inputs, causal, repeat,
                                              True)
                for name, t in times.items():
                    key = (variant, l, d, name)
                    best[key] = min(best.get(key, float("inf")), t)
                print(f"round {rnd}: {variant} L=S={l} D={d} " +
                      " ".join(f"{n}={t * 1e3:.1f}ms" for n, t in times.items()),
                      flush=True)

    lines = [f"Machine: {model}; flags: {flags}",
             f"Threads: {args.threads}; {args.dtype}; B={b}, H={h}, "
             f"key/value heads {hkv}; best of "
             f"{args.rounds} rounds; FMA peak {peak:.1f} GFLOP/s ({width})" +
             (f"; triad {triad:.1f} GB/s" if args.triad else ""),
             f"Command: python3 bench/cpu_attention_bench.py " +
             " ".join(sys.argv[1:]), "",
             "| variant | D | L | S | AttnFuse GFLOP/s | % of peak | PyTorch GFLOP/s"
             " | AttnFuse / PyTorch |" + (" PyTorch math GFLOP/s |"
                                          if args.torch_math else "") +
             (" AttnFuse GB/s | % of triad |" if args.kv_len else "") +
             (" base GFLOP/s | AttnFuse / base |" if args.attn_run_base
              else ""),
             "|---|---:|---:|---:|---:|---:|---:|---:|" +
             ("---:|" if args.torch_math else "") +
             ("---:|---:|" if args.kv_len else "") +
             ("---:|---:|" if args.attn_run_base else "")]
    for variant, l, d in cases:
        s = args.kv_len or l
        flop = 4.0 * b * h * done_keys(variant, l, s) * d
        g = {n: flop / best[(variant, l, d, n)] / 1e9
             for n in ("attnfuse", "torch", "math", "base")
             if (variant, l, d, n) in best}
        line = (f"| {variant} | {d} | {l} | {s} | {g['attnfuse']:.1f} | "
                f"{100 * g['attnfuse'] / peak:.0f}% | {g['torch']:.1f} | "
                f"{g['attnfuse'] / g['torch']:.2f} |")
        if "math" in g:
            line += f" {g['math']:.1f} |"
        if args.kv_len:
            elem = 4 if args.dtype == "f32" else 2
            gbs = (2.0 * b * hkv * s * d * elem
                   / best[(variant, l, d, "attnfuse")] / 1e9)
            line += f" {gbs:.1f} | " + (f"{100 * gbs / triad:.0f}% |"
                                        if triad else "- |")
        if "base" in g:
            line += f" {g['base']:.1f} | {g['attnfuse'] / g['base']:.2f} |"
        lines.append(line)
    print_table("\n".join(lines), args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
