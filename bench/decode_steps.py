"""Decode steps of bench/generate.py's Llama-style model, timed alone: the
generator (prepacked, one row) prefills a prompt, then one decode step at
the same position runs in a loop for --secs seconds. Prints the time per
step and the weights' bytes read per second (the projections and the LM
head, not the embedding), to compare with a triad (`--triad`, the
generation benchmark's). Not a test.

  ATTNFUSE_TOOLS_DIR=build/bin PYTHONPATH=python python3 bench/decode_steps.py \\
      [--size 0.5b] [--dtype bf16|f32] [--threads 2] [--prompt 512] [--triad]

For an A/B of two builds, run it once per ATTNFUSE_TOOLS_DIR (alternating)
with a compile cache (ATTNFUSE_CACHE_DIR) per build.
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="0.5b")
    p.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--prompt", type=int, default=512)
    p.add_argument("--secs", type=float, default=5)
    p.add_argument("--triad", action="store_true")
    a = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import torch
    import attnfuse
    import generate as g
    torch.set_num_threads(a.threads)
    dtype = g.DTYPES[a.dtype]
    model = g.llama(a.size).to(dtype)
    gen = attnfuse.compile_generator(model, max_batch=1,
                                     max_cache_len=a.prompt + 1, dtype=dtype,
                                     prepack_weights=True)
    n = a.prompt
    ids = torch.randint(3, 1000, (1, n))
    gen.prefill(ids, torch.ones(1, n, dtype=torch.int64),
                torch.arange(n).expand(1, n))
    tok = torch.randint(3, 1000, (1, 1))
    mask = torch.ones(1, n + 1, dtype=torch.int64)
    pos = torch.full((1, 1), n)
    for _ in range(3):
        gen.decode(tok, mask, pos)
    t0 = time.perf_counter()
    steps = 0
    while time.perf_counter() - t0 < a.secs:
        gen.decode(tok, mask, pos)
        steps += 1
    step = (time.perf_counter() - t0) / steps
    size = torch.empty((), dtype=dtype).element_size()
    weights = sum(q.numel() for name, q in model.named_parameters()
                  if "embed_tokens" not in name) * size
    line = (f"{a.size} {a.dtype} {a.threads} threads: {steps} steps, "
            f"{step * 1e3:.2f} ms/step, weights {weights / step / 1e9:.1f} "
            "GB/s")
    if a.triad:
        line += f", triad {g.triad(a.threads):.1f} GB/s"
    print(line)


if __name__ == "__main__":
    main()
