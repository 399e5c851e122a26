"""Whole-model latency of two AttnFuse builds in one process, calls
alternated: the A/B of a compiler change, without the drift of a shared
machine between two runs.

  python3 bench/ab_builds.py --a /path/to/base/build --b build \\
      --model llama --seq 512 --batch 4 --threads 2 --dtype bf16

Each build compiles the model (prepacked weights, as python_models.py's
attnfuse-prepack peer) through its own tools (ATTN_BUILD_DIR at compile
time; the compile cache keys on the compiler, so the two libraries stay
apart) and both libraries stay loaded. Then `--rounds` rounds time about
0.6 s of calls of each, the order of the two alternating from round to
round. Prints the median and fastest per-call time of each and B/A of the
medians, and checks that both builds' outputs agree with eager PyTorch
within the tolerance of the dtype.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import python_models as pm  # noqa: E402
import attnfuse  # noqa: E402


def first_tensor(out):
    for name in ("last_hidden_state", "logits"):
        if hasattr(out, name):
            return getattr(out, name)
    return out[0] if isinstance(out, (tuple, list)) else out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="build directory A (base)")
    p.add_argument("--b", required=True, help="build directory B (change)")
    p.add_argument("--model", choices=["gpt2", "llama", "bert"],
                   default="llama")
    p.add_argument("--size", choices=["0.5b", "1b", "tiny"], default="0.5b")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", choices=["f32", "bf16"], default="bf16")
    p.add_argument("--rounds", type=int, default=12)
    args = p.parse_args()

    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    torch.set_num_threads(args.threads)
    model, kind = pm.build_model(args.model, args.size, args.seq)
    if args.dtype == "bf16":
        model = model.bfloat16()
    ids, mask = pm.model_inputs(model, kind, args.batch, args.seq)
    with torch.no_grad():
        ref = first_tensor(model(ids, attention_mask=mask)).float()
    tol = 0.25 if args.dtype == "bf16" else 1e-3
    libs = {}
    for label, build in (("A", args.a), ("B", args.b)):
        os.environ["ATTN_BUILD_DIR"] = str(Path(build).resolve())
        libs[label] = attnfuse.compile(
            model, (ids,), example_kwargs={"attention_mask": mask},
            prepack_weights=True)
        out = first_tensor(libs[label](ids, attention_mask=mask)).float()
        err = (out - ref).abs().max().item()
        if not err <= tol:
            sys.exit(f"build {label} ({build}): max |out - eager| = {err:.3g}"
                     f" > {tol}")
        libs[label](ids, attention_mask=mask)

    start = time.perf_counter()
    libs["A"](ids, attention_mask=mask)
    calls = max(1, round(0.6 / (time.perf_counter() - start)))
    times = {"A": [], "B": []}
    for r in range(args.rounds):
        for label in ("A", "B") if r % 2 == 0 else ("B", "A"):
            t0 = time.perf_counter()
            for _ in range(calls):
                libs[label](ids, attention_mask=mask)
            times[label].append((time.perf_counter() - t0) / calls * 1e3)
    a, b = statistics.median(times["A"]), statistics.median(times["B"])
    print(f"{args.model} {args.dtype} T={args.seq} batch={args.batch} "
          f"threads={args.threads}: A {a:.2f} ms (fastest "
          f"{min(times['A']):.2f}), B {b:.2f} ms (fastest "
          f"{min(times['B']):.2f}), B/A {b / a:.3f}")


if __name__ == "__main__":
    main()
