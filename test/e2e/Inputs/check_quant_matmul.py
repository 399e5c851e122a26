"""Runs attn.quantized_matmul through attn-run for every scheme, on odd
sizes, and compares every element with a float64 reference of the exactly
dequantized weight (attnfuse.quant.reference_linear).

  check_quant_matmul.py ATTN_RUN TMPDIR [--only SCHEME,...] [--sample N]
      [--aot ATTN_COMPILE] [--activations int8 [--int8-dot | --int8-dot-narrow]]
      [options...]

The options go to attn-run (JIT), or with --aot to attn-compile, which
builds a library per case that attn-run then runs (--so). --sample N
checks about one case in N (a CRC of the case's name and the run's flags
chooses; the summary then says how many of the cases ran).

--activations int8 compiles with --quantized-activations=int8 and runs
the cases of that mode (INT8_WEIGHTS, INT8_INPUTS). With --int8-dot (the
target has VNNI) the decode GEMVs (at most 8 rows) of the weights with
units of 32 (q8_0, q4_0, int4_*, int8_* with K and group multiples of 32)
and of q4_k and q6_k, and the prefill GEMMs (more rows) of the weights
whose codes have a fixed offset (q8_0, q4_0, int8_sym, int4_sym, q4_k,
q6_k), and with
--int8-dot-narrow (AVX2 without VNNI: vpmaddubsw, exact for codes below
128) the GEMVs of the weights whose codes have fewer than 8 bits (q4_0,
q4_k, q6_k, int4_*), are checked against the reference of the quantized activations
(quantize_activations: the rule of docs/quantization.md, in the same f32
operations) with RTOL_INT8; every other case, and every case without
--int8-dot, against the exact reference as above (the f32 path).

Weights: q8_0, q4_0 and the int schemes are quantized from random normal
matrices with attnfuse.quant.quantize; q4_k and q6_k (which attnfuse.quant
does not quantize) are random valid blocks (finite f16 scales, any codes).
Inputs are uniform in [-1, 1], bf16 inputs rounded to bf16 first, so that
the reference sees the operands the compiled code sees. An element passes
if |out - ref| <= RTOL * sum_k |x_k W_nk| (the f32 accumulation), plus half
an ulp of |ref| in the result type for bf16 and f16 results (one rounding).
Prints one line per failing case and a summary line.
"""
import os
import subprocess
import sys

import numpy as np
import torch

from attnfuse import quant
from check_matmul import in_sample, pop_sample

RTOL = 1e-5
# The integer path: exact i32 dots per block, then per block one f32
# product of the two scales and one f32 FMA into the accumulators.
RTOL_INT8 = 1e-6
ULP = {"f32": 0.0, "bf16": 2.0 ** -8, "f16": 2.0 ** -11}
TORCH = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}

