#!/usr/bin/env python3
"""Generation throughput of a Llama-style model with random weights (built
from a config, no download), AttnFuse's compiled generator next to
transformers' `generate` (eager), `generate` with the static cache and
`torch.compile` (the gpt-fast recipe), CTranslate2 and llama.cpp
(llama-cpp-python) where they are installed, in one run:

- prefill tokens/s: a prompt of T tokens (128, 1024) and one new token;
- decode tokens/s: 128 new tokens after a 512-token prompt, timed as
  (time for 128 new tokens - time for 1) / 127 per step;
- the decode step's achieved memory bandwidth: bytes read per step (every
  projection weight and the LM head once, plus the keys and values of the
  filled cache at the mean length) / step time, against a triad
  `a = b + s * c` measured in the same run with the same thread count.

Every peer is set up first, then each measurement runs once per peer in
turn, `--rounds` times, and the best of each peer's rounds counts: the
peers share the host's quiet and busy spells.

Not part of CI. The peers live in a venv that sees the pinned torch and
transformers (bench/setup-venv.sh):

    bench/setup-venv.sh
    PYTHONPATH=python /work/bench-venv/bin/python bench/generate.py --size 0.5b

`--size tiny` checks the harness end to end in a minute or two. A peer
that is missing or fails gets its error in the table instead of numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

SIZES = {
    # hidden, layers, heads, kv heads, intermediate, vocab
    "tiny": (128, 2, 4, 2, 256, 1000),
    "small": (512, 8, 8, 4, 1536, 8000),
    "0.5b": (1024, 24, 16, 4, 5632, 32000),
    "1b": (2048, 16, 32, 8, 8192, 32000),
}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def llama(size, seed=0):
    import transformers as tf
    hidden, layers, heads, kv, inter, vocab = SIZES[size]
    config = tf.LlamaConfig(
        vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv,
        intermediate_size=inter, max_position_embeddings=4096,
        bos_token_id=1, eos_token_id=2, tie_word_embeddings=False)
    torch.manual_seed(seed)
    return tf.LlamaForCausalLM(config).eval()


def step_bytes(model, batch, mean_length, dtype):
    """Bytes a decode step reads: the projection weights and the LM head
    (not the embedding table: one row per token) and the cached keys and
    values of `mean_length` positions."""
    size = torch.empty((), dtype=dtype).element_size()
    weights = sum(p.numel() for n, p in model.named_parameters()
                  if "embed_tokens" not in n)
    cfg = model.config
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    cache = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * head_dim \
        * mean_length * batch
    return (weights + cache) * size


def triad(threads, n=1 << 25, rounds=10):
    """GB/s of `a = b + 2 c` over three n-float arrays (STREAM's count:
    three arrays moved), best of `rounds`, with `threads` torch threads."""
    torch.set_num_threads(threads)
    b, c = torch.rand(n), torch.rand(n)
    a = torch.empty(n)
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        torch.add(b, c, alpha=2.0, out=a)
        best = min(best, time.perf_counter() - t)
    return 3 * n * 4 / best / 1e9


def timed(fns, rounds):
    """The best time of each of `fns` (name -> call) over `rounds`, the
    calls taking turns round by round: on a host whose memory bandwidth
    changes by tens of percent from one minute to the next (a shared VM),
    every peer then runs in the same spells. A call that raises drops its
    peer: its name maps to the exception."""
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            if isinstance(best[name], Exception):
                continue
            t = time.perf_counter()
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - a peer's failure
                traceback.print_exc(limit=2)
                best[name] = e
                continue
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def prompt(batch, length, vocab, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab, (batch, length), generator=g)


# ---- peers ------------------------------------------------------------------
class Peer:
    """generate(ids, new_tokens) for one dtype; `setup` compiles."""
    name = "?"
    batches = None  # the batch sizes it can run, None: all
    warmup = False  # one untimed call per shape first (compiles per shape)

    def setup(self, model, dtype, args):
        pass

    def generate(self, ids, new):
        raise NotImplementedError


class AttnFuse(Peer):
    name = "attnfuse"
    prepack = False

    def setup(self, model, dtype, args):
        import attnfuse
        t = time.perf_counter()
        self.gen = attnfuse.compile_generator(
            model, max_batch=max(args.batches),
            max_cache_len=max(max(args.prefill), args.prompt + args.new) + 1,
            dtype=dtype, prepack_weights=self.prepack)
        self.compile_s = time.perf_counter() - t

    def generate(self, ids, new):
        return self.gen.generate(ids, max_new_tokens=new, do_sample=False,
                                 eos_token_id=[])


class AttnFusePrepacked(AttnFuse):
    """The prefill step on weights packed once (prepack_weights=True)."""
    name = "attnfuse-prepack"
    prepack = True


class Transformers(Peer):
    name = "transformers"

    def setup(self, model, dtype, args):
        self.model = model.to(dtype)

    def generate(self, ids, new):
        with torch.no_grad():
            return self.model.generate(
                ids, attention_mask=torch.ones_like(ids), max_new_tokens=new,
                min_new_tokens=new, do_sample=False)


class TransformersCompiled(Transformers):
    """gpt-fast's recipe: a static cache and torch.compile of the forward."""
    name = "transformers+compile"
    # A static cache of a new batch size or length recompiles the forward
    # inside the first call of that shape.
    warmup = True

    def setup(self, model, dtype, args):
        import copy
        # A fresh Dynamo for each dtype: the forward's code object is the
        # same, and the previous dtype's graphs would count towards its
        # recompile limit (past it, the forward runs eagerly).
        torch._dynamo.reset()
        self.model = copy.deepcopy(model).to(dtype)
        self.model.generation_config.cache_implementation = "static"
        self.model.forward = torch.compile(self.model.forward)
        t = time.perf_counter()
        self.generate(prompt(1, 8, self.model.config.vocab_size), 2)
        self.compile_s = time.perf_counter() - t


