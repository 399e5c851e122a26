"""Runs attn.sdpa with boolean padding masks (no lengths) through attn-run
--check (the flash or decode lowering, which skips the tiles a mask removes
entirely, against the math path) and compares the result with PyTorch SDPA
in float64 on every position, padded query rows included: rows the mask
removes entirely must be exactly 0 (safe_softmax, as the exporter writes
Hugging Face masks). Right padding ([B, 1, 1, S]), left padding with causal
(the generator's prompts: padded rows are fully masked), a [B, 1, L, S]
mask (causal and left padding folded in, mask_polarity = drop), a mask with
a hole of whole key blocks in the middle, decode over a left-padded cache;
f32 and bf16.

    check_sdpa_padding_masks.py attn-run TMPDIR [attn-run options]

Prints one line per failing case and a summary line."""
import os
import sys

import numpy as np
import torch

from check_sdpa_lengths import (check_failure, compare, load_output, run,
                                tensor_type, to_npy)

B, E = 4, 32
TYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
TOL = {"f32": 1e-4, "bf16": 5e-2}

# name, dtype, L, S, H, real keys per sequence, padding side ("right",
# "left", or "hole": keys [10, 140) removed), causal, mask rows ("1": a
# [B, 1, 1, S] mask, "L": [B, 1, L, S] with causal folded in), drop.
CASES = [
    ("right_f32", "f32", 130, 200, 2, [200, 1, 70, 0], "right", False, "1",
     False),
    ("left_causal_bf16", "bf16", 150, 150, 2, [150, 1, 57, 0], "left", True,
     "1", False),
    ("left_rows_drop_f32", "f32", 140, 140, 2, [140, 3, 70, 0], "left",
     True, "L", True),
    ("hole_bf16", "bf16", 40, 200, 2, [200, 200, 200, 200], "hole", False,
     "1", False),
    ("decode_left_f32", "f32", 1, 200, 2, [200, 1, 70, 0], "left", False,
     "1", False),
]


def keep_mask(c):
    (_, _, L, S, _, real, side, causal, rows, _) = c
    i = torch.arange(L).view(L, 1)
    j = torch.arange(S).view(1, S)
    keep = torch.zeros(B, 1, 1, S, dtype=torch.bool)
    for b, n in enumerate(real):
        if side == "right":
            keep[b, ..., :n] = True
        elif side == "left":
            keep[b, ..., S - n:] = True
        else:
            keep[b] = (j < 10) | (j >= 140)
    if rows == "L":
        keep = keep & (j <= i)
    return keep


def case_mlir(c):
    (_, dtype, L, S, h, _, _, causal, rows, drop) = c
    qt = tensor_type((B, h, L, E), dtype)
    kt = tensor_type((B, h, S, E), dtype)
    mt = tensor_type((B, 1, L if rows == "L" else 1, S), "i1")
    attrs = ["safe_softmax = true"]
    if causal and rows == "1":
        attrs.append("is_causal = true")
    if drop:
        attrs.append("mask_polarity = #attn.mask_polarity<drop>")
    return (f"func.func @f(%q: {qt}, %k: {kt}, %v: {kt}, %m: {mt}) -> {qt} "
            f"{{\n  %o = attn.sdpa %q, %k, %v, %m {{{', '.join(attrs)}}} : "
            f"({qt}, {kt}, {kt}, {mt}) -> {qt}\n  return %o : {qt}\n}}\n")


def main():
    run_tool, tmp = sys.argv[1:3]
    options = sys.argv[3:]
    gen = torch.Generator().manual_seed(51)
    failures = 0
    for c in CASES:
        (name, dtype, L, S, h, _, _, causal, rows, drop) = c
        base = os.path.join(tmp, name)
        open(base + ".mlir", "w").write(case_mlir(c))
        q, k, v = (torch.rand(B, h, n, E, generator=gen) * 2 - 1
                   for n in (L, S, S))
        q, k, v = (x.to(TYPES[dtype]) for x in (q, k, v))
        keep = keep_mask(c)
        if causal and rows == "1":
            keep = keep & torch.ones(L, S, dtype=torch.bool).tril()
        m = keep_mask(c)
        inputs = []
        for n, t in (("q", q), ("k", k), ("v", v)):
            np.save(f"{base}.{n}.npy", to_npy(t))
            inputs.append(f"{base}.{n}.npy")
        np.save(base + ".m.npy", (~m if drop else m).numpy())
        inputs.append(base + ".m.npy")
        error = check_failure(run(run_tool, options, base, inputs))
        if error:
            failures += 1
            print(f"FAIL {name}: {error}")
            continue
        want = torch.nn.functional.scaled_dot_product_attention(
            q.double(), k.double(), v.double(), attn_mask=keep)
        removed = (~keep.any(dim=-1)).expand(B, h, L)
        error = compare(load_output(base, dtype), want, removed, TOL[dtype],
                        "a fully masked row")
        if error:
            failures += 1
            print(f"FAIL {name}: {error}")
    print(f"sdpa padding masks: {len(CASES)} cases, {failures} failures")


if __name__ == "__main__":
    main()
