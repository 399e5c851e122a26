"""Runs each matrix product of matmul-gemm.mlir through attn-run (.npy in
and out) and compares every element with a double-precision reference
computed here, with the standard library only.

  check_matmul.py ATTN_RUN MLIR TMPDIR [--sample N] [attn-run options...]

Inputs are multiples of 1/64 in [-2, 2], exact in f16 and bf16, so the
reference sees the same operands as the compiled code. An element passes if
|out - ref| <= 0.51 ulp(ref in the result type) + 4 * K * eps * sum_k
|a_mk b_kn| (f32 or f64 accumulation, one rounding to the result type).
"""
import math
import os
import random
import struct
import subprocess
import sys
import zlib

# name: (operand shapes, operand dtypes, result dtype, batch-broadcast rule)
CASES = {
    "odd": ([(3, 37, 53), (3, 53, 29)], ["f32", "f32"], "f32"),
    "broadcast": ([(2, 1, 13, 300), (1, 3, 300, 70)], ["f32", "f32"], "f32"),
    "tall": ([(263, 20), (20, 389)], ["f32", "f32"], "f32"),
    "rank2rhs": ([(2, 100, 24), (24, 40)], ["f32", "f32"], "f32"),
    "f16": ([(5, 9, 33), (33, 17)], ["f16", "f16"], "f16"),
    "bf16": ([(5, 9, 33), (33, 17)], ["bf16", "bf16"], "bf16"),
    "f64": ([(7, 300), (300, 11)], ["f64", "f64"], "f64"),
    "dynamic": ([(50, 7), (7, 270)], ["f32", "f32"], "f32"),
    "empty_k": ([(4, 0), (0, 5)], ["f32", "f32"], "f32"),
    "linalg_init": ([(19, 40), (40, 33), (19, 33)], ["f16", "f32", "f32"],
                    "f32"),
    "linalg_batch": ([(2, 100, 20), (2, 20, 49)], ["f32", "f32"], "f32"),
    "linear_row": ([(1, 70), (45, 70)], ["f32", "f32"], "f32"),
    "linear_few_bf16": ([(7, 100), (40, 100), (7, 40)],
                        ["bf16", "bf16", "f32"], "f32"),
    "linear_gemv_odd_k_bf16": ([(1, 301), (45, 301)], ["bf16", "bf16"],
                               "f32"),
    "linear_16": ([(16, 33), (70, 33)], ["f32", "f32"], "f32"),
    "linear_17": ([(17, 33), (70, 33)], ["f32", "f32"], "f32"),
    "linear_parallel": ([(3, 257), (260, 257), (3, 260)],
                        ["f32", "f32", "f32"], "f32"),
    "linear_gemm_odd": ([(37, 70), (29, 70), (37, 29)], ["f32", "f32", "f32"],
                        "f32"),
    "linear_gemm_bf16": ([(49, 258), (259, 258)], ["bf16", "bf16"], "f32"),
    "linear_gemm_f16": ([(37, 70), (29, 70)], ["f16", "f16"], "f32"),
    "linear_gemm_tall_bf16": ([(263, 24), (389, 24)], ["bf16", "bf16"],
                              "f32"),
    "bf16_odd_k": ([(2, 19, 53), (53, 290)], ["bf16", "bf16"], "bf16"),
    "bf16_dynamic": ([(13, 261), (261, 133)], ["bf16", "bf16"], "f32"),
    "bf16_empty_k": ([(40, 0), (0, 70), (40, 70)], ["bf16", "bf16", "f32"],
                     "f32"),
    "bf16_batch": ([(2, 30, 45), (2, 45, 40), (2, 30, 40)],
                   ["bf16", "bf16", "f32"], "f32"),
    "linear_bf16_odd_k": ([(20, 301), (270, 301)], ["bf16", "bf16"], "f32"),
    "bf16_whole_blocks": ([(2, 96, 320), (320, 100)], ["bf16", "bf16"],
                          "bf16"),
    "bf16_seven_steps": ([(64, 200), (200, 40)], ["bf16", "bf16"], "bf16"),
    "linear_fifteen_steps_bf16": ([(33, 480), (70, 480)], ["bf16", "bf16"],
                                  "f32"),
    "linear_whole_bf16": ([(70, 512), (96, 512), (70, 96)],
                          ["bf16", "bf16", "f32"], "f32"),
    "linear_rounded_bf16": ([(70, 512), (96, 512), (70, 96)],
                            ["bf16", "bf16", "f32"], "bf16"),
    "linear_rounded_few": ([(5, 100), (40, 100)], ["bf16", "bf16"], "bf16"),
    "batch_rounded_f16": ([(2, 30, 45), (2, 45, 40)], ["f16", "f16"], "f16"),
    "linear_amx_gemv": ([(5, 1120), (100, 1120), (5, 100)],
                        ["bf16", "bf16", "f32"], "f32"),
    "linear_amx_gemv_16": ([(16, 96), (32, 96)], ["bf16", "bf16"], "bf16"),
    "linear_silu_gate": ([(37, 70), (29, 70), (1, 37, 29)],
                         ["bf16", "bf16", "bf16"], "bf16"),
    "linear_silu_gate_few": ([(5, 1120), (100, 1120), (5, 100)],
                             ["bf16", "bf16", "bf16"], "bf16"),
    "linear_gelu_residual": ([(20, 301), (45, 301), (20, 45)],
                             ["f32", "f32", "f32"], "f32"),
    "linear_gelu_tanh_few": ([(3, 257), (260, 257), (3, 260)],
                             ["f32", "f32", "f32"], "f32"),
    "linear_bias_bf16": ([(37, 300), (70, 300), (70,)],
                         ["bf16", "bf16", "bf16"], "f32"),
    "linear_bias_rounded_bf16": ([(70, 512), (96, 512), (96,)],
                                 ["bf16", "bf16", "bf16"], "bf16"),
    "linear_bias_few": ([(3, 257), (45, 257), (45,)], ["f32", "f32", "f32"],
                        "f32"),
    "batch_bias": ([(2, 30, 45), (2, 45, 40), (40,)], ["f32", "f32", "f32"],
                   "f32"),
    "linear_column_init": ([(37, 70), (29, 70), (37,)],
                           ["f32", "f32", "f32"], "f32"),
}
# The constant init (linalg.fill value) of a case without an init argument.
INIT = {"linalg_batch": 0.75, "linear_16": 0.5, "linear_17": 0.5,
        "linear_gemm_bf16": 0.25, "linear_rounded_few": 0.25,
        "linear_amx_gemv_16": 0.25, "linear_fifteen_steps_bf16": 0.25}