class CTranslate2(Peer):
    name = "ctranslate2"

    def setup(self, model, dtype, args):
        import ctranslate2
        from ctranslate2.converters import TransformersConverter
        d = Path(args.workdir)
        src, out = d / "hf", d / f"ct2-{dtype}".replace("torch.", "")
        save_checkpoint(model, src)
        if not out.exists():
            quant = {torch.float32: "float32",
                     torch.bfloat16: "bfloat16"}[dtype]
            TransformersConverter(str(src)).convert(str(out),
                                                    quantization=quant)
        self.gen = ctranslate2.Generator(str(out), device="cpu",
                                         intra_threads=args.threads)
        self.vocab_size = model.config.vocab_size

    def generate(self, ids, new):
        vocab = vocabulary(self.vocab_size)
        tokens = [[vocab[int(i)] for i in row] for row in ids]
        return self.gen.generate_batch(tokens, max_length=new,
                                       min_length=new, sampling_topk=1,
                                       include_prompt_in_result=False)


class LlamaCpp(Peer):
    """llama-cpp-python over a GGUF written by llama.cpp's own
    convert_hf_to_gguf.py (from the llama-cpp-python sdist, extracted by
    bench/setup-venv.sh). Its high-level API holds one sequence: batches
    above 1 are not measured."""
    name = "llama.cpp"
    batches = (1,)

    def setup(self, model, dtype, args):
        import subprocess
        import llama_cpp
        convert = Path(args.llama_convert) / "convert_hf_to_gguf.py"
        if not convert.exists():
            raise RuntimeError(f"{convert} is missing (bench/setup-venv.sh "
                               f"extracts it)")
        d = Path(args.workdir)
        src = d / "hf"
        save_checkpoint(model, src)
        kind = {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype]
        out = d / f"model-{kind}.gguf"
        if not out.exists():
            subprocess.run([sys.executable, str(convert), str(src),
                            "--outfile", str(out), "--outtype", kind],
                           check=True, capture_output=True)
        self.n_ctx = max(max(args.prefill), args.prompt + args.new) + 8
        # The weights stay mapped from the page cache (in huge pages where
        # the kernel put them) and locked there: with every peer loaded at
        # once, memory runs low, and the kernel could evict parts of the
        # file that each decode step would then fault back in.
        self.llm = llama_cpp.Llama(
            str(out), n_ctx=self.n_ctx, n_batch=self.n_ctx,
            n_ubatch=min(self.n_ctx, 512), n_threads=args.threads,
            n_threads_batch=args.threads, use_mlock=True, verbose=False)

    def generate(self, ids, new):
        import numpy as np
        if ids.shape[0] != 1:
            raise RuntimeError("one sequence at a time")
        llm = self.llm
        llm.reset()
        llm.eval([int(i) for i in ids[0]])
        out = []
        for i in range(new):
            token = int(np.argmax(llm.scores[llm.n_tokens - 1]))
            out.append(token)
            if i + 1 < new:
                llm.eval([token])
        return out


PEERS = {p.name: p for p in (AttnFuse, AttnFusePrepacked, Transformers,
                             TransformersCompiled, CTranslate2, LlamaCpp)}


def vocabulary(size):
    """Token texts of the random checkpoint: <unk>, <s>, </s>, the 256
    byte tokens a Llama vocabulary has, then t259 .. t<size-1>."""
    special = ["<unk>", "<s>", "</s>"]
    byte = [f"<0x{b:02X}>" for b in range(256)]
    rest = [f"t{i}" for i in range(len(special) + len(byte), size)]
    return (special + byte + rest)[:size]


def save_checkpoint(model, path: Path):
    """The model in f32 and a byte-fallback BPE tokenizer over
    `vocabulary` (no merges): what the CTranslate2 and llama.cpp
    converters read a Llama vocabulary from."""
    if path.exists():
        return
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast
    vocab = {t: i for i, t in enumerate(
        vocabulary(model.config.vocab_size))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>",
                               byte_fallback=True))
    tok.decoder = decoders.Sequence([decoders.ByteFallback(),
                                     decoders.Fuse()])
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>",
                            eos_token="</s>", unk_token="<unk>"
                            ).save_pretrained(path)
    import copy
    copy.deepcopy(model).float().save_pretrained(path)


