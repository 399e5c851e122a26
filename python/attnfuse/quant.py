"""Quantized weights: the formats, their byte layouts, and exact dequantization.

This module is the contract between the Python front end and the compiled
kernels: a `QuantizedTensor` holds a linear layer's weight `[N, K]`
(`nn.Linear.weight`: out_features x in_features, K the contraction axis)
as the exact bytes a kernel reads, and `dequantize` returns, in float32,
every value exactly as the kernel's reference computes it. The same spec,
with tables, is in docs/quantization.md.

Schemes (`QuantScheme`, by name)
--------------------------------
GGUF (llama.cpp's ggml-common.h blocks, bit for bit): `q8_0`, `q4_0`,
`q4_k`, `q6_k`. NNCF-style (OpenVINO weight compression, data-free
round-to-nearest): `int8_sym`, `int8_asym` (per output channel by
default), `int4_sym`, `int4_asym` (per group of 128 by default; 32 and 64
and any other multiple of 32 that divides K also work).

GGUF layouts
------------
A row of the weight (one output channel, K values) is K / B blocks of B
elements, stored back to back; rows follow each other (row-major over N),
with no padding: byte size N * (K / B) * block_bytes. Multi-byte fields are
little-endian; `f16` is IEEE binary16, widened to f32 exactly.

  q8_0 (B=32, 34 bytes): f16 d; int8 qs[32].
      w[j] = f32(qs[j]) * f32(d)
  q4_0 (B=32, 18 bytes): f16 d; u8 qs[16]; byte j holds element j in its
      low nibble and element j+16 in its high nibble.
      w[j] = f32(nibble_j - 8) * f32(d)
  q4_k (B=256, 144 bytes): f16 d; f16 dmin; u8 scales[12]; u8 qs[128].
      8 sub-blocks of 32. Sub-block s has a 6-bit scale sc[s] and min m[s]:
        s < 4: sc = scales[s] & 63;  m = scales[s+4] & 63
        s >= 4: sc = (scales[s+4] & 15) | ((scales[s-4] >> 6) << 4)
                m  = (scales[s+4] >> 4) | ((scales[s] >> 6) << 4)
      Sub-block 2c (c = 0..3) is the low nibbles of qs[32c .. 32c+31],
      sub-block 2c+1 their high nibbles.
        d1 = f32(d) * f32(sc)   (rounded to f32)
        m1 = f32(dmin) * f32(m) (rounded to f32)
        w  = d1 * f32(q) - m1   (product rounded, then the difference: no FMA)
  q6_k (B=256, 210 bytes): u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d.
      Two halves h = 0, 1 of 128 elements; with ql' = ql[64h:], qh' =
      qh[32h:], for l = 0..31 the 6-bit codes of elements 128h + l, +32,
      +64, +96 are
        (ql'[l] & 15)    | ((qh'[l] >> 0) & 3) << 4
        (ql'[l+32] & 15) | ((qh'[l] >> 2) & 3) << 4
        (ql'[l] >> 4)    | ((qh'[l] >> 4) & 3) << 4
        (ql'[l+32] >> 4) | ((qh'[l] >> 6) & 3) << 4
      q = code - 32; element e of the block has scale scales[e // 16].
        w = (f32(d) * f32(scales[e // 16])) * f32(q)   (two f32 roundings)

NNCF-style layouts (int8_sym, int8_asym, int4_sym, int4_asym)
-------------------------------------------------------------
Group size g divides K (g = K: per output channel), G = K / g groups per
row; for 4 bits g is a multiple of 32. The weight is ONE byte buffer of
up to three sections, each starting at a multiple of 64 bytes from the
buffer's start (padding bytes are zero, no padding after the last):

  1. codes, at offset 0: N rows of R bytes, R = K (8 bits) or K / 2
     (4 bits); row n starts at byte n * R.
       8 bits: byte k is element k: int8 (two's complement) for int8_sym,
               uint8 for int8_asym.
       4 bits: the row is K / 32 chunks of 16 bytes; in chunk c, byte j holds
               element 32c + j in its low nibble and element 32c + j + 16 in
               its high nibble (q4_0's packing). A nibble is an unsigned
               code u in 0..15.
  2. scales, at offset S = align64(N * R): N * G values, row-major (row n,
     group i at index n * G + i), each f16 or f32 (the scheme's
     scale_dtype). A scale may be negative (NNCF's signed symmetric scale).
  3. zero points (asym only), at offset Z = align64(S + N * G * scale_bytes):
     N * G bytes, row-major, uint8: 0..255 for int8, 0..15 for int4.

Dequantization (i = k // g; the integer difference is exact, one f32
rounding, the product):
  int8_sym : w[n,k] = f32(c)            * f32(scale[n,i])  c int8 in -128..127
  int8_asym: w[n,k] = f32(c - zp[n,i])  * f32(scale[n,i])  c uint8
  int4_sym : w[n,k] = f32(u - 8)        * f32(scale[n,i])  u in 0..15
  int4_asym: w[n,k] = f32(u - zp[n,i])  * f32(scale[n,i])  u, zp in 0..15
int4_sym with g = 32 and f16 scales is q4_0's arithmetic and nibble order,
with the scales in their own section instead of inside the blocks.

Quantization (`quantize`, data-free round-to-nearest)
-----------------------------------------------------
q8_0 and q4_0 call the `gguf` package's quantizers, bit-identical to
llama.cpp's quantize_row_*_ref. q4_k and q6_k are refused (gguf's Python
package has no quantizer for them): they come only from GGUF files.
The int schemes follow NNCF's reference (weight_lowering.py), in float32
with numpy's round-half-to-even, per group of g along K:
  sym : scale = (|min| >= max ? |min| : -max) / 2^(b-1), so the element of
        largest magnitude lands on code -2^(b-1); |scale| < eps(f32)
        becomes eps; q = clip(round(w / scale), -2^(b-1), 2^(b-1) - 1).
  asym: lo = min(min, 0), hi = max(max, 0);
        scale = (hi - lo) / (2^b - 1), |scale| < eps becomes eps;
        zp = clip(-round(lo / scale), 0, 2^b - 1);
        q = clip(round(w / scale + zp), 0, 2^b - 1).
Two differences from NNCF, both documented in docs/quantization.md: the
asym range is widened to hold 0 (NNCF uses min and max as they are, and a
group wholly on one side of zero then saturates: its zero point would have
to be negative); the scale is rounded to the stored dtype first and the
codes are computed with the stored scale. A group that straddles zero
with f32 scales gets NNCF's exact codes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np
import torch

QK_K = 256
_ALIGN = 64

# name -> (bits, default group size, symmetric, default scale dtype, ggml type id)
_SCHEMES = {
    "q8_0": (8, 32, True, "f16", 8),
    "q4_0": (4, 32, True, "f16", 2),
    "q4_k": (4, QK_K, False, "f16", 12),
    "q6_k": (6, QK_K, True, "f16", 14),
    "int8_sym": (8, None, True, "f32", None),
    "int8_asym": (8, None, False, "f32", None),
    "int4_sym": (4, 128, True, "f16", None),
    "int4_asym": (4, 128, False, "f16", None),
}
# GGUF block geometry: name -> bytes per block of `group_size` elements.
_GGUF_BLOCK_BYTES = {"q8_0": 34, "q4_0": 18, "q4_k": 144, "q6_k": 210}
_SCALE_BYTES = {"f16": 2, "f32": 4}
_SCALE_NP = {"f16": np.dtype("<f2"), "f32": np.dtype("<f4")}


def _align(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


@dataclass(frozen=True)
class QuantScheme:
    """A quantized weight format (see the module docstring for the layouts).

    name: one of q8_0, q4_0, q4_k, q6_k, int8_sym, int8_asym, int4_sym,
    int4_asym. bits: bits per code. group_size: elements along K sharing a
    scale (the GGUF block size; None = one group per output channel).
    symmetric: no zero point / min. scale_dtype: "f16" or "f32".
    ggml_type: the GGUF type id, None for the int schemes.
    """

    name: str
    bits: int
    group_size: Optional[int]
    symmetric: bool
    scale_dtype: str
    ggml_type: Optional[int] = None

    def __post_init__(self):
        if self.name not in _SCHEMES:
            raise ValueError(f"unknown quantization scheme {self.name!r}; "
                             f"known: {', '.join(_SCHEMES)}")
        bits, group, sym, scale, ggml = _SCHEMES[self.name]
        if self.bits != bits:
            raise ValueError(f"unsupported bits={self.bits} for {self.name} "
                             f"(it stores {bits}-bit codes)")
        if self.symmetric != sym:
            raise ValueError(f"{self.name} is {'' if sym else 'a'}symmetric")
        if self.scale_dtype not in _SCALE_BYTES:
            raise ValueError(f"unsupported scale dtype {self.scale_dtype!r} "
                             "(f16 or f32)")
        if self.is_gguf:
            if (self.group_size, self.scale_dtype, self.ggml_type) != (group, scale, ggml):
                raise ValueError(
                    f"{self.name} is llama.cpp's fixed format: blocks of {group}, "
                    f"{scale} scales, ggml type {ggml}")
            return
        if self.ggml_type is not None:
            raise ValueError(f"{self.name} has no ggml type")
        g = self.group_size
        if g is not None and (not isinstance(g, int) or g <= 0):
            raise ValueError(f"group size must be a positive int or None, got {g!r}")
        if g is not None and self.bits == 4 and g % 32:
            raise ValueError(f"{self.name}: group size {g} is not a multiple of 32 "
                             "(4-bit codes are packed in chunks of 32)")

    @property
    def is_gguf(self) -> bool:
        return self.name in _GGUF_BLOCK_BYTES

    def resolved_group_size(self, k: int) -> int:
        """Elements per group for a row of `k` elements."""
        return k if self.group_size is None else self.group_size

    def check_shape(self, shape, what: str = "weight") -> None:
        """Raise ValueError unless a [N, K] weight (or a stack [E, N, K] of
        them: a mixture of experts' weights) fits this scheme."""
        if len(shape) not in (2, 3):
            raise ValueError(f"{what}: {self.name} quantizes 2-D [N, K] weights "
                             f"(or 3-D [E, N, K] stacks of them), got shape "
                             f"{tuple(shape)}")
        if any(int(d) <= 0 for d in shape):
            raise ValueError(f"{what}: empty shape {tuple(shape)}")
        n, k = (int(d) for d in shape[-2:])
        g = self.resolved_group_size(k)
        if k % g:
            unit = "block" if self.is_gguf else "group"
            raise ValueError(f"{what}: {unit} size {g} of {self.name} does not divide "
                             f"K={k} (shape [N, K] = {[n, k]})")
        if self.bits == 4 and not self.is_gguf and g % 32:
            raise ValueError(f"{what}: {self.name} per-channel groups need K a multiple "
                             f"of 32, got K={k}")

    def mlir_attr(self, k: int) -> str:
        """The `#attn.quant<...>` attribute of an [N, K] weight in this
        scheme (attn.quantized_matmul's `format`; the GGUF schemes print
        without their fixed group and scale)."""
        if self.is_gguf:
            return f"#attn.quant<{self.name}>"
        return (f"#attn.quant<{self.name}, group = {self.resolved_group_size(k)}, "
                f"scale = {self.scale_dtype}>")

    def row_bytes(self, k: int) -> int:
        """GGUF: bytes per row. int schemes: bytes of one row of codes."""
        if self.is_gguf:
            return k // self.group_size * _GGUF_BLOCK_BYTES[self.name]
        return k * self.bits // 8

    def sections(self, n: int, k: int) -> dict:
        """Byte offsets of the int layouts' sections (and the total size)."""
        if self.is_gguf:
            return {"codes": 0, "nbytes": n * self.row_bytes(k)}
        groups = k // self.resolved_group_size(k)
        scales = _align(n * self.row_bytes(k))
        end = scales + n * groups * _SCALE_BYTES[self.scale_dtype]
        out = {"codes": 0, "scales": scales, "nbytes": end}
        if not self.symmetric:
            out["zero_points"] = _align(end)
            out["nbytes"] = out["zero_points"] + n * groups
        return out

    def matrix_stride(self, n: int, k: int) -> int:
        """Bytes from one matrix of a stack to the next: GGUF's matrices
        follow each other unpadded (a GGUF file's [E, N, K] tensor, as
        llama.cpp stores experts); an int scheme's layout is rounded up to
        a multiple of 64 (zero padding), as its sections are."""
        size = self.sections(n, k)["nbytes"]
        return size if self.is_gguf else _align(size)

    def nbytes(self, *shape: int) -> int:
        """Bytes of an [N, K] weight, or of an [E, N, K] stack: E matrices,
        matrix e at byte e * matrix_stride(N, K)."""
        if len(shape) == 3:
            return int(shape[0]) * self.matrix_stride(*shape[1:])
        return self.sections(*shape)["nbytes"]


def get_scheme(name: Union[str, QuantScheme], group_size: Optional[int] = None,
               scale_dtype: Optional[str] = None) -> QuantScheme:
    """The scheme called `name`, with a group size / scale dtype overriding
    the defaults (int schemes only; -1 means per output channel, as in NNCF)."""
    if isinstance(name, QuantScheme):
        base = name
    else:
        if not isinstance(name, str) or name.lower() not in _SCHEMES:
            raise ValueError(f"unknown quantization scheme {name!r}; "
                             f"known: {', '.join(_SCHEMES)}")
        bits, group, sym, scale, ggml = _SCHEMES[name.lower()]
        base = QuantScheme(name.lower(), bits, group, sym, scale, ggml)
    if group_size is None and scale_dtype is None:
        return base
    if base.is_gguf:
        if group_size not in (None, base.group_size) or scale_dtype not in (None, "f16"):
            raise ValueError(f"{base.name} has fixed blocks of {base.group_size} "
                             f"with f16 scales; got group_size={group_size}, "
                             f"scale_dtype={scale_dtype}")
        return base
    changes = {}
    if group_size is not None:
        changes["group_size"] = None if group_size == -1 else group_size
    if scale_dtype is not None:
        changes["scale_dtype"] = scale_dtype
    return dataclasses.replace(base, **changes)


Q8_0, Q4_0, Q4_K, Q6_K = (get_scheme(n) for n in ("q8_0", "q4_0", "q4_k", "q6_k"))
INT8_SYM, INT8_ASYM, INT4_SYM, INT4_ASYM = (
    get_scheme(n) for n in ("int8_sym", "int8_asym", "int4_sym", "int4_asym"))
GGUF_SCHEMES = {s.ggml_type: s for s in (Q8_0, Q4_0, Q4_K, Q6_K)}


@dataclass(frozen=True, eq=False)
class QuantizedTensor:
    """A quantized [N, K] weight: `data` is the 1-D uint8 buffer in the
    scheme's layout (possibly a read-only memory-mapped view of a file),
    `shape` is (N, K), `scheme` says how to read it. A stack of E such
    weights (a mixture of experts' [E, N, K] parameter) has shape (E, N,
    K) and holds the matrices' layouts one after another,
    `QuantScheme.matrix_stride` apart; `matrix(e)` is one of them."""

    data: np.ndarray
    shape: tuple
    scheme: QuantScheme

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        self.scheme.check_shape(self.shape)
        d = self.data
        if not isinstance(d, np.ndarray) or d.dtype != np.uint8 or d.ndim != 1:
            raise ValueError("QuantizedTensor.data must be a 1-D uint8 numpy array")
        if not d.flags.c_contiguous:
            raise ValueError("QuantizedTensor.data must be contiguous")
        want = self.scheme.nbytes(*self.shape)
        if d.size != want:
            raise ValueError(f"{self.scheme.name} {list(self.shape)} takes {want} bytes, "
                             f"data has {d.size}")

    @property
    def group_size(self) -> int:
        return self.scheme.resolved_group_size(self.shape[-1])

    @property
    def is_stack(self) -> bool:
        return len(self.shape) == 3

    def matrix(self, e: int) -> "QuantizedTensor":
        """Matrix `e` of a stack (a view of its bytes)."""
        if not self.is_stack:
            raise ValueError("matrix(): not a stack of matrices")
        n, k = self.shape[1:]
        if not 0 <= e < self.shape[0]:
            raise ValueError(f"matrix {e} of a stack of {self.shape[0]}")
        start = e * self.scheme.matrix_stride(n, k)
        return QuantizedTensor(self.data[start:start + self.scheme.nbytes(n, k)],
                               (n, k), self.scheme)

    @property
    def num_groups(self) -> int:
        return self.shape[-1] // self.group_size

    @property
    def nbytes(self) -> int:
        return self.data.size

    def _need_matrix(self, what: str) -> None:
        if self.is_stack:
            raise ValueError(f"a stack of {self.shape[0]} matrices: read its "
                             f"{what} per matrix (matrix(e))")

    def _section(self, name: str, size: int) -> np.ndarray:
        start = self.scheme.sections(*self.shape)[name]
        return self.data[start:start + size]

    def rows(self) -> np.ndarray:
        """The codes as [N, row_bytes] uint8 (GGUF: the rows of blocks)."""
        self._need_matrix("rows")
        n, k = self.shape
        rb = self.scheme.row_bytes(k)
        return self._section("codes", n * rb).reshape(n, rb)

    def scales(self) -> np.ndarray:
        """int schemes: the [N, G] scales as stored (f16 or f32)."""
        self._need_int("scales")
        self._need_matrix("scales")
        n, g = self.shape[0], self.num_groups
        raw = self._section("scales", n * g * _SCALE_BYTES[self.scheme.scale_dtype])
        return raw.view(_SCALE_NP[self.scheme.scale_dtype]).reshape(n, g)

    def zero_points(self) -> Optional[np.ndarray]:
        """int asym schemes: the [N, G] uint8 zero points (None when sym)."""
        self._need_int("zero points")
        self._need_matrix("zero points")
        if self.scheme.symmetric:
            return None
        n, g = self.shape[0], self.num_groups
        return self._section("zero_points", n * g).reshape(n, g)

    def _need_int(self, what: str) -> None:
        if self.scheme.is_gguf:
            raise ValueError(f"{self.scheme.name} keeps its {what} inside its blocks")

    def permute_rows(self, perm) -> "QuantizedTensor":
        """A copy whose row n is this tensor's row perm[n]. Rows are
        independent in every layout (blocks and groups run along K), so this
        is exact: dequantize(t.permute_rows(p)) == dequantize(t)[p]."""
        self._need_matrix("rows")
        perm = np.asarray(perm, dtype=np.int64)
        n = self.shape[0]
        if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
            raise ValueError(f"not a permutation of {n} rows")
        out = np.zeros(self.data.size, dtype=np.uint8)
        sec = self.scheme.sections(*self.shape)
        parts = [("codes", self.rows())]
        if not self.scheme.is_gguf:
            parts.append(("scales", self.scales().view(np.uint8).reshape(n, -1)))
            if not self.scheme.symmetric:
                parts.append(("zero_points", self.zero_points()))
        for name, rows in parts:
            block = rows[perm]
            out[sec[name]:sec[name] + block.size] = block.reshape(-1)
        return QuantizedTensor(out, self.shape, self.scheme)

    def dequantize(self) -> torch.Tensor:
        return dequantize(self)


def _as_float32_matrix(weight, scheme: QuantScheme, name: str) -> np.ndarray:
    """Validate a float weight and return it as a float32 numpy [N, K]."""
    what = name or "weight"
    if isinstance(weight, torch.Tensor):
        if not weight.is_floating_point():
            raise ValueError(f"{what}: expected a floating-point tensor, got {weight.dtype}")
        w = weight.detach().to("cpu", torch.float32).numpy()
    elif isinstance(weight, np.ndarray):
        if weight.dtype.kind != "f":
            raise ValueError(f"{what}: expected a floating-point array, got {weight.dtype}")
        w = weight.astype(np.float32)
    else:
        raise ValueError(f"{what}: expected a torch.Tensor, got {type(weight).__name__}")
    scheme.check_shape(w.shape, what)
    if not np.isfinite(w).all():
        raise ValueError(f"{what}: holds NaN or infinite values; cannot quantize")
    return np.ascontiguousarray(w)


def quantize(weight, scheme: Union[str, QuantScheme], group_size: Optional[int] = None,
             *, scale_dtype: Optional[str] = None, name: str = "") -> QuantizedTensor:
    """Quantize a float [N, K] weight (data-free, round-to-nearest), or
    each matrix of an [E, N, K] stack.

    scheme: a name or a QuantScheme; group_size / scale_dtype override the
    scheme's (int schemes; -1 = per output channel). `name` labels errors.
    Raises ValueError for a non-2-D or non-float weight, NaN/inf values, a
    group size that does not divide K, or q4_k/q6_k (no quantizer).
    """
    scheme = get_scheme(scheme, group_size, scale_dtype)
    w = _as_float32_matrix(weight, scheme, name)
    if w.ndim == 3:
        out = np.zeros(scheme.nbytes(*w.shape), dtype=np.uint8)
        stride = scheme.matrix_stride(*w.shape[1:])
        for e, m in enumerate(w):
            data = quantize(m, scheme, name=f"{name or 'weight'}[{e}]").data
            out[e * stride:e * stride + data.size] = data
        return QuantizedTensor(out, w.shape, scheme)
    if scheme.is_gguf:
        data = _quantize_gguf(w, scheme, name or "weight")
    else:
        data = _quantize_int(w, scheme, name or "weight")
    return QuantizedTensor(data, w.shape, scheme)


def _quantize_gguf(w: np.ndarray, scheme: QuantScheme, what: str) -> np.ndarray:
    if scheme.name not in ("q8_0", "q4_0"):
        raise ValueError(
            f"{what}: quantizing to {scheme.name} is not supported (the gguf package "
            "has no Python quantizer for it, and a port of llama.cpp's search would "
            f"not be bit-exact); {scheme.name} weights are read from GGUF files only")
    try:
        from gguf import GGMLQuantizationType, quants
    except ImportError as e:  # pragma: no cover - the package is a pinned dependency
        raise ImportError("quantizing to q8_0/q4_0 needs the `gguf` package "
                          "(scripts/install-python-deps.sh installs it)") from e
    rows = quants.quantize(w, GGMLQuantizationType(scheme.ggml_type))
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    d = rows.reshape(-1, _GGUF_BLOCK_BYTES[scheme.name])[:, :2].copy().view("<f2")
    if not np.isfinite(d).all():
        raise ValueError(f"{what}: values too large for {scheme.name}'s f16 block "
                         "scales (max |w| must stay below ~65504 * 127 or * 8)")
    return rows.reshape(-1)


def _store_scale(scale: np.ndarray, scheme: QuantScheme, what: str) -> np.ndarray:
    """Round f32 scales to the stored dtype; refuse ones that overflow."""
    with np.errstate(over="ignore"):
        stored = scale.astype(_SCALE_NP[scheme.scale_dtype])
    if not np.isfinite(stored).all():
        raise ValueError(f"{what}: a group's scale overflows {scheme.scale_dtype} "
                         "(weights too large); use scale_dtype='f32'")
    # |scale| >= eps(f32) = 2**-23, two f16 subnormals: never rounds to 0.
    return stored


def _nncf_codes(wg: np.ndarray, scheme: QuantScheme, what: str):
    """NNCF's data-free integer quantization of [N, G, g] float32 groups:
    returns (stored scales [N, G], zero points [N, G] or None, int codes)."""
    eps = np.finfo(np.float32).eps
    if scheme.symmetric:
        factor = np.float32(2 ** (scheme.bits - 1))
        w_abs_min = np.abs(wg.min(axis=-1))
        w_max = wg.max(axis=-1)
        scale = np.where(w_abs_min >= w_max, w_abs_min, -w_max).astype(np.float32) / factor
        scale = np.where(np.abs(scale) < eps, eps, scale).astype(np.float32)
        stored = _store_scale(scale, scheme, what)
        s = stored.astype(np.float32)[..., None]
        q = np.clip(np.round(wg / s), -factor, factor - 1)
        return stored, None, q.astype(np.int32)
    high = np.float32(2 ** scheme.bits - 1)
    # The range always holds 0 (NNCF's does not: a group wholly on one side
    # of zero would need a zero point outside 0..2^b-1 and saturate).
    lo = np.minimum(wg.min(axis=-1), np.float32(0))
    hi = np.maximum(wg.max(axis=-1), np.float32(0))
    scale = ((hi - lo) / high).astype(np.float32)
    scale = np.where(np.abs(scale) < eps, eps, scale).astype(np.float32)
    stored = _store_scale(scale, scheme, what)
    s = stored.astype(np.float32)
    zp = np.clip(-np.round(lo / s), 0, high).astype(np.int32)
    q = np.clip(np.round(wg / s[..., None] + zp[..., None].astype(np.float32)), 0, high)
    return stored, zp, q.astype(np.int32)


def _pack_nibbles(u: np.ndarray) -> np.ndarray:
    """[N, K] codes in 0..15 -> [N, K/2] bytes, q4_0's order per 32."""
    n, k = u.shape
    chunks = u.astype(np.uint8).reshape(n, k // 32, 2, 16)
    return (chunks[:, :, 0, :] | (chunks[:, :, 1, :] << 4)).reshape(n, k // 2)


def _unpack_nibbles(rows: np.ndarray, k: int) -> np.ndarray:
    """[N, K/2] bytes -> [N, K] codes in 0..15 (inverse of _pack_nibbles)."""
    n = rows.shape[0]
    chunks = rows.reshape(n, k // 32, 1, 16)
    both = np.concatenate([chunks & 0x0F, chunks >> 4], axis=2)
    return both.reshape(n, k)


def _quantize_int(w: np.ndarray, scheme: QuantScheme, what: str) -> np.ndarray:
    n, k = w.shape
    g = scheme.resolved_group_size(k)
    stored, zp, q = _nncf_codes(w.reshape(n, k // g, g), scheme, what)
    q = q.reshape(n, k)
    if scheme.bits == 8:
        codes = q.astype(np.int8 if scheme.symmetric else np.uint8).view(np.uint8)
    else:
        codes = _pack_nibbles(q + 8 if scheme.symmetric else q)
    sec = scheme.sections(n, k)
    out = np.zeros(sec["nbytes"], dtype=np.uint8)
    out[:codes.size] = codes.reshape(-1)
    raw = np.ascontiguousarray(stored).view(np.uint8).reshape(-1)
    out[sec["scales"]:sec["scales"] + raw.size] = raw
    if zp is not None:
        out[sec["zero_points"]:sec["zero_points"] + zp.size] = zp.astype(np.uint8).reshape(-1)
    return out


# ---- exact dequantization (the kernels' reference) -------------------------

def _f16(blocks: np.ndarray, start: int) -> np.ndarray:
    """The f16 field at byte `start` of each block, widened to f32 [B, 1]."""
    return blocks[:, start:start + 2].copy().view("<f2").astype(np.float32)


def _deq_q8_0(b: np.ndarray) -> np.ndarray:
    return b[:, 2:].view(np.int8).astype(np.float32) * _f16(b, 0)


def _deq_q4_0(b: np.ndarray) -> np.ndarray:
    qs = b[:, 2:18]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int16) - 8
    return q.astype(np.float32) * _f16(b, 0)


def _deq_q4_k(b: np.ndarray) -> np.ndarray:
    d, dmin, s, qs = _f16(b, 0), _f16(b, 2), b[:, 4:16], b[:, 16:144]
    sc = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 15) | ((s[:, 0:4] >> 6) << 4)], axis=1)
    m = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)], axis=1)
    d1 = (d * sc.astype(np.float32))[:, :, None]        # [B, 8, 1]
    m1 = (dmin * m.astype(np.float32))[:, :, None]
    chunks = qs.reshape(-1, 4, 1, 32)
    q = np.concatenate([chunks & 0x0F, chunks >> 4], axis=2).reshape(-1, 8, 32)
    return (d1 * q.astype(np.float32) - m1).reshape(-1, QK_K)


