"""Runs attn.sdpa in the packed layout (`padding_side = packed`: the
sequences back to back along L and S, q_lengths and kv_lengths splitting
them) through attn-run --check (the flash lowering against the math path)
and compares the result with PyTorch in float64 on each sequence alone: its
rows against its own keys, causal and the window within the sequence, a
sequence without keys 0 (exactly). Lengths 0, 1, one block, several blocks
and mixed; self- and cross-attention lengths; causal, a window, GQA; f32
and bf16; i32 and i64 lengths; [1, H, T, E] and [H, T, E]; a dynamic
token count and sequence count; and six random cases of those. Lengths
that do not sum to the tokens, and a negative length, must fail the run.

    check_sdpa_packed.py attn-run TMPDIR [attn-run options]

Prints one line per failing case and a summary line. With
ATTN_CHECK_SAMPLE=N (a sanitizer build) every N-th configuration only."""
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_sdpa_lengths import (TYPES, TOL, check_failure, compare,  # noqa
                                load_output, run, tensor_type, to_npy)

E = 32
# name, dtype, Hq, Hkv, q_lengths, kv_lengths (None: the q_lengths),
# causal, window_left, lengths type, leading dims ("1h": [1, H, T, E],
# "h": [H, T, E]), dynamic (T and B as ?).
CASES = [
    ("self_causal_f32", "f32", 2, 2, [5, 0, 130, 1, 64], None, True, None,
     "i32", "1h", False),
    ("cross_f32", "f32", 2, 2, [3, 40, 0, 17], [10, 0, 5, 90], False, None,
     "i64", "1h", False),
    ("gqa_window_bf16", "bf16", 4, 2, [100, 1, 33, 0], None, True, 15,
     "i32", "1h", False),
    ("heads_only_causal_f32", "f32", 3, 3, [7, 200, 9], None, True, None,
     "i64", "h", False),
    ("one_sequence_bf16", "bf16", 2, 1, [129], None, False, None, "i32",
     "1h", False),
    ("dynamic_causal_f32", "f32", 2, 1, [1, 97, 0, 250, 2], None, True,
     None, "i32", "1h", True),
]



def random_cases(n, seed=5301):
    """`n` more cases of random sequence counts (1-6), lengths (0-150,
    zero more often), GQA, causal and window, types and layouts."""
    import random
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        count = rng.randint(1, 6)
        lengths = [0 if rng.random() < 0.15 else rng.randint(1, 150)
                   for _ in range(count)]
        if sum(lengths) == 0:
            lengths[0] = 1
        cross = None
        if rng.random() < 0.3:
            cross = [0 if rng.random() < 0.15 else rng.randint(1, 150)
                     for _ in range(count)]
            cross[0] = max(cross[0], 1)
        hkv = rng.choice([1, 2])
        causal = rng.random() < 0.6
        window = rng.choice([None, None, 7, 40]) if causal else None
        cases.append((f"random{i}", rng.choice(["f32", "bf16"]),
                      hkv * rng.choice([1, 2]), hkv, lengths, cross, causal,
                      window, rng.choice(["i32", "i64"]),
                      rng.choice(["1h", "h"]), rng.random() < 0.3))
    return cases


CASES += random_cases(6)


def shapes(c):
    (_, _, hq, hkv, ql, kl, _, _, _, lead, _) = c
    kl = ql if kl is None else kl
    t, s = sum(ql), sum(kl)
    pre = (1,) if lead == "1h" else ()
    return pre + (hq, t, E), pre + (hkv, s, E), len(ql)


def case_mlir(c):
    (_, dtype, _, _, _, _, causal, window, it, _, dynamic) = c
    qs, ks, n = shapes(c)
    if dynamic:
        qs = qs[:-2] + ("?", E)
        ks = ks[:-2] + ("?", E)
        n = "?"
    qt, kt = tensor_type(qs, dtype), tensor_type(ks, dtype)
    lt = tensor_type((n,), it)
    attrs = ["padding_side = #attn.padding_side<packed>"]
    if causal:
        attrs.append("is_causal = true")
    if window is not None:
        attrs.append(f"window_left = {window} : i64")
    return (f"func.func @f(%q: {qt}, %k: {kt}, %v: {kt}, %ql: {lt}, "
            f"%kl: {lt}) -> {qt} {{\n"
            f"  %o = attn.sdpa %q, %k, %v q_lengths(%ql) kv_lengths(%kl) "
            f"{{{', '.join(attrs)}}} : ({qt}, {kt}, {kt}, {lt}, {lt}) -> "
            f"{qt}\n  return %o : {qt}\n}}\n")


