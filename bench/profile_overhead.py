"""What `attnfuse.compile(..., profile=True)` costs a call (docs/python.md,
"Profiling"): a Llama-style model built from its config (random weights),
compiled without and with profile=True, each called with torch.profiler
off and on; the median and the minimum of --repeat calls after --warmup,
in one process, the four cases interleaved call by call (so that a
machine's changing load falls on each alike).

    PYTHONPATH=python python3 bench/profile_overhead.py [--layers 4]
        [--hidden 256] [--tokens 128] [--batch 1] [--repeat 30]
"""

import argparse
import statistics
import time

import torch
import transformers
from torch.profiler import ProfilerActivity, profile

import attnfuse


def one_call_ms(fn, args, profiled):
    """One call's wall time, and the profiler's event count."""
    if not profiled:
        t0 = time.perf_counter()
        fn(*args)
        return (time.perf_counter() - t0) * 1e3, 0
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        fn(*args)
        t1 = time.perf_counter()
    return (t1 - t0) * 1e3, len(prof.events())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--tokens", type=int, default=128)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=30)
    a = p.parse_args()
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        num_hidden_layers=a.layers, hidden_size=a.hidden,
        intermediate_size=4 * a.hidden, num_attention_heads=a.hidden // 64,
        num_key_value_heads=a.hidden // 64, vocab_size=1024, use_cache=False)
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 1024, (a.batch, a.tokens))
    plain = attnfuse.compile(model, (ids,))
    profiled = attnfuse.compile(model, (ids,), profile=True)
    print(f"Llama {a.layers} layers, hidden {a.hidden}, batch {a.batch} x "
          f"{a.tokens} tokens, torch threads {torch.get_num_threads()}")
    rows = [("profile=False, profiler off", plain, False),
            ("profile=False, profiler on", plain, True),
            ("profile=True, profiler off", profiled, False),
            ("profile=True, profiler on", profiled, True)]
    times = {name: [] for name, _, _ in rows}
    events = {}
    for i in range(a.warmup + a.repeat):
        for name, fn, on in rows:
            ms, events[name] = one_call_ms(fn, (ids,), on)
            if i >= a.warmup:
                times[name].append(ms)
    base = statistics.median(times[rows[0][0]])
    for name, _, _ in rows:
        med = statistics.median(times[name])
        print(f"{name:30s} median {med:8.3f} ms ({med / base:4.2f}x)  "
              f"min {min(times[name]):8.3f} ms  ({events[name]} profiler "
              f"events)")


if __name__ == "__main__":
    main()
