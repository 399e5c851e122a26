"""Inputs and an exact reference for narrow-float-conversions.test (no numpy:
lit runs before the Python stage installs it).

  narrow_floats.py gen DIR            writes DIR/{h,b,x32,x64}.npy
  narrow_floats.py check DIR LABEL [--flush-bf16-subnormals]
                                      reads the results attn-run wrote to
                                      DIR/{w0..w3,n0,n1,d0,d1}.npy and prints
                                      "LABEL: <n> conversions exact" or the
                                      first mismatches; with the flag, inputs
                                      below bf16's smallest normal in
                                      magnitude narrow to bf16 as a zero of
                                      their sign (vcvtneps2bf16)

The reference rounds with Python fractions (exact, ties to even), so it
does not depend on the host's conversions.
"""

import ast
import math
import random
import struct
import sys
from fractions import Fraction

# (significand bits with the implicit one, smallest normal exponent, largest)
F16 = (11, -14, 15)
BF16 = (8, -126, 127)


def write_npy(path, descr, values_bytes, count):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (
        descr, count)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode() + values_bytes)


def read_npy(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    if major == 1:
        hlen, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    fmt = {"<f2": "e", "<u2": "H", "<f4": "f", "<f8": "d"}[header["descr"]]
    count = header["shape"][0]
    return list(struct.unpack("<%d%s" % (count, fmt),
                              data[start + hlen:start + hlen + count *
                                   struct.calcsize(fmt)]))


def round_to(x, fmt):
    """x rounded to nearest even in `fmt`, as a Python float (inf on
    overflow, signed zero on underflow)."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    p, emin, emax = fmt
    _, e = math.frexp(abs(x))  # |x| = m * 2^e, 0.5 <= m < 1
    quantum = max(e - 1, emin) - (p - 1)
    n = round(Fraction(abs(x)) / Fraction(2) ** quantum)  # ties to even
    value = Fraction(n) * Fraction(2) ** quantum
    if value >= Fraction(2) ** (emax + 1):
        return math.copysign(math.inf, x)
    return math.copysign(float(value), x)


def f16_bits(value):
    if math.isinf(value):
        return 0xFC00 if value < 0 else 0x7C00
    return struct.unpack("<H", struct.pack("<e", value))[0]


def bf16_bits(value):
    return struct.unpack("<I", struct.pack("<f", value))[0] >> 16


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def f32_values(rng):
    """Random bit patterns, and every exponent with mantissas that sit on,
    next to and between the rounding boundaries of f16 (13 dropped bits) and
    bf16 (16)."""
    tails = [0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000, 0x7FFF,
             0x8000, 0x8001, 0x18000, 0x7FFFFF, 0x7FE000, 0x7FF000, 0x400000]
    bits = [rng.getrandbits(32) for _ in range(8000)]
    for sign in (0, 1):
        for exponent in range(256):
            for tail in tails:
                bits.append(sign << 31 | exponent << 23 | tail)
    return [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits]


def f64_values(rng):
    """Random f64 bit patterns and values on and a hair off the midpoints
    between neighbouring f16 / bf16 numbers (where rounding twice, through
    f32 to nearest, would be wrong)."""
    values = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
              for _ in range(8000)]
    for to_value, count in ((lambda b: struct.unpack("<e", struct.pack(
            "<H", b))[0], 0x7C00), (bf16_value, 0x7F80)):
        for _ in range(3000):
            b = rng.randrange(count - 1)
            lo, hi = to_value(b), to_value(b + 1)
            mid = (lo + hi) / 2
            for v in (mid, mid * (1 + 2.0 ** -40), mid * (1 - 2.0 ** -40)):
                values += [v, -v]
    values += [65504.0, 65519.99, 65520.0, 65520.01, 2.0 ** -24, 2.0 ** -25,
               2.0 ** -25 * (1 + 2.0 ** -40), 1e-300, 3.3961775292304e38,
               3.4e38, 1e300, math.inf, -math.inf, math.nan, 0.0, -0.0]
    return values


def generate(out):
    rng = random.Random(7)
    write_npy(out + "/h.npy", "<f2", struct.pack("<65536H", *range(65536)),
              65536)
    write_npy(out + "/b.npy", "<u2", struct.pack("<65536H", *range(65536)),
              65536)
    x32 = f32_values(rng)
    write_npy(out + "/x32.npy", "<f4", struct.pack("<%df" % len(x32), *x32),
              len(x32))
    x64 = f64_values(rng)
    write_npy(out + "/x64.npy", "<f8", struct.pack("<%dd" % len(x64), *x64),
              len(x64))


def same(got, want):
    """Bit patterns (ints) or floats; NaN only against NaN."""
    if isinstance(want, float):
        if math.isnan(want):
            return math.isnan(got)
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return got == want


def check(out, label, flush_bf16_subnormals=False):
    halves = [struct.unpack("<e", struct.pack("<H", b))[0]
              for b in range(65536)]
    bfloats = [bf16_value(b) for b in range(65536)]
    x32 = read_npy(out + "/x32.npy")
    x64 = read_npy(out + "/x64.npy")

    def narrowed(values, fmt, to_bits):
        # None: any NaN.
        def one(v):
            if math.isnan(v):
                return None
            if (flush_bf16_subnormals and fmt is BF16 and
                    abs(v) < 2.0 ** BF16[1]):
                return to_bits(math.copysign(0.0, v))
            return to_bits(round_to(v, fmt))
        return [one(v) for v in values]

    expected = {
        "w0": halves, "w1": halves, "w2": bfloats, "w3": bfloats,
        "n0": narrowed(x32, F16, f16_bits),
        "n1": narrowed(x32, BF16, bf16_bits),
        "d0": narrowed(x64, F16, f16_bits),
        "d1": narrowed(x64, BF16, bf16_bits),
    }
    inputs = {"w0": halves, "w1": halves, "w2": bfloats, "w3": bfloats,
              "n0": x32, "n1": x32, "d0": x64, "d1": x64}
    total, bad = 0, []
    for name, want in expected.items():
        got = read_npy(out + "/" + name + ".npy")
        if name in ("n0", "d0"):  # f16 results come back as floats
            got = [None if math.isnan(g) else f16_bits(g) for g in got]
        elif name in ("n1", "d1"):
            got = [None if (g & 0x7FFF) > 0x7F80 else g for g in got]
        assert len(got) == len(want), (name, len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            total += 1
            if not same(g, w):
                bad.append("%s[%d]: input %r gave %r, expected %r" %
                           (name, i, inputs[name][i], g, w))
    if bad:
        print("%s: %d of %d conversions wrong" % (label, len(bad), total))
        print("\n".join(bad[:20]))
        return 1
    print("%s: %d conversions exact" % (label, total))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        generate(sys.argv[2])
        sys.exit(0)
    sys.exit(check(sys.argv[2], sys.argv[3],
                   "--flush-bf16-subnormals" in sys.argv[4:]))