# ---- the run ----------------------------------------------------------------
def measure(peers, model, dtype, args):
    """Every cell (phase, batch, T) for all `peers` (name -> Peer) at
    once, their rounds interleaved (timed). Returns name -> rows, or the
    exception that stopped the peer."""
    rows = {name: [] for name in peers}
    vocab = model.config.vocab_size

    def cell(ids, new, b):
        calls = {name: (lambda p=p: p.generate(ids, new))
                 for name, p in peers.items()
                 if not isinstance(rows[name], Exception)
                 and (p.batches is None or b in p.batches)}
        # A peer that compiles per shape does it outside the timed rounds.
        for name in list(calls):
            if peers[name].warmup:
                try:
                    calls[name]()
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc(limit=2)
                    rows[name] = e
                    del calls[name]
        best = timed(calls, args.rounds)
        for name, t in best.items():
            if isinstance(t, Exception):
                rows[name] = t
        return {name: t for name, t in best.items()
                if not isinstance(t, Exception)}

    def progress(what, tps):
        print(f"# {what}: " + ", ".join(f"{n} {v:.1f}" for n, v in
                                       tps.items()) + " tokens/s",
              file=sys.stderr, flush=True)

    for b in args.batches:
        for t in args.prefill:
            tps = {}
            for name, s in cell(prompt(b, t, vocab), 1, b).items():
                tps[name] = b * t / s
                rows[name].append(("prefill", b, t, tps[name], None))
            progress(f"prefill {b} x {t}", tps)
        ids = prompt(b, args.prompt, vocab)
        one = cell(ids, 1, b)
        full = cell(ids, args.new, b)
        moved = step_bytes(model, b, args.prompt + args.new // 2, dtype)
        tps = {}
        for name in one.keys() & full.keys():
            step = (full[name] - one[name]) / (args.new - 1)
            tps[name] = b / step
            rows[name].append(("decode", b, args.prompt, b / step,
                               moved / step / 1e9))
        progress(f"decode batch {b}", tps)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=SIZES, default="tiny")
    p.add_argument("--dtypes", default="f32,bf16")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--prefill", default="128,1024")
    p.add_argument("--prompt", type=int, default=512)
    p.add_argument("--new", type=int, default=128)
    p.add_argument("--peers", default=",".join(PEERS))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--workdir", default=tempfile.mkdtemp(prefix="gen-bench-"))
    p.add_argument("--json", help="also write the rows here")
    p.add_argument("--llama-convert", default=os.environ.get(
        "ATTNFUSE_LLAMA_CONVERT", str(Path(sys.prefix) / "llama.cpp")),
        help="llama.cpp's tree with convert_hf_to_gguf.py")
    args = p.parse_args()
    args.batches = [int(x) for x in args.batches.split(",")]
    args.prefill = [int(x) for x in args.prefill.split(",")]
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    torch.set_num_threads(args.threads)
    bw = triad(args.threads)
    print(f"# {platform.processor() or platform.machine()}, "
          f"{args.threads} threads, torch {torch.__version__}; "
          f"triad {bw:.1f} GB/s", flush=True)
    base = llama(args.size)
    params = sum(p.numel() for p in base.parameters())
    print(f"# llama {args.size}: {params / 1e6:.0f}M parameters")
    print("| dtype | peer | phase | batch | T | tokens/s | decode GB/s "
          "(of triad) |\n|---|---|---|---|---|---|---|", flush=True)
    results = []
    for dname in args.dtypes.split(","):
        results += run_dtype(args.peers.split(","), dname, base, bw, args)
    late = triad(args.threads)
    print(f"# triad at the end {late:.1f} GB/s")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"triad_gbs": [bw, late], "rows": results}))


def run_dtype(names, dname, base, bw, args):
    """Every peer at one dtype, set up one after the other and measured
    together: their markdown rows, peer by peer."""
    dtype = DTYPES[dname]
    peers, failed = {}, {}
    for name in names:
        peer = PEERS[name]()
        try:
            peer.setup(llama(args.size), dtype, args)
            peers[name] = peer
        except Exception as e:  # a peer's failure is a table entry
            traceback.print_exc(limit=2)
            failed[name] = e
    rows = measure(peers, base.to(dtype), dtype, args)
    results = []
    for name in names:
        got = failed.get(name, rows.get(name))
        if isinstance(got, Exception):
            msg = str(got).splitlines()[0] if str(got) else ""
            print(f"| {dname} | {name} | not run: {type(got).__name__}: "
                  f"{msg} | | | | |", flush=True)
            results.append((dname, name, "error", str(got)))
            continue
        for kind, b, t, tps, gbs in got:
            share = f"{gbs:.1f} ({gbs / bw:.0%})" if gbs else ""
            print(f"| {dname} | {name} | {kind} | {b} | {t} | {tps:.1f} | "
                  f"{share} |", flush=True)
            results.append((dname, name, kind, b, t, tps, gbs))
        compile_s = getattr(peers[name], "compile_s", None)
        if compile_s:
            print(f"| {dname} | {name} | compile {compile_s:.0f} s | | | | |",
                  flush=True)
    return results

if __name__ == "__main__":
    main()
