#!/usr/bin/env python3
"""Seeded fuzzing of attn.sdpa's CPU lowerings (flash against math).

Generates N attn.sdpa configurations from a fixed seed (a few hand-picked
corners first), one function per file --out/cfgN/sdpa.mlir, with its inputs
as .npy files written here (q, k, v and the mask, so that this script knows
them; masks may also be arith.constants in the function), and runs

    attn-run cfgN/sdpa.mlir --entry f --check --backend=flash|math \
        --num-threads=1|2 --input I=cfgN/x.npy [--shape I=..] --output 0=..

on each. Configurations too large for the python reference (see
--py-ref-limit) take q, k and v from attn-run's own seeded random inputs
(--seed, --shape) instead. A configuration passes when

  1. attn-run exits 0 and prints `check: ... ok` (tested side against the
     reference: no fusion, math lowering);
  2. the `nan=` count of the result equals the count predicted from the
     contract (a row whose scores are all -inf gives NaN, see AttnOps.td);
  3. for small configurations, the result (read back with --output) agrees
     with a pure-python evaluation of the contract in double precision.

Plain python3, no numpy. Prints one line per configuration and, for each
failure, `FAIL cfg N: <why>` and the command that reproduces it; exits 1 if
any configuration failed.

    gen_sdpa_fuzz.py --attn-run build/bin/attn-run --out /tmp/fz [--n 48]
                     [--seed 20261130] [--only 3,7] [--no-run]
"""

import argparse
import math
import os
import random
import shlex
import shutil
import struct
import subprocess
import sys
import time

SIZES_LS = [1, 2, 7, 31, 64, 65, 100, 130]
SIZES_E = [8, 16, 24, 40, 64, 80, 128]
NEG_INF = float("-inf")

# ---------------------------------------------------------------------------
# Rounding to the element types (round to nearest even, overflow to inf).
# ---------------------------------------------------------------------------


def round_float(x, mant_bits, emin, max_finite):
    """Rounds the double x to a binary float with `mant_bits` fraction bits,
    minimum normal exponent `emin` (subnormals below) and largest finite
    value `max_finite`, ties to even."""
    if x == 0 or math.isinf(x) or math.isnan(x):
        return x
    m, e = math.frexp(abs(x))  # abs(x) = m * 2**e, m in [0.5, 1)
    e -= 1  # abs(x) = (2m) * 2**e, 2m in [1, 2)
    e = max(e, emin)
    quantum = math.ldexp(1.0, e - mant_bits)
    q = abs(x) / quantum
    r = math.floor(q)
    frac = q - r
    if frac > 0.5 or (frac == 0.5 and r % 2 == 1):
        r += 1
    y = r * quantum
    # Overflow: values at or past max + half an ulp round to infinity.
    if y > max_finite:
        y = math.inf
    return math.copysign(y, x)


def round_to(dtype, x):
    if dtype == "f32":
        return round_float(x, 23, -126, 3.4028234663852886e38)
    if dtype == "f16":
        return round_float(x, 10, -14, 65504.0)
    if dtype == "bf16":
        return round_float(x, 7, -126, 3.3895313892515355e38)
    raise ValueError(dtype)


# ---------------------------------------------------------------------------
# .npy (version 1.0, C order, little endian)
# ---------------------------------------------------------------------------

NPY_DESCR = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "i1": "|b1"}


def bf16_bits(x):
    # x is exactly representable in bf16: the top half of its f32 bits.
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


