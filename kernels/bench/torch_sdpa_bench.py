#!/usr/bin/env python3
"""PyTorch reference timings for the AttnFuse kernel benchmark.

Times torch.nn.functional.scaled_dot_product_attention with the FlashAttention
backend and with the cuDNN backend forced (torch.nn.attention.sdpa_kernel) on
the shapes of kernels/tests/bench_sdpa.cu: B=4, H=16, D in {64, 128},
L=S in {512, 2048, 8192}, causal and not, f16 and bf16. Median of
cudaEvent-timed iterations after warm-up; TFLOP/s = 4*B*H*L*S*D/time (halved
for causal), the same formula as bench_sdpa.

With --ours CSV (written by `attn_kernels_bench --csv`), also prints our time
and the ratios ours/flash and ours/cudnn of the median times (< 1: we are
faster). When bench_sdpa was run with several tile variants, the best one per
shape is used and named.

With --extra CSV (`attn_kernels_bench --extra-csv`), also times PyTorch on
our decode shapes (f16, GQA through enable_gqa, flash and cuDNN backends) and
f32 shapes (memory-efficient backend), and prints GB/s and the fraction of
--hbm-gbps (default 4800, the H200's HBM3e) next to ours.

Usage: torch_sdpa_bench.py [--ours ours.csv] [--extra extra.csv] [--quick] [--min-ms 300] [--hbm-gbps 4800]
"""
import argparse
import csv
import math
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", help="CSV written by attn_kernels_bench --csv")
    ap.add_argument("--quick", action="store_true", help="L=S in {512, 2048} only")
    ap.add_argument("--min-ms", type=float, default=300.0, help="time budget per config (ms)")
    ap.add_argument("--extra", help="CSV written by attn_kernels_bench --extra-csv")
    ap.add_argument("--hbm-gbps", type=float, default=4800.0, help="peak memory bandwidth for the decode fraction")
    return ap.parse_args()


def load_ours(path):
    best = {}  # (dtype, D, L, causal) -> (ms, variant)
    if not path:
        return best
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["dtype"], int(row["D"]), int(row["L"]), int(row["causal"]))
            ms = float(row["ms"])
            if key not in best or ms < best[key][0]:
                best[key] = (ms, row.get("variant", "?"))
    return best


def time_backend(sdpa_kernel, backend, time_fn, fn):
    """(median ms, None) of fn under the backend, or (None, why) if it cannot run."""
    try:
        with sdpa_kernel(backend):
            return time_fn(fn), None
    except Exception as e:  # noqa: BLE001
        return None, str(e).splitlines()[0][:40] if str(e) else type(e).__name__


