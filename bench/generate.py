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
peers share the host's quiet and busy spells. Run it on a quiet machine
only: llama.cpp's threads spin-wait at every barrier, so with two threads
on a two-core host that anything else is using its rounds collapse
(measured with a compile running beside it, `--size small`: Q4_0 prefill
1869 tokens/s on one thread, 30 on two); best-of-rounds does not undo
that. Record `uptime` with the table.

Not part of CI. The peers live in a venv that sees the pinned torch and
transformers (bench/setup-venv.sh):

    bench/setup-venv.sh
    PYTHONPATH=python /work/bench-venv/bin/python bench/generate.py --size 0.5b

`--size tiny` checks the harness end to end in a minute or two. A peer
that is missing or fails gets its error in the table instead of numbers.

Quantized cells (`--weights`, a comma list; the default `bf16` is the
float cells above, one per `--dtypes`):

- `q8_0`, `q4_0`, `q4_k_m`: one GGUF file per scheme, read by both peers
  as it is: llama.cpp's `convert_hf_to_gguf.py --outtype q8_0` for Q8_0;
  for Q4_0 and Q4_K_M llama.cpp's own quantizer
  (`llama_cpp.llama_model_quantize`, default parameters, ftype 2 and 15,
  in a process of its own) on the converter's f32 file, so the file holds
  what llama-quantize writes (for Q4_0 its LM head in Q6_K; Q4_K_M mixes
  Q4_K and Q6_K; both fall back to other types, Q8_0 and Q5_0, for rows
  that are not a multiple of 256, as in `--size tiny`: attnfuse refuses
  Q5_0).
  llama.cpp loads it as in the float cells; attnfuse compiles it with
  `attnfuse.compile_generator_from_gguf(file, max_batch, max_cache_len,
  dtype=<--quant-dtype>)`. llama.cpp repacks such weights at load (AMX
  tiles, interleaved Q4_0 rows) unless `--llama-repack off` (its
  `use_extra_bufts`; the Xeon-AMX VM segfaulted with it, issue 48).