def reference(c, q, k, v):
    """Float64: each sequence alone, and the rows that have no key."""
    (_, _, hq, hkv, ql, kl, causal, window, _, _, _) = c
    kl = ql if kl is None else kl
    q, k, v = (x.double() for x in (q, k, v))
    k = k.repeat_interleave(hq // hkv, dim=-3)
    v = v.repeat_interleave(hq // hkv, dim=-3)
    out = torch.zeros(q.shape)
    removed = torch.zeros(q.shape[:-1], dtype=torch.bool)
    qo, ko = 0, 0
    for n, m in zip(ql, kl):
        qs, ks = slice(qo, qo + n), slice(ko, ko + m)
        s = q[..., qs, :] @ k[..., ks, :].transpose(-1, -2) / math.sqrt(E)
        i = torch.arange(n).view(n, 1)
        j = torch.arange(m).view(1, m)
        keep = torch.ones(n, m, dtype=torch.bool)
        if causal:
            keep &= j <= i
        if window is not None:
            keep &= j >= i - window
        p = torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)
        out[..., qs, :] = p.nan_to_num(0.0) @ v[..., ks, :]
        removed[..., qs] = ~keep.any(dim=-1)
        qo, ko = qo + n, ko + m
    return out, removed


def main():
    run_tool, tmp = sys.argv[1:3]
    options = sys.argv[3:]
    gen = torch.Generator().manual_seed(53)
    # Every n-th configuration only (lit.cfg.py sets it for a sanitizer
    # build).
    step = int(os.environ.get("ATTN_CHECK_SAMPLE", "1"))
    chosen = CASES[::step]
    failures = 0
    for c in chosen:
        (name, dtype, _, _, ql, kl, _, _, it, _, _) = c
        kl = ql if kl is None else kl
        base = os.path.join(tmp, name)
        open(base + ".mlir", "w").write(case_mlir(c))
        qs, ks, _ = shapes(c)
        q, k, v = ((torch.rand(shape, generator=gen) * 2 - 1).to(TYPES[dtype])
                   for shape in (qs, ks, ks))
        inputs = []
        for n, t in (("q", q), ("k", k), ("v", v)):
            np.save(f"{base}.{n}.npy", to_npy(t))
            inputs.append(f"{base}.{n}.npy")
        np_int = np.int32 if it == "i32" else np.int64
        for n, lengths in (("ql", ql), ("kl", kl)):
            np.save(f"{base}.{n}.npy", np.array(lengths, dtype=np_int))
            inputs.append(f"{base}.{n}.npy")
        error = check_failure(run(run_tool, options, base, inputs))
        if not error:
            want, removed = reference(c, q, k, v)
            error = compare(load_output(base, dtype), want, removed,
                            TOL[dtype], rows="a row without keys")
        if error:
            failures += 1
            print(f"FAIL {name}: {error}")
        # Lengths that do not cover the tokens (one row short), and a
        # negative length (the sum kept).
        short = list(ql)
        short[max(n for n, x in enumerate(ql) if x > 0)] -= 1
        negative = list(kl)
        negative[0] -= 1
        negative[-1] += 1
        for which, bad, message in (
                ("ql", short, "the packed q_lengths must sum to the "
                 "query's length"),
                ("kl", negative, "a kv_lengths value is below 0")):
            if which == "kl" and kl[0] != 0:
                continue
            path = f"{base}.{which}.npy"
            good = ql if which == "ql" else kl
            np.save(path, np.array(bad, dtype=np_int))
            done = run(run_tool, options, base, inputs, check=False)
            if done.returncode == 0 or message not in done.stderr:
                failures += 1
                print(f"FAIL {name} {which} {bad}: not refused: "
                      f"{done.stderr.strip()[-300:]}")
            np.save(path, np.array(good, dtype=np_int))
    ran = "" if len(chosen) == len(CASES) else f"{len(chosen)} of "
    print(f"sdpa packed: {ran}{len(CASES)} configurations, "
          f"{failures} failures")


if __name__ == "__main__":
    main()