def write_npy(path, dtype, shape, flat):
    descr = NPY_DESCR[dtype]
    shape_str = "(" + "".join("%d, " % d for d in shape)
    shape_str = (shape_str[:-2] + ",)") if len(shape) == 1 else (
        shape_str[:-2] + ")")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, shape_str)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    if dtype == "f32":
        data = struct.pack("<%df" % len(flat), *flat)
    elif dtype == "f16":
        data = struct.pack("<%de" % len(flat), *flat)
    elif dtype == "bf16":
        data = struct.pack("<%dH" % len(flat), *[bf16_bits(x) for x in flat])
    else:
        data = bytes(1 if x else 0 for x in flat)
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        f.write(struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(data)


def read_npy(path):
    with open(path, "rb") as f:
        raw = f.read()
    assert raw[:6] == b"\x93NUMPY", path
    major = raw[6]
    if major == 1:
        hlen = struct.unpack("<H", raw[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", raw[8:12])[0]
        start = 12
    header = raw[start:start + hlen].decode("latin1")
    d = eval(header)  # a python dict literal, written by attn-run
    shape = tuple(d["shape"])
    n = 1
    for s in shape:
        n *= s
    data = raw[start + hlen:]
    descr = d["descr"]
    if descr == "<f4":
        flat = list(struct.unpack("<%df" % n, data[:4 * n]))
    elif descr == "<f2":
        flat = list(struct.unpack("<%de" % n, data[:2 * n]))
    elif descr == "<u2":
        bits = struct.unpack("<%dH" % n, data[:2 * n])
        flat = [struct.unpack("<f", struct.pack("<I", b << 16))[0]
                for b in bits]
    else:
        raise ValueError("unexpected dtype %s in %s" % (descr, path))
    return shape, flat


# ---------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------


def strides_of(shape):
    st = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        st[i] = st[i + 1] * shape[i + 1]
    return st


def make_config(idx, rng, dtypes=None, head_dims=None, lengths=None):
    """A random configuration; `dtypes`, `head_dims` and `lengths` (lists)
    replace the element types, the sizes of E and Ev and those of L and S
    drawn."""
    sizes_ls = lengths or SIZES_LS
    c = {"idx": idx}
    c["dtype"] = rng.choice(dtypes or ["f32", "f32", "f16", "bf16"])
    c["rank"] = rank = rng.choice([2, 3, 4, 4])
    L = rng.choice(sizes_ls)
    S = rng.choice(sizes_ls)
    if rng.random() < 0.15:
        S = L
    E = rng.choice(head_dims or SIZES_E)
    Ev = E if rng.random() < 0.3 else rng.choice(head_dims or SIZES_E)
    # Query batch dims and key/value batch dims.
    qb, kb = [], []
    if rank >= 3:
        B = rng.choice([1, 2, 2, 3])
        qb.append(B)
        kb.append(1 if (B > 1 and rng.random() < 0.3) else B)
    if rank == 4:
        H = rng.choice([1, 2, 4, 4, 6])
        divisors = [d for d in range(1, H + 1) if H % d == 0]
        Hkv = rng.choice(divisors) if rng.random() < 0.6 else H
        qb.append(H)
        kb.append(Hkv)
    # Keep the work small: shrink L/S when the batch is large.
    nbatch = 1
    for d in qb:
        nbatch *= d
    while nbatch * L * S * (E + Ev) > 3_000_000 and max(L, S) > 31:
        if L >= S:
            L = rng.choice([s for s in sizes_ls if s < L])
        else:
            S = rng.choice([s for s in sizes_ls if s < S])
    c.update(L=L, S=S, E=E, Ev=Ev, qb=qb, kb=kb)
    # Mask.
    kind = rng.choice(["none", "none", "bool", "bool", "add"])
    c["mask"] = kind
    target = qb + [L, S]
    if kind != "none":
        mrank = rng.randint(1, rank)
        mshape = []
        for j in range(mrank):
            t = rank - mrank + j
            full = target[t]
            r = rng.random()
            if t == rank - 1:
                mshape.append(full if r < 0.85 else 1)
            elif t == rank - 2:
                mshape.append(full if r < 0.6 else 1)
            else:
                mshape.append(full if r < 0.5 else 1)
        c["mshape"] = mshape
    c["causal"] = rng.random() < 0.4
    c["mv"] = rng.choice([None, None, None, -1e9, -3.0, 0.5])
    c["scale"] = rng.choice([None, None, 0.125, 0.3, 1.0])
    # Dynamic dims: per operand, a subset of its dims; a dim is made `?` only
    # where no run-time broadcast is involved (a `?` never broadcasts).
    c["dyn"] = rng.random() < 0.35
    qdyn = [False] * rank
    kdyn = [False] * rank
    vdyn = [False] * rank
    mdyn = [False] * len(c.get("mshape", []))
    if c["dyn"]:
        for i in range(rank):
            p = rng.random() < 0.5
            if i < rank - 2:
                # q batch: `?` is fine unless it is a GQA head dim (grouped
                # heads need static sizes); k/v: only where equal to q's.
                gqa = kb[i] != qb[i] and kb[i] != 1
                qdyn[i] = p and not gqa
                kv = rng.random() < 0.5 and kb[i] == qb[i]
                kdyn[i] = vdyn[i] = kv
            else:
                qdyn[i] = p
                kdyn[i] = rng.random() < 0.5
                vdyn[i] = rng.random() < 0.5
        for j, d in enumerate(c.get("mshape", [])):
            t = rank - len(c["mshape"]) + j
            mdyn[j] = rng.random() < 0.5 and d == target[t]
    c.update(qdyn=qdyn, kdyn=kdyn, vdyn=vdyn, mdyn=mdyn)
    c["threads"] = rng.choice([1, 2])
    c["backend"] = "math" if rng.random() < 0.15 else "flash"
    c["data_seed"] = rng.randrange(1 << 30)
    # Now and then a constant mask (an arith.constant, not an argument), for
    # attn.sdpa's canonicalization: a boolean [.., L, S] tril pattern becomes
    # is_causal, an all-keep mask goes. Drawn from its own stream so that the
    # configurations above do not depend on it.
    crng = random.Random(c["data_seed"] ^ 0x5EED)
    c["const"] = None
    if kind != "none" and crng.random() < 0.25:
        n = 1
        for d in c["mshape"]:
            n *= d
        if n <= 4096:
            ms = c["mshape"]
            tril_ok = len(ms) >= 2 and ms[-2:] == [L, S]
            if kind == "bool":
                c["const"] = crng.choice((["tril", "tril"] if tril_ok else [])
                                         + ["keep", "data"])
            else:
                c["const"] = crng.choice(["zeros", "data"])
            c["mdyn"] = [False] * len(ms)
    # A score_mod region now and then (its own stream too): soft-capping, or
    # an ALiBi-like bias from the indices (slope from the last batch dim).
    c["mod"] = crng.choice(["none", "none", "none", "softcap", "alibi"])
    # A sliding window now and then: key j of row i takes part iff
    # i - wl <= j <= i + wr (negative bounds make some rows fully masked).
    c["wl"] = crng.choice([None, None, None, 0, 1, 3, 17, 70])
    c["wr"] = crng.choice([None, None, None, None, 0, 2, -1, 40])
    # safe_softmax now and then: fully masked rows give 0, not NaN.
    c["safe"] = crng.random() < 0.3
    return c


def directed_configs(rng):
    """Hand-picked corners, run before the random ones."""
    out = []

    def cfg(**kw):
        c = {"dtype": "f32", "rank": 2, "qb": [], "kb": [], "mask": "none",
             "causal": False, "mv": None, "scale": None, "dyn": False,
             "threads": 1, "backend": "flash", "const": None, "mod": "none"}
        c.update(kw)
        r = c["rank"]
        for n in ("qdyn", "kdyn", "vdyn"):
            c.setdefault(n, [False] * r)
        c.setdefault("mdyn", [False] * len(c.get("mshape", [])))
        c["data_seed"] = rng.randrange(1 << 30)
        out.append(c)

    # Default scale 1/sqrt(E) with the query's E dynamic: from the key's
    # static E, and computed at run time when both are `?`.
    cfg(L=31, S=7, E=24, Ev=16, qdyn=[True, True], kdyn=[False, True],
        dyn=True)
    cfg(rank=3, qb=[2], kb=[2], L=7, S=65, E=40, Ev=8, qdyn=[False, False, True],
        kdyn=[False, False, False], dyn=True, threads=2, causal=True)
    # GQA, padding mask, causal, masked_value -1e9 (-inf in f16).
    cfg(dtype="f16", rank=4, qb=[2, 4], kb=[2, 2], L=65, S=130, E=40, Ev=24,
        mask="bool", mshape=[2, 1, 1, 130], causal=True, mv=-1e9, threads=2)
    # Causal with L > S, an additive [L, S] mask (rows of -inf) under a
    # finite masked_value.
    cfg(dtype="bf16", rank=3, qb=[2], kb=[1], L=130, S=31, E=16, Ev=64,
        mask="add", mshape=[130, 31], causal=True, mv=-3.0, scale=0.125)
    # Causal with L < S and a [L, 1] boolean mask.
    cfg(rank=4, qb=[1, 2], kb=[1, 1], L=7, S=100, E=8, Ev=80, mask="bool",
        mshape=[7, 1], causal=True, threads=2)
    # Constant masks: a causal boolean one (folds into is_causal, keeping
    # masked_value) and an all-zero additive one (dropped).
    cfg(rank=3, qb=[2], kb=[2], L=65, S=65, E=16, Ev=16, mask="bool",
        mshape=[1, 65, 65], const="tril", mv=-3.0, threads=2)
    cfg(dtype="f16", rank=3, qb=[2], kb=[2], L=31, S=100, E=24, Ev=8,
        mask="add", mshape=[31, 100], const="zeros", causal=True, mv=0.5)
    # Decode with the heads that share a key/value head folded into one
    # work item's rows: one key/value head for 6 heads, a mask per head and
    # a bias from the head index; 8 grouped heads on 2 with 2 query rows
    # (folded by 4), causal, a window and an additive mask per head.
    cfg(dtype="bf16", rank=4, qb=[2, 6], kb=[2, 1], L=1, S=130, E=40, Ev=24,
        mask="bool", mshape=[2, 6, 1, 130], mod="alibi", threads=2)
    cfg(dtype="f16", rank=4, qb=[1, 8], kb=[1, 2], L=2, S=100, E=64, Ev=64,
        mask="add", mshape=[1, 8, 2, 100], causal=True, wl=17, threads=2)
    return out


def describe(c):
    def sh(shape, dyn):
        return "x".join("?%d" % d if y else str(d) for d, y in zip(shape, dyn))

    q = c["qb"] + [c["L"], c["E"]]
    k = c["kb"] + [c["S"], c["E"]]
    v = c["kb"] + [c["S"], c["Ev"]]
    parts = ["%s" % c["dtype"], "q=" + sh(q, c["qdyn"]),
             "k=" + sh(k, c["kdyn"]), "v=" + sh(v, c["vdyn"])]
    if c["mask"] != "none":
        parts.append("%s_mask=%s" % (c["mask"], sh(c["mshape"], c["mdyn"])))
        if c.get("const"):
            parts.append("const=%s" % c["const"])
    if c["causal"]:
        parts.append("causal")
    if c.get("wl") is not None or c.get("wr") is not None:
        parts.append("window=(%s,%s)" % (c.get("wl"), c.get("wr")))
    if c["mv"] is not None:
        parts.append("masked_value=%g" % c["mv"])
    if c["scale"] is not None:
        parts.append("scale=%g" % c["scale"])
    if c.get("mod", "none") != "none":
        parts.append("score_mod=%s" % c["mod"])
    if c.get("safe"):
        parts.append("safe_softmax")
    parts.append("threads=%d" % c["threads"])
    parts.append("backend=%s" % c["backend"])
    return " ".join(parts)


def tensor_type(shape, dyn, et):
    dims = ["?" if y else str(d) for d, y in zip(shape, dyn)]
    return "tensor<%sx%s>" % ("x".join(dims), et)


NEG_INF_HEX = {"f32": "0xFF800000", "f16": "0xFC00", "bf16": "0xFF80"}


def dense_literal(c, ins):
    shape, flat = ins["m"]
    if c["const"] in ("keep", "zeros"):
        return "true" if c["mask"] == "bool" else "0.0"

    def elem(x):
        if c["mask"] == "bool":
            return "true" if x else "false"
        return NEG_INF_HEX[c["dtype"]] if x == NEG_INF else repr(x)

    def nest(dims, off):
        if not dims:
            return elem(flat[off]), off + 1
        parts = []
        for _ in range(dims[0]):
            p, off = nest(dims[1:], off)
            parts.append(p)
        return "[" + ", ".join(parts) + "]", off

    return nest(list(shape), 0)[0]


SOFTCAP = 4.0


def score_mod_region(c):
    """The score_mod region of the configuration (scores in f32)."""
    mod = c.get("mod", "none")
    if mod == "none":
        return ""
    idx = ", ".join("%%i%d: index" % d for d in range(c["rank"]))
    if mod == "softcap":
        body = ("    %%c = arith.constant %r : f32\n"
                "    %%d = arith.divf %%s, %%c : f32\n"
                "    %%t = math.tanh %%d : f32\n"
                "    %%r = arith.mulf %%t, %%c : f32\n" % SOFTCAP)
    else:
        # s - 0.25 * (h + 1) * |i - j|, h the last batch index (0 without).
        r = c["rank"]
        if r > 2:
            slope = ("    %%h = arith.index_cast %%i%d : index to i64\n"
                     "    %%hf = arith.sitofp %%h : i64 to f32\n"
                     "    %%one = arith.constant 1.0 : f32\n"
                     "    %%h1 = arith.addf %%hf, %%one : f32\n"
                     "    %%quarter = arith.constant 0.25 : f32\n"
                     "    %%sl = arith.mulf %%h1, %%quarter : f32\n" % (r - 3))
        else:
            slope = "    %sl = arith.constant 0.25 : f32\n"
        body = (slope +
                "    %%ii = arith.index_cast %%i%d : index to i64\n"
                "    %%jj = arith.index_cast %%i%d : index to i64\n"
                "    %%dd = arith.subi %%ii, %%jj : i64\n"
                "    %%df = arith.sitofp %%dd : i64 to f32\n"
                "    %%ad = math.absf %%df : f32\n"
                "    %%b = arith.mulf %%ad, %%sl : f32\n"
                "    %%r = arith.subf %%s, %%b : f32\n" % (r - 2, r - 1))
    return (" score_mod {\n  ^bb0(%%s: f32, %s):\n%s    attn.yield %%r : f32\n  }"
            % (idx, body))


def apply_score_mod(c, s, bidx, i, j):
    """The Python evaluation of score_mod_region on one (f32) score."""
    mod = c.get("mod", "none")
    if mod == "softcap":
        return SOFTCAP * math.tanh(s / SOFTCAP)
    if mod == "alibi":
        h = bidx[-1] if bidx else 0
        return s - 0.25 * (h + 1) * abs(i - j)
    return s


def emit_mlir(c, ins):
    et = c["dtype"]
    rank = c["rank"]
    q = c["qb"] + [c["L"], c["E"]]
    k = c["kb"] + [c["S"], c["E"]]
    v = c["kb"] + [c["S"], c["Ev"]]
    r = c["qb"] + [c["L"], c["Ev"]]
    rdyn = c["qdyn"][:-1] + [c["vdyn"][-1]]
    qt = tensor_type(q, c["qdyn"], et)
    kt = tensor_type(k, c["kdyn"], et)
    vt = tensor_type(v, c["vdyn"], et)
    rt = tensor_type(r, rdyn, et)
    args = ["%%q: %s" % qt, "%%k: %s" % kt, "%%v: %s" % vt]
    operands = ["%q", "%k", "%v"]
    types = [qt, kt, vt]
    const = ""
    if c["mask"] != "none":
        mt = tensor_type(c["mshape"], c["mdyn"],
                         "i1" if c["mask"] == "bool" else et)
        if c.get("const"):
            const = "  %%m = arith.constant dense<%s> : %s\n" % (
                dense_literal(c, ins), mt)
        else:
            args.append("%%m: %s" % mt)
        operands.append("%m")
        types.append(mt)
    attrs = []
    if c["causal"]:
        attrs.append("is_causal = true")
    if c["scale"] is not None:
        attrs.append("scale = %r : f64" % c["scale"])
    for key, name in (("wl", "window_left"), ("wr", "window_right")):
        if c.get(key) is not None:
            attrs.append("%s = %d : i64" % (name, c[key]))
    if c["mv"] is not None:
        attrs.append("masked_value = %r : f64" % c["mv"])
    if c.get("safe"):
        attrs.append("safe_softmax = true")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    return ("// %s\n"
            "func.func @f(%s) -> %s {\n"
            "%s"
            "  %%o = attn.sdpa %s%s\n"
            "      : (%s) -> %s%s\n"
            "  return %%o : %s\n"
            "}\n") % (describe(c), ", ".join(args), rt, const, ", ".join(operands),
                      attr, ", ".join(types), rt, score_mod_region(c), rt)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def gen_inputs(c):
    """q, k, v: multiples of 1/64 in [-1, 1] (exact in every element type);
    masks: row patterns that cover fully masked rows, fully kept rows, rows
    kept only in a late key block and random rows."""
    rng = random.Random(c["data_seed"])
    shape_q = c["qb"] + [c["L"], c["E"]]
    shape_k = c["kb"] + [c["S"], c["E"]]
    shape_v = c["kb"] + [c["S"], c["Ev"]]

    def rnd(shape):
        n = 1
        for d in shape:
            n *= d
        return [rng.randint(-64, 64) / 64.0 for _ in range(n)]

    ins = {"q": (shape_q, rnd(shape_q)), "k": (shape_k, rnd(shape_k)),
           "v": (shape_v, rnd(shape_v))}
    if c["mask"] != "none":
        ms = c["mshape"]
        cols = ms[-1]
        rows = 1
        for d in ms[:-1]:
            rows *= d
        flat = []
        const = c.get("const")
        for r in range(rows):
            if const == "tril":
                i = r % ms[-2]
                row = [j <= i for j in range(cols)]
            elif const == "keep":
                row = [True] * cols
            elif const == "zeros":
                row = [0.0] * cols
            elif c["mask"] == "bool":
                pat = r % 7
                if pat == 0:
                    row = [False] * cols
                elif pat == 1:
                    row = [True] * cols
                elif pat == 2:
                    row = [j >= 70 for j in range(cols)]
                else:
                    row = [rng.random() < 0.5 for _ in range(cols)]
            else:
                pat = r % 5
                if pat == 0:
                    row = [NEG_INF] * cols
                elif pat == 1:
                    row = [NEG_INF if j < 66 else rng.randint(-16, 16) / 8.0
                           for j in range(cols)]
                else:
                    row = [NEG_INF if rng.random() < 0.1 else
                           rng.randint(-16, 16) / 8.0 for j in range(cols)]
            flat.extend(row)
        ins["m"] = (ms, flat)
    return ins


# ---------------------------------------------------------------------------
# The contract in python
# ---------------------------------------------------------------------------


def contract_rows(c, ins, want_values):
    """Yields (out_index_of_row_start, values or None, is_nan_row) for every
    output row [batch..., l]. With want_values false only the NaN
    prediction is computed."""
    rank = c["rank"]
    qb, kb = c["qb"], c["kb"]
    L, S, E, Ev = c["L"], c["S"], c["E"], c["Ev"]
    et = c["dtype"]
    scale = c["scale"] if c["scale"] is not None else 1.0 / math.sqrt(E)
    mv = round_to(et, c["mv"] if c["mv"] is not None else NEG_INF)
    q = ins["q"][1]
    k = ins["k"][1]
    v = ins["v"][1]
    kshape = kb + [S, E]
    vshape = kb + [S, Ev]
    kst = strides_of(kshape)
    vst = strides_of(vshape)
    target = qb + [L, S]
    mflat = None
    if c["mask"] != "none":
        ms = c["mshape"]
        mflat = ins["m"][1]
        mst = strides_of(ms)
        moff = rank - len(ms)

    def mask_index(bidx, i, j):
        full = bidx + [i, j]
        off = 0
        for jm, d in enumerate(ms):
            t = moff + jm
            idx = 0 if (d == 1 and target[t] != 1) else full[t]
            off += idx * mst[jm]
        return off

    nb = len(qb)
    bidx_list = [[]]
    for d in qb:
        bidx_list = [b + [x] for b in bidx_list for x in range(d)]
    row = 0
    for bidx in bidx_list:
        kvidx = []
        for i in range(nb):
            if kb[i] == qb[i]:
                kvidx.append(bidx[i])
            elif kb[i] == 1:
                kvidx.append(0)
            else:
                kvidx.append(bidx[i] // (qb[i] // kb[i]))
        kbase = sum(x * s for x, s in zip(kvidx, kst[:nb]))
        vbase = sum(x * s for x, s in zip(kvidx, vst[:nb]))
        for i in range(L):
            qrow = q[row * E:(row + 1) * E]
            scores = []
            for j in range(S):
                addv = 0.0
                masked = False
                if mflat is not None:
                    mval = mflat[mask_index(bidx, i, j)]
                    if c["mask"] == "bool":
                        masked = not mval
                    else:
                        addv = mval
                if c["causal"] and j > i:
                    masked = True
                if c.get("wl") is not None and j < i - c["wl"]:
                    masked = True
                if c.get("wr") is not None and j > i + c["wr"]:
                    masked = True
                if masked:
                    scores.append(mv)
                    continue
                if want_values:
                    ko = kbase + j * E
                    dot = math.fsum(a * b for a, b in zip(qrow, k[ko:ko + E]))
                    scores.append(
                        apply_score_mod(c, dot * scale, bidx, i, j) + addv)
                else:
                    scores.append(addv)  # finite unless -inf
            mx = max(scores) if scores else NEG_INF
            nan_row = S > 0 and mx == NEG_INF
            vals = None
            if nan_row and c.get("safe"):
                # safe_softmax: p = 0, so the row is 0 . v = 0.
                nan_row = False
                vals = [0.0] * Ev if want_values else None
                yield row * Ev, vals, nan_row
                row += 1
                continue
            if want_values and not nan_row:
                if S == 0:
                    vals = [0.0] * Ev
                else:
                    ps = [math.exp(s - mx) for s in scores]
                    tot = math.fsum(ps)
                    vals = [0.0] * Ev
                    for j, p in enumerate(ps):
                        if p == 0.0:
                            continue
                        w = p / tot
                        vo = vbase + j * Ev
                        vr = v[vo:vo + Ev]
                        for d in range(Ev):
                            vals[d] += w * vr[d]
                    vals = [round_to(et, x) for x in vals]
            yield row * Ev, vals, nan_row
            row += 1


def work(c):
    n = 1
    for d in c["qb"]:
        n *= d
    return n * c["L"] * c["S"] * (c["E"] + c["Ev"])


# Tolerances of the python comparison: the output is rounded once to the
# element type (half an ulp of 1: f16 4.9e-4, bf16 3.9e-3) and accumulated
# in f32 by the compiled code.
PY_TOL = {"f32": (2e-5, 2e-5), "f16": (2e-3, 2e-3), "bf16": (1e-2, 1e-2)}

# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def run_config(c, args):
    d = os.path.join(args.out, "cfg%d" % c["idx"])
    os.makedirs(d, exist_ok=True)
    mlir = os.path.join(d, "sdpa.mlir")
    ins = gen_inputs(c)
    with open(mlir, "w") as f:
        f.write(emit_mlir(c, ins))
    cmd = [args.attn_run, mlir, "--entry", "f", "--check",
           "--backend=" + c["backend"], "--num-threads=%d" % c["threads"]]
    cmd += args.attn_run_arg
    names = ["q", "k", "v"]
    if c["mask"] != "none" and not c.get("const"):
        names.append("m")
    want_values = work(c) <= args.py_ref_limit
    dyns = {"q": c["qdyn"], "k": c["kdyn"], "v": c["vdyn"], "m": c["mdyn"]}
    for i, name in enumerate(names):
        shape, flat = ins[name]
        if name in "qkv" and not want_values:
            # Too large for the python reference: q, k and v are attn-run's
            # own seeded random inputs (--seed, --shape for `?` dims); the
            # mask still comes from here (the NaN count depends on it).
            if any(dyns[name]):
                cmd += ["--shape", "%d=%s" % (i, "x".join(map(str, shape)))]
            continue
        if any(dyns[name]):
            # --input fills `?` dims; --shape must agree with it.
            cmd += ["--shape", "%d=%s" % (i, "x".join(map(str, shape)))]
        dt = c["dtype"]
        if name == "m" and c["mask"] == "bool":
            dt = "i1"
        p = os.path.join(d, name + ".npy")
        write_npy(p, dt, shape, flat)
        cmd.append("--input")
        cmd.append("%d=%s" % (i, p))
    if not want_values:
        cmd += ["--seed", str(c["data_seed"] % 1000 + 1)]
    outp = os.path.join(d, "out.npy")
    cmd += ["--output", "0=" + outp]
    if args.no_run:
        return None, cmd
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    out = proc.stdout
    errors = []
    if proc.returncode != 0:
        errors.append("attn-run exit status %d" % proc.returncode)
    check = [l for l in out.splitlines() if l.startswith("check:")]
    if not check or not check[0].rstrip().endswith(" ok"):
        errors.append("check line: %s" % (check[0] if check else "<none>"))
    res = [l for l in out.splitlines() if l.startswith("result 0:")]
    nan = None
    if res and " nan=" in res[0]:
        nan = int(res[0].rsplit(" nan=", 1)[1])
    pred_nan = 0
    mism = 0
    first_bad = None
    out_vals = None
    if want_values and os.path.exists(outp) and not errors:
        _, out_vals = read_npy(outp)
    atol, rtol = PY_TOL[c["dtype"]]
    for base, vals, nan_row in contract_rows(c, ins, want_values):
        if nan_row:
            pred_nan += c["Ev"]
        if out_vals is None:
            continue
        got = out_vals[base:base + c["Ev"]]
        for dd in range(c["Ev"]):
            g = got[dd]
            if nan_row:
                ok = math.isnan(g)
                w = math.nan
            else:
                w = vals[dd]
                ok = not math.isnan(g) and abs(g - w) <= atol + rtol * abs(w)
            if not ok:
                mism += 1
                if first_bad is None:
                    first_bad = (base // c["Ev"], dd, g, w)
    if nan is None:
        errors.append("no result line")
    elif nan != pred_nan:
        errors.append("nan=%d, the contract predicts nan=%d" % (nan, pred_nan))
    if mism:
        row, dd, g, w = first_bad
        errors.append("%d elements differ from the python contract "
                      "(first: output row %d col %d: got %r, want %r)" %
                      (mism, row, dd, g, w))
    info = "nan=%s%s" % (nan, " pyref" if out_vals is not None else "")
    return (errors, info, out), cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn-run", default=shutil.which("attn-run"),
                    help="the attn-run binary (default: from PATH)")
    ap.add_argument("--attn-run-arg", action="append", default=[],
                    help="an argument added to every attn-run command "
                    "(repeatable), e.g. --attn-run-arg=--mcpu=cooperlake")
    ap.add_argument("--log", default="", help="also write the output here")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=48)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--only", default="", help="comma-separated indices")
    ap.add_argument("--dtypes", default="",
                    help="comma-separated element types to draw from (then "
                    "no hand-picked corners)")
    ap.add_argument("--head-dims", default="",
                    help="comma-separated sizes of E and Ev to draw from "
                    "(then no hand-picked corners)")
    ap.add_argument("--lengths", default="",
                    help="comma-separated sizes of L and S to draw from, "
                    "one of them at most 31 (then no hand-picked corners)")
    ap.add_argument("--py-ref-limit", type=int, default=400_000,
                    help="largest batch*L*S*(E+Ev) checked against python")
    ap.add_argument("--no-run", action="store_true",
                    help="only write the files and print the commands")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    dtypes = [x for x in args.dtypes.split(",") if x]
    head_dims = [int(x) for x in args.head_dims.split(",") if x]
    lengths = [int(x) for x in args.lengths.split(",") if x]
    if lengths and min(lengths) > 31:
        ap.error("--lengths needs a size of at most 31 (the shrinking of "
                 "large configurations picks smaller ones)")
    configs = ([] if dtypes or head_dims or lengths
               else directed_configs(random.Random(args.seed)))
    configs += [make_config(i, rng, dtypes, head_dims, lengths)
                for i in range(args.n - len(configs))]
    for i, c in enumerate(configs):
        c["idx"] = i
    only = set(int(x) for x in args.only.split(",") if x)
    failed = []
    t0 = time.time()
    log = open(args.log, "w") if args.log else None

    def say(text):
        print(text)
        if log:
            log.write(text + "\n")
            log.flush()

    for c in configs:
        if only and c["idx"] not in only:
            continue
        r, cmd = run_config(c, args)
        cmdline = " ".join(shlex.quote(x) for x in cmd)
        if r is None:
            say("cfg %d: %s\n  %s" % (c["idx"], describe(c), cmdline))
            continue
        errors, info, out = r
        if errors:
            failed.append(c["idx"])
            say("FAIL cfg %d: %s" % (c["idx"], describe(c)))
            for e in errors:
                say("  " + e)
            say("  repro: " + cmdline)
            for l in out.splitlines():
                say("  | " + l)
        else:
            say("cfg %d: %s: ok %s" % (c["idx"], describe(c), info))
        sys.stdout.flush()
    say("sdpa-fuzz: %d configurations, %d failed%s, %.1f s" % (
        len(only) if only else len(configs), len(failed),
        (" (" + ",".join(map(str, failed)) + ")") if failed else "",
        time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
