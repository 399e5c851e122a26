"""Runs attn.sdpa with sequence lengths (q_lengths, kv_lengths) through
attn-run --check (the fused flash or decode lowering against the math
path) and compares the result with PyTorch in float64 on the padded
equivalent: the boolean mask `real row i and real key j`, intersected with
the case's causal band, window, boolean mask and score_mod; rows that mask
removes entirely are 0, as PyTorch's SDPA returns them, and must be exactly
0 here. Lengths 0, 1, full and mixed; right and left padding; causal, a
window, GQA, a padding mask and a score_mod region with lengths; f32 and
bf16; i32 and i64 lengths; flash (L past the decode path's rows) and decode
(L of 1 or 2). A length below 0 or past L must fail the run.

    check_sdpa_lengths.py attn-run TMPDIR [attn-run options]

Prints one line per failing case and a summary line."""
import math
import os
import subprocess
import sys

import numpy as np
import torch

B, E = 4, 32
TYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
# attn-run's --check tolerances, and this script's against float64.
TOL = {"f32": 1e-4, "bf16": 5e-2}
CAP = 5.0

# name, dtype, L, S, Hq, Hkv, q_lengths, kv_lengths, padding side, causal,
# window_left, mask, score_mod (soft cap), lengths type.
CASES = [
    ("right_f32", "f32", 130, 130, 2, 2, [1, 130, 57, 0], [1, 130, 70, 0],
     "right", False, None, False, False, "i32"),
    ("left_causal_f32", "f32", 130, 130, 2, 2, [1, 130, 57, 0],
     [1, 130, 57, 0], "left", True, None, False, False, "i64"),
    ("right_causal_gqa_bf16", "bf16", 100, 100, 4, 2, [100, 1, 0, 33],
     [100, 1, 0, 33], "right", True, None, False, False, "i32"),
    ("left_mask_softcap_bf16", "bf16", 70, 90, 2, 1, [70, 0, 12, 1],
     [90, 5, 0, 64], "left", False, None, True, True, "i32"),
    ("kv_only_window_f32", "f32", 80, 80, 2, 2, None, [80, 1, 0, 41],
     "right", True, 15, False, False, "i64"),
    ("decode_left_f32", "f32", 2, 130, 2, 1, None, [0, 1, 130, 77],
     "left", False, None, False, False, "i32"),
    ("decode_right_bf16", "bf16", 1, 70, 4, 2, [1, 0, 1, 1], [70, 3, 0, 1],
     "right", False, None, True, False, "i64"),
]


def tensor_type(shape, dtype):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


def case_mlir(c):
    (_, dtype, L, S, hq, hkv, ql, kl, side, causal, window, mask, softcap,
     it) = c
    qt = tensor_type((B, hq, L, E), dtype)
    kt = tensor_type((B, hkv, S, E), dtype)
    mt = tensor_type((B, 1, 1, S), "i1")
    lt = tensor_type((B,), it)
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {kt}"]
    operands, types = "%q, %k, %v", [qt, kt, kt]
    if mask:
        args.append(f"%m: {mt}")
        operands += ", %m"
        types.append(mt)
    for name, lengths in (("q_lengths", ql), ("kv_lengths", kl)):
        if lengths is not None:
            args.append(f"%{name}: {lt}")
            operands += f" {name}(%{name})"
            types.append(lt)
    attrs = []
    if causal:
        attrs.append("is_causal = true")
    if window is not None:
        attrs.append(f"window_left = {window} : i64")
    if side == "left":
        attrs.append("padding_side = #attn.padding_side<left>")
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    region = ""
    if softcap:
        ct = "f32"
        region = (f" score_mod {{\n  ^bb0(%s: {ct}, %b: index, %h: index, "
                  f"%i: index, %j: index):\n"
                  f"    %c = arith.constant {CAP:e} : {ct}\n"
                  f"    %d = arith.divf %s, %c : {ct}\n"
                  f"    %t = math.tanh %d : {ct}\n"
                  f"    %r = arith.mulf %t, %c : {ct}\n"
                  f"    attn.yield %r : {ct}\n  }}")
    return (f"func.func @f({', '.join(args)}) -> {qt} {{\n"
            f"  %o = attn.sdpa {operands}{attr} : ({', '.join(types)}) -> "
            f"{qt}{region}\n  return %o : {qt}\n}}\n")


