"""Compile time of whole Hugging Face models: torch.export, then
attn-compile, for a Llama-style model of N layers built from its config
(random weights), each with an empty compile cache.

    PYTHONPATH=python python3 bench/compile_time.py --layers 2 12
"""

import argparse
import os
import tempfile
import time

import torch
import transformers as T

import attnfuse


def measure(layers: int, hidden: int, seq: int):
    cfg = T.LlamaConfig(num_hidden_layers=layers, hidden_size=hidden,
                        intermediate_size=2 * hidden, num_attention_heads=4,
                        num_key_value_heads=2, vocab_size=128,
                        use_cache=False)
    model = T.LlamaModel(cfg).eval()
    ids = torch.randint(0, 128, (2, seq))
    kwargs = {"attention_mask": torch.ones(2, seq, dtype=torch.long)}
    os.environ["ATTNFUSE_CACHE_DIR"] = tempfile.mkdtemp()
    t0 = time.perf_counter()
    text = attnfuse.export(model, (ids,), example_kwargs=kwargs)
    t1 = time.perf_counter()
    compiled = attnfuse.compile(model, (ids,), example_kwargs=kwargs)
    t2 = time.perf_counter()
    got = compiled(ids, **kwargs).last_hidden_state
    err = (got - model(ids, **kwargs).last_hidden_state).abs().max().item()
    # compile() exports again: its attn-compile share is the difference.
    return t1 - t0, (t2 - t1) - (t1 - t0), text.count("\n"), err


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, nargs="+", default=[2, 12])
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seq", type=int, default=16)
    args = p.parse_args()
    print("| layers | export s | attn-compile s | MLIR lines | max abs err |")
    print("|---:|---:|---:|---:|---:|")
    for n in args.layers:
        export_s, compile_s, lines, err = measure(n, args.hidden, args.seq)
        print(f"| {n} | {export_s:.1f} | {compile_s:.1f} | {lines} | "
              f"{err:.1e} |", flush=True)


if __name__ == "__main__":
    main()
