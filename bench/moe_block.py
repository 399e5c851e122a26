#!/usr/bin/env python3
"""A mixture-of-experts layer alone: transformers' MixtralSparseMoeBlock
(router, top-k, grouped expert products) compiled by AttnFuse, side by side
with eager PyTorch (and torch.compile with --compile) in one run.

Random weights (normal, std 0.02) from a MixtralConfig; the experts run
transformers' "grouped_mm" implementation, which the exporter maps to one
GEMM per expert over its rows. Reports the best of --rounds rounds of
--calls calls per contender, and the largest difference from eager.

  PYTHONPATH=python python3 bench/moe_block.py [--hidden 1024]
      [--intermediate 1024] [--experts 8] [--top-k 2] [--tokens 128,512]
      [--threads 1] [--rounds 3] [--calls 10] [--dtype f32|bf16] [--compile]

Not a test: nothing here is timed by the test suite.
"""

import argparse
import os
import platform
import time

import torch
import transformers
from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

import attnfuse


class Block(torch.nn.Module):
    """The block's hidden states (newer transformers return them alone,
    older ones with the router logits)."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        out = self.block(x)
        return out[0] if isinstance(out, tuple) else out


def best_time(fn, x, rounds, calls):
    best = float("inf")
    with torch.no_grad():
        fn(x)
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(calls):
                fn(x)
            best = min(best, (time.perf_counter() - start) / calls)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--intermediate", type=int, default=1024)
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--tokens", default="128,512")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=10)
    p.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    p.add_argument("--compile", action="store_true",
                   help="also torch.compile (Inductor) the block")
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[args.dtype]
    config = transformers.MixtralConfig(
        hidden_size=args.hidden, intermediate_size=args.intermediate,
        num_local_experts=args.experts, num_experts_per_tok=args.top_k)
    config._experts_implementation = "grouped_mm"
    block = MixtralSparseMoeBlock(config)
    for param in block.parameters():
        torch.nn.init.normal_(param, 0.0, 0.02)
    model = Block(block).eval().to(dtype)
    inductor = torch.compile(model) if args.compile else None

    print(f"Machine: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs; threads {args.threads}; "
          f"torch {torch.__version__}, transformers "
          f"{transformers.__version__}")
    print(f"Mixtral MoE block: hidden {args.hidden}, intermediate "
          f"{args.intermediate}, {args.experts} experts, top {args.top_k}, "
          f"{args.dtype}, best of {args.rounds} x {args.calls} calls")
    head = "| tokens | eager ms | attnfuse ms | eager / attnfuse |"
    rule = "|--:|--:|--:|--:|"
    if inductor is not None:
        head += " torch.compile ms | torch.compile / attnfuse |"
        rule += "--:|--:|"
    head += " max abs diff |"
    rule += "--:|"
    rows = []
    for tokens in [int(t) for t in args.tokens.split(",")]:
        x = torch.randn(1, tokens, args.hidden, dtype=dtype)
        compiled = attnfuse.compile(model, (x,))
        with torch.no_grad():
            diff = (compiled(x).float() - model(x).float()).abs().max()
        eager = best_time(model, x, args.rounds, args.calls)
        ours = best_time(compiled, x, args.rounds, args.calls)
        row = (f"| {tokens} | {eager * 1e3:.2f} | {ours * 1e3:.2f} | "
               f"{eager / ours:.2f} |")
        if inductor is not None:
            theirs = best_time(inductor, x, args.rounds, args.calls)
            row += f" {theirs * 1e3:.2f} | {theirs / ours:.2f} |"
        rows.append(row + f" {diff.item():.1e} |")
    print("\n".join([head, rule] + rows))


if __name__ == "__main__":
    main()
