#!/usr/bin/env python3
"""Peak memory of one whole-model forward: AttnFuse's compiled library
(with and without prepacked weights) against eager PyTorch, on the models of bench/python_models.py. Each
system runs in a process of its own: build the model and its inputs (and
compile, for AttnFuse), run one warm-up call, reset the kernel's peak-RSS
mark (/proc/self/clear_refs), run one call, and report the peak RSS of that
call over the RSS before it (what the call's temporaries and outputs add on
top of the weights). Not a test.

    PYTHONPATH=python python3 bench/peak_memory.py [--models gpt2 llama bert]
        [--seq 512] [--batch 1] [--dtype f32] [--threads 1]
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(field)


def child(system, name, t, batch, dtype, threads, llama_size):
    import torch
    sys.path.insert(0, HERE)
    from python_models import DTYPES, build_model, model_inputs, peer_attnfuse

    torch.set_num_threads(threads)
    model, kind = build_model(name, llama_size, t)
    model = model.to(DTYPES[dtype])
    ids, mask = model_inputs(model, kind, batch, t)
    if system.startswith("attnfuse"):
        cell = argparse.Namespace(model=model, ids=ids, mask=mask)
        call, _ = peer_attnfuse(
            cell, prepack_weights=system == "attnfuse-prepack")
    else:
        def call():
            return model(ids, attention_mask=mask)
    with torch.no_grad():
        call()
        before = rss_kib("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        y = call()
        peak = rss_kib("VmHWM")
    del y
    return {"system": system, "model": name, "t": t, "batch": batch,
            "dtype": dtype, "rss_before_mib": before / 1024,
            "call_peak_mib": (peak - before) / 1024}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["gpt2", "llama", "bert"])
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--size", default="0.5b", help="Llama-style shape")
    p.add_argument("--child", nargs=2, metavar=("SYSTEM", "MODEL"))
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.seq, args.batch, args.dtype,
                               args.threads, args.size)))
        return
    print(f"batch {args.batch}, T={args.seq}, {args.dtype}, "
          f"{args.threads} thread(s)")
    print("| model | eager call peak MiB | attnfuse call peak MiB | "
          "attnfuse / eager | attnfuse-prepack call peak MiB | RSS before "
          "the call (eager, attnfuse, attnfuse-prepack) MiB |")
    print("|---|--:|--:|--:|--:|--:|")
    for name in args.models:
        rows = {}
        for system in ("eager", "attnfuse", "attnfuse-prepack"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", system, name,
                 "--seq", str(args.seq), "--batch", str(args.batch),
                 "--dtype", args.dtype, "--threads", str(args.threads),
                 "--size", args.size],
                capture_output=True, text=True, check=True)
            rows[system] = json.loads(out.stdout.strip().splitlines()[-1])
        e, a, pp = (rows["eager"], rows["attnfuse"],
                    rows["attnfuse-prepack"])
        print(f"| {name} | {e['call_peak_mib']:.1f} | "
              f"{a['call_peak_mib']:.1f} | "
              f"{a['call_peak_mib'] / max(e['call_peak_mib'], 1e-9):.2f} | "
              f"{pp['call_peak_mib']:.1f} | "
              f"{e['rss_before_mib']:.0f}, {a['rss_before_mib']:.0f}, "
              f"{pp['rss_before_mib']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