# (scheme, N, K, group, scale dtype): the weights. K = one block (32) and
# several (96, 160; two super-blocks for the k-quants), N = 37 (not a
# multiple of any vector's lanes or of the GEMV's row groups); int8 rows of
# K = 100 end with 4 elements past the last chunk of 32, and groups of 20
# or 40 span vectors of some widths.
WEIGHTS = [
    ("q8_0", 37, 32, None, None), ("q8_0", 37, 96, None, None),
    ("q8_0", 37, 160, None, None),
    ("q4_0", 37, 32, None, None), ("q4_0", 37, 96, None, None),
    ("q4_0", 37, 160, None, None),
    ("q4_k", 37, 256, None, None), ("q4_k", 37, 512, None, None),
    ("q6_k", 37, 256, None, None), ("q6_k", 37, 512, None, None),
    ("int8_sym", 37, 96, -1, "f32"), ("int8_sym", 37, 100, -1, "f16"),
    ("int8_sym", 37, 160, 32, "f16"),
    ("int8_asym", 37, 160, 40, "f16"), ("int8_asym", 37, 100, 20, "f32"),
    ("int8_asym", 37, 32, -1, "f32"),
    ("int4_sym", 37, 96, 32, "f16"), ("int4_sym", 37, 160, -1, "f32"),
    ("int4_asym", 37, 160, 32, "f32"), ("int4_asym", 37, 256, 128, "f16"),
    ("int4_asym", 37, 32, -1, "f16"),
]
# Input shapes (with `?` for dynamic dims: the run gives the sizes) and
# element types, for each weight: decode (R <= 8 rows) and prefill
# (the GEMM's dequantized panels), batch dims, a dynamic M on both sides
# of the choice.
INPUTS = [
    ((1, "K"), "f32"), ((3, "K"), "bf16"), ((8, "K"), "f32"),
    ((33, "K"), "bf16"), ((1, "K"), "bf16"), ((33, "K"), "f32"),
]
# Extra inputs of some weights: batch dims, dynamic rows, f16.
EXTRA = {
    ("q4_0", 96): [((2, 4, "K"), "f32"), ((2, 17, "K"), "bf16"),
                   (("?", "K"), "f32", (5,)), (("?", "K"), "f32", (40,)),
                   ((3, "K"), "f16")],
    ("q6_k", 256): [((2, "?", "K"), "bf16", (2, 3)),
                    ((2, "?", "K"), "bf16", (2, 20))],
    ("int8_asym", 100): [(("?", "K"), "f32", (9,)), ((2, 3, "K"), "f16")],
    ("int4_asym", 256): [((1, 1, 1, "K"), "bf16"), ((4, 10, "K"), "f32")],
}
# Larger weights whose GEMV rows run in parallel (over 64 KiB) and whose
# GEMM has several column blocks.
LARGE = [("q8_0", 520, 256, None, None), ("int4_asym", 600, 512, 128, "f16"),
         ("q4_k", 300, 768, None, None)]
LARGE_INPUTS = [((1, "K"), "f32"), ((40, "K"), "bf16")]


# --activations int8: M = 1..8 (static and dynamic), K of one block, N not
# a multiple of the tile; int8 rows with a tail and groups of 20 stay on
# the f32 path.
INT8_WEIGHTS = [
    ("q8_0", 37, 32, None, None), ("q8_0", 37, 160, None, None),
    ("q4_0", 37, 96, None, None), ("q4_0", 5, 32, None, None),
    ("int8_sym", 37, 96, -1, "f32"), ("int8_sym", 37, 160, 32, "f16"),
    ("int8_asym", 37, 64, -1, "f32"), ("int8_asym", 37, 100, 20, "f32"),
    ("int4_sym", 37, 96, 32, "f16"), ("int4_asym", 37, 256, 128, "f16"),
    ("int4_asym", 37, 32, -1, "f32"), ("q4_k", 37, 256, None, None),
    ("q8_0", 520, 256, None, None), ("int4_sym", 1000, 128, 128, "f16"),
    # An even number of units per row: the wide (zmm) steps of two units
    # where the target has AVX512-VNNI, a pair across two groups included.
    ("q4_0", 37, 128, None, None), ("int8_sym", 37, 192, 64, "f16"),
    ("int4_sym", 37, 64, 32, "f32"),
    # The asymmetric schemes' wide steps: the zero points of a pair's two
    # units (across two groups of 32, within one of 64) times the rows'
    # block sums.
    ("int8_asym", 37, 128, 32, "f16"), ("int4_asym", 37, 192, 64, "f32"),
    # One group per row on the wide steps: the row's scale once per
    # product, after its dots.
    ("int8_sym", 37, 128, -1, "f16"), ("int4_asym", 37, 128, -1, "f32"),
    # int4_sym with K and the group multiples of 128: the wide steps of
    # four units (one 64-byte read of a row's nibbles), over several steps
    # and groups, a group of two steps, and per channel.
    ("int4_sym", 37, 384, 128, "f16"), ("int4_sym", 37, 512, 256, "f32"),
    ("int4_sym", 37, 256, -1, "f16"),
    # q6_k: a scale per 16 elements, the offset's term per i32 lane; q4_k
    # a scale and a min per 32.
    ("q6_k", 37, 512, None, None), ("q6_k", 5, 256, None, None),
    ("q4_k", 37, 512, None, None),
]
# Prefill inputs (more than 8 rows: the GEMM, in integers for the weights
# of fixed offset on a VNNI target) of some weights, run besides theirs:
# odd and dynamic row counts, batch dims, K of one unit, several k blocks
# (544: two blocks of 256 and one unit), several column blocks (N = 70,
# 1000; N = 5, fewer than a group of 8 packed columns), the asymmetric
# schemes (their zero points as mins per unit: int4_asym in groups of 128,
# int8_asym per channel, int8_asym in groups of 20 that keeps the f32
# GEMM), and the k-quants (q4_k's mins, q6_k's scales per 16 elements) on
# one and two k blocks.
INT8_PREFILL = [
    (("q8_0", 37, 32, None, None), ((13, "K"), "f32")),
    (("q4_0", 5, 32, None, None), ((9, "K"), "bf16")),
    (("q4_0", 37, 96, None, None), (("?", "K"), "f32", (37,))),
    (("int8_sym", 37, 160, 32, "f16"), ((2, 19, "K"), "bf16")),
    (("int4_sym", 1000, 128, 128, "f16"), ((40, "K"), "bf16")),
    (("q4_0", 70, 544, None, None), ((13, "K"), "bf16")),
    (("int8_sym", 70, 544, -1, "f32"), ((37, "K"), "f32")),
    (("int4_asym", 37, 256, 128, "f16"), ((13, "K"), "f32")),
    (("int4_asym", 70, 544, 32, "f32"), ((2, 19, "K"), "bf16")),
    (("int8_asym", 37, 64, -1, "f32"), (("?", "K"), "f32", (37,))),
    (("int8_asym", 70, 544, -1, "f16"), ((13, "K"), "bf16")),
    (("int8_asym", 37, 100, 20, "f32"), ((9, "K"), "f32")),
    (("q4_k", 37, 256, None, None), ((13, "K"), "f32")),
    (("q4_k", 5, 512, None, None), ((9, "K"), "bf16")),
    (("q4_k", 70, 512, None, None), (("?", "K"), "f32", (37,))),
    (("q4_k", 37, 512, None, None), ((2, 19, "K"), "bf16")),
    (("q6_k", 37, 256, None, None), ((13, "K"), "bf16")),
    (("q6_k", 5, 256, None, None), ((40, "K"), "f32")),
    (("q6_k", 70, 512, None, None), ((13, "K"), "bf16")),
    (("q6_k", 37, 512, None, None), (("?", "K"), "f32", (37,))),
]
# Each weight runs the first two and two of the others, in turn.
INT8_INPUTS = [
    ((1, "K"), "f32"), ((8, "K"), "bf16"), ((2, "K"), "bf16"),
    ((3, "K"), "f32"), ((5, "K"), "f16"), ((2, 3, "K"), "f32"),
    (("?", "K"), "f32", (7,)), (("?", "K"), "f32", (9,)),
]


