"""Runs attn.sdpa with attention sinks through attn-run --check (the flash
or decode lowering against the math path) and compares the result with
PyTorch in float64: the softmax of the masked scores joined with the head's
sink as one more column, that column dropped (GPT-OSS's eager attention).
Rows whose every key is masked put all of their probability on the sink and
must be exactly 0. Causal, a window, GQA, a boolean mask, sequence lengths
and a score_mod region with sinks; f32 and bf16 (sinks in f32 or the
element type); flash (L past the decode path's rows) and decode (L of 1 or
2, keys split across work items).

    check_sdpa_sinks.py attn-run TMPDIR [attn-run options]

Prints one line per failing case and a summary line."""
import os
import sys

import numpy as np
import torch

from check_sdpa_lengths import (CAP, check_failure, compare, load_output,
                                run, scores_and_keep, tensor_type, to_npy)

B, E = 2, 16
TYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
TOL = {"f32": 1e-4, "bf16": 3e-2}

# name, dtype, sinks dtype, L, S, Hq, Hkv, causal, window_left, mask,
# kv_lengths, score_mod (soft cap).
CASES = [
    ("flash_causal_mask_gqa_f32", "f32", "f32", 40, 40, 4, 2, True, None,
     True, None, False),
    ("flash_window_lengths_bf16", "bf16", "bf16", 40, 40, 2, 2, True, 7,
     False, [0, 29], False),
    ("flash_softcap_f32", "f32", "bf16", 24, 36, 2, 1, False, None, True,
     None, True),
    ("decode_mask_gqa_f32", "f32", "f32", 1, 300, 4, 2, False, None, True,
     None, False),
    ("decode_lengths_bf16", "bf16", "f32", 2, 300, 2, 1, False, None, False,
     [0, 211], False),
]


def case_mlir(c):
    (_, dtype, sdt, L, S, hq, hkv, causal, window, mask, kl, softcap) = c
    qt = tensor_type((B, hq, L, E), dtype)
    kt = tensor_type((B, hkv, S, E), dtype)
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}"]
    operands, types = "%q, %k, %v", [qt, kt, kt]
    if mask:
        mt = tensor_type((B, 1, L, S), "i1")
        args.append(f"%m: {mt}")
        operands += ", %m"
        types.append(mt)
    if kl is not None:
        lt = tensor_type((B,), "i32")
        args.append(f"%kl: {lt}")
        operands += " kv_lengths(%kl)"
        types.append(lt)
    st = tensor_type((hq,), sdt)
    args.append(f"%sinks: {st}")
    operands += " sinks(%sinks)"
    types.append(st)
    attrs = []
    if causal:
        attrs.append("is_causal = true")
    if window is not None:
        attrs.append(f"window_left = {window} : i64")
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    region = ""
    if softcap:
        region = (" score_mod {\n  ^bb0(%s: f32, %b: index, %h: index, "
                  "%i: index, %j: index):\n"
                  f"    %c = arith.constant {CAP:e} : f32\n"
                  "    %d = arith.divf %s, %c : f32\n"
                  "    %t = math.tanh %d : f32\n"
                  "    %r = arith.mulf %t, %c : f32\n"
                  "    attn.yield %r : f32\n  }")
    return (f"func.func @f({', '.join(args)}) -> {qt} {{\n"
            f"  %o = attn.sdpa {operands}{attr} : ({', '.join(types)}) -> "
            f"{qt}{region}\n  return %o : {qt}\n}}\n")


def reference(c, q, k, v, m, sinks):
    """Float64 eager attention with sinks, and the rows with no key."""
    (_, _, _, L, S, hq, hkv, causal, window, mask, kl, softcap) = c
    q, k, v, s, keep, i, j = scores_and_keep(q, k, v, causal, window,
                                             m if mask else None, softcap)
    if kl is not None:
        for b in range(B):
            keep[b] &= j < kl[b]
    s = s.masked_fill(~keep, float("-inf"))
    sink = sinks.double().view(1, hq, 1, 1).expand(B, hq, L, 1)
    p = torch.softmax(torch.cat([s, sink], dim=-1), dim=-1)[..., :-1]
    removed = ~keep.any(dim=-1)  # [B, 1, L]
    return p @ v, removed.expand(B, hq, L)


def main():
    run_tool, tmp = sys.argv[1:3]
    options = sys.argv[3:]
    gen = torch.Generator().manual_seed(52)
    failures = 0
    for c in CASES:
        (name, dtype, sdt, L, S, hq, hkv, _, _, mask, kl, _) = c
        base = os.path.join(tmp, name)
        open(base + ".mlir", "w").write(case_mlir(c))
        q = torch.rand(B, hq, L, E, generator=gen) * 4 - 2
        k = torch.rand(B, hkv, S, E, generator=gen) * 4 - 2
        v = torch.rand(B, hkv, S, E, generator=gen) * 2 - 1
        q, k, v = (x.to(TYPES[dtype]) for x in (q, k, v))
        sinks = (torch.rand(hq, generator=gen) * 6 - 3).to(TYPES[sdt])
        # A few rows with no key at all (batch 1's first rows).
        m = torch.rand(B, 1, L, S, generator=gen) < 0.7
        m[1, :, : max(1, L // 4)] = False
        inputs = []
        tensors = [("q", q), ("k", k), ("v", v)]
        if mask:
            tensors.append(("m", m))
        if kl is not None:
            tensors.append(("kl", torch.tensor(kl, dtype=torch.int32)))
        tensors.append(("sinks", sinks))
        for n, t in tensors:
            np.save(f"{base}.{n}.npy", to_npy(t))
            inputs.append(f"{base}.{n}.npy")
        error = check_failure(run(run_tool, options, base, inputs))
        if error:
            failures += 1
            print(f"FAIL {name}: {error}")
            continue
        want, removed = reference(c, q, k, v, m, sinks)
        error = ("no row without keys" if not removed.any() else
                 compare(load_output(base, dtype), want, removed, TOL[dtype],
                         "a row without keys"))
        if error:
            failures += 1
            print(f"FAIL {name}: {error}")
    print(f"sdpa sinks: {len(CASES)} cases, {failures} failures")


if __name__ == "__main__":
    main()