# Cases whose rhs argument is the [N, K] weight (the function transposes it).
WEIGHT_RHS = {"linear_row", "linear_few_bf16", "linear_gemv_odd_k_bf16",
              "linear_16", "linear_17",
              "linear_parallel", "linear_gemm_odd", "linear_gemm_bf16",
              "linear_gemm_f16", "linear_gemm_tall_bf16",
              "linear_bf16_odd_k", "linear_fifteen_steps_bf16",
              "linear_whole_bf16", "linear_rounded_bf16",
              "linear_rounded_few", "linear_amx_gemv", "linear_amx_gemv_16",
              "linear_silu_gate", "linear_silu_gate_few",
              "linear_gelu_residual", "linear_gelu_tanh_few",
              "linear_bias_bf16", "linear_bias_rounded_bf16",
              "linear_bias_few", "linear_column_init"}
# Cases whose third operand is a vector broadcast to the init: along the
# rows (a bias, element n of every row) or along the columns (element m of
# every column).
BROADCAST_INIT = {"linear_bias_bf16": "rows",
                  "linear_bias_rounded_bf16": "rows",
                  "linear_bias_few": "rows", "batch_bias": "rows",
                  "linear_column_init": "columns"}



def round_bf16(x):
    """x rounded to the nearest bf16, ties to even."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def silu_gate(p, up):
    """SiLU(p) * up with the rounding to bf16 after each op."""
    r = round_bf16(p)
    return round_bf16(round_bf16(r / (1.0 + math.exp(-r))) * up)


def gelu_residual(p, res):
    return 0.5 * p * (1.0 + math.erf(p / math.sqrt(2.0))) + res


def gelu_tanh_residual(p, res):
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * p * (1.0 + math.tanh(c * (p + 0.044715 * p ** 3))) + res


# Cases whose third operand is read by consumers of the product (the
# product starts at 0): the function of the exact product and that operand.
EPILOGUE = {"linear_silu_gate": silu_gate,
            "linear_silu_gate_few": silu_gate,
            "linear_gelu_residual": gelu_residual,
            "linear_gelu_tanh_few": gelu_tanh_residual}
FORMATS = {"f32": ("<f4", "f"), "f64": ("<f8", "d"), "f16": ("<f2", "e"),
           "bf16": ("<u2", "H")}
EPS = {"f32": 2.0 ** -24, "f64": 2.0 ** -53, "f16": 2.0 ** -11,
       "bf16": 2.0 ** -8}


def encode(values, dtype):
    if dtype != "bf16":
        return struct.pack("<%d%s" % (len(values), FORMATS[dtype][1]), *values)
    # Every input is exact in bf16: the top half of the f32 bits.
    bits = [struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in values]
    return struct.pack("<%dH" % len(bits), *bits)


def decode(body, dtype):
    fmt = FORMATS[dtype][1]
    n = len(body) // struct.calcsize(fmt)
    values = struct.unpack("<%d%s" % (n, fmt), body)
    if dtype == "bf16":
        values = [struct.unpack("<f", struct.pack("<I", b << 16))[0]
                  for b in values]
    return list(values)


def write_npy(path, shape, dtype, values):
    dims = "".join("%d, " % d for d in shape) if len(shape) > 1 else \
        "%d," % shape[0]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        FORMATS[dtype][0], dims.rstrip(" ") if len(shape) > 1 else dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(encode(values, dtype))


def read_npy(path, dtype):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    return decode(data[10 + hlen:], dtype)


def strides(shape):
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return list(reversed(out))


def reference(shapes, data):
    """Batched product with NumPy broadcasting; returns (values, bounds)."""
    (a_shape, b_shape), (a, b) = shapes[:2], data[:2]
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    batch = [max(x, y) for x, y in zip(
        [1] * (len(b_shape) - len(a_shape)) + list(a_shape[:-2]),
        [1] * (len(a_shape) - len(b_shape)) + list(b_shape[:-2]))]
    out, bound = [], []
    for flat in range(math.prod(batch)):
        index, rest = [], flat
        for d in reversed(batch):
            index.insert(0, rest % d)
            rest //= d

        def base(shape):
            own = index[len(index) - (len(shape) - 2):]
            return sum((i if d != 1 else 0) * s for i, d, s in zip(
                own, shape[:-2], strides(shape)[:-2]))
        a0, b0 = base(a_shape), base(b_shape)
        for i in range(m):
            for j in range(n):
                terms = [a[a0 + i * k + t] * b[b0 + t * n + j]
                         for t in range(k)]
                out.append(math.fsum(terms))
                bound.append(math.fsum(abs(x) for x in terms))
    return out, bound, k


def run_case(attn_run, mlir, tmp, name, extra):
    shapes, dtypes, rtype = CASES[name]
    rng = random.Random(name)
    data, args = [], []
    for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        values = [rng.randint(-128, 128) / 64.0
                  for _ in range(math.prod(shape))]
        path = "%s/%s.%d.npy" % (tmp, name, i)
        write_npy(path, shape, dtype, values)
        data.append(values)
        args += ["--input", "%d=%s" % (i, path)]
    out_path = "%s/%s.out.npy" % (tmp, name)
    subprocess.run([attn_run, mlir, "--entry", name, "--output",
                    "0=" + out_path] + args + extra, check=True,
                   stdout=subprocess.DEVNULL)
    got = read_npy(out_path, rtype)
    if name in WEIGHT_RHS:
        (n, k), w = shapes[1], data[1]
        shapes = [shapes[0], (k, n)] + shapes[2:]
        data = [data[0], [w[j * k + t] for t in range(k) for j in range(n)]
                ] + data[2:]
    ref, bound, k = reference(shapes, data)
    acc_eps = EPS["f64" if rtype == "f64" else "f32"]
    if name in EPILOGUE:
        return check_epilogue(name, got, ref, bound, k, data[2], rtype)
    init = data[2] if len(data) > 2 else [INIT.get(name, 0.0)] * len(ref)
    if name in BROADCAST_INIT:
        m, n = shapes[0][-2], shapes[1][-1]
        init = [data[2][i % n] if BROADCAST_INIT[name] == "rows"
                else data[2][i // n % m] for i in range(len(ref))]
    ref = [r + c for r, c in zip(ref, init)]
    bound = [s + abs(c) for s, c in zip(bound, init)]
    failures = 0
    if len(got) != len(ref):
        print("FAIL %s: %d elements, expected %d" % (name, len(got),
                                                     len(ref)))
        return 1
    for g, r, s in zip(got, ref, bound):
        ulp = 2.0 ** (math.frexp(r)[1] - 1) * 2 * EPS[rtype] if r else 0.0
        tol = 0.51 * ulp + 4 * max(k, 1) * acc_eps * s
        if not abs(g - r) <= tol:
            failures += 1
            if failures <= 3:
                print("FAIL %s: got %r, expected %r (tol %g)" % (name, g, r,
                                                                 tol))
    print("%s: %d elements, %d failures" % (name, len(got), failures))
    return failures


def check_epilogue(name, got, products, bounds, k, other, rtype):
    """Each element against the case's function of the product, evaluated
    at both ends of the product's error bound (a bf16 rounding of the
    product may go either way there): within 2 ulps of the result type of
    one end or between them, plus 1e-6 for the f32 approximations of exp,
    erf and tanh."""
    fn = EPILOGUE[name]
    if len(got) != len(products):
        print("FAIL %s: %d elements, expected %d" % (name, len(got),
                                                     len(products)))
        return 1
    failures = 0
    for g, p, s, o in zip(got, products, bounds, other):
        err = 4 * max(k, 1) * EPS["f32"] * s
        ends = [fn(p - err, o), fn(p, o), fn(p + err, o)]
        top = max(abs(e) for e in ends)
        ulp = 2.0 ** (math.frexp(top)[1] - 1) * 2 * EPS[rtype] if top else 0.0
        tol = 2 * ulp + 1e-6 * (1 + top)
        if not min(ends) - tol <= g <= max(ends) + tol:
            failures += 1
            if failures <= 3:
                print("FAIL %s: got %r, expected %r (tol %g)" % (
                    name, g, ends[1], tol))
    print("%s: %d elements, %d failures" % (name, len(got), failures))
    return failures


def pop_sample(options):
    """(N, the other options) of `--sample N` in `options` (N = 1 without
    it): the run checks about one case in N."""
    if "--sample" not in options:
        return 1, options
    at = options.index("--sample")
    return int(options[at + 1]), options[:at] + options[at + 2:]


def in_sample(name, salt, sample):
    """Whether case `name` is among a run's one in `sample`: a CRC of the
    name and `salt` (the run's options) chooses, so that each run of a test
    (another target, thread count, the tiles forbidden) checks its own
    share, and no stride skips a dtype or a shape every time."""
    return zlib.crc32((name + salt).encode()) % sample == 0


def main():
    attn_run, mlir, tmp = sys.argv[1:4]
    sample, options = pop_sample(sys.argv[4:])
    # Every n-th case only (lit.cfg.py sets it for a sanitizer build).
    step = int(os.environ.get("ATTN_CHECK_SAMPLE", "1"))
    salt = " ".join(options) + os.environ.get("ATTNFUSE_AMX", "")
    names = [n for n in list(CASES)[::step] if in_sample(n, salt, sample)]
    failures = sum(run_case(attn_run, mlir, tmp, name, options)
                   for name in names)
    ran = "" if len(names) == len(CASES) else "%d of " % len(names)
    print("matmul: %s%d cases, %d failures" % (ran, len(CASES), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