def to_npy(t):
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def scores_and_keep(q, k, v, causal, window, m, softcap):
    """Float64 q, k and v (k and v repeated over GQA groups), the scaled
    scores (soft-capped with `softcap`), the [B, 1, L, S] positions kept by
    causal, the window's left extent and the boolean mask `m` (None: no
    mask), and the [L, 1] and [1, S] positions i and j."""
    hq, L, S = q.shape[1], q.shape[2], k.shape[2]
    q, k, v = (x.double() for x in (q, k, v))
    k = k.repeat_interleave(hq // k.shape[1], dim=1)
    v = v.repeat_interleave(hq // v.shape[1], dim=1)
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if softcap:
        s = CAP * torch.tanh(s / CAP)
    i = torch.arange(L).view(L, 1)
    j = torch.arange(S).view(1, S)
    keep = torch.ones(q.shape[0], 1, L, S, dtype=torch.bool)
    if causal:
        keep &= j <= i
    if window is not None:
        keep &= j >= i - window
    if m is not None:
        keep &= m
    return q, k, v, s, keep, i, j


def reference(c, q, k, v, m):
    """PyTorch float64 on the padded equivalent, and the rows it removes."""
    (_, _, L, S, hq, hkv, ql, kl, side, causal, window, mask, softcap,
     _) = c
    q, k, v, s, keep, i, j = scores_and_keep(q, k, v, causal, window,
                                             m if mask else None, softcap)
    for b in range(B):
        n = ql[b] if ql is not None else L
        rows = (i >= L - n) if side == "left" else (i < n)
        n = kl[b] if kl is not None else S
        keys = (j >= S - n) if side == "left" else (j < n)
        keep[b] &= rows & keys
    if softcap:
        # SDPA has no score_mod: its math on the modified scores (a row
        # without keys 0, as SDPA gives it).
        s = s.masked_fill(~keep, float("-inf"))
        out = torch.softmax(s, dim=-1).nan_to_num(0.0) @ v
    else:
        out = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=keep)
    removed = ~keep.any(dim=-1)  # [B, 1, L]
    return out, removed.expand(B, hq, L)


def run(run_tool, options, base, inputs, check=True):
    cmd = [run_tool, base + ".mlir", "--entry", "f",
           "--output", "0=" + base + ".out.npy"]
    if check:
        cmd.append("--check")
    for n, path in enumerate(inputs):
        cmd += ["--input", f"{n}={path}"]
    return subprocess.run(cmd + options, capture_output=True, text=True)


def check_failure(done):
    """What went wrong in an attn-run --check run `done`, or None."""
    if done.returncode != 0 or "check:" not in done.stdout or \
            " ok" not in done.stdout:
        return (done.stdout + done.stderr).strip()[-400:]
    return None


def load_output(base, dtype):
    got = np.load(base + ".out.npy")
    if dtype == "bf16":
        return torch.from_numpy(got.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(got)


def compare(got, want, removed, tol, rows="a removed row"):
    """What is wrong with `got` against the float64 `want` (within `tol`,
    finite, the `removed` rows exactly 0), or None."""
    err = (got.double() - want).abs()
    if not torch.isfinite(got).all() or err.max() > tol:
        return f"max |diff| {err.max()}"
    if removed.any() and not torch.equal(got[removed],
                                         torch.zeros_like(got[removed])):
        return f"{rows} is not 0"
    return None


def main():
    run_tool, tmp = sys.argv[1:3]
    options = sys.argv[3:]
    gen = torch.Generator().manual_seed(51)
    cases = failures = 0
    for c in CASES:
        (name, dtype, L, S, hq, hkv, ql, kl, _, _, _, mask, _, it) = c
        base = os.path.join(tmp, name)
        open(base + ".mlir", "w").write(case_mlir(c))
        q = torch.rand(B, hq, L, E, generator=gen) * 2 - 1
        k = torch.rand(B, hkv, S, E, generator=gen) * 2 - 1
        v = torch.rand(B, hkv, S, E, generator=gen) * 2 - 1
        q, k, v = (x.to(TYPES[dtype]) for x in (q, k, v))
        m = torch.rand(B, 1, 1, S, generator=gen) < 0.8
        inputs = []
        for n, t in (("q", q), ("k", k), ("v", v)):
            np.save(f"{base}.{n}.npy", to_npy(t))
            inputs.append(f"{base}.{n}.npy")
        if mask:
            np.save(base + ".m.npy", m.numpy())
            inputs.append(base + ".m.npy")
        np_int = np.int32 if it == "i32" else np.int64
        for n, lengths in (("ql", ql), ("kl", kl)):
            if lengths is not None:
                np.save(f"{base}.{n}.npy", np.array(lengths, dtype=np_int))
                inputs.append(f"{base}.{n}.npy")
        cases += 1
        error = check_failure(run(run_tool, options, base, inputs))
        if error:
            failures += 1
            print(f"FAIL {name}: {error}")
            continue
        want, removed = reference(c, q, k, v, m)
        error = compare(load_output(base, dtype), want, removed, TOL[dtype])
        if error:
            failures += 1
            print(f"FAIL {name}: {error}")
        # Out of range: one past L (S), and negative.
        for bad, which in ((L + 1, "ql"), (-1, "kl")):
            lengths = ql if which == "ql" else kl
            if lengths is None:
                continue
            bad_lengths = list(lengths)
            bad_lengths[2] = bad
            path = f"{base}.{which}.npy"
            np.save(path, np.array(bad_lengths, dtype=np_int))
            cases += 1
            done = run(run_tool, options, base, inputs, check=False)
            what = "q_lengths" if which == "ql" else "kv_lengths"
            if done.returncode == 0 or \
                    f"a {what} value is out of range" not in done.stderr:
                failures += 1
                print(f"FAIL {name} {what} {bad}: not refused: "
                      f"{done.stderr.strip()[-300:]}")
            np.save(path, np.array(lengths, dtype=np_int))
    print(f"sdpa lengths: {cases} cases, {failures} failures")


if __name__ == "__main__":
    main()