def _deq_q6_k(b: np.ndarray) -> np.ndarray:
    ql, qh = b[:, 0:128].reshape(-1, 2, 64), b[:, 128:192].reshape(-1, 2, 32)
    sc = b[:, 192:208].view(np.int8).astype(np.float32).reshape(-1, 16)
    d = _f16(b, 208)
    lo = np.stack([ql[:, :, :32] & 15, ql[:, :, 32:] & 15, ql[:, :, :32] >> 4, ql[:, :, 32:] >> 4], axis=2)
    hi = np.stack([(qh >> s) & 3 for s in (0, 2, 4, 6)], axis=2)
    q = (lo | (hi << 4)).astype(np.int16) - 32          # [B, 2 halves, 4, 32]
    scale = (d * sc).reshape(-1, 2, 4, 2, 1)             # 16 elements per scale
    return (scale * q.reshape(-1, 2, 4, 2, 16).astype(np.float32)).reshape(-1, QK_K)


_GGUF_DEQUANT = {"q8_0": _deq_q8_0, "q4_0": _deq_q4_0, "q4_k": _deq_q4_k, "q6_k": _deq_q6_k}


def _dequantize_int(qt: QuantizedTensor) -> np.ndarray:
    n, k = qt.shape
    rows = qt.rows()
    if qt.scheme.bits == 8:
        codes = rows.view(np.int8 if qt.scheme.symmetric else np.uint8).astype(np.int32)
    else:
        codes = _unpack_nibbles(rows, k).astype(np.int32)
        if qt.scheme.symmetric:
            codes -= 8
    codes = codes.reshape(n, qt.num_groups, qt.group_size)
    zp = qt.zero_points()
    if zp is not None:
        codes -= zp.astype(np.int32)[..., None]
    scale = qt.scales().astype(np.float32)[..., None]
    return (codes.astype(np.float32) * scale).reshape(n, k)


