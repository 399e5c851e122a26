"""Compile time of whole Hugging Face models: torch.export, then
attn-compile, for a Llama-style model of N layers built from its config
(random weights), each with an empty compile cache.

    PYTHONPATH=python python3 bench/compile_time.py --layers 2 12 [--compare]

--compare also times attn-compile on the same module with
--no-outline-kernels (every layer's kernels lowered and compiled apart).
"""

import argparse
import glob
import os
import subprocess
import tempfile
import time

import torch
import transformers as T

import attnfuse
from attnfuse.tools import find_tool


def measure(layers: int, hidden: int, seq: int):
    cfg = T.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden,
                        intermediate_size=2 * hidden, num_attention_heads=4,
                        num_key_value_heads=2, vocab_size=128,
                        use_cache=False)
    model = T.LlamaModel(cfg).eval()
    ids = torch.randint(0, 128, (2, seq))
    kwargs = {"attention_mask": torch.ones(2, seq, dtype=torch.long)}
    cache = tempfile.mkdtemp()
    os.environ["ATTNFUSE_CACHE_DIR"] = cache
    t0 = time.perf_counter()
    text = attnfuse.export(model, (ids,), example_kwargs=kwargs)
    t1 = time.perf_counter()
    compiled = attnfuse.compile(model, (ids,), example_kwargs=kwargs)
    t2 = time.perf_counter()
    got = compiled(ids, **kwargs).last_hidden_state
    err = (got - model(ids, **kwargs).last_hidden_state).abs().max().item()
    # compile() exports again: its attn-compile share is the difference.
    return (t1 - t0, (t2 - t1) - (t1 - t0), text.count("\n"), err,
            glob.glob(os.path.join(cache, "*.mlir"))[0])


def time_without_outlining(mlir_path: str) -> float:
    """attn-compile of the module compile() built, kernels not outlined."""
    out = os.path.join(os.path.dirname(mlir_path), "plain.so")
    t0 = time.perf_counter()
    subprocess.run([find_tool("attn-compile"), mlir_path, "-o", out,
                    "--emit=so", "--no-outline-kernels"], check=True)
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, nargs="+", default=[2, 12])
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--compare", action="store_true",
                   help="also time attn-compile --no-outline-kernels")
    args = p.parse_args()
    extra = " attn-compile --no-outline-kernels s |" if args.compare else ""
    print(f"| layers | export s | attn-compile s |{extra} MLIR lines | "
          "max abs err |")
    print("|---:|---:|---:|" + ("---:|" if args.compare else "") +
          "---:|---:|")
    for n in args.layers:
        export_s, compile_s, lines, err, path = measure(n, args.hidden,
                                                        args.seq)
        plain = (f" {time_without_outlining(path):.1f} |" if args.compare
                 else "")
        print(f"| {n} | {export_s:.1f} | {compile_s:.1f} |{plain} {lines} | "
              f"{err:.1e} |", flush=True)


if __name__ == "__main__":
    main()