- `int8`, `int4`: `attnfuse.compile_generator(model, weights="int8_asym")`
  (per output channel, NNCF's INT8_ASYM) and `weights="int4_sym",
  group_size=<--group-size>` (NNCF's INT4_SYM); peer `openvino-nncf`
  is OpenVINO (2026.4) with NNCF's (3.4) weight compression of the same
  checkpoint, without optimum-intel (none of its releases fits the
  pinned transformers and OpenVINO 2026): the HF model's modules traced
  as a decode step by `openvino.convert_model`, its KV cache made the
  model's state as optimum-intel does (`apply_make_stateful_transformation`),
  then `nncf.compress_weights` with INT8_ASYM / INT4_SYM (`group_size`,
  `ratio=1.0, all_layers=True`: every linear layer, the LM head included,
  as attnfuse does; NNCF also compresses the embedding table), compiled
  for CPU with `INFERENCE_NUM_THREADS=--threads`,
  `INFERENCE_PRECISION_HINT` the cell's activation dtype and
  `PERFORMANCE_HINT=LATENCY`, the rest OpenVINO's defaults (its KV cache
  in u8 and its int8 dynamic quantization of the activations in groups
  of 32 on x86: the peer's row prints the compiled values), generating
  greedily in a Python loop. llama.cpp has no such cell.
  Peer `attnfuse-float` is attnfuse's float generator (the cell's
  activation dtype, float weights) run in the quantized cell's rounds:
  the baseline of "quantized decode against our own bf16 decode",
  measured interleaved with the quantized peers (its decode GB/s counts
  the float weights).
  Peer `torchao` (torchao 0.18.0 in the venv, bench/setup-venv.sh)
  quantizes the same float checkpoint, in the cell's dtype, with
  torchao's weight-only configs, every nn.Linear (the LM head included,
  not the embeddings): int8 `quantize_(model, Int8WeightOnlyConfig())`
  (symmetric, per output channel: not attnfuse's asymmetric int8); int4
  torchao's CPU route `PrototypeInt4WeightOnlyConfig(group_size=
  --group-size)` (`Int4OpaqueTensor`, `aten._weight_int4pack_mm_for_cpu`:
  the tinygemm scheme, asymmetric with a float scale and zero per group,
  not attnfuse's symmetric int4; groups of 32, 64 or 128 only; a layer
  whose N is not a multiple of 16, such as `--size tiny`'s LM head, stays
  float and its row says so; the top-level `Int4WeightOnlyConfig` packs
  for accelerators only). It then generates as transformers+compile does
  (greedy `generate`, the static cache, `torch.compile(forward,
  fullgraph=True, dynamic=False)`: a graph per shape, as the static
  cache means, compiled in an untimed call per cell), timed as every
  peer. Right after attnfuse's call its short calls ran tens of times
  slower on two cores (attnfuse's pool still spinning): every timed call
  of every peer now waits `--settle` seconds (0.3) first, untimed. On a
  busy host its calls still vary by seconds: use a quiet host for
  numbers. Its kernel for
  int4 is made for bf16 activations: with `--quant-dtype f32` (the
  default) its products run ~25x slower than in bf16, and the row says
  so; `--quant-dtype bf16` is torchao's own route. Its logits (one eager
  prefill of the quantized model) are compared with attnfuse's
  dequantized model as the others, which then holds both schemes'
  error, and with its own dequantized weights (each linear weight read
  back through its kernel as the product with an identity matrix, the
  rest of the float model in f32). torchao's `quantize_` also sets its
  recommended Inductor options for the rest of the process.

Peer `attnfuse-int8act` runs the quantized cells with
`activations="int8"` (docs/quantization.md, "Integer activations": the
decode products quantize their input rows to int8 per block of 32 and
multiply in integers on a VNNI CPU, as llama.cpp does).

A quantized cell's activations and KV cache are `--quant-dtype` (f32, as
llama.cpp computes; OpenVINO's KV cache stays in its default, u8). Its
decode step reads, per step: every linear weight in its quantized layout
(`attnfuse.quant` scheme `.nbytes(N, K)`: codes, scales, zero points; for
a GGUF cell each tensor's own type), one embedding row per sequence in
float, the norms in float and the KV cache at the mean length. For each
peer that can give logits (attnfuse, llama.cpp, OpenVINO, torchao) the
table has the max |logit| difference of one prefill (1 x min(--prefill)
tokens) from the dequantized float model in f32 eager PyTorch:
`attnfuse.dequantized_model(model, generator.quantized)` for int cells,
`GGUFFile(file).model(dequantize=True)` for GGUF cells (llama.cpp's
differs more: it quantizes the activations to 8 bits). OpenVINO's and
torchao's are also compared with their own dequantized weights (for
OpenVINO NNCF's decompression subgraphs evaluated in f32: its
difference there is OpenVINO's int8 dynamic quantization of the
activations; NNCF's decompression subgraphs are f16, scales and zero
points included, and its weights differ from attnfuse's by that
rounding, its int4 codes in a few elements by one step). The
last column is attnfuse's tokens/s over llama.cpp's in the same cell
(float and GGUF cells). Peak RSS is not reported: every peer runs in
this one process.

    PYTHONPATH=python /work/bench-venv/bin/python bench/generate.py --size 0.5b \
      --weights bf16,q8_0,q4_0,q4_k_m,int8,int4 --dtypes bf16 --threads 2 \
      --peers attnfuse-prepack,llama.cpp,openvino-nncf,torchao [--llama-repack off]
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
# --weights: "bf16" stands for the float cells (--dtypes); GGUF schemes
# (llama.cpp's quantizer ftype, None: written by the converter itself);
# attnfuse int schemes (NNCF's modes).
GGUF_WEIGHTS = {"q8_0": None, "q4_0": 2, "q4_k_m": 15}
INT_WEIGHTS = {"int8": "int8_asym", "int4": "int4_sym"}
WEIGHTS = ("bf16",) + tuple(GGUF_WEIGHTS) + tuple(INT_WEIGHTS)


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


def quant_step_bytes(model, linear_bytes, batch, mean_length, dtype,
                     params=True):
    """Bytes a decode step of a quantized cell reads: `linear_bytes`
    ({parameter name: bytes of its quantized layout}) once, one embedding
    row per sequence and every other parameter (norms; any weight left
    float) in `dtype`, and the cached keys and values of `mean_length`
    positions in `dtype` (params=False: the embedding rows and the cache
    only)."""
    size = torch.empty((), dtype=dtype).element_size()
    total = sum(linear_bytes.values())
    for n, p in model.named_parameters():
        if n in linear_bytes or not (params or "embed_tokens" in n):
            continue
        total += (batch * p.shape[-1] if "embed_tokens" in n
                  else p.numel()) * size
    cfg = model.config
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    cache = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * head_dim \
        * mean_length * batch
    return total + cache * size


def gguf_step_bytes(path, model, batch, mean_length, dtype):
    """Bytes a decode step of a GGUF cell reads: every tensor of the file
    but the token embeddings as stored (a block type attnfuse knows by
    its scheme's nbytes(N, K), which is the file's size of it; any other
    type, and the float norms, at the file's size), one embedding row
    per sequence and the KV cache in `dtype`. Read with the gguf package,
    not attnfuse's reader, so that a file attnfuse refuses still gets
    its llama.cpp row."""
    from gguf import GGUFReader
    from attnfuse.quant import get_scheme
    size = torch.empty((), dtype=dtype).element_size()
    total = 0
    for t in GGUFReader(str(path)).tensors:
        if t.name == "token_embd.weight":
            continue
        try:
            scheme = get_scheme(t.tensor_type.name.lower())
        except ValueError:
            scheme = None
        if scheme is not None and len(t.shape) == 2:
            k, n = (int(x) for x in t.shape)  # ggml's order: row length first
            total += scheme.nbytes(n, k)
        else:
            total += int(t.n_bytes)
    return total + quant_step_bytes(model, {}, batch, mean_length, dtype,
                                    params=False)


def linear_bytes(model, kind, args):
    """{parameter name: bytes} of the linear weights an int cell reads:
    every nn.Linear weight of `model` in the cell's scheme."""
    from attnfuse.quant import get_scheme
    scheme = get_scheme(INT_WEIGHTS[kind], int_group_size(kind, args))
    return {f"{m}.weight": scheme.nbytes(*mod.weight.shape)
            for m, mod in model.named_modules()
            if isinstance(mod, torch.nn.Linear)}


def int_group_size(kind, args):
    """int8: one group per output channel (NNCF's INT8_ASYM); int4:
    --group-size."""
    return None if kind == "int8" else args.group_size


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


def timed(fns, rounds, settle=0.0):
    """The best time of each of `fns` (name -> call) over `rounds`, the
    calls taking turns round by round: on a host whose memory bandwidth
    changes by tens of percent from one minute to the next (a shared VM),
    every peer then runs in the same spells. Each call waits `settle`
    seconds first, untimed: the previous peer's threads (attnfuse's pool,
    an OpenMP team) spin for a while after its call, and on two cores a
    torch peer's short calls measured tens of times slower right after
    attnfuse's (as bench/python_models.py --settle). A call that raises
    drops its peer: its name maps to the exception."""
    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            if isinstance(best[name], Exception):
                continue
            if settle:
                time.sleep(settle)
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
    cells = ("float",)  # "float" and the --weights schemes it runs
    weights = "float"  # the cell's, set before setup
    gguf = None  # a GGUF cell's file, set before setup

    def setup(self, model, dtype, args):
        pass

    def generate(self, ids, new):
        raise NotImplementedError


class AttnFuse(Peer):
    name = "attnfuse"
    prepack = False
    activations = None  # compile_generator's activations= (quantized cells)
    cells = ("float",) + tuple(GGUF_WEIGHTS) + tuple(INT_WEIGHTS)

    def setup(self, model, dtype, args):
        import attnfuse
        size = dict(max_batch=max(args.batches), max_cache_len=max(
            max(args.prefill), args.prompt + args.new) + 1)
        t = time.perf_counter()
        if self.gguf is not None:
            self.gen = attnfuse.compile_generator_from_gguf(
                self.gguf, dtype=dtype, prepack_weights=self.prepack,
                activations=self.activations, **size)
        elif self.weights in INT_WEIGHTS:
            self.gen = attnfuse.compile_generator(
                model, dtype=dtype, prepack_weights=self.prepack,
                weights=INT_WEIGHTS[self.weights],
                group_size=int_group_size(self.weights, args),
                activations=self.activations, **size)
            self.model = model
        else:
            self.gen = attnfuse.compile_generator(
                model, dtype=dtype, prepack_weights=self.prepack, **size)
        self.compile_s = time.perf_counter() - t

    def generate(self, ids, new):
        return self.gen.generate(ids, max_new_tokens=new, do_sample=False,
                                 eos_token_id=[])

    def logits(self, ids):
        """The last position's logits [B, V] of one prefill of `ids`."""
        t = ids.shape[1]
        return self.gen.prefill(ids, torch.ones_like(ids),
                                torch.arange(t).expand_as(ids))

    def reference(self):
        """The f32 eager model that computes what the generator does."""
        import attnfuse
        if self.gguf is not None:
            from attnfuse.gguf_file import GGUFFile
            return GGUFFile(self.gguf).model(dequantize=True)[0]
        return attnfuse.dequantized_model(self.model.float(),
                                          self.gen.quantized)


class AttnFuseInt8Activations(AttnFuse):
    """The quantized cells with activations="int8": decode products of
    int8-quantized activations in integers on a VNNI CPU (as llama.cpp)."""
    name = "attnfuse-int8act"
    cells = tuple(GGUF_WEIGHTS) + tuple(INT_WEIGHTS)
    activations = "int8"


class AttnFuseFloatBaseline(AttnFuse):
    """attnfuse's float generator (the cell's activation dtype, float
    weights) inside the quantized cells, so that the quantized peers'
    speed against it is measured in the same interleaved rounds (the
    issue's "int4 decode against our own bf16 decode"): the float cells
    run apart and a VM's memory speed can drift between them. Its decode
    GB/s counts the float weights it reads."""
    name = "attnfuse-float"
    cells = tuple(GGUF_WEIGHTS) + tuple(INT_WEIGHTS)
    reads_float = True
    reference = None  # not the quantized cell's dequantized model

    def setup(self, model, dtype, args):
        self.weights, self.gguf = "float", None
        super().setup(model, dtype, args)


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
    cells = ("float",) + tuple(GGUF_WEIGHTS)

    def setup(self, model, dtype, args):
        import llama_cpp
        out = self.gguf or gguf_file(
            model, {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype],
            args)
        self.n_ctx = max(max(args.prefill), args.prompt + args.new) + 8
        # The weights stay mapped from the page cache (in huge pages where
        # the kernel put them) and locked there: with every peer loaded at
        # once, memory runs low, and the kernel could evict parts of the
        # file that each decode step would then fault back in.
        low = llama_cpp.llama_cpp
        defaults = low.llama_model_default_params

        def model_params():
            # --llama-repack off: llama.cpp's extra buffer types (weights
            # repacked at load: AMX tiles, Q4_0 interleaved rows) off, as
            # llama-cli's --no-repack; Llama() has no argument for it.
            params = defaults()
            params.use_extra_bufts = args.llama_repack == "on"
            return params
        low.llama_model_default_params = model_params
        try:
            self.llm = llama_cpp.Llama(
                str(out), n_ctx=self.n_ctx, n_batch=self.n_ctx,
                n_ubatch=min(self.n_ctx, 512), n_threads=args.threads,
                n_threads_batch=args.threads, use_mlock=True, verbose=False)
        finally:
            low.llama_model_default_params = defaults

    def generate(self, ids, new):
        import numpy as np
        if ids.shape[0] != 1:
            raise RuntimeError("one sequence at a time")
        llm = self.llm
        llm.reset()
        llm.eval([int(i) for i in ids[0]])
        out = []
        for i in range(new):
            token = int(np.argmax(self.last_logits()))
            out.append(token)
            if i + 1 < new:
                llm.eval([token])
        return out

    def last_logits(self):
        """The logits of the last token evaluated: `Llama.scores` holds
        them only with logits_all=True (0.3.36 writes no row otherwise)."""
        import numpy as np
        return np.ctypeslib.as_array(self.llm._ctx.get_logits_ith(-1),
                                     shape=(self.llm.n_vocab(),))

    def logits(self, ids):
        llm = self.llm
        llm.reset()
        llm.eval([int(i) for i in ids[0]])
        return torch.from_numpy(self.last_logits().copy())[None]


class OpenVINONNCF(Peer):
    """OpenVINO with NNCF's weight compression of the same checkpoint,
    without optimum-intel (no release of it fits the pinned transformers
    and OpenVINO 2026: bench/setup-venv.sh). `openvino_decoder` traces the
    HF model's modules as a step of T new tokens with the KV cache as
    explicit inputs and outputs (`openvino.convert_model`), then hides the
    cache in the model's state as optimum-intel exports a decoder: a
    `beam_idx` Gather on each cache input, then OpenVINO's
    `apply_make_stateful_transformation`, the state initialized empty for
    the batch of `input_ids`. `nncf.compress_weights` then compresses
    every MatMul and Gather weight: int8 `CompressWeightsMode.INT8_ASYM`
    (per output channel), int4 `INT4_SYM` with `group_size=--group-size,
    ratio=1.0, all_layers=True` (every linear layer, the LM head included,
    as attnfuse; NNCF also compresses the embedding table, in int8 for
    INT8_ASYM and in int4 for INT4_SYM with all_layers). Compiled for CPU
    with `INFERENCE_NUM_THREADS=--threads`, `INFERENCE_PRECISION_HINT` the
    cell's activation dtype and `PERFORMANCE_HINT=LATENCY`; everything
    else, such as the KV cache's precision and the dynamic quantization
    of the activations, stays OpenVINO's default (the row's notes give
    the compiled model's values). `generate` is a greedy loop in Python:
    one prefill request over the prompt, then one request per new token,
    the argmax of the last position's logits (the model computes the LM
    head for the last position only, as `generate`'s logits_to_keep=1).
    compile_s is the trace, the compression and the compile."""
    name = "openvino-nncf"
    cells = tuple(INT_WEIGHTS)
    # The CPU plugin builds its primitives (oneDNN JIT kernels) for each
    # new input shape at its first request: one untimed call per cell.
    warmup = True

    def setup(self, model, dtype, args):
        try:
            import nncf
            import openvino as ov
        except ImportError as e:
            raise RuntimeError(f"{e.name} is not installed; "
                               f"bench/setup-venv.sh installs it") from None
        t = time.perf_counter()
        ov_model = openvino_decoder(model.float())
        if self.weights == "int8":
            ov_model = nncf.compress_weights(
                ov_model, mode=nncf.CompressWeightsMode.INT8_ASYM)
        else:
            ov_model = nncf.compress_weights(
                ov_model, mode=nncf.CompressWeightsMode.INT4_SYM,
                group_size=args.group_size, ratio=1.0, all_layers=True)
        hint = {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype]
        compiled = ov.Core().compile_model(ov_model, "CPU", {
            "INFERENCE_NUM_THREADS": str(args.threads),
            "INFERENCE_PRECISION_HINT": hint,
            "PERFORMANCE_HINT": "LATENCY"})
        self.compile_s = time.perf_counter() - t
        self.request = compiled.create_infer_request()
        self.notes = [openvino_settings(compiled)]
        self.size, self.compressed = args.size, ov_model

    def step(self, ids, positions):
        """The last position's logits [B, V] of `ids` [B, T] at
        `positions` [B, T], after the request's cache."""
        import numpy as np
        b = ids.shape[0]
        self.request.infer({"input_ids": ids, "position_ids": positions,
                            "beam_idx": np.arange(b, dtype=np.int32)})
        return self.request.get_tensor("logits").data

    def generate(self, ids, new):
        import numpy as np
        ids = ids.numpy().astype(np.int64)
        b, t = ids.shape
        self.request.reset_state()
        logits = self.step(ids, np.broadcast_to(np.arange(t), (b, t)))
        out = np.empty((b, new), dtype=np.int64)
        for i in range(new):
            out[:, i] = logits.argmax(-1)
            if i + 1 < new:
                logits = self.step(out[:, i:i + 1],
                                   np.full((b, 1), t + i, dtype=np.int64))
        return out

    def logits(self, ids):
        import numpy as np
        b, t = ids.shape
        self.request.reset_state()
        got = self.step(ids.numpy().astype(np.int64),
                        np.broadcast_to(np.arange(t), (b, t)))
        return torch.from_numpy(got.copy())

    def own_reference(self):
        """The f32 eager model with the weights NNCF wrote: every
        compressed weight (the linear layers and the embedding table) read
        back through the model's own decompression subgraph (codes,
        zero point, scale), evaluated by OpenVINO in f32; the norms from
        the float model. Its difference is then OpenVINO's computation
        alone: its int8 dynamic quantization of the activations and its
        kernels (a prefill from an empty cache does not read the u8
        cache)."""
        import openvino as ov
        from openvino import opset13 as ops
        weights, names = [], []
        for op in self.compressed.get_ordered_ops():
            kind = op.get_type_name()
            if kind not in ("MatMul", "Gather") or \
                    not op.get_friendly_name().startswith("__module."):
                continue
            # aten::linear: x @ W^T with W [out, in] as the module holds
            # it; aten::embedding: a Gather of the table's rows.
            port = op.input_value(1 if kind == "MatMul" else 0)
            node = port.get_node()
            while node.get_type_name() != "Constant" and \
                    node.get_input_size():
                node = node.input_value(0).get_node()
            name = node.get_friendly_name()
            if node.get_type_name() == "Constant" and \
                    name.startswith("self.model."):
                weights.append(ops.result(port))
                names.append((name.removeprefix("self.model."), kind ==
                              "MatMul" and not op.get_transpose_b()))
        self.compressed = None  # read once: only the reference needs it
        request = ov.Core().compile_model(
            ov.Model(weights, [], "weights"), "CPU",
            {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
        request.infer()
        ref = llama(self.size).float()
        params = dict(ref.named_parameters())
        with torch.no_grad():
            for i, (name, transposed) in enumerate(names):
                got = torch.from_numpy(request.get_output_tensor(i).data)
                params[name].copy_(got.t() if transposed else got)
        return ref.eval()


class DecodeStep(torch.nn.Module):
    """A step of a transformers Llama (`LlamaForCausalLM`) over T new
    tokens after P cached ones, written out with the model's own modules
    so that it traces without a transformers Cache: forward(input_ids
    [B, T], position_ids [B, T], k_0, v_0, k_1, ...: [B, kv heads, P,
    head dim]) -> (the last position's logits [B, V], the layers' keys
    and values after the step, [B, kv heads, P + T, head dim]). Query t
    sees the cached positions and the new ones up to its own (position
    >= key index: the cache holds positions 0 .. P - 1). RoPE is the
    default kind only (the benchmark's config)."""

    def __init__(self, model):
        super().__init__()
        cfg = model.config
        self.model = model
        self.heads = cfg.num_attention_heads
        self.kv_heads = cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or \
            cfg.hidden_size // cfg.num_attention_heads

    def forward(self, input_ids, position_ids, *past):
        inner = self.model.model
        rope = inner.rotary_emb
        b, t = input_ids.shape
        heads, kv, d = self.heads, self.kv_heads, self.head_dim
        freqs = position_ids[..., None].float() * rope.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)[:, None]
        cos = emb.cos() * rope.attention_scaling
        sin = emb.sin() * rope.attention_scaling

        def rotate(x):
            half = x.shape[-1] // 2
            turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
            return x * cos + turned * sin

        h = inner.embed_tokens(input_ids)
        present = []
        for i, layer in enumerate(inner.layers):
            attn = layer.self_attn
            x = layer.input_layernorm(h)
            q = rotate(attn.q_proj(x).view(b, t, heads, d).transpose(1, 2))
            k = rotate(attn.k_proj(x).view(b, t, kv, d).transpose(1, 2))
            v = attn.v_proj(x).view(b, t, kv, d).transpose(1, 2)
            k = torch.cat((past[2 * i], k), dim=2)
            v = torch.cat((past[2 * i + 1], v), dim=2)
            present += [k, v]
            s = k.shape[2]
            # Grouped-query attention as transformers' repeat_kv.
            k = k[:, :, None].expand(b, kv, heads // kv, s, d).reshape(
                b, heads, s, d)
            v = v[:, :, None].expand(b, kv, heads // kv, s, d).reshape(
                b, heads, s, d)
            mask = torch.arange(s)[None, None, None, :] <= \
                position_ids[:, None, :, None]
            o = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=mask)
            h = h + attn.o_proj(o.transpose(1, 2).reshape(b, t, heads * d))
            h = h + layer.mlp(layer.post_attention_layernorm(h))
        logits = self.model.lm_head(inner.norm(h[:, -1]))
        return (logits, *present)


def openvino_decoder(model):
    """`model` (a transformers Llama, f32) as a stateful OpenVINO decoder:
    inputs input_ids [B, T], position_ids [B, T] (int64) and beam_idx [B]
    (int32: the rows of the cache each sequence continues, as optimum-intel
    exports a decoder), output logits [B, V] of the last position; the
    keys and values live in the model's state (`reset_state` empties it),
    which starts empty for the batch of input_ids."""
    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops
    from openvino._offline_transformations import \
        apply_make_stateful_transformation
    step = DecodeStep(model).eval()
    layers = model.config.num_hidden_layers
    past = [torch.zeros(2, step.kv_heads, 3, step.head_dim)
            for _ in range(2 * layers)]
    example = (prompt(2, 4, model.config.vocab_size),
               torch.arange(3, 7).expand(2, 4), *past)
    with torch.no_grad():
        ov_model = ov.convert_model(step, example_input=example)
    cache = [f"past.{i}.{w}" for i in range(layers)
             for w in ("key", "value")]
    names = ["input_ids", "position_ids", *cache]
    for port, name in zip(ov_model.inputs, names):
        port.get_tensor().set_names({name})
    outs = ["logits"] + [n.replace("past.", "present.") for n in cache]
    for port, name in zip(ov_model.outputs, outs):
        port.get_tensor().set_names({name})
    # The cache reorder of beam search as a Gather by beam_idx on each
    # cache input (optimum-intel's fuse_cache_reorder): the graph the CPU
    # plugin's stateful attention fusion expects from optimum's exports.
    beam = ops.parameter(ov.PartialShape([-1]), ov.Type.i32, name="beam_idx")
    beam.output(0).get_tensor().set_names({"beam_idx"})
    ov_model.add_parameters([beam])
    for name in cache:
        port = ov_model.input(name)
        consumers = port.get_target_inputs()
        gather = ops.gather(port, beam, ops.constant(0))
        for consumer in consumers:
            consumer.replace_source_output(gather.output(0))
    ov_model.validate_nodes_and_infer_types()
    apply_make_stateful_transformation(
        ov_model, {n: n.replace("past.", "present.") for n in cache})
    # Each state starts as an empty cache of the batch of input_ids.
    batch = ops.gather(ops.shape_of(ov_model.input("input_ids")),
                       ops.constant([0]), ops.constant(0))
    for op in ov_model.get_ops():
        if op.get_type_name() == "ReadValue":
            dims = [batch] + [ops.constant(np.array([n], dtype=np.int64))
                              for n in (step.kv_heads, 0, step.head_dim)]
            op.set_arguments([ops.broadcast(
                ops.constant(0.0, dtype=op.get_output_element_type(0)),
                ops.concat(dims, axis=0))])
    ov_model.validate_nodes_and_infer_types()
    return ov_model


def openvino_settings(compiled):
    """A note of the compiled model's settings that decide its numbers,
    and whether the CPU plugin fused each attention with its KV cache
    state (a ScaledDotProductAttention node that also reads beam_idx and
    the cached keys and values: more than q, k, v, mask and scale)."""
    got = []
    for key in ("INFERENCE_NUM_THREADS", "INFERENCE_PRECISION_HINT",
                "PERFORMANCE_HINT", "KV_CACHE_PRECISION",
                "DYNAMIC_QUANTIZATION_GROUP_SIZE"):
        try:
            value = compiled.get_property(key)
        except Exception:  # noqa: BLE001 - a property this version lacks
            continue
        got.append(f"{key}={getattr(value, 'to_string', lambda: value)()}")
    sdpa = [op for op in compiled.get_runtime_model().get_ops()
            if op.get_rt_info()["layerType"].astype(str) ==
            "ScaledDotProductAttention"]
    fused = sum(len(op.inputs()) > 5 for op in sdpa)
    return (f"OpenVINO {', '.join(got)}; {fused} of {len(sdpa)} attention "
            f"nodes fused with their KV cache state")


class TorchAO(TransformersCompiled):
    """torchao's weight-only quantization of the HF model's linear layers
    (every nn.Linear, the LM head included), then transformers' `generate`
    with the static cache and `torch.compile(forward, fullgraph=True)`.
    int8: `Int8WeightOnlyConfig()` (symmetric, one scale per output
    channel: the forward multiplies by the int8 weights converted to the
    activation dtype, then scales). int4: torchao's CPU route,
    `PrototypeInt4WeightOnlyConfig(group_size)` (`Int4OpaqueTensor`: the
    tinygemm scheme, asymmetric 0..15 codes with a float scale and zero
    per group, packed for `aten._weight_int4pack_mm_for_cpu`; the
    top-level `Int4WeightOnlyConfig` packs for CUDA, XPU or NPU kernels)."""
    name = "torchao"
    cells = tuple(INT_WEIGHTS)
    # The schemes differ from attnfuse's (int8: symmetric, not asymmetric;
    # int4: asymmetric, not symmetric), so the common reference's row
    # holds both quantizations' error; `own_reference` gives torchao's.
    diff_note = " (torchao's own scheme: both quantizations differ)"

    def setup(self, model, dtype, args):
        try:
            from torchao.quantization import Int8WeightOnlyConfig, quantize_
        except ImportError as e:
            raise RuntimeError(f"torchao is not installed ({e}); "
                               f"bench/setup-venv.sh installs it") from None
        self.notes = []
        group = args.group_size
        if self.weights == "int8":
            config = Int8WeightOnlyConfig()

            def fits(mod):
                return True
        else:
            from torchao.prototype.quantization.int4 import \
                PrototypeInt4WeightOnlyConfig
            if group not in (32, 64, 128):
                raise RuntimeError(f"torchao's CPU int4 (Int4OpaqueTensor) "
                                   f"takes groups of 32, 64 or 128, not "
                                   f"--group-size {group}")
            config = PrototypeInt4WeightOnlyConfig(group_size=group)

            def fits(mod):  # _convert_weight_to_int4pack_for_cpu's limits
                return mod.out_features % 16 == 0 and \
                    mod.in_features % group == 0
            if dtype != torch.bfloat16:
                self.notes.append(
                    f"{str(dtype).replace('torch.', '')} activations: "
                    f"aten._weight_int4pack_mm_for_cpu "
                    f"is made for bf16 (f32 measured ~25x slower per "
                    f"product here); --quant-dtype bf16 is torchao's route")
        torch._dynamo.reset()  # as transformers+compile: a fresh Dynamo
        self.size, self.dtype = args.size, dtype
        self.model = model.to(dtype)
        left = [n for n, m in self.model.named_modules()
                if isinstance(m, torch.nn.Linear) and not fits(m)]
        if left:
            self.notes.append(
                "left float (torchao's CPU int4 needs N % 16 == 0 and K % "
                f"{group} == 0): {', '.join(left)}")
        quantize_(self.model, config, filter_fn=lambda m, fqn: isinstance(
            m, torch.nn.Linear) and fits(m))
        self.eager_forward = self.model.forward
        self.model.generation_config.cache_implementation = "static"
        # A graph per shape (dynamic=False), as gpt-fast's static cache
        # means, not Dynamo's automatic dynamic shapes (symbolic sizes from
        # the second shape on). Each prefill length, batch and cache length
        # is then a graph of its own: the limit is raised past the 8
        # recompiles that would send the rest to eager (fullgraph: fail).
        torch._dynamo.config.recompile_limit = max(
            torch._dynamo.config.recompile_limit, 64)
        self.model.forward = torch.compile(self.model.forward,
                                           fullgraph=True, dynamic=False)
        t = time.perf_counter()
        self.generate(prompt(1, 8, self.model.config.vocab_size), 2)
        self.compile_s = time.perf_counter() - t

    def logits(self, ids):
        """One prefill in the eager forward of the quantized model (the
        same torchao kernels; a compiled forward without a cache would be
        one more compile)."""
        out = self.eager_forward(input_ids=ids,
                                 attention_mask=torch.ones_like(ids),
                                 use_cache=False)
        return out.logits[:, -1]

    def own_reference(self):
        """The f32 eager model with the weights torchao's linear layers
        compute with: each quantized weight read back as the product of
        an identity matrix with it (the kernel's own dequantization, in
        the cell's dtype); every other parameter from the float model."""
        ref = llama(self.size).float()
        mods = dict(self.model.named_modules())
        with torch.no_grad():
            for n, m in ref.named_modules():
                w = getattr(mods.get(n), "weight", None)
                if not isinstance(m, torch.nn.Linear) or \
                        type(w) in (torch.nn.Parameter, torch.Tensor):
                    continue  # not a linear layer, or left float
                eye = torch.eye(m.in_features, dtype=self.dtype)
                m.weight.copy_(torch.nn.functional.linear(eye, w).t())
        return ref.eval()


PEERS = {p.name: p for p in (AttnFuse, AttnFusePrepacked,
                             AttnFuseInt8Activations, AttnFuseFloatBaseline,
                             Transformers,
                             TransformersCompiled, CTranslate2, LlamaCpp,
                             OpenVINONNCF, TorchAO)}


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


def gguf_file(model, kind, args):
    """The GGUF file of `model` in `kind` (f32, bf16, q8_0: llama.cpp's
    convert_hf_to_gguf.py; q4_0, q4_k_m: llama.cpp's quantizer on the f32
    file), written once per run into --workdir."""
    import subprocess
    d = Path(args.workdir)
    out = d / f"model-{kind}.gguf"
    if out.exists():
        return out
    if kind in ("f32", "bf16", "q8_0"):
        convert = Path(args.llama_convert) / "convert_hf_to_gguf.py"
        if not convert.exists():
            raise RuntimeError(f"{convert} is missing (bench/setup-venv.sh "
                               f"extracts it)")
        src = d / "hf"
        save_checkpoint(model, src)
        run = subprocess.run([sys.executable, str(convert), str(src),
                              "--outfile", str(out), "--outtype", kind],
                             capture_output=True, text=True)
    else:
        # In a process of its own: a ggml assertion aborts the process.
        source = gguf_file(model, "f32", args)
        run = subprocess.run([sys.executable, "-c", QUANTIZE, str(source),
                              str(out), str(GGUF_WEIGHTS[kind]),
                              str(args.threads)],
                             capture_output=True, text=True)
    if run.returncode != 0 or not out.exists():
        out.unlink(missing_ok=True)
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"writing {out.name} failed (exit "
                           f"{run.returncode}): {' / '.join(tail)}")
    return out


# llama-quantize's work through llama-cpp-python: input, output, ftype,
# threads; default parameters otherwise (as llama-quantize without flags).
QUANTIZE = """
import ctypes, sys
import llama_cpp
llama_cpp.llama_backend_init()
params = llama_cpp.llama_model_quantize_default_params()
params.ftype = int(sys.argv[3])
params.nthread = int(sys.argv[4])
rc = llama_cpp.llama_model_quantize(sys.argv[1].encode(),
                                    sys.argv[2].encode(),
                                    ctypes.byref(params))
sys.exit(rc)
"""


# ---- the run ----------------------------------------------------------------
def measure(peers, model, dtype, args, nbytes=None):
    """Every cell (phase, batch, T) for all `peers` (name -> Peer) at
    once, their rounds interleaved (timed). Returns name -> rows, or the
    exception that stopped the peer. `nbytes(batch, mean_length)`: the
    bytes a decode step reads (default: step_bytes, float weights)."""
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
        best = timed(calls, args.rounds, args.settle)
        for name, t in best.items():
            if isinstance(t, Exception):
                rows[name] = t
        return {name: t for name, t in best.items()
                if not isinstance(t, Exception)}

    def progress(what, tps):
        if not tps:
            return
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
        mean = args.prompt + args.new // 2
        moved_float = step_bytes(model, b, mean, dtype)
        moved = nbytes(b, mean) if nbytes else moved_float
        tps = {}
        for name in one.keys() & full.keys():
            step = (full[name] - one[name]) / (args.new - 1)
            if step <= 0:
                # The prompt's time moved by more than the new tokens
                # took: too few of them (--new) for a difference.
                print(f"# decode batch {b}: {name}'s {args.new} new tokens "
                      f"took no longer than 1 (within the prompt's noise): "
                      f"no decode row; raise --new", file=sys.stderr)
                continue
            tps[name] = b / step
            reads = (moved_float if getattr(peers[name], "reads_float", False)
                     else moved)
            rows[name].append(("decode", b, args.prompt, b / step,
                               reads / step / 1e9))
        progress(f"decode batch {b}", tps)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=SIZES, default="tiny")
    p.add_argument("--dtypes", default="f32,bf16",
                   help="the float cells' dtypes (--weights bf16)")
    p.add_argument("--weights", default="bf16",
                   help=f"cells, a comma list of {','.join(WEIGHTS)}: bf16 "
                   f"the float cells of --dtypes, the others quantized")
    p.add_argument("--quant-dtype", choices=DTYPES, default="f32",
                   help="the quantized cells' activations and KV cache")
    p.add_argument("--group-size", type=int, default=128,
                   help="int4's group (attnfuse and NNCF)")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--prefill", default="128,1024")
    p.add_argument("--prompt", type=int, default=512)
    p.add_argument("--new", type=int, default=128)
    p.add_argument("--peers", default=",".join(PEERS))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--settle", type=float, default=0.3,
                   help="seconds each timed call waits first (another "
                   "peer's threads spin for a while after its call)")
    p.add_argument("--workdir", default=tempfile.mkdtemp(prefix="gen-bench-"))
    p.add_argument("--json", help="also write the rows here")
    p.add_argument("--llama-convert", default=os.environ.get(
        "ATTNFUSE_LLAMA_CONVERT", str(Path(sys.prefix) / "llama.cpp")),
        help="llama.cpp's tree with convert_hf_to_gguf.py")
    p.add_argument("--llama-repack", choices=("on", "off"), default="on",
                   help="llama.cpp's weight repacking at load (its extra "
                   "buffer types: AMX, interleaved Q4_0); off where it "
                   "crashes (the Xeon-AMX VM, issue 48)")
    args = p.parse_args()
    args.batches = [int(x) for x in args.batches.split(",")]
    args.prefill = [int(x) for x in args.prefill.split(",")]
    weights = args.weights.split(",")
    for w in weights:
        if w not in WEIGHTS:
            p.error(f"--weights {w}: one of {', '.join(WEIGHTS)}")
    names = args.peers.split(",")
    for n in names:
        if n not in PEERS:
            p.error(f"--peers {n}: one of {', '.join(PEERS)}")
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    torch.set_num_threads(args.threads)
    bw = triad(args.threads)
    print(f"# {platform.processor() or platform.machine()}, "
          f"{args.threads} threads, torch {torch.__version__}; "
          f"triad {bw:.1f} GB/s", flush=True)
    base = llama(args.size)
    params = sum(p.numel() for p in base.parameters())
    print(f"# llama {args.size}: {params / 1e6:.0f}M parameters")
    print("| weights | dtype | peer | phase | batch | T | tokens/s | decode "
          "GB/s (of triad) | attnfuse / llama.cpp |\n"
          "|---|---|---|---|---|---|---|---|---|", flush=True)
    results = []
    for w in weights:
        if w == "bf16":
            for dname in args.dtypes.split(","):
                results += run_cell(names, "float", dname, base, bw, args)
        else:
            results += run_cell(names, w, args.quant_dtype, base, bw, args)
    late = triad(args.threads)
    print(f"# triad at the end {late:.1f} GB/s")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"triad_gbs": [bw, late], "rows": results}))


def first_line(e):
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:300] if text else ''}"


def logit_difference(peers, reference, args):
    """{peer name: (max |logits - reference's|, max |reference logits|)}
    of one prefill of 1 x min(--prefill) tokens, for each peer with
    `logits`, or the exception."""
    ids = prompt(1, min(args.prefill), reference.config.vocab_size, seed=2)
    with torch.no_grad():
        ref = reference(ids).logits[:, -1].double()
    out = {}
    for name, peer in peers.items():
        if not hasattr(peer, "logits"):
            continue
        try:
            with torch.no_grad():
                got = peer.logits(ids).double()
            out[name] = (float((got - ref).abs().max()),
                         float(ref.abs().max()))
        except Exception as e:  # noqa: BLE001 - a table entry
            traceback.print_exc(limit=2)
            out[name] = e
    return out


def run_cell(names, kind, dname, base, bw, args):
    """Every peer that runs `kind` cells ("float" or a --weights scheme)
    at dtype `dname`, set up one after the other and measured together:
    their markdown rows, peer by peer."""
    dtype = DTYPES[dname]
    label = dname if kind == "float" else kind
    names = [n for n in names if kind in PEERS[n].cells]
    peers, failed = {}, {}
    path, nbytes, cell_error = None, None, None
    if kind != "float":
        try:
            if kind in GGUF_WEIGHTS:
                # A fresh f32 model: `base` is in the last float cell's dtype.
                path = gguf_file(llama(args.size), kind, args)
                mb = path.stat().st_size / 1e6
                print(f"# {kind}: {path.name}, {mb:.1f} MB", flush=True)
                nbytes = (lambda b, mean: gguf_step_bytes(
                    path, base, b, mean, dtype))
            else:
                moved = linear_bytes(base, kind, args)
                nbytes = (lambda b, mean: quant_step_bytes(
                    base, moved, b, mean, dtype))
            step = nbytes(1, args.prompt + args.new // 2)
            print(f"# {kind}: a batch-1 decode step reads {step / 1e6:.1f} "
                  f"MB", flush=True)
        except Exception as e:  # the cell's file or layout: every peer's
            traceback.print_exc(limit=2)
            cell_error = e
    for name in names:
        if cell_error is not None:
            failed[name] = cell_error
            continue
        peer = PEERS[name]()
        peer.weights, peer.gguf = kind, path
        try:
            peer.setup(llama(args.size), dtype, args)
            peers[name] = peer
        except Exception as e:  # a peer's failure is a table entry
            traceback.print_exc(limit=2)
            failed[name] = e
    diffs = {}
    if kind != "float" and peers:
        # The reference: attnfuse's (the dequantized weights it reads);
        # llama.cpp and OpenVINO are compared with the same model.
        ref_peer = next((p for p in peers.values()
                         if getattr(p, "reference", None)), None)
        try:
            if ref_peer is None:
                raise RuntimeError("no attnfuse peer to give the "
                                   "dequantized model")
            reference = ref_peer.reference().float().eval()
            diffs = logit_difference(peers, reference, args)
            del reference
        except Exception as e:  # noqa: BLE001
            traceback.print_exc(limit=2)
            diffs = {name: e for name in peers}
    # A peer whose scheme is not attnfuse's (torchao) also against the
    # weights it computes with.
    own = {}
    for name, peer in peers.items():
        if hasattr(peer, "own_reference"):
            try:
                own.update(logit_difference(
                    {name: peer}, peer.own_reference(), args))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc(limit=2)
                own[name] = e
    rows = measure(peers, base.to(dtype) if kind == "float" else base,
                   dtype, args, nbytes)
    llama_tps = {}
    got_llama = rows.get("llama.cpp")
    if not isinstance(got_llama, Exception):
        llama_tps = {(k, b, t): tps for k, b, t, tps, _ in got_llama or []}
    results = []
    for name in names:
        got = failed.get(name, rows.get(name))
        if isinstance(got, Exception):
            print(f"| {label} | {dname} | {name} | not run: "
                  f"{first_line(got)} | | | | | |", flush=True)
            results.append((label, dname, name, "error", str(got)))
            continue
        for phase, b, t, tps, gbs in got:
            share = f"{gbs:.1f} ({gbs / bw:.0%})" if gbs else ""
            theirs = llama_tps.get((phase, b, t))
            ratio = f"{tps / theirs:.2f}" if theirs and \
                name.startswith("attnfuse") else ""
            print(f"| {label} | {dname} | {name} | {phase} | {b} | {t} | "
                  f"{tps:.1f} | {share} | {ratio} |", flush=True)
            results.append((label, dname, name, phase, b, t, tps, gbs))
        compile_s = getattr(peers[name], "compile_s", None)
        if compile_s:
            print(f"| {label} | {dname} | {name} | compile {compile_s:.0f} s "
                  f"| | | | | |", flush=True)
        for note in getattr(peers[name], "notes", ()):
            print(f"| {label} | {dname} | {name} | {note} | | | | | |",
                  flush=True)
        note = getattr(peers[name], "diff_note", "")
        for what, diff, key in (
                ("the dequantized model" + note, diffs.get(name),
                 "logit_diff"),
                ("its own dequantized weights", own.get(name),
                 "logit_diff_own")):
            if isinstance(diff, Exception):
                print(f"| {label} | {dname} | {name} | logits: not compared "
                      f"with {what}: {first_line(diff)} | | | | | |",
                      flush=True)
            elif diff is not None:
                print(f"| {label} | {dname} | {name} | max abs logit "
                      f"difference from {what} {diff[0]:.2e} (max abs "
                      f"logit {diff[1]:.2f}) | | | | | |", flush=True)
                results.append((label, dname, name, key, *diff))
    return results


if __name__ == "__main__":
    main()
