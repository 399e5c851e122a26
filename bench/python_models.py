#!/usr/bin/env python3
"""Whole-model latency: GPT-2 (124M shapes), a Llama-style model and
BERT-base with random weights (built from their config classes, no
download), compiled by AttnFuse next to the runtimes users would pick
instead, side by side in one run:

- eager: the Hugging Face module itself (`attn_implementation="sdpa"`);
- torch.compile: Inductor, `torch._inductor.config.freezing = True`;
- aotinductor: `torch._inductor.aoti_compile_and_package` of
  `torch.export.export`, run by `aoti_load_package`;
- onnxruntime: `torch.onnx.export(dynamo=True)`, then ONNX Runtime's
  transformer optimizer (`onnxruntime.transformers.optimizer`) where it has
  a model type for the architecture (GPT-2, BERT), CPU provider,
  `ORT_ENABLE_ALL`;
- openvino: `openvino.convert_model` of the f32 module, CPU plugin with
  `INFERENCE_PRECISION_HINT` set to the cell's dtype (OpenVINO would
  otherwise run f32 models in bf16 on a CPU with AVX-512 BF16).

The forward of the base model (`GPT2Model`, `LlamaModel`, `BertModel`, no
LM head, `use_cache=False`): token ids and an attention mask in (for
batch > 1, row 0 is padded by T/4: left for the decoders, right for BERT),
the last hidden state out. Each cell (model, dtype, batch, T, threads)
compiles every peer for its static shapes, then times them in turn for
`--rounds` rounds (the peers share the machine's slow and fast spells; a
peer in a process of its own is driven round by round the same way);
latency is the best round's median of at least `--min-calls` calls and
`--min-time` seconds after `--warmup` calls; compile time runs from the
module to the first result (export included); the max abs difference
is against eager PyTorch of the same dtype on the token positions (NaN if
the peer gave NaN there), and the note says where the padded positions
differ by more than 1e-3. For bf16 cells the note of
the eager row gives eager bf16's own difference from eager f32 (when the
same run measured f32) as the scale. An FMA peak, an AMX peak (on a
machine with AMX-BF16) and a triad (bench/cpu_peak.c) are measured at the
start of each thread count, and AttnFuse's GFLOP/s (the projections and
attention products) is given against the peak of its products: the AMX
peak for bf16 where the machine has one, the FMA peak otherwise.

Not part of CI. The peers live in a venv that sees the pinned torch and
transformers (bench/setup-venv.sh):

    SKIP_LLAMA_CPP=1 bench/setup-venv.sh
    PYTHONPATH=python /work/bench-venv/bin/python bench/python_models.py

`--json` keeps the rows; `--merge A.json B.json ...` prints the tables of
several runs (as bench/RESULTS.md's tables do). Each thread count of
`--threads` runs in its own process (AttnFuse's
OpenMP runtime reads OMP_NUM_THREADS once per process). A peer that is not
installed or fails in a cell gets its error in the table instead of
numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))
from cpu_attention_bench import build_peak, lscpu, run_peak  # noqa: E402
from python_nanogpt import latency_ms  # noqa: E402

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
DECODER, ENCODER = "decoder", "encoder"

# Llama-style shapes: hidden, layers, heads, kv heads, intermediate, vocab.
LLAMA_SIZES = {
    # Qwen2-0.5B's shape (its vocabulary cut to 32000): what finishes on a
    # 2-core machine.
    "0.5b": (896, 24, 14, 2, 4864, 32000),
    # Llama-3.2-1B's shape (vocabulary 32000).
    "1b": (2048, 16, 32, 8, 8192, 32000),
    # For checking the harness.
    "tiny": (64, 2, 4, 2, 128, 1000),
}


def build_model(name, llama_size, max_t):
    """(module in eval mode, kind); f32, seeded."""
    import transformers as tf
    torch.manual_seed(0)
    common = dict(use_cache=False, attn_implementation="sdpa")
    if name == "gpt2":
        cfg = tf.GPT2Config(n_positions=max(1024, max_t), **common)
        return tf.GPT2Model(cfg).eval(), DECODER
    if name == "llama":
        hidden, layers, heads, kv, inter, vocab = LLAMA_SIZES[llama_size]
        cfg = tf.LlamaConfig(
            vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
            num_attention_heads=heads, num_key_value_heads=kv,
            intermediate_size=inter,
            max_position_embeddings=max(4096, max_t), **common)
        return tf.LlamaModel(cfg).eval(), DECODER
    if name == "bert":
        cfg = tf.BertConfig(max_position_embeddings=max(512, max_t), **common)
        return tf.BertModel(cfg).eval(), ENCODER
    raise ValueError(name)


def model_inputs(model, kind, batch, t, seed=1):
    """(input_ids, attention_mask): row 0 padded by t/4 when batch > 1."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, model.config.vocab_size, (batch, t), generator=g)
    mask = torch.ones(batch, t, dtype=torch.long)
    if batch > 1:
        if kind == DECODER:
            mask[0, :t // 4] = 0
        else:
            mask[0, t - t // 4:] = 0
    return ids, mask


def matmul_flops(model, batch, t):
    """FLOPs of the forward's products: every 2-D weight but the embeddings
    once per token, and q k^T and p v in full (causal halves not taken
    off) per layer."""
    cfg = model.config
    weights = sum(p.numel() for n, p in model.named_parameters()
                  if p.dim() == 2 and "emb" not in n and "wte" not in n
                  and "wpe" not in n)
    layers = cfg.num_hidden_layers
    attention = 4 * batch * t * t * cfg.hidden_size * layers
    return 2 * weights * batch * t + attention


def first_tensor(y):
    """The last hidden state of a peer's output (ModelOutput, tuple, list of
    NumPy arrays or tensor) as a tensor."""
    if hasattr(y, "to_tuple"):
        y = y.to_tuple()
    while isinstance(y, (list, tuple)):
        y = y[0]
    if isinstance(y, torch.Tensor):
        return y
    return torch.from_numpy(y)


def differences(y, expected, mask):
    """(max abs difference on the tokens, on the padded positions or None
    where they agree to 1e-3). Padded positions are outputs no one reads:
    where every key is masked (a left-padded row's first positions) PyTorch
    and the peers compute different things there (NaN for some)."""
    d = (y.float() - expected).abs()  # max propagates NaN
    valid = mask.bool()
    tokens = d[valid].max().item()
    padded = d[~valid].max().item() if (~valid).any() else 0.0
    return tokens, (None if padded <= 1e-3 else padded)


# ---- peers: setup(cell) -> (call, note) -------------------------------------
def peer_eager(c):
    return (lambda: c.model(c.ids, attention_mask=c.mask)), ""


def peer_attnfuse(c, prepack_weights=False):
    import attnfuse
    compiled = attnfuse.compile(c.model, (c.ids,),
                                example_kwargs={"attention_mask": c.mask},
                                prepack_weights=prepack_weights)
    n = attnfuse.count_sdpa(attnfuse.fuse(compiled.mlir)[0])
    note = f"{n} attn.sdpa" + (" (cache hit)" if compiled.cache_hit else "")
    return (lambda: compiled(c.ids, attention_mask=c.mask)), note


def peer_attnfuse_prepack(c):
    """AttnFuse with the f32 GEMM weights packed once at bind time."""
    call, note = peer_attnfuse(c, prepack_weights=True)
    return call, note + ", prepacked"


def peer_torch_compile(c):
    import torch._inductor.config as inductor
    torch._dynamo.reset()
    inductor.freezing = True
    compiled = torch.compile(c.model, dynamic=False)
    return (lambda: compiled(c.ids, attention_mask=c.mask)), "freezing"


def peer_aotinductor(c):
    ep = torch.export.export(c.model, (c.ids,),
                             {"attention_mask": c.mask}, strict=False)
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=str(c.work / "model.pt2"))
    runner = torch._inductor.aoti_load_package(path)
    return (lambda: runner(c.ids, attention_mask=c.mask)), ""


ORT_MODEL_TYPES = {"gpt2": "gpt2", "bert": "bert"}


def ort_optimize(c, path):
    """ONNX Runtime's transformer optimizer on the exported model, where it
    has a model type for the architecture: (path to run, note)."""
    model_type = ORT_MODEL_TYPES.get(c.name)
    if model_type is None:
        return path, f"no optimizer model type for {c.name}"
    if c.dtype != torch.float32:
        return path, "optimizer not run (it rewrites f32 models)"
    try:
        from onnxruntime.transformers.optimizer import optimize_model
        cfg = c.model.config
        opt = optimize_model(str(path), model_type=model_type,
                             num_heads=cfg.num_attention_heads,
                             hidden_size=cfg.hidden_size)
        out = c.work / "model.opt.onnx"
        opt.save_model_to_file(str(out), use_external_data_format=True)
        fused = {k: v for k, v in opt.get_fused_operator_statistics().items()
                 if v}
        return out, f"optimizer {model_type}: {fused}"
    except Exception as e:  # the unoptimized model still runs
        return path, f"optimizer failed ({type(e).__name__}: {short(e)})"


def peer_onnxruntime(c):
    import onnxruntime as ort
    path = c.work / "model.onnx"
    torch.onnx.export(c.model, (c.ids,), str(path),
                      kwargs={"attention_mask": c.mask}, dynamo=True,
                      input_names=["input_ids", "attention_mask"],
                      external_data=True)
    path, note = ort_optimize(c, path)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = c.threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(str(path), opts,
                                providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    feeds = dict(zip(names, (c.ids.numpy(), c.mask.numpy())))
    return (lambda: sess.run(None, feeds)[0]), note


def peer_openvino(c):
    import openvino as ov
    source = c.model if c.dtype == torch.float32 else \
        copy.deepcopy(c.model).float()
    converted = ov.convert_model(
        source, example_input={"input_ids": c.ids,
                               "attention_mask": c.mask})
    hint = {torch.float32: "f32", torch.bfloat16: "bf16"}[c.dtype]
    compiled = ov.Core().compile_model(converted, "CPU", {
        "INFERENCE_NUM_THREADS": str(c.threads),
        "INFERENCE_PRECISION_HINT": hint, "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    feeds = [c.ids.numpy(), c.mask.numpy()]
    return (lambda: request.infer(feeds)[compiled.output(0)]), \
        f"precision hint {hint}"


# Run in a process of their own (Worker).
ISOLATED = ("openvino",)
PEERS = {"attnfuse": peer_attnfuse,
         "attnfuse-prepack": peer_attnfuse_prepack, "eager": peer_eager,
         "torch.compile": peer_torch_compile,
         "aotinductor": peer_aotinductor, "onnxruntime": peer_onnxruntime,
         "openvino": peer_openvino}


def short(e):
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else ""


class Cell:
    """One model at one dtype, batch, T and thread count."""

    def __init__(self, name, model, kind, dtype, batch, t, threads, work):
        self.name, self.model, self.kind = name, model, kind
        self.dtype, self.batch, self.t, self.threads = dtype, batch, t, threads
        self.work = work
        self.ids, self.mask = model_inputs(model, kind, batch, t)


def setup_peer(peer, cell, expected, args, stack):
    """Sets `peer` up in `cell` in this process: (row, timer). The row has
    the compile time, the difference from eager and the note, or the
    error (then timer is None); timer() measures one round in ms. Files
    the peer exports stay in a directory `stack` removes."""
    row = dict(peer=peer)
    try:
        cell.work = Path(stack.enter_context(
            tempfile.TemporaryDirectory(dir=args.workdir)))
        with torch.no_grad():
            t0 = time.perf_counter()
            call, note = PEERS[peer](cell)
            y = first_tensor(call())
            row["compile_s"] = time.perf_counter() - t0
        row["max_abs_err"], padded = differences(y, expected, cell.mask)
        if padded is not None:
            note = "; ".join(filter(None, [
                note, f"padded positions differ by {padded:.1e}"]))
        row["note"] = note
    except Exception as e:  # a peer that fails is a table entry
        traceback.print_exc(limit=3)
        row["error"] = f"{type(e).__name__}: {short(e)}"
        return row, None

    def timer():
        with torch.no_grad():
            return latency_ms(call, args.min_time, args.min_calls,
                              args.warmup)
    return row, timer


class Worker:
    """A peer set up in a process of its own (this script with --worker),
    timed one round at a time on request, so that its rounds interleave
    with the other peers' like an in-process peer's: a peer that kills
    its process (OpenVINO's bf16 CPU plugin raised SIGFPE here) becomes a
    table entry. The worker builds the same model (same seed, same
    position table) and its own eager reference. Protocol: one JSON line
    (the setup row) when ready, then one line ({"ms": ...} or {"error":
    ...}) for each "time" line it reads; it ends at the end of its
    input."""

    def __init__(self, peer, cell, args):
        self.peer = peer
        dname = next(k for k, v in DTYPES.items() if v == cell.dtype)
        cmd = [sys.executable, __file__, "--worker", "--models", cell.name,
               "--size", args.size, "--dtypes", dname, "--batch",
               str(cell.batch), "--seq", str(cell.t), "--threads",
               str(cell.threads), "--peers", peer, "--positions",
               str(args.positions), "--min-time", str(args.min_time),
               "--min-calls", str(args.min_calls), "--warmup",
               str(args.warmup)]
        if args.workdir:
            cmd += ["--workdir", args.workdir]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def reply(self):
        line = self.proc.stdout.readline()
        if line:
            return json.loads(line)
        code = self.proc.wait()
        how = (f"signal {signal.Signals(-code).name}" if code < 0
               else f"exit status {code}")
        return dict(error=f"the process died ({how})")

    def setup(self):
        row = self.reply()
        row["peer"] = self.peer
        return row, (None if "error" in row else self.time)

    def time(self):
        try:
            self.proc.stdin.write("time\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # the process died: reply() says how
        answer = self.reply()
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["ms"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def worker(args, cell, expected):
    """The --worker side of Worker: the protocol on the process's original
    stdout, everything else the peer prints on stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    with contextlib.ExitStack() as stack:
        row, timer = setup_peer(args.peers[0], cell, expected, args, stack)
        proto.write(json.dumps(row) + "\n")
        if timer is None:
            return
        for _ in sys.stdin:
            try:
                answer = dict(ms=timer())
            except Exception as e:
                traceback.print_exc(limit=3)
                answer = dict(error=f"{type(e).__name__}: {short(e)}")
            proto.write(json.dumps(answer) + "\n")


def measure_cell(cell, expected, args):
    """Every peer of `cell` set up first, then `--rounds` rounds that time
    each peer in turn: the peers share the machine's spells (on a shared
    VM the same call can take 30% longer from one second to the next).
    A row's ms is the best round's median; rounds_ms keeps them all."""
    with contextlib.ExitStack() as stack:
        setups = []
        for peer in args.peers:
            if peer in ISOLATED:
                setups.append(stack.enter_context(
                    Worker(peer, cell, args)).setup())
            else:
                setups.append(setup_peer(peer, cell, expected, args, stack))
        for _ in range(args.rounds):
            for row, timer in setups:
                if timer is None or "error" in row:
                    continue
                # Another peer's OpenMP threads spin for a while after its
                # last call (libomp's KMP_BLOCKTIME is 200 ms).
                time.sleep(args.settle)
                try:
                    ms = timer()
                except Exception as e:
                    traceback.print_exc(limit=3)
                    row["error"] = f"{type(e).__name__}: {short(e)}"
                    row.pop("ms", None)
                    continue
                row.setdefault("rounds_ms", []).append(round(ms, 3))
                row["ms"] = min(row["rounds_ms"])
                print(f"#   {row['peer']}: {ms:.1f} ms", file=sys.stderr,
                      flush=True)
        rows = [row for row, _ in setups]
        del setups
    gc.collect()
    return rows


def run_cells(args, threads):
    """Every cell at one thread count, rows printed as measured."""
    rows = []
    f32_expected = {}
    for name in args.models:
        base, kind = build_model(name, args.size, args.positions)
        for dname in args.dtypes:
            dtype = DTYPES[dname]
            model = base if dtype == torch.float32 else \
                copy.deepcopy(base).to(dtype)
            for batch in args.batch:
                for t in args.seq:
                    cell = Cell(name, model, kind, dtype, batch, t, threads,
                                None)
                    with torch.no_grad():
                        expected = first_tensor(
                            model(cell.ids, attention_mask=cell.mask)).float()
                    if args.worker:
                        return worker(args, cell, expected)
                    key = (name, batch, t)
                    scale = ""
                    if dtype == torch.float32:
                        f32_expected[key] = expected
                    elif key in f32_expected:
                        d = (expected - f32_expected[key]).abs().max().item()
                        scale = f"eager bf16 vs eager f32: {d:.1e}"
                    flops = matmul_flops(model, batch, t)
                    print(f"# {name} {dname} {batch}x{t}, {threads} "
                          "threads", file=sys.stderr, flush=True)
                    for row in measure_cell(cell, expected, args):
                        if row["peer"] == "eager" and scale:
                            row["note"] = scale
                        row.update(model=name, dtype=dname, batch=batch, t=t,
                                   threads=threads, gflop=flops / 1e9)
                        rows.append(row)
                        print("#", json.dumps(row), flush=True)
            del model
            gc.collect()
    return rows


def ceilings(threads, cc):
    """(FMA GFLOP/s, AMX GFLOP/s or 0 without AMX-BF16, vdpbf16ps GFLOP/s
    or 0 without AVX512-BF16, triad GB/s) of bench/cpu_peak.c at
    `threads`."""
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "cpu_peak")
        ok, _ = build_peak(cc, binary)
        if not ok:
            raise RuntimeError("cpu_peak: the FMA loop is not 12 "
                               "register-only vfmadd")

        def optional(kind):
            run = subprocess.run([binary, kind, str(threads)],
                                 capture_output=True, text=True)
            return float(run.stdout.split()[1]) if run.returncode == 0 else 0.0
        return (run_peak(binary, "fma", threads), optional("amx"),
                optional("dpbf16"), run_peak(binary, "triad", threads))


def fmt(x, digits=1):
    return "" if x is None else f"{x:.{digits}f}"


def base_peer(peers):
    """The AttnFuse row that the ratios of a cell divide by: attnfuse,
    else attnfuse-prepack (a run of the prepacked peer alone)."""
    for name in ("attnfuse", "attnfuse-prepack"):
        if "ms" in peers.get(name, {}):
            return name
    return None


def print_tables(results):
    """The long table (every peer in every cell) and the ratio table (each
    peer's latency over AttnFuse's, per cell)."""
    print("\n| model | dtype | batch | T | threads | system | ms | "
          "/ attnfuse | compile s | max abs diff vs eager | note |")
    print("|---|---|--:|--:|--:|---|--:|--:|--:|--:|---|")
    cells = {}
    for r in results["rows"]:
        key = (r["model"], r["dtype"], r["batch"], r["t"], r["threads"])
        cells.setdefault(key, {})[r["peer"]] = r
    for key, peers in cells.items():
        base = peers.get(base_peer(peers), {}).get("ms")
        for peer, r in peers.items():
            head = "| " + " | ".join(map(str, key)) + f" | {peer} |"
            if "error" in r:
                print(f"{head} failed | | | | {r['error']} |")
                continue
            ratio = f"{r['ms'] / base:.2f}" if base else ""
            print(f"{head} {fmt(r['ms'])} | {ratio} | "
                  f"{fmt(r['compile_s'])} | {r['max_abs_err']:.1e} | "
                  f"{r.get('note', '')} |")
    names = [p for p in PEERS if p != "attnfuse"]
    print("\nPeer latency / AttnFuse latency (above 1: AttnFuse faster; "
          "AttnFuse: the attnfuse peer, or attnfuse-prepack where it did "
          "not run); "
          "AttnFuse's GFLOP/s and share of the peak of its products (for "
          "bf16 AMX's where the machine has it, else vdpbf16ps's where it "
          "has AVX512-BF16, else the FMA's)\n")
    print("| model | dtype | batch | T | threads | attnfuse ms | GFLOP/s "
          "(of peak) | " + " | ".join(names) + " |")
    print("|---|---|--:|--:|--:|--:|--:|" + "--:|" * len(names))
    for key, peers in cells.items():
        a = peers.get(base_peer(peers), {})
        base = a.get("ms")
        peak = ((a.get("amx") or a.get("dpbf16")) if key[1] == "bf16"
                else None) or a.get("fma")
        perf = ""
        if base and peak:
            gflops = a["gflop"] / base * 1e3
            perf = f"{gflops:.0f} ({gflops / peak:.0%})"
        cols = []
        for n in names:
            r = peers.get(n, {})
            cols.append(f"{r['ms'] / base:.2f}" if base and "ms" in r else
                        ("failed" if "error" in r else ""))
        print("| " + " | ".join(map(str, key)) + f" | {fmt(base)} | {perf} "
              "| " + " | ".join(cols) + " |")


def child(args):
    """One thread count in this process; writes the rows to --json."""
    threads = args.threads[0]
    os.environ["OMP_NUM_THREADS"] = str(threads)
    torch.set_num_threads(threads)
    if args.worker:
        return run_cells(args, threads)
    fma, amx, dpbf16, triad = ceilings(threads, args.cc)
    print(f"# {threads} threads: FMA peak {fma:.0f} GFLOP/s, AMX peak "
          f"{amx:.0f} GFLOP/s, vdpbf16ps peak {dpbf16:.0f} GFLOP/s, triad "
          f"{triad:.1f} GB/s", flush=True)
    rows = run_cells(args, threads)
    late = ceilings(threads, args.cc)[-1]
    print(f"# {threads} threads: triad at the end {late:.1f} GB/s",
          flush=True)
    out = dict(rows=rows, fma={threads: fma}, amx={threads: amx},
               dpbf16={threads: dpbf16}, triad={threads: [triad, late]})
    if args.json:
        Path(args.json).write_text(json.dumps(out))
    return out


def add_results(results, part):
    """Adds one process's results (one thread count); each row keeps the
    FMA peak measured in its own process."""
    amx = part.get("amx", {})
    dpbf16 = part.get("dpbf16", {})
    for threads, fma in part["fma"].items():
        triad = part["triad"][threads]
        results["ceilings"].append(
            f"{threads} threads: FMA peak {fma:.0f} GFLOP/s, AMX peak "
            f"{amx.get(threads, 0):.0f} GFLOP/s, vdpbf16ps peak "
            f"{dpbf16.get(threads, 0):.0f} GFLOP/s, triad {triad[0]:.1f} GB/s "
            f"at the start, {triad[1]:.1f} at the end")
    for r in part["rows"]:
        r.setdefault("fma", part["fma"][str(r["threads"])])
        r.setdefault("amx", amx.get(str(r["threads"]), 0.0))
        r.setdefault("dpbf16", dpbf16.get(str(r["threads"]), 0.0))
    results["rows"] += part["rows"]


def merge_parts(parts):
    """One --json file of several processes' results (as --merge reads)."""
    out = dict(rows=[], fma={}, amx={}, dpbf16={}, triad={})
    for part in parts:
        out["rows"] += part["rows"]
        out["fma"].update(part["fma"])
        out["amx"].update(part.get("amx", {}))
        out["dpbf16"].update(part.get("dpbf16", {}))
        out["triad"].update(part["triad"])
    return out


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["gpt2", "llama", "bert"],
                   choices=["gpt2", "llama", "bert"])
    p.add_argument("--size", choices=LLAMA_SIZES, default="0.5b",
                   help="the Llama-style shape (1b: Llama-3.2-1B's)")
    p.add_argument("--dtypes", nargs="+", default=["f32", "bf16"],
                   choices=list(DTYPES))
    p.add_argument("--batch", type=int, nargs="+", default=[1])
    p.add_argument("--seq", type=int, nargs="+", default=[128, 512])
    p.add_argument("--threads", type=int, nargs="+", default=[1])
    p.add_argument("--peers", nargs="+", default=list(PEERS),
                   choices=list(PEERS))
    p.add_argument("--min-time", type=float, default=1.0,
                   help="seconds of timed calls per measurement")
    p.add_argument("--min-calls", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--cc", default="clang-22",
                   help="compiles bench/cpu_peak.c")
    p.add_argument("--workdir", default=None,
                   help="where exported files go (default: the temp dir)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--positions", type=int,
                   help="the position table's size (default: the largest T)")
    p.add_argument("--merge", nargs="+", metavar="JSON",
                   help="print the tables of earlier runs' --json files")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds through the peers; a row keeps its best")
    p.add_argument("--settle", type=float, default=0.3,
                   help="seconds of sleep before each peer's round")
    p.add_argument("--worker", action="store_true",
                   help="internal: one peer in one cell, timed on request "
                        "(see Worker)")
    args = p.parse_args()
    args.positions = args.positions or max(args.seq)
    return args


def main():
    args = parse()
    results = dict(rows=[], ceilings=[])
    if args.merge:
        for path in args.merge:
            add_results(results, json.loads(Path(path).read_text()))
    elif len(args.threads) == 1:
        part = child(args)
        if part is None:
            return
        add_results(results, json.loads(json.dumps(part)))
    else:
        # Each thread count in its own process; the later --threads and
        # --json override the ones in the command line.
        parts = []
        with tempfile.TemporaryDirectory() as tmp:
            for n in args.threads:
                out = Path(tmp) / f"{n}.json"
                subprocess.run([sys.executable, __file__, *sys.argv[1:],
                                "--threads", str(n), "--json", str(out)],
                               check=True)
                add_results(results, json.loads(out.read_text()))
                parts.append(json.loads(out.read_text()))
        if args.json:
            Path(args.json).write_text(json.dumps(merge_parts(parts)))
    import transformers
    print(f"\n{lscpu()[0]}, {platform.machine()}, torch {torch.__version__}, "
          f"transformers {transformers.__version__}")
    for line in results["ceilings"]:
        print(f"- {line}")
    print_tables(results)


if __name__ == "__main__":
    main()
