"""Checks the CPU lowering's polynomial math (attn-cpu-math-approximation)
through attn-run against Python's math in double precision, element by
element: each approximated function alone, GELU (erf and tanh) and silu as
the exporter writes them, and a soft-capping score_mod region in attention,
on f32 and bf16, with infinities, NaN, signed zeros, denormals and
saturating arguments among the inputs. Tolerances are PyTorch's
assert_close defaults (f32: atol 1e-5, rtol 1.3e-6; bf16: 1e-5, 1.6e-2).
Standard library only.

  check_math_approx.py ATTN_RUN MLIR TMPDIR [attn-run flags...]
"""
import math
import struct
import subprocess
import sys

from check_elementwise import read_npy, write_npy

INF, NAN = float("inf"), float("nan")


def f32(v):
    if math.isnan(v) or math.isinf(v):
        return v
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(INF, v)


def bf16_bits(v):
    """Round-to-nearest-even f32 -> bf16 bit pattern."""
    b = struct.unpack("<I", struct.pack("<f", f32(v)))[0]
    if math.isnan(v):
        return 0x7FC0
    return (b + 0x7FFF + ((b >> 16) & 1)) >> 16


def from_bf16(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def inputs():
    xs = [0.0, -0.0, INF, -INF, NAN, 1e-45, -1e-45, 1e-40, -3e-39, 1e-30,
          -1e-20, 1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0,
          0.5, -0.5, 88.7, 89.0, -87.0, -104.0, -0.9999999, 1e-4, -4e-4,
          7.9, -7.91, 9.2, -9.3, 0.84, -2.9, 3.7, 1e6, -1e6, 1e-7]
    v = -60.0
    while v < 60.0:  # irregular steps over the interesting range
        xs.append(v)
        v += 0.0371 + abs(v) * 0.013
    for e in range(-40, 40, 3):
        xs += [1.37 * 2.0 ** e, -1.61 * 2.0 ** e]
    return [f32(x) for x in xs]


def safe(fn):
    def g(x):
        try:
            return fn(x)
        except OverflowError:
            return INF
        except ValueError:  # log of a negative number, log(0)
            if x == 0 or (fn is math.log1p and x == -1):
                return -INF
            return NAN
    return g


def log_(fn):
    def g(x):
        if math.isnan(x) or x == INF:
            return x
        return safe(fn)(x)
    return g


def gelu_erf(x):
    return f32(x * 0.5) * (1.0 + math.erf(x * f32(1 / math.sqrt(2))))


def gelu_tanh(x):
    if math.isinf(x):
        return x * 0.5 * (1.0 + math.copysign(1.0, x))
    inner = f32(0.797884583) * (x + f32(0.044715) * x * x * x)
    return 0.5 * x * (1.0 + math.tanh(inner))


def silu(x):
    e = safe(math.exp)(-x)
    return x / (1.0 + e) if not (math.isinf(x) and math.isinf(e)) else NAN


FUNCS = {
    "tanh": math.tanh, "erf": math.erf, "exp": safe(math.exp),
    "expm1": safe(math.expm1), "log": log_(math.log),
    "log1p": log_(math.log1p), "log2": log_(math.log2),
    "gelu_erf": gelu_erf, "gelu_tanh": gelu_tanh, "silu": silu,
}
BF16 = ["tanh", "gelu_erf", "gelu_tanh", "silu"]


def run(ctx, entry, args, out_fmt):
    attn_run, mlir, tmp, flags = ctx
    cmd = [attn_run, mlir, "--entry", entry] + flags
    for i, (shape, values, descr, fmt) in enumerate(args):
        path = "%s/%s.in%d.npy" % (tmp, entry, i)
        write_npy(path, values, descr, fmt, shape)
        cmd += ["--input", "%d=%s" % (i, path)]
    out = "%s/%s.out.npy" % (tmp, entry)
    subprocess.run(cmd + ["--output", "0=" + out], check=True,
                   stdout=subprocess.DEVNULL)
    return read_npy(out, out_fmt)


def close(got, want, atol, rtol):
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= atol + rtol * abs(want)


def check_elementwise(ctx):
    xs = inputs()
    failures = 0
    for name, fn in sorted(FUNCS.items()):
        got = run(ctx, name, [((len(xs),), xs, "<f4", "f")], "f")
        for x, g in zip(xs, got):
            want = f32(fn(x))
            if not close(g, want, 1e-5, 1.3e-6):
                print("FAIL %s(%r): got %r, want %r" % (name, x, g, want))
                failures += 1
    for name in BF16:
        bits = [bf16_bits(x) for x in xs]
        got = run(ctx, name + "_bf16", [((len(xs),), bits, "<u2", "H")], "H")
        for b, g in zip(bits, got):
            x = from_bf16(b)
            want = from_bf16(bf16_bits(FUNCS[name](x)))
            if not close(from_bf16(g), want, 1e-5, 1.6e-2):
                print("FAIL %s_bf16(%r): got %r, want %r" % (
                    name, x, from_bf16(g), want))
                failures += 1
    return failures, len(FUNCS) + len(BF16)


def lcg_values(n, seed, scale):
    out, s = [], seed
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        out.append(f32(((s >> 40) / 2.0 ** 24 * 2 - 1) * scale))
    return out


def softcap_reference(q, k, v, heads, length, dim):
    out = []
    for h in range(heads):
        base = h * length * dim
        row = lambda t, i: t[base + i * dim: base + (i + 1) * dim]
        for i in range(length):
            s = [30.0 * math.tanh(sum(a * b for a, b in zip(
                row(q, i), row(k, j))) / math.sqrt(dim) / 30.0)
                for j in range(i + 1)]
            m = max(s)
            p = [math.exp(x - m) for x in s]
            total = sum(p)
            for d in range(dim):
                out.append(sum(p[j] * row(v, j)[d]
                               for j in range(i + 1)) / total)
    return out


def check_softcap(ctx):
    heads, length, dim = 2, 37, 16
    shape = (1, heads, length, dim)
    n = heads * length * dim
    # q.k^T / 4 spans about +-200: soft-capping saturates on many scores.
    q, k = lcg_values(n, 1, 7.0), lcg_values(n, 2, 7.0)
    v = lcg_values(n, 3, 1.0)
    failures = 0
    for et, descr, fmt, atol, rtol in [("f32", "<f4", "f", 1e-5, 1e-4),
                                       ("bf16", "<u2", "H", 1e-2, 1.6e-2)]:
        if et == "bf16":
            args = [[bf16_bits(x) for x in t] for t in (q, k, v)]
            vals = [[from_bf16(b) for b in t] for t in args]
        else:
            args = vals = [q, k, v]
        want = softcap_reference(*vals, heads, length, dim)
        got = run(ctx, "softcap_" + et,
                  [(shape, a, descr, fmt) for a in args], fmt)
        if et == "bf16":
            got = [from_bf16(g) for g in got]
        for i, (g, w) in enumerate(zip(got, want)):
            if not close(g, w, atol, rtol):
                print("FAIL softcap_%s[%d]: got %r, want %r" % (et, i, g, w))
                failures += 1
    return failures, 2


def main():
    ctx = (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
    f1, n1 = check_elementwise(ctx)
    f2, n2 = check_softcap(ctx)
    print("math approximation: %d cases, %d failures" % (n1 + n2, f1 + f2))
    return 1 if f1 + f2 else 0


if __name__ == "__main__":
    sys.exit(main())