def has_byte_codes(qt):
    """Whether the weight's codes take 8 bits (q8_0, int8_*): AVX2's
    integer path leaves them to the f32 one."""
    return qt.scheme.name == "q8_0" or (not qt.scheme.is_gguf and
                                        qt.scheme.bits == 8)


def has_int_units(qt):
    """Whether the integer GEMV reads the weight (QuantDecoder::hasIntUnits,
    and q6_k's groups)."""
    s = qt.scheme
    if s.name in ("q8_0", "q4_0", "q4_k", "q6_k"):
        return True
    return s.bits == 4 or (qt.shape[1] % 32 == 0 and qt.group_size % 32 == 0)


def has_int_gemm(qt):
    """Whether the integer GEMM reads the weight (QuantizedMatmulToCpu's
    getGemmIntOffset: units of 32 with one scale, symmetric or with a zero
    point, and the k-quants' groups)."""
    return has_int_units(qt)


def quantize_activations(x):
    """x [..., K] (K a multiple of 32) as the kernels quantize it, in
    float64: per block of 32, amax = max |x|, d = f32(amax / 127), codes
    rint(f32(x * f32(127 / amax))) (0 where amax = 0), each element code *
    d."""
    x32 = x.float().numpy().astype(np.float32)
    blocks = x32.reshape(x32.shape[:-1] + (-1, 32))
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        d = amax / np.float32(127)
        inv = np.where(amax != 0, np.float32(127) / amax, np.float32(0))
    codes = np.rint((blocks * inv.astype(np.float32)).astype(np.float32))
    assert np.abs(codes).max() <= 127
    out = codes.astype(np.float64) * d.astype(np.float64)
    return torch.from_numpy(out.reshape(x32.shape))


