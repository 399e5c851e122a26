#!/usr/bin/env python3
"""Randomized differential fuzzer of attn-fuse-sdpa (test/e2e/fusion-fuzz.test).

Generates random attention chains in the attn dialect (deterministic from a
seed, plain python3) and runs `attn-run --check` on each: the fused module
(default pipeline) against the unfused chain (math lowering), on the same
seeded random inputs. Counts how many chains fused (an "sdpa" span in the
--trace output) and asserts that a minimum fraction did, so the fuzzer cannot
silently degrade into testing unfused code only.

  gen_fusion_fuzz.py gen --seed N --count 60 --files 4 --out DIR
  gen_fusion_fuzz.py run --attn-run PATH [--jobs 2] [--min-fused 0.3] DIR

Chains: f32/f16/bf16, rank 3 or 4, small odd L/S/E/Ev; q/k/v as arguments,
through transpose(x, 1, 2) (torch [B, L, H, E] layout), a kT argument, or
repeat_interleave (GQA); 0-3 steps between the scores matmul and the softmax
(scalar scales, masked_fill, where, additive masks in every operand order and
broadcast shape, constant causal and band masks, masks and ALiBi biases
built from attn.iota positions); optional f32 upcast around the
softmax, dropout (eval, or training with a seed), a positive softmax dim, an intermediate
returned as a second result (a second user: must not fuse wrongly), k/v
batch dims broadcast by the matmuls, and sometimes two chains in one function
(same sizes, shared arguments and constant masks).

f16/bf16 chains keep the running product of their score scales within
[-2, 2]: a larger one amplifies the chain's own f16/bf16 rounding of the
scores (or overflows them to inf in f16) far beyond attn-run's tolerance,
while the fused op, which scales in f32, stays accurate. That difference is
known (see the comment in fusion-fuzz.test), not what this fuzzer looks for.
"""

import argparse
import concurrent.futures
import math
import os
import random
import re
import subprocess
import sys

LOWEST = {"f32": -3.4028234663852886e38, "f16": -65504.0,
          "bf16": -3.3895313892515355e38}
NEG_INF_HEX = {"f32": "0xFF800000", "f16": "0xFC00", "bf16": "0xFF80",
               "f64": "0xFFF0000000000000"}


def flt(x):
    """An MLIR float literal (always with a '.')."""
    if math.isinf(x):
        raise ValueError("use hex for inf")
    return "%.17e" % x


def f64attr(x):
    if math.isinf(x) and x < 0:
        return "0xFFF0000000000000"
    return flt(x)


def tt(shape, et):
    return "tensor<" + "".join("%dx" % d for d in shape) + et + ">"


class Fn:
    def __init__(self, name):
        self.name = name
        self.args = []  # (name, type)
        self.body = []
        self.n = 0
        self.desc = []
        # Set after the first chain of a two-chain function: the second
        # one reuses its sizes and (sometimes) its arguments.
        self.params = None
        self.rng = None

    def arg(self, shape, et):
        ty = tt(shape, et)
        if self.params is not None and self.rng.random() < 0.6:
            for name, t in self.args:
                if t == ty:
                    return name
        name = "%%a%d" % len(self.args)
        self.args.append((name, ty))
        return name

    def fresh(self):
        self.n += 1
        return "%%t%d" % self.n

    def emit(self, text):
        v = self.fresh()
        self.body.append("  %s = %s" % (v, text))
        return v


def const_bool(fn, shape, pred):
    """A dense i1 constant of shape [..., L, S] with entry pred(i, j)."""
    L, S = shape[-2], shape[-1]
    rows = []
    for i in range(L):
        rows.append("[" + ", ".join("true" if pred(i, j) else "false"
                                    for j in range(S)) + "]")
    body = "[" + ", ".join(rows) + "]"
    for d in reversed(shape[:-2]):
        body = "[" + ", ".join([body] * d) + "]"
    return fn.emit("arith.constant dense<%s> : %s" % (body, tt(shape, "i1")))


