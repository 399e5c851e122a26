"""Resident memory of a quantized generator against its weights and cache.

Writes a Llama GGUF file of the given shape whose linear layers, embedding
and LM head are random valid blocks of one type (q8_0, q4_0, q4_k or q6_k;
norms in f32), then, each in a fresh process (`--modes`):

- `compile`: `attnfuse.compile_generator_from_gguf` right after importing
  torch, transformers and attnfuse; the growth includes the one-time cost
  of what the export imports and caches (torch.export, sympy, the model's
  transformers modules);
- `warm`: the same after compiling and running a one-layer Llama first, so
  the growth is what this model adds;
- `package`: `attnfuse.load` of the generator saved by `generator.save`
  (no export in that process: the ahead-of-time deployment);
- `llama.cpp`: `llama_cpp.Llama(file)` on the same file, where
  llama-cpp-python is installed (`--llama-repack off` disables its
  repacked weight buffers).

Each process runs one `generate` of `--new` tokens after a `--prompt`-token
prompt, then reports its RSS (`/proc/self/status`, after
`gc.collect()` and `malloc_trim`) over the RSS before the model, split into
anonymous and file pages, and the peak (`VmHWM`, its mark reset at the baseline) over it.
The budget is the issue's: the file's quantized tensors plus the KV cache
(f32, `--cache` positions, batch 1); the ratio is growth / budget.

    PYTHONPATH=python python3 bench/quant_memory.py --size 0.5b --type q4_0
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile

SIZES = {  # hidden, layers, heads, kv heads, intermediate, vocabulary
    "tiny": (256, 2, 4, 2, 512, 512),
    "0.5b": (1024, 24, 16, 4, 5632, 32000),
    "1b": (2048, 16, 32, 8, 8192, 32000),
}
LEAVES = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
          "ffn_down"]


def write_gguf(path, size, kind):
    """A Llama GGUF file of random blocks of `kind` (valid f16 scales)."""
    import gguf
    import numpy as np
    hidden, layers, heads, kv, inter, vocab = SIZES[size]
    ggml = getattr(gguf.GGMLQuantizationType, kind.upper())
    block, nbytes = gguf.GGML_QUANT_SIZES[ggml]
    head_dim = hidden // heads
    shapes = {"token_embd.weight": (vocab, hidden),
              "output.weight": (vocab, hidden)}
    for i in range(layers):
        shapes.update({f"blk.{i}.attn_q.weight": (hidden, hidden),
                       f"blk.{i}.attn_k.weight": (kv * head_dim, hidden),
                       f"blk.{i}.attn_v.weight": (kv * head_dim, hidden),
                       f"blk.{i}.attn_output.weight": (hidden, hidden),
                       f"blk.{i}.ffn_gate.weight": (inter, hidden),
                       f"blk.{i}.ffn_up.weight": (inter, hidden),
                       f"blk.{i}.ffn_down.weight": (hidden, inter)})
    # Where each block's f16 scales lie (d and dmin for q4_k).
    scales = {"Q8_0": (0,), "Q4_0": (0,), "Q4_K": (0, 2), "Q6_K": (208,)}
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"random-{size}")
    for key, value in dict(context_length=4096, embedding_length=hidden,
                           block_count=layers, feed_forward_length=inter,
                           head_count=heads, head_count_kv=kv,
                           rope_dimension_count=head_dim,
                           rope_freq_base=10000.0,
                           layer_norm_rms_eps=1e-5, vocab_size=vocab).items():
        getattr(w, f"add_{key}")(value)
    rng = np.random.default_rng(0)
    quantized = 0
    for name, (n, k) in shapes.items():
        raw = rng.integers(0, 256, size=(n, k // block * nbytes),
                           dtype=np.uint8)
        blocks = raw.reshape(-1, nbytes)
        for off in scales[kind.upper()]:
            blocks[:, off:off + 2] = rng.uniform(
                -0.01, 0.01, (blocks.shape[0], 1)).astype("<f2").view(np.uint8)
        w.add_tensor(name, raw, raw_dtype=ggml)
        quantized += raw.nbytes
    for i in range(layers):
        for norm in ("attn_norm", "ffn_norm"):
            w.add_tensor(f"blk.{i}.{norm}.weight", np.ones(hidden, np.float32))
    w.add_tensor("output_norm.weight", np.ones(hidden, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    kv_bytes = 2 * layers * kv * head_dim * 4  # per cached position, f32
    return quantized, kv_bytes, vocab


def rss():
    """(total, anonymous, file, peak) resident MiB, after collecting garbage and
    returning freed heap pages."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out["VmRSS"], out["RssAnon"], out["RssFile"], out["VmHWM"]


