"""Checks the new elementwise ops (compiled by attn-run) against Python's
math on every element, NaN and infinities included, reading and writing
.npy files with the standard library only.

  check_elementwise.py ATTN_RUN MLIR TMPDIR
"""
import math
import struct
import subprocess
import sys

X = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 20.0, -20.0, 88.0, -100.0,
     float("inf"), float("-inf"), float("nan"), 1e-30, 7.25]
Y = [0.0, 0.0, 2.0, -1.0, float("nan"), -3.0, 3.0, 19.0, float("inf"),
     -88.0, -100.0, 1.0, float("-inf"), 1.0, -1e-30, float("nan")]


def write_npy(path, values, descr="<f4", fmt="f", shape=None):
    shape = shape or (len(values),)
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def read_npy(path, fmt):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    n = len(body) // struct.calcsize(fmt)
    return list(struct.unpack("<%d%s" % (n, fmt), body))


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0] if math.isfinite(v) \
        or math.isnan(v) else v


def safe_exp(v):
    try:
        return math.exp(v)
    except OverflowError:
        return float("inf")


def nan_max(a, b):
    return float("nan") if math.isnan(a) or math.isnan(b) else max(a, b)


def nan_min(a, b):
    return float("nan") if math.isnan(a) or math.isnan(b) else min(a, b)


CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}
CASES = {
    "tanh": (1, math.tanh), "exp": (1, safe_exp), "neg": (1, lambda a: -a),
    "abs": (1, abs), "maximum": (2, nan_max), "minimum": (2, nan_min),
}
CASES.update({"cmp_" + k: (2, lambda a, b, p=p: 1.0 if p(a, b) else 0.0)
              for k, p in CMP.items()})


def close(got, want, rtol):
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):
        return got == want
    if math.isinf(want) or math.isnan(got):
        return False
    return abs(got - want) <= 1e-6 + rtol * abs(want)


def run(attn_run, mlir, tmp, entry, inputs, out_fmt):
    args = [attn_run, mlir, "--entry", entry]
    for i, (values, descr, fmt) in enumerate(inputs):
        path = "%s/%s.in%d.npy" % (tmp, entry, i)
        write_npy(path, values, descr, fmt)
        args += ["--input", "%d=%s" % (i, path)]
    out = "%s/%s.out.npy" % (tmp, entry)
    subprocess.run(args + ["--output", "0=" + out], check=True,
                   stdout=subprocess.DEVNULL)
    return read_npy(out, out_fmt)


def main():
    attn_run, mlir, tmp = sys.argv[1:4]
    failures = 0
    for entry, (arity, fn) in sorted(CASES.items()):
        inputs = [(X, "<f4", "f"), (Y, "<f4", "f")][:arity]
        got = run(attn_run, mlir, tmp, entry, inputs, "f")
        for i, g in enumerate(got):
            want = fn(*[f32(v[i]) for v, _, _ in inputs])
            if not close(g, f32(want), 1e-6):
                print("FAIL %s[%d]: got %r, want %r" % (entry, i, g, want))
                failures += 1
    # f16: the result is tanh rounded to f16 once (compare at f16 precision).
    got = run(attn_run, mlir, tmp, "tanh_f16", [(X, "<f2", "e")], "e")
    for i, g in enumerate(got):
        want = struct.unpack("<e", struct.pack("<e", math.tanh(
            struct.unpack("<e", struct.pack("<e", X[i]))[0])))[0]
        if not close(g, want, 1e-3):
            print("FAIL tanh_f16[%d]: got %r, want %r" % (i, g, want))
            failures += 1
    print("elementwise: %d cases, %d failures" % (len(CASES) + 1, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