def const_float_tensor(fn, shape, et, values):
    """values: flat list (row-major) of floats (-inf allowed)."""
    def lit(x):
        return NEG_INF_HEX[et] if math.isinf(x) else flt(x)
    # nest
    def nest(vals, dims):
        if not dims:
            return lit(vals[0])
        step = len(vals) // dims[0]
        return "[" + ", ".join(nest(vals[i * step:(i + 1) * step], dims[1:])
                               for i in range(dims[0])) + "]"
    return fn.emit("arith.constant dense<%s> : %s"
                   % (nest(values, list(shape)), tt(shape, et)))


def scalar_const(fn, et, value, shape=None):
    if math.isinf(value):
        lit = NEG_INF_HEX[et]
    else:
        lit = flt(value)
    return fn.emit("arith.constant dense<%s> : %s"
                   % (lit, tt(shape or [], et)))


def gen_chain(rng, fn):
    """Appends one attention chain to fn; returns its results."""
    et = rng.choice(["f32", "f32", "f16", "bf16"])
    rank = rng.choice([3, 4, 4])
    odd = lambda lo, hi: rng.choice(range(lo | 1, hi + 1, 2))
    L, S, E, Ev = odd(5, 33), odd(5, 33), odd(5, 33), odd(5, 33)
    B = rng.choice([1, 2])
    H = rng.choice([1, 2, 3, 4])
    if fn.params is not None and rng.random() < 0.8:
        et, rank, L, S, E, Ev, B, H = fn.params
    fn.params = (et, rank, L, S, E, Ev, B, H)
    fn.rng = rng
    narrow = et != "f32"
    if rank == 3:
        H = None
        if rng.random() < 0.15:
            B = 4  # for rank-3 GQA over the batch dim (4 -> 2 or 1)
    batch = [B, H] if rank == 4 else [B]
    fn.desc.append("%s rank%d L=%d S=%d E=%d Ev=%d batch=%s"
                   % (et, rank, L, S, E, Ev, batch))

    # GQA: k/v with fewer heads, expanded by repeat_interleave(dim=1).
    hkv = H
    bkv = B
    if rank == 4 and H > 1 and rng.random() < 0.3:
        hkv = rng.choice([d for d in range(1, H) if H % d == 0])
        fn.desc.append("gqa Hkv=%d" % hkv)
    elif rank == 3 and B > 1 and rng.random() < 0.2:
        bkv = rng.choice([d for d in range(1, B) if B % d == 0])
        fn.desc.append("gqa rank3 Bkv=%d" % bkv)
    kvbatch = [B, hkv] if rank == 4 else [bkv]
    # kb: k/v batch dims after the expansion (the matmuls may still
    # broadcast them: a static 1 against the query's B or H).
    kb = batch
    if kvbatch == batch and rng.random() < 0.15:
        kb = kvbatch = [rng.choice([1, B]), 1] if rank == 4 else [1]
        fn.desc.append("k/v batch %s broadcast by the matmuls" % kvbatch)
    qb = batch
    if kb == batch and rng.random() < 0.05:
        qb = [1] + batch[1:]
        fn.desc.append("q batch %s broadcast up" % qb)

    def operand(rows, cols, bat, tag, heads_full):
        """[*bat, rows, cols] as an argument or transpose(1,2) of [B,rows,H,cols]."""
        if rank == 4 and rng.random() < 0.3:
            a = fn.arg([bat[0], rows, bat[1], cols], et)
            fn.desc.append("%s via transpose(1,2)" % tag)
            return fn.emit('attn.transpose %s dims(1, 2) : %s -> %s'
                           % (a, tt([bat[0], rows, bat[1], cols], et),
                              tt(bat + [rows, cols], et)))
        return fn.arg(bat + [rows, cols], et)

    def expand(x, rows, cols):
        if kvbatch == kb:
            return x
        dim = rng.choice([rank - 3, -3])
        reps = H // hkv if rank == 4 else B // bkv
        return fn.emit('attn.repeat_interleave %s repeats(%d) dim(%d) : %s -> %s'
                       % (x, reps, dim, tt(kvbatch + [rows, cols], et),
                          tt(batch + [rows, cols], et)))

    q = operand(L, E, qb, "q", True)
    q_scaled = rng.random() < 0.1
    if q_scaled:
        c = scalar_const(fn, et, 0.5)
        q = fn.emit("attn.mul %s, %s : (%s, %s) -> %s"
                    % (q, c, tt(qb + [L, E], et), tt([], et),
                       tt(qb + [L, E], et)))
        fn.desc.append("q scaled")
    k_scale = [1.0]
    kform = rng.random()
    if kform < 0.2:
        # kT given: [*, E, S]
        kt = fn.arg(kvbatch + [E, S], et)
        kt = expand(kt, E, S)
        fn.desc.append("kT arg")
    else:
        k = operand(S, E, kvbatch, "k", False)
        k = expand(k, S, E)
        if rng.random() < 0.1:
            kc = rng.choice([0.5, -1.0, 0.25])
            ctype = rng.choice([et, "f64"])
            c = scalar_const(fn, ctype, kc)
            k = fn.emit("attn.mul %s, %s : (%s, %s) -> %s"
                        % (c, k, tt([], ctype), tt(kb + [S, E], et),
                           tt(kb + [S, E], et)))
            k_scale[0] = kc
            fn.desc.append("k scaled %g" % kc)
        dims = rng.choice(["-2, -1", "-1, -2", "%d, %d" % (rank - 2, rank - 1)])
        kt = fn.emit("attn.transpose %s dims(%s) : %s -> %s"
                     % (k, dims, tt(kb + [S, E], et),
                        tt(kb + [E, S], et)))
    v = operand(S, Ev, kvbatch, "v", False)
    v = expand(v, S, Ev)

    st = tt(batch + [L, S], et)
    s = fn.emit("attn.matmul %s, %s : (%s, %s) -> %s"
                % (q, kt, tt(qb + [L, E], et), tt(kb + [E, S], et), st))
    inter = [(s, st)]

    def mask_shape():
        if rank == 4:
            return rng.choice([[L, S], [B, 1, L, S], [B, 1, 1, S],
                               [B, H, L, S], [1, S], [S], [H, L, S],
                               [1, H, 1, S]])
        return rng.choice([[L, S], [B, 1, S], [B, L, S], [S], [1, 1, S]])

    nsteps = rng.choice([0, 1, 1, 2, 2, 3, 3])
    run_scale = (0.5 if q_scaled else 1.0) * k_scale[0]
    for _ in range(nsteps):
        kind = rng.choice(["scale", "scale", "fill", "where", "add", "cap",
                           "unary", "clamp", "cmpmask", "posmask", "posmask",
                           "alibi", "band"])
        if kind == "scale":
            op = rng.choice(["mul", "mul", "div", "div", "div", "rdiv"])
            if op == "rdiv" and rng.random() < 0.5:
                op = "div"
            # Factors (mul) / divisors (div): ordinary, negative, tiny and
            # large. f16/bf16 chains keep the running scale within
            # [-2, 2]: a larger one amplifies the chain's own f16/bf16
            # rounding of the scores (and can overflow them to inf) beyond
            # attn-run's tolerance while the fused op, scaling in f32, is
            # accurate (see the report on large scales in the test).
            if op == "mul":
                pool = [0.125, 1 / math.sqrt(E), 0.5, 2.0, -1.0, -0.5, 1e-3,
                        0.1767766952966369, 1e-6, 30.0, 1e3, 0.0, -0.0]
            else:
                pool = [math.sqrt(E), 8.0, 2.0, 0.5, -1.0, -4.0, 1e3, 1e6,
                        0.01, 5.656854249492381]
            if narrow:
                pool = [x for x in pool
                        if abs(run_scale * (1 / x if op == "div" else x)) <= 2.0]
            val = rng.choice(pool)
            ctype = et
            cshape = []
            r = rng.random()
            if r < 0.2:
                ctype = "f64"
                if narrow and op == "mul" and rng.random() < 0.3:
                    val = 1e-8  # 0 in f16, not in f32
            elif r < 0.4:
                cshape = batch + [L, S]
            c = scalar_const(fn, ctype, val, cshape)
            ct = tt(cshape, ctype)
            if op == "mul":
                run_scale *= val
                if rng.random() < 0.5:
                    s = fn.emit("attn.mul %s, %s : (%s, %s) -> %s" % (s, c, st, ct, st))
                else:
                    s = fn.emit("attn.mul %s, %s : (%s, %s) -> %s" % (c, s, ct, st, st))
                fn.desc.append("mul %g(%s%s)" % (val, ctype, "splat" if cshape else ""))
            elif op == "div":
                run_scale /= val
                s = fn.emit("attn.div %s, %s : (%s, %s) -> %s" % (s, c, st, ct, st))
                fn.desc.append("div %g(%s%s)" % (val, ctype, "splat" if cshape else ""))
            else:
                s = fn.emit("attn.div %s, %s : (%s, %s) -> %s" % (c, s, ct, st, st))
                fn.desc.append("rdiv %g" % val)
        elif kind == "fill":
            fill = rng.choice([float("-inf"), -1e9, LOWEST[et], -3.0, 0.0,
                               LOWEST["f32"]])
            if rng.random() < 0.4:
                ms = rng.choice([[L, S], [L, S], [1, L, S]] +
                                ([[B, 1, L, S]] if rank == 4 else []))
                # triu(1) is causal (top-left); triu(0), bottom-right
                # aligned (S - L + 1) and triu(2) are not (unless L == S).
                diag = rng.choice([1, 1, 1, 0, S - L + 1, 2])
                mk = const_bool(fn, ms, lambda i, j: j >= i + diag)
                fn.desc.append("masked_fill triu(%d) %g" % (diag, fill))
            else:
                ms = mask_shape()
                mk = fn.arg(ms, "i1")
                fn.desc.append("masked_fill arg%s %g" % (ms, fill))
            s = fn.emit("attn.masked_fill %s, %s value(%s) : (%s, %s) -> %s"
                        % (s, mk, f64attr(fill), st, tt(ms, "i1"), st))
        elif kind == "where":
            fill = rng.choice([float("-inf"), -1e9, LOWEST[et], -3.0, 0.0,
                               LOWEST["f32"]])
            keep_first = rng.random() < 0.6
            if rng.random() < 0.4:
                ms = [L, S]
                if keep_first:
                    mk = const_bool(fn, ms, lambda i, j: j <= i)
                else:
                    mk = const_bool(fn, ms, lambda i, j: j > i)
                fn.desc.append("where const-causal")
            else:
                ms = mask_shape()
                mk = fn.arg(ms, "i1")
            cshape = [] if rng.random() < 0.8 else batch + [L, S]
            ctype = et
            if not cshape and rng.random() < 0.25:
                # A wider rank-0 scalar (f64 into f16/bf16 is a double
                # rounding the CPU lowering refuses to compile).
                ctype = "f32" if narrow else "f64"
            if math.isinf(fill) or abs(fill) <= 3.4e38 or ctype == "f64":
                c = scalar_const(fn, ctype, fill, cshape)
            else:
                c = scalar_const(fn, ctype, float("-inf"), cshape)
            ct = tt(cshape, ctype)
            if keep_first:
                s = fn.emit("attn.where %s, %s, %s : (%s, %s, %s) -> %s"
                            % (mk, s, c, tt(ms, "i1"), st, ct, st))
                fn.desc.append("where(m, s, %g)%s" % (fill, ms))
            else:
                s = fn.emit("attn.where %s, %s, %s : (%s, %s, %s) -> %s"
                            % (mk, c, s, tt(ms, "i1"), ct, st, st))
                fn.desc.append("where(m, %g, s)%s" % (fill, ms))
        elif kind == "cap":
            # Gemma-2 logit soft-capping: cap * tanh(s / cap).
            cap = rng.choice([5.0, 30.0, 50.0])
            c = scalar_const(fn, et, cap)
            ct = tt([], et)
            s = fn.emit("attn.div %s, %s : (%s, %s) -> %s" % (s, c, st, ct, st))
            s = fn.emit("attn.tanh %s : %s" % (s, st))
            s = fn.emit("attn.mul %s, %s : (%s, %s) -> %s" % (s, c, st, ct, st))
            fn.desc.append("softcap %g" % cap)
        elif kind == "unary":
            op = rng.choice(["abs", "neg", "tanh", "exp"])
            s = fn.emit("attn.%s %s : %s" % (op, s, st))
            fn.desc.append(op)
        elif kind == "clamp":
            op = rng.choice(["maximum", "minimum"])
            c = scalar_const(fn, et, rng.choice([-3.0, 0.0, 2.0, 0.5]))
            s = fn.emit("attn.%s %s, %s : (%s, %s) -> %s"
                        % (op, s, c, st, tt([], et), st))
            fn.desc.append(op)
        elif kind == "posmask":
            # A mask from positions (torch.arange): `a pred b` with a, b
            # among i, j, i + c, j + c; masked_fill (true drops) or where
            # (true keeps). Bands become is_causal/window, others a region.
            pt = rng.choice([et, "f32"])
            i_ = fn.emit("attn.iota 0 : %s" % tt([L, 1], pt))
            j_ = fn.emit("attn.iota 1 : %s" % tt([1, S], pt))

            def side(x, shape):
                c = rng.choice([0, 0, 1, -1, 3, -4])
                if c == 0:
                    return x, shape
                cv = scalar_const(fn, pt, float(abs(c)))
                op = "add" if c > 0 else "sub"
                return fn.emit("attn.%s %s, %s : (%s, %s) -> %s"
                               % (op, x, cv, tt(shape, pt), tt([], pt),
                                  tt(shape, pt))), shape
            a, ash = side(*rng.choice([(i_, [L, 1]), (j_, [1, S])]))
            b, bsh = side(*rng.choice([(i_, [L, 1]), (j_, [1, S])]))
            pred = rng.choice(["lt", "le", "gt", "ge", "eq", "ne"])
            osh = [max(x, y) for x, y in zip(ash, bsh)]
            mk = fn.emit("attn.cmp %s, %s, %s : (%s, %s) -> %s"
                         % (pred, a, b, tt(ash, pt), tt(bsh, pt),
                            tt(osh, "i1")))
            fill = rng.choice([float("-inf"), float("-inf"), -1e9, -3.0])
            if rng.random() < 0.5:
                s = fn.emit("attn.masked_fill %s, %s value(%s) : (%s, %s) -> %s"
                            % (s, mk, f64attr(fill), st, tt(osh, "i1"), st))
                fn.desc.append("masked_fill(pos %s) %g" % (pred, fill))
            else:
                c = scalar_const(fn, et, fill)
                s = fn.emit("attn.where %s, %s, %s : (%s, %s, %s) -> %s"
                            % (mk, s, c, tt(osh, "i1"), st, tt([], et), st))
                fn.desc.append("where(pos %s) %g" % (pred, fill))
        elif kind == "alibi":
            # s - slope * |i - j| from positions.
            i_ = fn.emit("attn.iota 0 : %s" % tt([L, 1], et))
            j_ = fn.emit("attn.iota 1 : %s" % tt([1, S], et))
            d = fn.emit("attn.sub %s, %s : (%s, %s) -> %s"
                        % (i_, j_, tt([L, 1], et), tt([1, S], et),
                           tt([L, S], et)))
            d = fn.emit("attn.abs %s : %s" % (d, tt([L, S], et)))
            slope = rng.choice([0.5, 0.0625, 0.25])
            c = scalar_const(fn, et, slope)
            d = fn.emit("attn.mul %s, %s : (%s, %s) -> %s"
                        % (d, c, tt([L, S], et), tt([], et), tt([L, S], et)))
            s = fn.emit("attn.sub %s, %s : (%s, %s) -> %s"
                        % (s, d, st, tt([L, S], et), st))
            fn.desc.append("alibi %g" % slope)
        elif kind == "band":
            # A constant band mask: keep i - wl <= j <= i + wr.
            wl = rng.choice([0, 1, 2, 5, L + S])
            wr = rng.choice([0, 1, -1, 3, L + S])
            mk = const_bool(fn, [L, S],
                            lambda i, j: not (i - wl <= j <= i + wr))
            fill = rng.choice([float("-inf"), -1e9])
            s = fn.emit("attn.masked_fill %s, %s value(%s) : (%s, %s) -> %s"
                        % (s, mk, f64attr(fill), st, tt([L, S], "i1"), st))
            fn.desc.append("masked_fill band(%d,%d) %g" % (wl, wr, fill))
        elif kind == "cmpmask":
            # A mask computed from the scores themselves.
            pred = rng.choice(["lt", "le", "gt", "ge", "eq", "ne"])
            c = scalar_const(fn, et, rng.choice([-1.0, 0.0, 1.5]))
            bt = tt(batch + [L, S], "i1")
            mk = fn.emit("attn.cmp %s, %s, %s : (%s, %s) -> %s"
                         % (pred, s, c, st, tt([], et), bt))
            fill = rng.choice([float("-inf"), -1e9, 0.0])
            s = fn.emit("attn.masked_fill %s, %s value(%s) : (%s, %s) -> %s"
                        % (s, mk, f64attr(fill), st, bt, st))
            fn.desc.append("masked_fill(cmp %s) %g" % (pred, fill))
        else:
            if rank == 4:
                ms = rng.choice([[L, S], [B, 1, 1, S], [B, H, L, S], [S],
                                 [H, 1, S]])
            else:
                ms = rng.choice([[L, S], [B, 1, S], [B, L, S], [S]])
            if rng.random() < 0.5:
                m = fn.arg(ms, et)
                fn.desc.append("add arg%s" % ms)
            else:
                n = 1
                for d in ms:
                    n *= d
                # Large finite values in f16/bf16 (Hugging Face's -1e4)
                # fuse with a score_mod region that adds in the element
                # type, as the chain does.
                big = rng.random() < 0.3
                pool = [0.0, -1.0, 0.5, -2.0, float("-inf")] + \
                    ([-1e4, -1e9] if big else [])
                vals = [rng.choice(pool) for _ in range(n)]
                m = const_float_tensor(fn, ms, et, vals)
                fn.desc.append("add const%s%s" % (ms, " big" if big else ""))
            mt = tt(ms, et)
            if rng.random() < 0.5:
                s = fn.emit("attn.add %s, %s : (%s, %s) -> %s" % (s, m, st, mt, st))
            else:
                s = fn.emit("attn.add %s, %s : (%s, %s) -> %s" % (m, s, mt, st, st))
                fn.desc.append("(mask first)")
        inter.append((s, st))

    sdim = -1 if rng.random() < 0.7 else rank - 1
    if narrow and rng.random() < 0.5:
        wt = tt(batch + [L, S], "f32")
        w = fn.emit("attn.cast %s : %s -> %s" % (s, st, wt))
        if rng.random() < 0.2:
            c = scalar_const(fn, "f32", 0.5)
            w = fn.emit("attn.mul %s, %s : (%s, %s) -> %s"
                        % (w, c, wt, tt([], "f32"), wt))
            fn.desc.append("scale in f32 after upcast")
        p = fn.emit("attn.softmax %s dim(%d) : %s" % (w, sdim, wt))
        inter.append((p, wt))
        p = fn.emit("attn.cast %s : %s -> %s" % (p, wt, st))
        fn.desc.append("upcast softmax")
    else:
        p = fn.emit("attn.softmax %s dim(%d) : %s" % (s, sdim, st))
    inter.append((p, st))
    if rng.random() < 0.25:
        # Training dropout draws its mask from (seed, element index): fused
        # and unfused must drop the same elements (a lost seed is a wrong
        # fusion). An absent seed is 0.
        train = rng.random() < 0.6
        prob = rng.choice([0.1, 0.5])
        seed = rng.choice([None, 0, 7, -3, 2**40 + 5])
        attrs = "" if seed is None else " {seed = %d : i64}" % seed
        p = fn.emit("attn.dropout %s p(%s) train(%s)%s : %s"
                    % (p, flt(prob), "true" if train else "false", attrs, st))
        fn.desc.append("dropout(train=%s, seed=%s)" % (train, seed))
    ot = tt(batch + [L, Ev], et)
    o = fn.emit("attn.matmul %s, %s : (%s, %s) -> %s"
                % (p, v, st, tt(kb + [S, Ev], et), ot))
    results = [(o, ot)]
    if rng.random() < 0.12:
        extra = rng.choice(inter)
        results.append(extra)
        fn.desc.append("second user %s" % extra[0])
    return results