def reset_peak():
    """Sets the peak RSS mark (VmHWM) to the current RSS."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def child(mode, path, package, args):
    """One measurement in this (fresh) process; prints its JSON record."""
    import torch
    prompt = torch.randint(0, args.vocab, (1, args.prompt))
    if mode == "llama.cpp":
        import llama_cpp
        before = rss()
        reset_peak()
        extra = {} if args.llama_repack == "on" else {"use_extra_bufts": False}
        llm = llama_cpp.Llama(path, n_ctx=args.cache, n_threads=args.threads,
                              n_batch=args.prompt, verbose=False, **extra)
        tokens = prompt[0].tolist()
        llm.eval(tokens)
        for _ in range(args.new):
            llm.eval([int(llm.sample(temp=0.0))])
    else:
        import transformers
        import attnfuse
        if mode == "warm":
            cfg = transformers.LlamaConfig(
                vocab_size=64, hidden_size=64, intermediate_size=128,
                num_hidden_layers=1, num_attention_heads=4,
                num_key_value_heads=2)
            warm = attnfuse.compile_generator(
                transformers.LlamaForCausalLM(cfg).eval(), max_batch=1,
                max_cache_len=64)
            warm.generate(torch.randint(0, 64, (1, 8)), max_new_tokens=2,
                          do_sample=False)
            del warm
        before = rss()
        reset_peak()
        if mode == "package":
            generator = attnfuse.load(package)
        else:
            generator = attnfuse.compile_generator_from_gguf(
                path, max_batch=1, max_cache_len=args.cache)
        generator.generate(prompt, max_new_tokens=args.new, do_sample=False)
    after = rss()
    print(json.dumps({"mode": mode, "total": after[0] - before[0],
                      "anon": after[1] - before[1],
                      "file": after[2] - before[2], "peak": after[3] - before[0],
                      "baseline": before[0]}), flush=True)
    if mode == "compile" and package:
        generator.save(package)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=SIZES, default="0.5b")
    ap.add_argument("--type", default="q4_0",
                    choices=["q8_0", "q4_0", "q4_k", "q6_k"])
    ap.add_argument("--gguf", help="use this file's name for the written "
                    "file (kept) instead of a temporary one")
    ap.add_argument("--modes", default="compile,warm,package,llama.cpp")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=16)
    ap.add_argument("--cache", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--llama-repack", choices=["on", "off"], default="on")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--vocab", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child, args)

    tmp = tempfile.mkdtemp(prefix="quant-memory-")
    path = args.gguf or os.path.join(tmp, f"{args.size}-{args.type}.gguf")
    quantized, kv_per_position, vocab = write_gguf(path, args.size, args.type)
    budget = (quantized + kv_per_position * args.cache) / 2**20
    package = os.path.join(tmp, "package")
    modes = args.modes.split(",")
    if "package" in modes and "compile" not in modes:
        modes.insert(0, "compile")  # the compile saves the package
    print(f"# {args.size} {args.type}: quantized tensors "
          f"{quantized / 2**20:.1f} MiB + KV cache "
          f"{kv_per_position * args.cache / 2**20:.1f} MiB = budget "
          f"{budget:.1f} MiB")
    print("| mode | growth MiB | anon | file | growth / budget | peak over "
          "baseline MiB | baseline MiB |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for mode in modes:
        cmd = [sys.executable, __file__, "--child", mode, path,
               package if mode in ("compile", "package") else "",
               "--vocab", str(vocab)]
        for opt in ("prompt", "new", "cache", "threads"):
            cmd += [f"--{opt}", str(getattr(args, opt))]
        cmd += ["--llama-repack", args.llama_repack]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            reason = (run.stderr.strip().splitlines() or ["?"])[-1]
            print(f"| {mode} | not run: {reason[:100]} | | | | | |")
            continue
        r = json.loads(next(line for line in run.stdout.splitlines()
                            if line.startswith("{")))
        print(f"| {mode} | {r['total']:.0f} | {r['anon']:.0f} | "
              f"{r['file']:.0f} | {r['total'] / budget:.2f}x | "
              f"{r['peak']:.0f} | {r['baseline']:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