def f16_bytes(values):
    return np.asarray(values, dtype="<f2").view(np.uint8).reshape(-1, 2)


def random_kquant(scheme, n, k, rng):
    """Random valid q4_k / q6_k blocks: f16 scales of a sensible size, any
    codes and sub-block scales."""
    blocks = n * k // 256
    if scheme == "q4_k":
        b = rng.integers(0, 256, size=(blocks, 144), dtype=np.uint8)
        b[:, 0:2] = f16_bytes(rng.uniform(0.001, 0.01, blocks))
        b[:, 2:4] = f16_bytes(rng.uniform(0.001, 0.01, blocks))
    else:
        b = rng.integers(0, 256, size=(blocks, 210), dtype=np.uint8)
        b[:, 208:210] = f16_bytes(rng.uniform(-0.005, 0.005, blocks))
    return quant.QuantizedTensor(b.reshape(-1), (n, k), quant.get_scheme(scheme))


def make_weight(spec, rng):
    scheme, n, k, group, scale = spec
    if scheme in ("q4_k", "q6_k"):
        return random_kquant(scheme, n, k, rng)
    w = torch.from_numpy(rng.standard_normal((n, k)).astype(np.float32))
    return quant.quantize(w, scheme, group, scale_dtype=scale)


def format_attr(qt):
    s = qt.scheme
    if s.is_gguf:
        return "#attn.quant<%s>" % s.name
    return "#attn.quant<%s, group = %d, scale = %s>" % (
        s.name, qt.group_size, s.scale_dtype)


def write_case(path, qt, shape, dtype):
    n, k = qt.shape
    ins = "x".join(str(d) for d in shape)
    outs = "x".join(str(d) for d in shape[:-1] + (n,))
    nbytes = qt.nbytes
    text = (
        "func.func @f(%%x: tensor<%sx%s>, %%w: tensor<%dxi8>) -> tensor<%sx%s> {\n"
        "  %%y = attn.quantized_matmul %%x, %%w {format = %s}\n"
        "      : (tensor<%sx%s>, tensor<%dxi8>) -> tensor<%sx%s>\n"
        "  return %%y : tensor<%sx%s>\n}\n" % (
            ins, dtype, nbytes, outs, dtype, format_attr(qt), ins, dtype,
            nbytes, outs, dtype, outs, dtype))
    with open(path, "w") as f:
        f.write(text)


def save_input(path, x, dtype):
    if dtype == "bf16":
        np.save(path, x.view(torch.int16).numpy().view(np.uint16))
    else:
        np.save(path, x.numpy())


def load_output(path, dtype):
    y = np.load(path)
    if dtype == "bf16":
        return torch.from_numpy(y.view(np.int16)).view(torch.bfloat16).double()
    return torch.from_numpy(y).double()


def run_case(tools, base):
    """Compiles (with --aot) and runs the case at `base`; returns the
    failing process or None."""
    run_tool, compile_tool, options = tools
    io = ["--input", "0=" + base + ".x.npy", "--input", "1=" + base + ".w.npy",
          "--output", "0=" + base + ".y.npy"]
    cmds = [[run_tool, base + ".mlir", "--entry", "f"] + io + options]
    if compile_tool:
        cmds = [[compile_tool, base + ".mlir", "-o", base + ".so"] + options,
                [run_tool, base + ".mlir", "--entry", "f", "--so", base + ".so"] + io]
    for cmd in cmds:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            return done
    return None