def gen_function(rng, name):
    fn = Fn(name)
    results = gen_chain(rng, fn)
    if rng.random() < 0.15:
        # Two chains in one function (sharing sizes, constants' attributes
        # and sometimes arguments).
        fn.desc.append("|| second chain:")
        results += gen_chain(rng, fn)
    lines = ["// %s: %s" % (name, "; ".join(fn.desc)),
             "func.func @%s(%s) -> (%s) {" % (
                 name, ", ".join("%s: %s" % a for a in fn.args),
                 ", ".join(t for _, t in results))]
    lines += fn.body
    lines.append("  return %s : %s" % (", ".join(v for v, _ in results),
                                       ", ".join(t for _, t in results)))
    lines.append("}")
    return "\n".join(lines) + "\n"


def cmd_gen(a):
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    files = [[] for _ in range(a.files)]
    for i in range(a.count):
        files[i % a.files].append(gen_function(rng, "chain%d" % i))
    for fi, chains in enumerate(files):
        with open(os.path.join(a.out, "fuzz%d.mlir" % fi), "w") as f:
            f.write("// Generated by gen_fusion_fuzz.py --seed %d\n\n" % a.seed)
            f.write("\n".join(chains))


def run_one(attn_run, path, fn, seed, tmpdir):
    trace = os.path.join(tmpdir, "%s.%s.json" % (os.path.basename(path), fn))
    cmd = [attn_run, path, "--entry", fn, "--check", "--trace", trace,
           "--seed", str(seed)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    fused = False
    if os.path.exists(trace):
        with open(trace) as f:
            fused = '"name": "sdpa"' in f.read()
    ok = p.returncode == 0 and re.search(r"^check: .* ok$", p.stdout, re.M)
    return fn, path, bool(ok), fused, " ".join(cmd), p.stdout


def say(text):
    """To stdout (FileCheck) and stderr (shown by lit -v/-a)."""
    print(text)
    sys.stdout.flush()
    print(text, file=sys.stderr)


def cmd_run(a):
    jobs = []
    for name in sorted(os.listdir(a.dir)):
        if not name.endswith(".mlir"):
            continue
        path = os.path.join(a.dir, name)
        with open(path) as f:
            for fn in re.findall(r"^func\.func @(\w+)\(", f.read(), re.M):
                jobs.append((path, fn))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda j: run_one(a.attn_run, j[0], j[1],
                                                a.seed, a.dir), jobs))
    failed = 0
    fused = 0
    for fn, path, ok, was_fused, cmd, out in results:
        fused += was_fused
        if a.verbose:
            print("%s %s %s" % (fn, "ok" if ok else "FAIL",
                                "fused" if was_fused else "unfused"))
        if not ok:
            failed += 1
            if len(out) > 3000:
                out = out[:1500] + "\n...\n" + out[-1500:]
            say("FAIL: %s (%s)\n  %s\n%s" % (fn, "fused" if was_fused
                                             else "not fused", cmd, out))
    total = len(results)
    frac = fused / total if total else 0.0
    say("fusion-fuzz: %d chains, %d fused (%.0f%%), %d failed"
        % (total, fused, 100 * frac, failed))
    if total == 0:
        say("FAIL: no chains")
        return 1
    if frac < a.min_fused:
        say("FAIL: only %.0f%% of the chains fused (minimum %.0f%%)"
            % (100 * frac, 100 * a.min_fused))
        return 1
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    g = sub.add_parser("gen")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--count", type=int, default=60)
    g.add_argument("--files", type=int, default=4)
    g.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--attn-run", required=True)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--seed", type=int, default=1, help="attn-run input seed")
    r.add_argument("--min-fused", type=float, default=0.3)
    r.add_argument("-v", "--verbose", action="store_true")
    r.add_argument("dir")
    a = ap.parse_args()
    if a.cmd == "gen":
        cmd_gen(a)
        return 0
    if a.cmd == "run":
        return cmd_run(a)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