def dequantize(qt: QuantizedTensor) -> torch.Tensor:
    """The exact float32 [N, K] values a kernel computes from `qt`'s bytes
    (formulas in the module docstring); [E, N, K] for a stack."""
    if not isinstance(qt, QuantizedTensor):
        raise ValueError(f"expected a QuantizedTensor, got {type(qt).__name__}")
    if qt.is_stack:
        return torch.stack([dequantize(qt.matrix(e)) for e in range(qt.shape[0])])
    n, k = qt.shape
    if qt.scheme.is_gguf:
        blocks = qt.rows().reshape(-1, _GGUF_BLOCK_BYTES[qt.scheme.name])
        out = _GGUF_DEQUANT[qt.scheme.name](blocks).reshape(n, k)
    else:
        out = _dequantize_int(qt)
    return torch.from_numpy(np.ascontiguousarray(out, dtype=np.float32))


def reference_linear(x: torch.Tensor, qt: QuantizedTensor,
                     bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """float64 reference of `x @ W.T + bias` for the dequantized weight W:
    x is [..., K]; returns float64 [..., N]. For testing kernels."""
    if qt.is_stack:
        raise ValueError("reference_linear: an [N, K] weight, not a stack")
    n, k = qt.shape
    if x.shape[-1] != k:
        raise ValueError(f"input's last dimension {x.shape[-1]} != weight's K={k}")
    out = x.detach().cpu().double() @ dequantize(qt).double().T
    if bias is not None:
        if tuple(bias.shape) != (n,):
            raise ValueError(f"bias shape {tuple(bias.shape)} != ({n},)")
        out = out + bias.detach().cpu().double()
    return out
