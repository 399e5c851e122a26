#!/usr/bin/env python3
"""nanoGPT's CausalSelfAttention (the hand-written, non-flash path) compiled
by AttnFuse next to eager PyTorch, AOTInductor, IREE (llvm-cpu) and ONNX
Runtime (CPU): latency per call at two sequence lengths, compile time,
whether the attention was fused (and how that was determined), and the max
abs error against eager.

The peers are not part of CI; install them for this benchmark only, in a
venv that sees the pinned torch:

    python3 -m venv --system-site-packages build/bench-venv
    build/bench-venv/bin/pip install iree-base-compiler==3.13.0 \\
        iree-base-runtime==3.13.0 iree-turbine==3.9.0 onnxruntime==1.32.0 \\
        onnx==1.23.2 onnxscript==0.7.2
    PYTHONPATH=python build/bench-venv/bin/python bench/python_nanogpt.py

A peer that is missing or fails gets its error in the table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback
import zipfile
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent


# nanoGPT's block as written (model.py, the `not self.flash` branch), shared
# with the tests.
sys.path.insert(0, str(ROOT / "python" / "tests"))
from models import CausalSelfAttention, GPTConfig  # noqa: E402


def Config():
    """nanoGPT's GPT-2 block size with the Shakespeare-char width."""
    return GPTConfig(block_size=1024, n_embd=384, n_head=6, dropout=0.0)


