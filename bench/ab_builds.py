"""Whole-model latency of two AttnFuse builds in one process, calls
alternated: the A/B of a compiler change, without the drift of a shared
machine between two runs.

  python3 bench/ab_builds.py --a /path/to/base/build --b build \\
      --model llama --seq 512 --batch 4 --threads 2 --dtype bf16

Each build compiles the model (prepacked weights, as python_models.py's
attnfuse-prepack peer; `--no-prepack`: as the attnfuse peer, which packs
per call) through its own tools (ATTN_BUILD_DIR at compile
time; the compile cache keys on the compiler, so the two libraries stay
apart) and both libraries stay loaded. Then `--rounds` rounds time about
0.6 s of calls of each, the order of the two alternating from round to
round. Prints the median and fastest per-call time of each and B/A of the
medians, and checks that both builds' outputs agree with eager PyTorch
within the tolerance of the dtype.

`--model linear --linear MxKxN` does the same for one bias-free
nn.Linear(K, N) on M rows (prepacked weight), with F.linear (PyTorch's
own kernels, oneDNN's AMX ones for bf16 on AMX machines) and, with
`--openvino`, OpenVINO's compiled MatMul (f32 in and out, so its time
includes two conversions) timed in the same rounds, each also as GFLOP/s
(2 M N K per call):
  python3 bench/ab_builds.py --a /path/to/base/build --b build \
      --model linear --linear 8192x896x4864 --threads 2 --dtype bf16
"""
import argparse
import copy
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


def openvino_linear(model, x, args):
    """A call of OpenVINO's CPU plugin on `model` (an nn.Linear) converted
    alone: f32 in and out, computing in the dtype through its precision
    hint, so each call also converts its input and output."""
    import openvino as ov
    converted = ov.convert_model(copy.deepcopy(model).float(),
                                 example_input=x.float())
    compiled = ov.Core().compile_model(converted, "CPU", {
        "INFERENCE_NUM_THREADS": str(args.threads),
        "INFERENCE_PRECISION_HINT": args.dtype,
        "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    feed = [x.float().numpy()]
    return lambda: request.infer(feed)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="build directory A (base)")
    p.add_argument("--b", required=True, help="build directory B (change)")
    p.add_argument("--model", choices=["gpt2", "llama", "bert", "linear"],
                   default="llama")
    p.add_argument("--size", choices=["0.5b", "1b", "tiny"], default="0.5b")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--linear", default="1024x896x4864",
                   help="MxKxN of --model linear")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", choices=["f32", "bf16"], default="bf16")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--no-prepack", action="store_true",
                   help="compile with prepack_weights=False (the default: "
                        "each call packs its weight panels)")
    p.add_argument("--openvino", action="store_true",
                   help="with --model linear: OpenVINO's compiled MatMul "
                        "(the layer converted alone, the dtype's precision "
                        "hint) timed in the same rounds")
    args = p.parse_args()

    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    torch.set_num_threads(args.threads)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    torch.manual_seed(0)
    if args.model == "linear":
        m, k, n = (int(v) for v in args.linear.split("x"))
        model = torch.nn.Linear(k, n, bias=False).to(dtype).eval()
        inputs, kwargs = (torch.randn(m, k, dtype=dtype),), {}
        label = f"linear {m}x{k}x{n}"
        flop = 2 * m * n * k
    else:
        model, kind = pm.build_model(args.model, args.size, args.seq)
        model = model.to(dtype)
        ids, mask = pm.model_inputs(model, kind, args.batch, args.seq)
        inputs, kwargs = (ids,), {"attention_mask": mask}
        label = f"{args.model} T={args.seq} batch={args.batch}"
        flop = None
    with torch.no_grad():
        ref = first_tensor(model(*inputs, **kwargs)).float()
    tol = 0.25 if args.dtype == "bf16" else 1e-3
    calls = {}
    for name, build in (("A", args.a), ("B", args.b)):
        os.environ["ATTN_BUILD_DIR"] = str(Path(build).resolve())
        lib = attnfuse.compile(model, inputs, example_kwargs=kwargs,
                               prepack_weights=not args.no_prepack)
        out = first_tensor(lib(*inputs, **kwargs)).float()
        err = (out - ref).abs().max().item()
        if not err <= tol:
            sys.exit(f"build {name} ({build}): max |out - eager| = {err:.3g}"
                     f" > {tol}")
        calls[name] = lambda lib=lib: lib(*inputs, **kwargs)
    if args.model == "linear":
        calls["F.linear"] = lambda: model(*inputs)
        if args.openvino:
            calls["openvino"] = openvino_linear(model, inputs[0], args)

    with torch.no_grad():
        for call in calls.values():
            call()
        start = time.perf_counter()
        calls["A"]()
        repeat = max(1, round(0.6 / (time.perf_counter() - start)))
        times = {name: [] for name in calls}
        order = list(calls)
        for r in range(args.rounds):
            for name in order if r % 2 == 0 else order[::-1]:
                t0 = time.perf_counter()
                for _ in range(repeat):
                    calls[name]()
                times[name].append((time.perf_counter() - t0) / repeat * 1e3)

    def describe(name):
        med = statistics.median(times[name])
        text = f"{name} {med:.2f} ms (fastest {min(times[name]):.2f}"
        if flop:
            text += f", {flop / min(times[name]) / 1e6:.0f} GFLOP/s"
        return text + ")"

    a, b = statistics.median(times["A"]), statistics.median(times["B"])
    print(f"{label} {args.dtype} threads={args.threads}: "
          + ", ".join(describe(name) for name in calls)
          + f", B/A {b / a:.3f}")


if __name__ == "__main__":
    main()
