"""attnfuse.quant: the quantized weight formats (issue 48). Round trips of
every scheme at odd sizes, GGUF blocks bit-exact against the gguf package
and against scalar ports of llama.cpp's reference quantizers, the NNCF-style
layouts against an independent torch implementation of NNCF's formulas, the
byte layouts on hand-computed examples, and the validation errors."""

import numpy as np
import pytest
import torch

gguf = pytest.importorskip("gguf")

from attnfuse import quant as Q  # noqa: E402
from attnfuse.quant import QuantizedTensor, QuantScheme, dequantize, quantize  # noqa: E402

GGML = gguf.GGMLQuantizationType
INT_SCHEMES = ["int8_sym", "int8_asym", "int4_sym", "int4_asym"]
ALL_SCHEMES = ["q8_0", "q4_0"] + INT_SCHEMES


def random_k_blocks(rng, name, n, k):
    """Random but valid q4_k / q6_k bytes: random codes and sub-scales,
    finite f16 super-block scales."""
    bb = {"q4_k": 144, "q6_k": 210}[name]
    raw = rng.integers(0, 256, size=(n, k // 256 * bb), dtype=np.uint8)
    blocks = raw.reshape(-1, bb)
    for off in ((0, 2) if name == "q4_k" else (208,)):
        d = rng.uniform(-0.05, 0.05, size=(blocks.shape[0], 1)).astype("<f2")
        blocks[:, off:off + 2] = d.view(np.uint8)
    return raw


def shapes_for(scheme):
    """(N, K) pairs: N not a multiple of anything, K one block / several."""
    g = {"q8_0": 32, "q4_0": 32, "int4_sym": 128, "int4_asym": 128}.get(scheme)
    if g is None:  # int8, per output channel: any K
        return [(7, 5), (13, 96), (1, 333)]
    return [(7, g), (13, 3 * g), (1, 5 * g)]


def step_of(qt):
    """Per-element quantization step |scale|, [N, K] float64."""
    n, k = qt.shape
    if qt.scheme.is_gguf:
        d = qt.rows().reshape(-1, {"q8_0": 34, "q4_0": 18}[qt.scheme.name])[:, :2]
        d = np.abs(d.copy().view("<f2").astype(np.float64)).reshape(n, -1)
        return np.repeat(d, 32, axis=1)
    s = np.abs(qt.scales().astype(np.float64))
    return np.repeat(s, qt.group_size, axis=1)


@pytest.mark.parametrize("scheme", ALL_SCHEMES)
def test_round_trip_within_one_step(scheme):
    for n, k in shapes_for(scheme):
        w = torch.randn(n, k) * 0.1
        qt = quantize(w, scheme)
        assert qt.shape == (n, k) and qt.nbytes == qt.scheme.nbytes(n, k)
        out = dequantize(qt)
        assert out.dtype == torch.float32 and out.shape == (n, k)
        err = np.abs(out.double().numpy() - w.double().numpy())
        # round to nearest: half a step, a full step where the code saturates
        assert (err <= step_of(qt) * (1 + 1e-6)).all(), (scheme, n, k)
        assert err.mean() <= 0.3 * step_of(qt).mean()


@pytest.mark.parametrize("scheme", ["int4_sym", "int4_asym"])
@pytest.mark.parametrize("group", [32, 64, 128])
def test_int4_group_sizes(scheme, group):
    w = torch.randn(5, 256)
    qt = quantize(w, scheme, group)
    assert qt.group_size == group and qt.num_groups == 256 // group
    assert torch.equal(dequantize(qt), nncf_reference(w, scheme, group, "f16"))


def nncf_reference(w, scheme, group, scale_dtype):
    """NNCF's data-free weight compression (weight_lowering.py), written
    independently in torch float32, dequantized; torch.round is
    round-half-to-even like numpy's. As attnfuse.quant documents, the asym
    range is widened to hold 0 and codes use the stored scale."""
    bits = 8 if scheme.startswith("int8") else 4
    n, k = w.shape
    g = k if group is None else group
    x = w.float().reshape(n, k // g, g)
    eps = torch.finfo(torch.float32).eps
    sdt = torch.float16 if scale_dtype == "f16" else torch.float32
    if scheme.endswith("_sym"):
        lo, hi = x.amin(-1).abs(), x.amax(-1)
        s = torch.where(lo >= hi, lo, -hi) / 2 ** (bits - 1)
        s = torch.where(s.abs() < eps, torch.full_like(s, eps), s).to(sdt).float()
        q = torch.round(x / s[..., None]).clamp(-2 ** (bits - 1), 2 ** (bits - 1) - 1)
        return (q * s[..., None]).reshape(n, k)
    lo, hi = x.amin(-1).clamp(max=0), x.amax(-1).clamp(min=0)
    s = (hi - lo) / (2 ** bits - 1)
    s = torch.where(s.abs() < eps, torch.full_like(s, eps), s).to(sdt).float()
    zp = (-torch.round(lo / s)).clamp(0, 2 ** bits - 1)
    q = torch.round(x / s[..., None] + zp[..., None]).clamp(0, 2 ** bits - 1)
    return ((q - zp[..., None]) * s[..., None]).reshape(n, k)


@pytest.mark.parametrize("scheme", INT_SCHEMES)
@pytest.mark.parametrize("scale_dtype", ["f16", "f32"])
def test_int_schemes_match_nncf_formulas(scheme, scale_dtype):
    for n, k in shapes_for(scheme):
        w = torch.randn(n, k) * torch.rand(n, 1) * 3
        w[0, : min(k, 9)] = 0.0  # ties and zeros
        qt = quantize(w, scheme, scale_dtype=scale_dtype)
        group = None if scheme.startswith("int8") else 128
        assert torch.equal(dequantize(qt), nncf_reference(w, scheme, group, scale_dtype))


def test_int_constant_zero_and_one_sided_rows():
    w = torch.zeros(5, 64)
    w[1] = 0.75
    w[2] = -2.0
    w[3] = torch.linspace(1.0, 1.1, 64)  # wholly positive: NNCF's asym saturates
    w[4] = -torch.linspace(1.0, 1.1, 64)
    for scheme in INT_SCHEMES:
        qt = quantize(w, scheme, 32 if scheme.startswith("int4") else None)
        out = dequantize(qt)
        assert torch.isfinite(out).all()
        assert (out - w).abs().max() <= 1.1 / 7, scheme


# ---- GGUF blocks -------------------------------------------------------------

def q8_0_ref(x):
    """llama.cpp quantize_row_q8_0_ref, scalar, float32."""
    out = bytearray()
    for blk in x.reshape(-1, 32).astype(np.float32):
        amax = np.float32(0)
        for v in blk:
            amax = max(amax, np.float32(abs(v)))
        d = np.float32(amax / np.float32(127))
        inv = np.float32(1) / d if d else np.float32(0)
        out += np.float16(d).tobytes()
        for v in blk:
            y = np.float32(v * inv)  # roundf: half away from zero
            out += np.int8(np.sign(y) * np.floor(abs(y) + 0.5)).tobytes()
    return np.frombuffer(bytes(out), dtype=np.uint8)


def q4_0_ref(x):
    """llama.cpp quantize_row_q4_0_ref, scalar, float32."""
    out = bytearray()
    for blk in x.reshape(-1, 32).astype(np.float32):
        amax, mx = np.float32(0), np.float32(0)
        for v in blk:
            if amax < abs(v):
                amax, mx = np.float32(abs(v)), v
        d = np.float32(mx / np.float32(-8))
        inv = np.float32(1) / d if d else np.float32(0)
        out += np.float16(d).tobytes()
        for j in range(16):
            q0 = min(15, int(np.float32(blk[j] * inv) + np.float32(8.5)))
            q1 = min(15, int(np.float32(blk[j + 16] * inv) + np.float32(8.5)))
            out.append(q0 | (q1 << 4))
    return np.frombuffer(bytes(out), dtype=np.uint8)


@pytest.mark.parametrize("name,ggml,ref", [("q8_0", GGML.Q8_0, q8_0_ref),
                                           ("q4_0", GGML.Q4_0, q4_0_ref)])
def test_q8_0_q4_0_bit_exact(name, ggml, ref):
    for n, k in [(7, 32), (13, 96), (3, 160)]:
        w = torch.randn(n, k)
        w[0, 3] = 0.0
        w[-1, :32] = 0.0  # an all-zero block: d = 0
        qt = quantize(w, name)
        x = w.numpy()
        assert np.array_equal(qt.rows(), gguf.quants.quantize(x, ggml))
        assert np.array_equal(qt.data, ref(x))
        assert np.array_equal(dequantize(qt).numpy(), gguf.quants.dequantize(qt.rows(), ggml))


@pytest.mark.parametrize("name,ggml", [("q4_k", GGML.Q4_K), ("q6_k", GGML.Q6_K)])
def test_k_quants_dequantize_like_gguf(name, ggml):
    rng = np.random.default_rng(48)
    for n, k in [(7, 256), (5, 768)]:
        raw = random_k_blocks(rng, name, n, k)
        qt = QuantizedTensor(raw.reshape(-1), (n, k), Q.get_scheme(name))
        ours = dequantize(qt).numpy()
        assert np.array_equal(ours, gguf.quants.dequantize(raw, ggml))
        assert np.isfinite(ours).all()


@pytest.mark.parametrize("name", ["q4_k", "q6_k"])
def test_k_quants_refuse_quantizing(name):
    with pytest.raises(ValueError, match=f"quantizing to {name} is not supported"):
        quantize(torch.randn(4, 256), name)


# ---- layouts on hand-computed examples ----------------------------------------

def test_int8_sym_layout():
    w = torch.tensor([[-1.0, 0.5, 0.25, 0.0], [0.0, 0.0, 0.0, 0.0], [0.5, -0.25, 0.0, 0.125]])
    qt = quantize(w, "int8_sym")
    assert qt.rows().view(np.int8).tolist() == [[-128, 64, 32, 0], [0, 0, 0, 0], [-128, 64, 0, -32]]
    scales = qt.scales()
    assert scales.dtype == np.dtype("<f4") and scales.shape == (3, 1)
    assert scales[0, 0] == 1 / 128 and scales[2, 0] == -0.5 / 128
    assert scales[1, 0] == np.finfo(np.float32).eps  # NNCF's floor for a zero row
    assert qt.scheme.sections(3, 4) == {"codes": 0, "scales": 64, "nbytes": 76}
    assert qt.zero_points() is None
    assert torch.equal(dequantize(qt), w)


def test_int8_asym_layout():
    w = torch.tensor([[0.0, 0.5, 1.0, 2.55], [-1.0, -1.0, 1.55, -0.3]])
    qt = quantize(w, "int8_asym")
    s = qt.scales()[:, 0]
    assert s[0] == np.float32(np.float32(2.55) / np.float32(255))
    zp = qt.zero_points()[:, 0]
    assert zp.tolist() == [0, 100]
    assert qt.rows()[0].tolist() == [0, 50, 100, 255]
    assert qt.rows()[1, :2].tolist() == [0, 0] and qt.rows()[1, 2] == 255
    sec = qt.scheme.sections(2, 4)
    assert sec == {"codes": 0, "scales": 64, "zero_points": 128, "nbytes": 130}
    assert bytes(qt.data[sec["zero_points"]:]) == bytes([0, 100])
    assert not qt.data[8:64].any() and not qt.data[72:128].any()  # zero padding


def test_int4_sym_is_q4_0_arithmetic():
    """int4_sym with groups of 32 and f16 scales: the same nibbles and scales
    as q4_0 (NNCF's signed scale is q4_0's max / -8), scales in their own
    section. Values avoid rounding ties, where the two roundings differ."""
    w = torch.randn(9, 96)
    w = w + torch.sign(w) * 1e-3
    a, b = quantize(w, "int4_sym", 32), quantize(w, "q4_0")
    blocks = b.rows().reshape(9, 3, 18)
    assert np.array_equal(a.scales().view(np.uint8).reshape(9, 3, 2), blocks[:, :, :2])
    assert np.array_equal(a.rows().reshape(9, 3, 16), blocks[:, :, 2:])
    assert torch.equal(dequantize(a), dequantize(b))


def test_int4_nibble_order():
    """Element 32c + j in the low nibble of chunk c's byte j, 32c + j + 16
    in its high nibble; codes u = q + 8 (sym) / q (asym)."""
    q = np.arange(64) % 16  # codes for int4_asym with zp 0 and scale 1
    w = torch.tensor(q, dtype=torch.float32).reshape(1, 64)
    w[0, 0] = 0.0
    w[0, 15] = 15.0
    qt = quantize(w, "int4_asym", 64)
    assert qt.scales()[0, 0] == 1.0 and qt.zero_points()[0, 0] == 0
    row = qt.rows()[0]
    for c in range(2):
        for j in range(16):
            assert row[16 * c + j] == q[32 * c + j] | (q[32 * c + j + 16] << 4)
    sec = qt.scheme.sections(1, 64)
    assert sec == {"codes": 0, "scales": 64, "zero_points": 128, "nbytes": 129}
    assert torch.equal(dequantize(qt), w)


def test_int4_sym_codes():
    w = torch.zeros(1, 32)
    w[0, :4] = torch.tensor([1.6, -0.4, 0.2, 0.0])
    qt = quantize(w, "int4_sym", 32)
    assert float(qt.scales()[0, 0]) == float(np.float16(-0.2))
    u = qt.rows()[0, :4] & 0x0F
    s = np.float32(np.float16(-0.2))
    want = [np.round(np.float32(v) / s) + 8 for v in (1.6, -0.4, 0.2, 0.0)]
    assert u.tolist() == [0, 10, 7, 8] == [int(x) for x in want]


# ---- API: permutation, reference GEMM, validation ------------------------------

@pytest.mark.parametrize("scheme", ALL_SCHEMES + ["q4_k", "q6_k"])
def test_permute_rows_exact(scheme):
    n, k = 11, 256
    if scheme in ("q4_k", "q6_k"):
        raw = random_k_blocks(np.random.default_rng(1), scheme, n, k)
        qt = QuantizedTensor(raw.reshape(-1), (n, k), Q.get_scheme(scheme))
    else:
        qt = quantize(torch.randn(n, k), scheme)
    perm = np.random.default_rng(2).permutation(n)
    moved = qt.permute_rows(perm)
    assert torch.equal(dequantize(moved), dequantize(qt)[torch.from_numpy(perm)])
    with pytest.raises(ValueError, match="not a permutation"):
        qt.permute_rows(np.zeros(n, dtype=np.int64))


def test_reference_linear():
    w = torch.randn(13, 64)
    x = torch.randn(3, 5, 64)
    bias = torch.randn(13)
    for scheme in ALL_SCHEMES:
        qt = quantize(w, scheme, 32 if scheme.startswith("int4") else None)
        y = Q.reference_linear(x, qt, bias)
        assert y.dtype == torch.float64 and y.shape == (3, 5, 13)
        want = x.double() @ dequantize(qt).double().T + bias.double()
        assert torch.equal(y, want)
    with pytest.raises(ValueError, match="last dimension 63"):
        Q.reference_linear(torch.randn(2, 63), qt)
    with pytest.raises(ValueError, match="bias shape"):
        Q.reference_linear(x, qt, torch.randn(12))


@pytest.mark.parametrize("scheme,group", [("q8_0", None), ("q4_0", None),
                                          ("int8_sym", None),
                                          ("int8_asym", 32),
                                          ("int4_sym", 32),
                                          ("int4_asym", 64)])
def test_stacks_are_their_matrices_back_to_back(scheme, group):
    """An [E, N, K] stack (experts): matrix e is the quantization of w[e],
    at byte e * matrix_stride (GGUF: unpadded, as a GGUF file stores a 3-D
    tensor; int schemes: rounded up to 64, zeros between)."""
    w = torch.randn(3, 24, 64)
    qt = quantize(w, scheme, group)
    sch = qt.scheme
    size = sch.nbytes(24, 64)
    stride = sch.matrix_stride(24, 64)
    assert stride == (size if sch.is_gguf else -(-size // 64) * 64)
    assert qt.shape == (3, 24, 64) and qt.nbytes == 3 * stride
    for e in range(3):
        one = quantize(w[e], scheme, group)
        assert np.array_equal(qt.data[e * stride:e * stride + size], one.data)
        assert not qt.data[e * stride + size:(e + 1) * stride].any()
        assert np.array_equal(qt.matrix(e).data, one.data)
    assert torch.equal(qt.dequantize(),
                       torch.stack([quantize(w[e], scheme, group).dequantize()
                                    for e in range(3)]))
    with pytest.raises(ValueError, match="per matrix"):
        qt.rows()
    with pytest.raises(ValueError, match="not a stack"):
        quantize(w[0], scheme, group).matrix(0)
    with pytest.raises(ValueError, match="takes"):
        Q.QuantizedTensor(qt.data[:-1].copy(), qt.shape, sch)


def test_validation_errors():
    w = torch.randn(16, 100)
    with pytest.raises(ValueError, match=r"blk\.0\.attn_q.*group size 128 of int4_sym does not divide K=100.*\[16, 100\]"):
        quantize(w, "int4_sym", name="blk.0.attn_q")
    with pytest.raises(ValueError, match="block size 32 of q8_0 does not divide K=100"):
        quantize(w, "q8_0")
    with pytest.raises(ValueError, match="group size 24 of int8_sym does not divide K=100"):
        quantize(w, "int8_sym", 24)
    with pytest.raises(ValueError, match=r"2-D \[N, K\] weights \(or 3-D"):
        quantize(torch.randn(2, 2, 3, 64), "q8_0")
    with pytest.raises(ValueError, match="2-D"):
        quantize(torch.randn(64), "int8_sym")
    with pytest.raises(ValueError, match="w: holds NaN"):
        quantize(torch.stack([torch.ones(4, 64),
                              torch.full((4, 64), float("nan"))]),
                 "int8_sym", name="w")
    with pytest.raises(ValueError, match="floating-point"):
        quantize(torch.ones(4, 64, dtype=torch.int32), "int8_sym")
    with pytest.raises(ValueError, match="NaN or infinite"):
        quantize(torch.full((2, 32), float("nan")), "q8_0", name="w")
    with pytest.raises(ValueError, match="unknown quantization scheme 'int3_sym'"):
        quantize(w, "int3_sym")
    with pytest.raises(ValueError, match="unsupported bits=3"):
        QuantScheme("int4_sym", 3, 32, True, "f16")
    with pytest.raises(ValueError, match="not a multiple of 32"):
        Q.get_scheme("int4_asym", 48)
    with pytest.raises(ValueError, match="fixed blocks of 32"):
        Q.get_scheme("q4_0", 64)
    with pytest.raises(ValueError, match="scale dtype"):
        Q.get_scheme("int8_sym", scale_dtype="bf16")
    with pytest.raises(ValueError, match="overflows f16"):
        quantize(torch.full((1, 32), 1e6), "int4_sym", 32)
    assert torch.isfinite(dequantize(quantize(torch.full((1, 32), 1e6), "int4_sym", 32,
                                              scale_dtype="f32"))).all()
    qt = quantize(torch.randn(4, 32), "q4_0")
    with pytest.raises(ValueError, match="takes 72 bytes, data has 71"):
        QuantizedTensor(qt.data[:71].copy(), (4, 32), qt.scheme)
    with pytest.raises(ValueError, match="keeps its scales inside its blocks"):
        qt.scales()


def test_per_channel_int4_and_defaults():
    assert Q.INT8_SYM.group_size is None and Q.INT4_ASYM.group_size == 128
    assert Q.get_scheme("int4_sym", -1).group_size is None
    qt = quantize(torch.randn(3, 96), "int4_sym", -1)
    assert qt.group_size == 96 and qt.num_groups == 1
    with pytest.raises(ValueError, match="multiple of 32"):
        quantize(torch.randn(3, 40), "int4_sym", -1)