class AttentionCore(nn.Module):
    """The same block's attention alone, q/k/v given ([B, H, T, D]): the
    part AttnFuse fuses, without the projections."""

    def __init__(self, config):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(
            config.block_size, config.block_size)).view(
                1, 1, config.block_size, config.block_size))

    def forward(self, q, k, v):
        T = q.size(-2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return att @ v


def latency_ms(fn, min_time=2.0, min_calls=5, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 200:
            break
    return statistics.median(times) * 1e3


# Each peer: compile(module, inputs, workdir) -> (call, fused_note).
def peer_eager(module, x, work):
    return (lambda: module(*x)), "no: eager runs each op of the chain"


def peer_attnfuse(module, x, work):
    sys.path.insert(0, str(ROOT / "python"))
    import attnfuse
    os.environ["ATTNFUSE_CACHE_DIR"] = str(work / "attnfuse-cache")
    compiled = attnfuse.compile(module, x, constants="buffers")
    fused, _ = attnfuse.fuse(compiled.mlir)
    n = fused.count('"attn.sdpa"')
    causal = "is_causal = true" in fused
    note = (f"yes: {n} attn.sdpa{' (is_causal)' if causal else ''} after "
            f"attn-opt --attn-fuse-sdpa, no attn.softmax left"
            if n and '"attn.softmax"' not in fused else
            f"no: {n} attn.sdpa")
    return (lambda: compiled(*x)), note


def peer_aotinductor(module, x, work):
    ep = torch.export.export(module, x)
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=str(work / "block.pt2"))
    runner = torch._inductor.aoti_load_package(path)
    code = ""
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.endswith((".cpp", ".h", ".py")) and "include" not in name:
                code += z.read(name).decode(errors="replace")
    sdpa = [w for w in ("scaled_dot_product", "flash_attention", "_sdpa")
            if w in code]
    note = (f"yes: generated code calls {', '.join(sdpa)}" if sdpa else
            f"no: no SDPA call in the generated code "
            f"({code.count('cpp_fused_')} cpp_fused kernel references, "
            f"bmm/mm as extern calls)")
    return (lambda: runner(*x)), note


def peer_iree(module, x, work):
    import iree.compiler as ireec
    import iree.runtime as ireert
    from iree.turbine import aot
    exported = aot.export(module, *x)
    src = work / "block.mlir"
    exported.save_mlir(str(src))
    args = ["--iree-llvmcpu-target-cpu=host"]
    flow = ireec.compile_file(str(src), target_backends=["llvm-cpu"],
                              extra_args=args + ["--compile-to=flow"])
    flow = flow.decode() if isinstance(flow, bytes) else flow
    vmfb = ireec.compile_file(str(src), target_backends=["llvm-cpu"],
                              extra_args=args)
    ireert.flags.parse_flags(
        f"--task_topology_max_group_count={torch.get_num_threads()}")
    config = ireert.Config("local-task")
    ctx = ireert.SystemContext(config=config)
    ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
    fn = ctx.modules.module["main"]
    xs = [t.numpy() for t in x]
    n_attn = flow.count("iree_linalg_ext.attention")
    n_disp = flow.count("flow.dispatch @")
    note = (f"yes: {n_attn} iree_linalg_ext.attention at --compile-to=flow"
            if n_attn else
            f"no: no iree_linalg_ext.attention at --compile-to=flow "
            f"({n_disp} dispatches)")
    return (lambda: fn(*xs).to_host()), note


def peer_onnxruntime(module, x, work):
    import onnxruntime as ort
    import onnx
    path = work / "block.onnx"
    names = [f"x{i}" for i in range(len(x))]
    torch.onnx.export(module, x, str(path), dynamo=True,
                      input_names=names, output_names=["y"])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = torch.get_num_threads()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    optimized = work / "block.opt.onnx"
    opts.optimized_model_filepath = str(optimized)
    sess = ort.InferenceSession(str(path), opts,
                                providers=["CPUExecutionProvider"])
    ops = [n.op_type for n in onnx.load(str(optimized)).graph.node]
    attn = [o for o in ops if "Attention" in o]
    kinds = ", ".join(sorted(set(ops)))
    note = (f"yes: {', '.join(attn)} in the optimized graph" if attn else
            f"no: no Attention op in ORT's optimized graph ({len(ops)} nodes:"
            f" {kinds})")
    feeds = {n: t.numpy() for n, t in zip(names, x)}
    return (lambda: sess.run(None, feeds)[0]), note


PEERS = {"eager": peer_eager, "attnfuse": peer_attnfuse,
         "aotinductor": peer_aotinductor, "iree": peer_iree,
         "onnxruntime": peer_onnxruntime}


def to_tensor(y):
    if isinstance(y, (list, tuple)):
        y = y[0]
    return y if isinstance(y, torch.Tensor) else torch.from_numpy(y)


def run(peer, module, x, expected, min_time):
    with tempfile.TemporaryDirectory() as tmp:
        try:
            t0 = time.perf_counter()
            call, note = PEERS[peer](module, x, Path(tmp))
            y = to_tensor(call())  # first call included in compile time
            compile_s = time.perf_counter() - t0
            err = (y.float() - expected.float()).abs().max().item()
            ms = latency_ms(call, min_time)
            return dict(peer=peer, ms=ms, compile_s=compile_s, fused=note,
                        max_abs_err=err)
        except Exception as e:  # a peer that fails is reported, not fatal
            traceback.print_exc()
            first = str(e).strip().splitlines()[0][:160] if str(e) else ""
            return dict(peer=peer, error=f"{type(e).__name__}: {first}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq", type=int, nargs="+", default=[256, 1024])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1,
                   help="threads for every system (torch, OpenMP, ORT, IREE)")
    p.add_argument("--peers", nargs="+", default=list(PEERS))
    p.add_argument("--min-time", type=float, default=2.0,
                   help="seconds of timed calls per measurement")
    p.add_argument("--module", choices=["block", "core"], default="block",
                   help="block: the whole CausalSelfAttention; core: its "
                   "attention alone on q/k/v")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    # Before any AttnFuse library loads libomp.
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    cfg = Config()
    torch.manual_seed(0)
    block = args.module == "block"
    module = (CausalSelfAttention if block else AttentionCore)(cfg).eval()
    head_dim = cfg.n_embd // cfg.n_head
    results = []
    with torch.no_grad():
        for seq in args.seq:
            if block:
                x = (torch.randn(args.batch, seq, cfg.n_embd),)
            else:
                x = tuple(torch.randn(args.batch, cfg.n_head, seq, head_dim)
                          for _ in range(3))
            expected = module(*x)
            for peer in args.peers:
                r = run(peer, module, x, expected, args.min_time)
                r["seq"] = seq
                results.append(r)
                print(json.dumps(r), flush=True)
    print(f"\nnanoGPT CausalSelfAttention ({args.module}), n_embd={cfg.n_embd}, "
          f"n_head={cfg.n_head}, batch={args.batch}, f32, "
          f"{args.threads} threads\n")
    print("| T | system | latency (ms) | compile (s) | attention fused? "
          "| max abs err vs eager |")
    print("|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['seq']} | {r['peer']} | failed | | {r['error']} | |")
        else:
            print(f"| {r['seq']} | {r['peer']} | {r['ms']:.2f} | "
                  f"{r['compile_s']:.1f} | {r['fused']} | "
                  f"{r['max_abs_err']:.1e} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