def check_case(tools, tmp, name, qt, shape, dtype, sizes, rng,
               int8_dot=False):
    k = qt.shape[1]
    shape = tuple(k if d == "K" else d for d in shape)
    concrete = list(shape)
    dyn = iter(sizes)
    concrete = tuple(next(dyn) if d == "?" else d for d in shape)
    x = torch.from_numpy(rng.uniform(-1, 1, concrete).astype(np.float32))
    x = x.to(TORCH[dtype])
    base = os.path.join(tmp, name)
    write_case(base + ".mlir", qt, shape, dtype)
    save_input(base + ".x.npy", x, dtype)
    np.save(base + ".w.npy", qt.data.view(np.int8))
    failed = run_case(tools, base)
    if failed:
        return "%s: %s failed: %s" % (name, os.path.basename(failed.args[0]),
                                      failed.stderr.strip())
    y = load_output(base + ".y.npy", dtype)
    rows = int(np.prod(concrete[:-1]))
    rtol = RTOL
    gemv = (rows <= 8 and has_int_units(qt) and
            (int8_dot != "narrow" or not has_byte_codes(qt)))
    gemm = rows > 8 and int8_dot != "narrow" and has_int_gemm(qt)
    if int8_dot and (gemv or gemm):
        x = quantize_activations(x)
        rtol = RTOL_INT8
    ref = quant.reference_linear(x, qt)
    bound = x.double().abs() @ quant.dequantize(qt).double().abs().T
    tol = rtol * bound + ULP[dtype] * ref.abs() + 1e-30
    if tuple(y.shape) != tuple(ref.shape):
        return "%s: shape %s, expected %s" % (name, tuple(y.shape), tuple(ref.shape))
    err = (y - ref).abs()
    bad = int((~(err <= tol)).sum())
    if bad:
        worst = float((err / tol).max())
        return "%s: %d of %d elements off (worst %.3g x tol)" % (
            name, bad, err.numel(), worst)
    return None


def cases(activations):
    if activations:
        for i, spec in enumerate(INT8_WEIGHTS):
            rest = INT8_INPUTS[2:]
            picks = INT8_INPUTS[:2] + [rest[(2 * i) % len(rest)],
                                       rest[(2 * i + 1) % len(rest)]]
            for entry in picks:
                yield (spec, entry[0], entry[1],
                       entry[2] if len(entry) > 2 else ())
        for spec, entry in INT8_PREFILL:
            yield spec, entry[0], entry[1], entry[2] if len(entry) > 2 else ()
        return
    for spec in WEIGHTS + LARGE:
        inputs = LARGE_INPUTS if spec in LARGE else INPUTS
        for entry in inputs + EXTRA.get((spec[0], spec[2]), []):
            shape, dtype = entry[0], entry[1]
            sizes = entry[2] if len(entry) > 2 else ()
            yield spec, shape, dtype, sizes


def main():
    run_tool, tmp = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    only = None
    if "--only" in rest:
        at = rest.index("--only")
        only = set(rest[at + 1].split(","))
        rest = rest[:at] + rest[at + 2:]
    salt = " ".join(sys.argv[3:])
    sample, rest = pop_sample(rest)
    compile_tool = None
    if "--aot" in rest:
        at = rest.index("--aot")
        compile_tool = rest[at + 1]
        rest = rest[:at] + rest[at + 2:]
    activations = None
    if "--activations" in rest:
        at = rest.index("--activations")
        activations = rest[at + 1]
        rest = rest[:at] + rest[at + 2:] + ["--quantized-activations=" +
                                            activations]
    int8_dot = "--int8-dot" in rest
    if int8_dot:
        rest.remove("--int8-dot")
    if "--int8-dot-narrow" in rest:
        rest.remove("--int8-dot-narrow")
        int8_dot = "narrow"
    tools = (run_tool, compile_tool, rest)
    rng = np.random.default_rng(48)
    weights = {}
    count = failures = ran = 0
    # Every n-th case only (lit.cfg.py sets it for a sanitizer build).
    step = int(os.environ.get("ATTN_CHECK_SAMPLE", "1"))
    for spec, shape, dtype, sizes in cases(activations):
        if only and spec[0] not in only:
            continue
        if spec not in weights:
            weights[spec] = make_weight(spec, rng)
        qt = weights[spec]
        name = "%s_n%d_k%d_g%s_%s_%s_%s" % (
            spec[0], spec[1], spec[2], spec[3], spec[4],
            "x".join(str(d) for d in shape), dtype)
        name += "".join("_%d" % s for s in sizes)
        count += 1
        if (count - 1) % step:
            continue
        if not in_sample(name, salt, sample):
            continue
        problem = check_case(tools, tmp, name, qt, shape, dtype, sizes, rng,
                             int8_dot)
        ran += 1
        if problem:
            failures += 1
            print("FAIL " + problem)
    sampled = "" if ran == count else "%d of " % ran
    print("quantized_matmul: %s%d cases, %d failures" % (sampled, count,
                                                         failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
