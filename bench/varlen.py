"""Variable-length batches: the SDPA tutorial's NestedTensor experiment on
the CPU (issue 51's benchmark).

  python3 bench/varlen.py --batch 32 --max-len 512 --dtype f32 bf16 \\
      --threads 2 [--causal] [--torch-compile] [--torch-nested]

The tutorial's CausalSelfAttention (embed 512, 8 heads, no bias) on a batch
of `--batch` sequences whose lengths are the tutorial's random ones
(`max_len * (1 - gauss(0.5, 0.01))`, one sequence of the maximum length:
about 50% padding). Peers, each timed as the median of `--reps` calls
after one warm-up call:

- attnfuse-nested: attnfuse.compile on the jagged NestedTensor (the
  projections on the packed tokens, the attention on the padded batch with
  sequence lengths: padded query and key blocks skipped);
- attnfuse-padded: attnfuse.compile of the module on the padded dense
  batch (every padded token and score computed);
- torch-padded: eager PyTorch on the padded batch;
- torch-nested (`--torch-nested`, non-causal only): eager PyTorch on the
  NestedTensor (PyTorch 2.15+cu132 on a machine without a CUDA driver
  fails inside its NestedTensor SDPA with a CUDA driver error, reported
  as the row's error);
- torch.compile of the module on both (`--torch-compile`).

Also prints the work ratio (padded / real: the projections' tokens and the
attention's scores, causal halving both sides) and checks that the
AttnFuse results agree with eager PyTorch on each sequence. OMP_NUM_THREADS
and torch's threads are set from `--threads` before anything loads (one
process per thread count).
"""
import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--max-len", type=int, default=512)
    p.add_argument("--embed", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--dtype", nargs="+", default=["f32", "bf16"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--torch-compile", action="store_true")
    p.add_argument("--torch-nested", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


args = parse()
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
import attnfuse  # noqa: E402

torch.set_num_threads(args.threads)


class CausalSelfAttention(nn.Module):
    """The tutorial's module, as written there."""

    def __init__(self, num_heads, embed_dimension, bias=False,
                 is_causal=False, dropout=0.0):
        super().__init__()
        self.c_attn = nn.Linear(embed_dimension, 3 * embed_dimension,
                                bias=bias)
        self.c_proj = nn.Linear(embed_dimension, embed_dimension, bias=bias)
        self.dropout = dropout
        self.resid_dropout = nn.Dropout(dropout)
        self.num_heads = num_heads
        self.embed_dimension = embed_dimension
        self.is_causal = is_causal

    def forward(self, x):
        query_projected = self.c_attn(x)
        batch_size = query_projected.size(0)
        embed_dim = query_projected.size(2)
        head_dim = embed_dim // (self.num_heads * 3)
        query, key, value = query_projected.chunk(3, -1)
        query = query.view(batch_size, -1, self.num_heads,
                           head_dim).transpose(1, 2)
        key = key.view(batch_size, -1, self.num_heads,
                       head_dim).transpose(1, 2)
        value = value.view(batch_size, -1, self.num_heads,
                           head_dim).transpose(1, 2)
        dropout = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(
            query, key, value, attn_mask=None, dropout_p=dropout,
            is_causal=self.is_causal)
        y = y.transpose(1, 2).view(batch_size, -1,
                                   self.num_heads * head_dim)
        return self.resid_dropout(self.c_proj(y))


def tutorial_lengths(batch, max_len, rng):
    lengths = [int(max_len * (1 - rng.gauss(0.5, 0.01)))
               for _ in range(batch)]
    lengths[rng.randint(0, batch - 1)] = max_len
    return lengths


def median_time(fn, x, reps):
    with torch.no_grad():
        fn(x)
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            fn(x)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def work_ratio(lengths, max_len, embed, causal):
    """(padded / real) of the projections (tokens) and of the attention
    (scores), and of the sum of their FLOPs."""
    b = len(lengths)
    proj = lambda n: 2 * n * embed * 4 * embed  # noqa: E731  c_attn + c_proj
    att = lambda n: 2 * 2 * n * n * embed * (0.5 if causal else 1)  # noqa: E731
    padded = b * (proj(max_len) + att(max_len))
    real = sum(proj(n) + att(n) for n in lengths)
    return (b * max_len / sum(lengths),
            b * max_len ** 2 / sum(n * n for n in lengths), padded / real)


def main():
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    lengths = tutorial_lengths(args.batch, args.max_len, rng)
    tokens, scores, flops = work_ratio(lengths, args.max_len, args.embed,
                                       args.causal)
    print(f"# batch {args.batch}, max length {args.max_len}, embed "
          f"{args.embed}, {args.heads} heads, causal={args.causal}, "
          f"{args.threads} threads; padding "
          f"{1 - sum(lengths) / (args.batch * args.max_len):.1%}; "
          f"padded/real: tokens {tokens:.2f}x, scores {scores:.2f}x, "
          f"FLOPs {flops:.2f}x")
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16}
    for name in args.dtype:
        dtype = dtypes[name]
        model = CausalSelfAttention(args.heads, args.embed,
                                    is_causal=args.causal).eval().to(dtype)
        model.requires_grad_(False)
        seqs = [torch.randn(n, args.embed, dtype=dtype) for n in lengths]
        nt = torch.nested.nested_tensor(seqs, layout=torch.jagged)
        dense = nt.to_padded_tensor(0.0)
        t = time.perf_counter()
        nested_c = attnfuse.compile(model, (nt,))
        t_nested = time.perf_counter() - t
        t = time.perf_counter()
        padded_c = attnfuse.compile(model, (dense,))
        t_padded = time.perf_counter() - t
        print(f"# {name}: compile nested {t_nested:.1f} s, padded "
              f"{t_padded:.1f} s")
        # Agreement with eager PyTorch on each sequence (a few of them).
        with torch.no_grad():
            got = nested_c(nt)
            off = got.offsets().tolist()
            err = max((got.values()[off[b]:off[b + 1]].float() -
                       model(seqs[b][None])[0].float()).abs().max().item()
                      for b in range(min(4, len(seqs))))
        rows = [("attnfuse-nested", nested_c, nt),
                ("attnfuse-padded", padded_c, dense),
                ("torch-padded", model, dense)]
        if args.torch_nested and not args.causal:
            rows.append(("torch-nested", model, nt))
        if args.torch_compile:
            compiled = torch.compile(model)
            rows.append(("torch.compile-padded", compiled, dense))
            if not args.causal:
                rows.append(("torch.compile-nested", compiled, nt))
        times = {}
        for peer, fn, x in rows:
            reps = 1 if peer == "torch-nested" else args.reps
            try:
                times[peer] = median_time(fn, x, reps)
            except Exception as e:  # PyTorch's CPU NestedTensor SDPA
                times[peer] = f"{type(e).__name__}: {str(e)[:80]}"
        base = times["attnfuse-padded"]
        for peer, _, _ in rows:
            if isinstance(times[peer], str):
                print(f"{name:5} {peer:22} error: {times[peer]}")
                continue
            print(f"{name:5} {peer:22} {times[peer] * 1e3:9.2f} ms  "
                  f"(attnfuse-padded / this: {base / times[peer]:.2f}x)")
        print(f"# {name}: max |attnfuse-nested - eager per sequence| = "
              f"{err:.2e}; speedup nested over padded "
              f"{base / times['attnfuse-nested']:.2f}x against "
              f"{flops:.2f}x less work")


if __name__ == "__main__":
    main()