def make_timer(torch, min_ms):
    """A function giving the median cudaEvent time (ms) of fn over >= 10 runs
    (>= min_ms in all) after 3 warm-up runs, as bench_sdpa times ours."""
    def time_fn(fn):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        warm = 0.0
        for _ in range(3):
            start.record()
            fn()
            end.record()
            end.synchronize()
            warm = start.elapsed_time(end)
        iters = max(10, min(200, int(min_ms / max(warm, 1e-3))))
        times = []
        for _ in range(iters):
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        times.sort()
        return times[len(times) // 2]
    return time_fn


def bench_extra(args, torch, F, backends, time_fn):
    """Decode and f32 rows of --extra next to PyTorch's backends."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with open(args.extra, newline="") as f:
        rows = list(csv.DictReader(f))
    print("\n| kind | B | Hq | Hkv | L | S | D | ours variant | ours ms | ours GB/s | of HBM |"
          + "".join(f" {n} ms | ours/{n} time |" for n, _ in backends))
    print("|---|---|---|---|---|---|---|---|---|---|---|" + "---|---|" * len(backends))
    for r in rows:
        kind = r["kind"]
        B, Hq, Hkv, L, S, D = (int(r[x]) for x in ("B", "Hq", "Hkv", "L", "S", "D"))
        oms, gbps = float(r["ms"]), float(r["gbps"])
        if kind == "decode":
            dtype, bes = torch.float16, backends
        elif kind == "f32":
            dtype, bes = torch.float32, [("efficient", SDPBackend.EFFICIENT_ATTENTION)]
        else:
            print(f"| {kind} | {B} | {Hq} | {Hkv} | {L} | {S} | {D} | {r['variant']} | {oms:.4f} | | | (no PyTorch SDPA equivalent) |")
            continue
        q = torch.randn(B, Hq, L, D, device="cuda", dtype=dtype)
        k = torch.randn(B, Hkv, S, D, device="cuda", dtype=dtype)
        v = torch.randn(B, Hkv, S, D, device="cuda", dtype=dtype)
        gqa = {"enable_gqa": True} if Hkv != Hq else {}
        line = (f"| {kind} | {B} | {Hq} | {Hkv} | {L} | {S} | {D} | {r['variant']} | {oms:.4f} | {gbps:.0f} |"
                f" {gbps / args.hbm_gbps:.0%} |" if gbps > 0 else
                f"| {kind} | {B} | {Hq} | {Hkv} | {L} | {S} | {D} | {r['variant']} | {oms:.4f} | | |")
        for name, be in bes:
            ms, why = time_backend(sdpa_kernel, be, time_fn, lambda: F.scaled_dot_product_attention(q, k, v, **gqa))
            line += f" {name}: {ms:.4f} | {oms / ms:.2f} |" if ms is not None else f" {name}: n/a ({why}) | |"
        print(line, flush=True)
        del q, k, v


def print_main_header(backends, ours):
    header = "| dtype | D | L=S | causal |"
    sep = "|---|---|---|---|"
    for name, _ in backends:
        header += f" {name} ms | {name} TFLOP/s |"
        sep += "---|---|"
    if ours:
        header += " ours ms | ours TFLOP/s | ours variant |"
        sep += "---|---|---|"
        for name, _ in backends:
            header += f" ours/{name} time |"
            sep += "---|"
    print(header)
    print(sep)


def ours_columns(ours, key, flops, backends, ms_by_backend, ratios):
    """Our time, TFLOP/s, variant and time ratios for one shape; records the ratios."""
    if key not in ours:
        return " n/a | | |" + " n/a |" * len(backends)
    oms, variant = ours[key]
    line = f" {oms:.3f} | {flops / (oms * 1e-3) / 1e12:.1f} | {variant} |"
    for name, _ in backends:
        if name in ms_by_backend:
            r = oms / ms_by_backend[name]
            ratios[name].append(r)
            line += f" {r:.2f} |"
        else:
            line += " n/a |"
    return line


def bench_main_table(args, torch, F, sdpa_kernel, backends, ours, time_fn):
    """The B=4, H=16 table; returns the ours/backend time ratios per backend."""
    B, H = 4, 16
    lens = [512, 2048] if args.quick else [512, 2048, 8192, 16384]
    print_main_header(backends, ours)
    ratios = {name: [] for name, _ in backends}
    for dtype_name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for D in (64, 128):
            for L in lens:
                q = torch.randn(B, H, L, D, device="cuda", dtype=dtype)
                k = torch.randn(B, H, L, D, device="cuda", dtype=dtype)
                v = torch.randn(B, H, L, D, device="cuda", dtype=dtype)
                for causal in (0, 1):
                    flops = 4.0 * B * H * L * L * D * (0.5 if causal else 1.0)
                    line = f"| {dtype_name} | {D} | {L} | {'yes' if causal else 'no'} |"
                    ms_by_backend = {}
                    for name, be in backends:
                        ms, why = time_backend(sdpa_kernel, be, time_fn, lambda: F.scaled_dot_product_attention(
                            q, k, v, is_causal=bool(causal)))
                        if ms is None:
                            line += f" n/a ({why}) | |"
                            continue
                        ms_by_backend[name] = ms
                        line += f" {ms:.3f} | {flops / (ms * 1e-3) / 1e12:.1f} |"
                    if ours:
                        line += ours_columns(ours, (dtype_name, D, L, causal), flops, backends, ms_by_backend, ratios)
                    print(line, flush=True)
                del q, k, v
    return ratios


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # noqa: BLE001
        print(f"torch not importable ({e}); skipping the PyTorch benchmark")
        return 0
    if not torch.cuda.is_available():
        print("torch.cuda is not available; skipping the PyTorch benchmark")
        return 0
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # noqa: BLE001
        print(f"torch.nn.attention.sdpa_kernel not available in torch {torch.__version__} ({e}); skipping")
        return 0

    backends = [("flash", SDPBackend.FLASH_ATTENTION)]
    if hasattr(SDPBackend, "CUDNN_ATTENTION"):
        backends.append(("cudnn", SDPBackend.CUDNN_ATTENTION))

    ours = load_ours(args.ours)
    print(f"torch {torch.__version__}, device: {torch.cuda.get_device_name(0)}, "
          f"cudnn {torch.backends.cudnn.version()}\n")
    time_fn = make_timer(torch, args.min_ms)
    ratios = bench_main_table(args, torch, F, sdpa_kernel, backends, ours, time_fn)
    if args.extra:
        bench_extra(args, torch, F, backends, time_fn)
    if ours:
        print()
        for name, rs in ratios.items():
            if rs:
                gm = math.exp(sum(math.log(r) for r in rs) / len(rs))
                print(f"geomean time ratio ours/{name}: {gm:.2f}  (< 1 means ours is faster; {len(rs)} shapes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
