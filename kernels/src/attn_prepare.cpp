// Pure-host argument validation for attn_cuda_sdpa_fwd and the translation of
// the public ABI struct into the kernels' FwdParams. No CUDA headers, no CUDA
// calls: this file is also compiled into the CPU emulation test.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>

#include "fwd_params.h"

namespace attn {
namespace detail {
namespace {

attn_status fail(attn_status st, char* err, size_t err_len, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

attn_status fail(attn_status st, char* err, size_t err_len, const char* fmt, ...) {
  if (err && err_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return st;
}

constexpr int64_t kMaxGridYZ = 65535;
// Loop indices inside the kernels are 32-bit; keep a margin for "index + tile".
constexpr int64_t kMaxLen = static_cast<int64_t>(std::numeric_limits<int32_t>::max()) - 1024;

const char* const kDimNames[4] = {"B", "H", "L/S", "E"};

// Checks the sizes of one tensor are positive.
attn_status check_sizes(const char* name, const attn_tensor4& t, char* err, size_t err_len) {
  for (int d = 0; d < 4; ++d) {
    if (t.sizes[d] <= 0) {
      return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "%s.sizes[%d] (%s) must be positive, got %" PRId64, name, d,
                  kDimNames[d], t.sizes[d]);
    }
  }
  return ATTN_OK;
}

// Checks strides of q/k/v/out: last dim contiguous, non-negative, rows 16-byte
// aligned (cp.async moves 16-byte chunks), offsets representable.
attn_status check_strides(const char* name, const attn_tensor4& t, bool is_output, int64_t esize, char* err,
                          size_t err_len) {
  if (t.sizes[3] > 1 && t.strides[3] != 1) {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len,
                "%s.strides[3] must be 1 (last dim contiguous), got %" PRId64, name, t.strides[3]);
  }
  for (int d = 0; d < 3; ++d) {
    if (t.sizes[d] == 1) continue;  // stride of a size-1 dim is never used
    const int64_t s = t.strides[d];
    if (s < 0) {
      return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "%s.strides[%d]=%" PRId64 " is negative (unsupported)", name, d, s);
    }
    if (is_output && s == 0) {
      return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                  "%s.strides[%d] is 0 (broadcast) but %s.sizes[%d]=%" PRId64 " > 1: an output cannot broadcast",
                  name, d, name, d, t.sizes[d]);
    }
    if (s % (16 / esize) != 0) {
      return fail(ATTN_ERR_UNSUPPORTED, err, err_len,
                  "%s.strides[%d]=%" PRId64 " is not a multiple of %d elements: rows must be 16-byte aligned", name, d,
                  s, static_cast<int>(16 / esize));
    }
    int64_t span = 0;
    if (__builtin_mul_overflow(t.sizes[d] - 1, s, &span) || span > (std::numeric_limits<int64_t>::max() >> 3)) {
      return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "%s: offset of the last element along dim %d overflows",
                  name, d);
    }
  }
  return ATTN_OK;
}

attn_status check_aligned16(const char* name, const void* p, char* err, size_t err_len) {
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "%s.data (%p) is not 16-byte aligned (misaligned pointer)", name, p);
  }
  return ATTN_OK;
}

#define ATTN_TRY(expr)                  \
  do {                                  \
    attn_status st__ = (expr);          \
    if (st__ != ATTN_OK) return st__;   \
  } while (0)

}  // namespace

DecodePlan decode_split_plan(int64_t B, int64_t Hkv, int64_t group, int64_t L, int64_t S, int64_t Ev) {
  DecodePlan d;
  if (L > kDecMaxL) return d;
  const int64_t rows = group * L;  // packed (head, query) rows per kv head
  const int64_t base_blocks = B * Hkv * ((rows + kDecRows - 1) / kDecRows);
  const int64_t want = std::min<int64_t>(S / kDecMinKeys, (kDecTargetBlocks + base_blocks - 1) / base_blocks);
  if (want < 2) return d;
  const int64_t len = ((S + want - 1) / want + kDecTileN - 1) / kDecTileN * kDecTileN;
  const int64_t splits = (S + len - 1) / len;
  if (splits < 2) return d;
  d.n_splits = static_cast<int>(splits);
  d.split_len = static_cast<int>(len);
  d.bytes = static_cast<size_t>(B * Hkv * splits * rows * (Ev + 1)) * sizeof(float);
  return d;
}

namespace {

// The problem's sizes, from q ([B, Hq, L, E]), k ([., Hkv, S, .]) and v (Ev).
struct Shape {
  int64_t B, Hq, L, E, Hkv, S, Ev;
};

// The enums: dtype, mask kind, mask polarity (DROP needs a BOOL mask).
attn_status check_enums(const attn_sdpa_fwd_args& a, char* err, size_t err_len) {
  if (a.dtype != ATTN_DTYPE_F16 && a.dtype != ATTN_DTYPE_BF16 && a.dtype != ATTN_DTYPE_F32) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "unknown dtype %d (expected ATTN_DTYPE_F16=0, ATTN_DTYPE_BF16=1 or ATTN_DTYPE_F32=2)",
                static_cast<int>(a.dtype));
  }
  if (a.mask_kind != ATTN_MASK_NONE && a.mask_kind != ATTN_MASK_BOOL && a.mask_kind != ATTN_MASK_ADDITIVE) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "unknown mask_kind %d (expected ATTN_MASK_NONE=0, ATTN_MASK_BOOL=1 or ATTN_MASK_ADDITIVE=2)",
                static_cast<int>(a.mask_kind));
  }
  if (a.mask_polarity != ATTN_MASK_KEEP && a.mask_polarity != ATTN_MASK_DROP) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "unknown mask_polarity %d (expected ATTN_MASK_KEEP=0 or ATTN_MASK_DROP=1)",
                static_cast<int>(a.mask_polarity));
  }
  if (a.mask_polarity == ATTN_MASK_DROP && a.mask_kind != ATTN_MASK_BOOL) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "mask_polarity ATTN_MASK_DROP needs a BOOL mask (mask_kind is %d)", static_cast<int>(a.mask_kind));
  }
  return ATTN_OK;
}

// Non-null data and positive sizes of every tensor the call reads or writes.
attn_status check_tensors_present(const attn_sdpa_fwd_args& a, bool has_mask, char* err, size_t err_len) {
  if (!a.q.data) return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "q.data is NULL");
  if (!a.k.data) return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "k.data is NULL");
  if (!a.v.data) return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "v.data is NULL");
  if (!a.out.data) return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "out.data is NULL");
  if (has_mask && !a.mask.data) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "mask.data is NULL but mask_kind is %d", static_cast<int>(a.mask_kind));
  }
  ATTN_TRY(check_sizes("q", a.q, err, err_len));
  ATTN_TRY(check_sizes("k", a.k, err, err_len));
  ATTN_TRY(check_sizes("v", a.v, err, err_len));
  ATTN_TRY(check_sizes("out", a.out, err, err_len));
  if (has_mask) ATTN_TRY(check_sizes("mask", a.mask, err, err_len));
  return ATTN_OK;
}

// k, v and out agree with q: batch, kv heads (dividing Hq), S, E, out shape.
attn_status check_shape_agreement(const attn_sdpa_fwd_args& a, const Shape& sh, char* err, size_t err_len) {
  if (a.k.sizes[0] != sh.B || a.v.sizes[0] != sh.B || a.out.sizes[0] != sh.B) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "batch mismatch: q.sizes[0]=%" PRId64 ", k.sizes[0]=%" PRId64 ", v.sizes[0]=%" PRId64
                ", out.sizes[0]=%" PRId64,
                sh.B, a.k.sizes[0], a.v.sizes[0], a.out.sizes[0]);
  }
  if (a.v.sizes[1] != sh.Hkv) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "kv head mismatch: k.sizes[1]=%" PRId64 " but v.sizes[1]=%" PRId64, sh.Hkv, a.v.sizes[1]);
  }
  if (sh.Hq % sh.Hkv != 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "Hq %% Hkv != 0: q has %" PRId64 " heads, k/v have %" PRId64 " (GQA needs Hq a multiple of Hkv)", sh.Hq,
                sh.Hkv);
  }
  if (a.v.sizes[2] != sh.S) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "sequence mismatch: k.sizes[2] (S)=%" PRId64 " but v.sizes[2]=%" PRId64, sh.S, a.v.sizes[2]);
  }
  if (a.k.sizes[3] != sh.E) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "head dim mismatch: q.sizes[3] (E)=%" PRId64 " but k.sizes[3]=%" PRId64, sh.E, a.k.sizes[3]);
  }
  if (a.out.sizes[1] != sh.Hq || a.out.sizes[2] != sh.L || a.out.sizes[3] != sh.Ev) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "out shape mismatch: expected [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] (B, Hq, L, Ev), got [%" PRId64
                ", %" PRId64 ", %" PRId64 ", %" PRId64 "]",
                sh.B, sh.Hq, sh.L, sh.Ev, a.out.sizes[0], a.out.sizes[1], a.out.sizes[2], a.out.sizes[3]);
  }
  return ATTN_OK;
}

// The kernel a problem of these head dims runs on (sdpa_contract.h), or
// ATTN_ERR_UNSUPPORTED.
attn_status choose_path(attn_dtype dtype, const Shape& sh, KernelPath* path, char* err, size_t err_len) {
  if (cuda::uses_tensor_cores(dtype, sh.E, sh.Ev)) {
    *path = KernelPath::TensorCore;
  } else if (cuda::is_supported_head_dim(sh.E) && cuda::is_supported_head_dim(sh.Ev)) {
    *path = KernelPath::Generic;
  } else {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len,
                "unsupported head dim E=%" PRId64 ", Ev=%" PRId64
                ": the tensor-core kernel (f16/bf16) needs E == Ev in {64, 128}; the generic kernel needs E and Ev "
                "multiples of 8 and <= %d",
                sh.E, sh.Ev, kGenMaxHeadDim);
  }
  return ATTN_OK;
}

// Size limits of the launch configuration and of the 32-bit loop indices.
attn_status check_size_limits(const Shape& sh, char* err, size_t err_len) {
  if (sh.B > kMaxGridYZ) {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "batch B=%" PRId64 " exceeds the supported maximum %" PRId64, sh.B,
                kMaxGridYZ);
  }
  if (sh.Hq > kMaxGridYZ) {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "heads Hq=%" PRId64 " exceeds the supported maximum %" PRId64, sh.Hq,
                kMaxGridYZ);
  }
  if (sh.L > kMaxLen || sh.S > kMaxLen) {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "sequence length L=%" PRId64 " / S=%" PRId64 " exceeds %" PRId64, sh.L,
                sh.S, kMaxLen);
  }
  return ATTN_OK;
}

// Strides and alignment of q, k, v and out.
attn_status check_layouts(const attn_sdpa_fwd_args& a, int64_t esize, char* err, size_t err_len) {
  ATTN_TRY(check_strides("q", a.q, false, esize, err, err_len));
  ATTN_TRY(check_strides("k", a.k, false, esize, err, err_len));
  ATTN_TRY(check_strides("v", a.v, false, esize, err, err_len));
  ATTN_TRY(check_strides("out", a.out, true, esize, err, err_len));
  ATTN_TRY(check_aligned16("q", a.q.data, err, err_len));
  ATTN_TRY(check_aligned16("k", a.k.data, err, err_len));
  ATTN_TRY(check_aligned16("v", a.v.data, err, err_len));
  ATTN_TRY(check_aligned16("out", a.out.data, err, err_len));
  return ATTN_OK;
}

// The mask's shape (broadcast to [B, Hq, L, S]), strides and alignment; its
// batch, head and row strides, 0 where it broadcasts, go to `strides`.
attn_status check_mask(const attn_sdpa_fwd_args& a, const Shape& sh, int64_t esize, int64_t (&strides)[3], char* err,
                       size_t err_len) {
  const attn_tensor4& m = a.mask;
  if (m.sizes[0] != 1 && m.sizes[0] != sh.B) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "bad mask shape: mask.sizes[0]=%" PRId64 " must be 1 or B=%" PRId64,
                m.sizes[0], sh.B);
  }
  if (m.sizes[1] != 1 && m.sizes[1] != sh.Hq) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "bad mask shape: mask.sizes[1]=%" PRId64 " must be 1 or Hq=%" PRId64, m.sizes[1], sh.Hq);
  }
  if (m.sizes[2] != 1 && m.sizes[2] != sh.L) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "bad mask shape: mask.sizes[2]=%" PRId64 " must be 1 or L=%" PRId64,
                m.sizes[2], sh.L);
  }
  if (m.sizes[3] != sh.S) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "bad mask shape: mask.sizes[3]=%" PRId64 " must equal S=%" PRId64,
                m.sizes[3], sh.S);
  }
  if (sh.S > 1 && m.strides[3] != 1) {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "mask.strides[3] must be 1 (last dim contiguous), got %" PRId64,
                m.strides[3]);
  }
  for (int d = 0; d < 3; ++d) {
    if (m.sizes[d] == 1) continue;
    if (m.strides[d] < 0) {
      return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "mask.strides[%d]=%" PRId64 " is negative (unsupported)", d,
                  m.strides[d]);
    }
    int64_t span = 0;
    if (__builtin_mul_overflow(m.sizes[d] - 1, m.strides[d], &span) ||
        span > (std::numeric_limits<int64_t>::max() >> 3)) {
      return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "mask: offset of the last element along dim %d overflows", d);
    }
  }
  if (a.mask_kind == ATTN_MASK_ADDITIVE && reinterpret_cast<uintptr_t>(m.data) % esize != 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "mask.data (%p) is not %d-byte aligned for a %d-bit additive mask",
                m.data, static_cast<int>(esize), static_cast<int>(8 * esize));
  }
  for (int d = 0; d < 3; ++d) strides[d] = m.sizes[d] == 1 ? 0 : m.strides[d];
  return ATTN_OK;
}

// The scalars and the optional outputs: lse alignment, scale, masked_value,
// safe_softmax, and the workspace of a problem that splits its keys.
attn_status check_scalars(const attn_sdpa_fwd_args& a, const DecodePlan& plan, char* err, size_t err_len) {
  if (a.lse && reinterpret_cast<uintptr_t>(a.lse) % 4 != 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "lse (%p) is not 4-byte aligned", static_cast<void*>(a.lse));
  }
  if (!std::isfinite(a.scale)) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "scale must be finite, got %g", static_cast<double>(a.scale));
  }
  if (std::isnan(a.masked_value)) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "masked_value is NaN");
  }
  if (a.safe_softmax != 0 && a.safe_softmax != 1) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "safe_softmax is %d (expected 0 or 1)", a.safe_softmax);
  }
  const bool split = a.workspace != nullptr && plan.n_splits > 1;
  if (split && a.workspace_bytes < plan.bytes) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "workspace_bytes=%zu is less than the %zu bytes this problem splits into "
                "(attn_cuda_sdpa_fwd_workspace_size)",
                a.workspace_bytes, plan.bytes);
  }
  if (split && reinterpret_cast<uintptr_t>(a.workspace) % 16 != 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "workspace (%p) is not 16-byte aligned", a.workspace);
  }
  return ATTN_OK;
}

// The sequence lengths: their type, the padding side, the pointers'
// alignment, what the packed layout needs and excludes. `*z` gets the grid's
// z extent: B, or B x num_seqs when packed. (The lengths themselves are in
// device memory: the kernels clamp them, see seq_view.h.)
attn_status check_lengths(const attn_sdpa_fwd_args& a, const Shape& sh, bool has_mask, int64_t* z, char* err,
                          size_t err_len) {
  *z = sh.B;
  if (a.lengths_type != ATTN_INDEX_I32 && a.lengths_type != ATTN_INDEX_I64) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "unknown lengths_type %d (expected ATTN_INDEX_I32=0 or ATTN_INDEX_I64=1)", static_cast<int>(a.lengths_type));
  }
  if (a.padding_side != ATTN_PAD_RIGHT && a.padding_side != ATTN_PAD_LEFT && a.padding_side != ATTN_PAD_PACKED) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "unknown padding_side %d (expected ATTN_PAD_RIGHT=0, ATTN_PAD_LEFT=1 or ATTN_PAD_PACKED=2)",
                static_cast<int>(a.padding_side));
  }
  const size_t isize = a.lengths_type == ATTN_INDEX_I64 ? 8 : 4;
  if (a.q_lengths && reinterpret_cast<uintptr_t>(a.q_lengths) % isize != 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "q_lengths (%p) is not %d-byte aligned", a.q_lengths,
                static_cast<int>(isize));
  }
  if (a.kv_lengths && reinterpret_cast<uintptr_t>(a.kv_lengths) % isize != 0) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "kv_lengths (%p) is not %d-byte aligned", a.kv_lengths,
                static_cast<int>(isize));
  }
  const bool lengths = a.q_lengths || a.kv_lengths;
  if (lengths && !(std::isinf(a.masked_value) && a.masked_value < 0)) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "masked_value must be -INFINITY with sequence lengths, got %g", static_cast<double>(a.masked_value));
  }
  if (a.padding_side != ATTN_PAD_PACKED) return ATTN_OK;
  if (!a.q_lengths || !a.kv_lengths) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "padding_side ATTN_PAD_PACKED needs both q_lengths and kv_lengths");
  }
  if (a.num_seqs < 1) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                "num_seqs is %" PRId64 ": padding_side ATTN_PAD_PACKED needs at least one sequence", a.num_seqs);
  }
  if (has_mask) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "padding_side ATTN_PAD_PACKED takes no mask (mask_kind is %d)",
                static_cast<int>(a.mask_kind));
  }
  if (a.num_seqs > kMaxGridYZ / sh.B) {
    return fail(ATTN_ERR_UNSUPPORTED, err, err_len,
                "B x num_seqs = %" PRId64 " x %" PRId64 " packed sequences exceed the supported maximum %" PRId64, sh.B,
                a.num_seqs, kMaxGridYZ);
  }
  *z = sh.B * a.num_seqs;
  return ATTN_OK;
}

// The tensors of a validated problem: pointers, sizes and strides (a size-1
// dim's stride is 0, so that indexing never needs a size check).
void pack_tensors(const attn_sdpa_fwd_args& a, const Shape& sh, bool has_mask, const int64_t (&m_strides)[3],
                  FwdParams& p) {
  p.q = a.q.data;
  p.k = a.k.data;
  p.v = a.v.data;
  p.out = a.out.data;
  p.mask = has_mask ? a.mask.data : nullptr;
  p.lse = a.lse;
  auto nz = [](const attn_tensor4& t, int d) { return t.sizes[d] == 1 ? int64_t{0} : t.strides[d]; };
  p.q_sb = nz(a.q, 0);
  p.q_sh = nz(a.q, 1);
  p.q_sl = nz(a.q, 2);
  p.k_sb = nz(a.k, 0);
  p.k_sh = nz(a.k, 1);
  p.k_sl = nz(a.k, 2);
  p.v_sb = nz(a.v, 0);
  p.v_sh = nz(a.v, 1);
  p.v_sl = nz(a.v, 2);
  p.o_sb = nz(a.out, 0);
  p.o_sh = nz(a.out, 1);
  p.o_sl = nz(a.out, 2);
  p.m_sb = m_strides[0];
  p.m_sh = m_strides[1];
  p.m_sl = m_strides[2];
  p.B = static_cast<int>(sh.B);
  p.Hq = static_cast<int>(sh.Hq);
  p.Hkv = static_cast<int>(sh.Hkv);
  p.L = static_cast<int>(sh.L);
  p.S = static_cast<int>(sh.S);
  p.E = static_cast<int>(sh.E);
  p.Ev = static_cast<int>(sh.Ev);
  p.group = static_cast<int>(sh.Hq / sh.Hkv);
}

// The scalars in the kernels' terms: the log2-domain scale and masked value
// (rounded to the dtype first), the band with is_causal folded in, flags.
void pack_scalars(const attn_sdpa_fwd_args& a, FwdParams& p) {
  const bool f32 = a.dtype == ATTN_DTYPE_F32;
  const bool bf16 = a.dtype == ATTN_DTYPE_BF16;
  constexpr double kLog2e = 1.4426950408889634;
  p.scale = a.scale;
  p.scale_log2 = static_cast<float>(static_cast<double>(a.scale) * kLog2e);
  // "as if a f16/bf16 tensor held it": -1e9 becomes -inf in f16, stays finite in bf16.
  const float mv = f32 ? a.masked_value : round_to_dtype(a.masked_value, bf16);
  p.masked_value_rounded = mv;
  if (std::isinf(mv)) {
    p.masked_log2 = mv;
  } else {
    double m2 = static_cast<double>(mv) * kLog2e;
    const double fmax = static_cast<double>(std::numeric_limits<float>::max());
    if (m2 > fmax) m2 = fmax;
    if (m2 < -fmax) m2 = -fmax;
    p.masked_log2 = static_cast<float>(m2);
  }
  p.mask_kind = static_cast<int>(a.mask_kind);
  p.mask_drop = a.mask_polarity == ATTN_MASK_DROP ? 1 : 0;
  p.is_causal = a.is_causal ? 1 : 0;
  p.safe_softmax = a.safe_softmax;
  auto clampWin = [](int64_t w) { return static_cast<int>(std::max<int64_t>(-kWinNone, std::min<int64_t>(w, kWinNone))); };
  p.win_left = clampWin(a.window_left);
  p.win_right = clampWin(a.is_causal ? std::min<int64_t>(a.window_right, 0) : a.window_right);
  p.has_band = (p.win_left != kWinNone || p.win_right != kWinNone) ? 1 : 0;
  p.band_skip = (p.has_band && std::isinf(mv) && mv < 0) ? 1 : 0;
  p.is_bf16 = bf16 ? 1 : 0;
  p.is_f32 = f32 ? 1 : 0;
}

}  // namespace

attn_status prepare_fwd_params(const attn_sdpa_fwd_args* args, FwdParams* out_params, char* err, size_t err_len) {
  if (err && err_len > 0) err[0] = '\0';
  if (!args) return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "args is NULL");
  const attn_sdpa_fwd_args& a = *args;
  ATTN_TRY(check_enums(a, err, err_len));
  const int64_t esize = a.dtype == ATTN_DTYPE_F32 ? 4 : 2;  // bytes per element of q/k/v/out and of an additive mask
  const bool has_mask = a.mask_kind != ATTN_MASK_NONE;
  ATTN_TRY(check_tensors_present(a, has_mask, err, err_len));

  const Shape sh{a.q.sizes[0], a.q.sizes[1], a.q.sizes[2], a.q.sizes[3], a.k.sizes[1], a.k.sizes[2], a.v.sizes[3]};
  ATTN_TRY(check_shape_agreement(a, sh, err, err_len));
  KernelPath path = KernelPath::Generic;
  ATTN_TRY(choose_path(a.dtype, sh, &path, err, err_len));
  ATTN_TRY(check_size_limits(sh, err, err_len));
  ATTN_TRY(check_layouts(a, esize, err, err_len));
  int64_t m_strides[3] = {0, 0, 0};
  if (has_mask) ATTN_TRY(check_mask(a, sh, esize, m_strides, err, err_len));
  int64_t z = sh.B;
  ATTN_TRY(check_lengths(a, sh, has_mask, &z, err, err_len));
  // The decode workspace holds every grid z's rows (packed: each sequence's).
  const DecodePlan plan = decode_split_plan(z, sh.Hkv, sh.Hq / sh.Hkv, sh.L, sh.S, sh.Ev);
  ATTN_TRY(check_scalars(a, plan, err, err_len));

  if (!out_params) return ATTN_OK;
  FwdParams p{};
  pack_tensors(a, sh, has_mask, m_strides, p);
  pack_scalars(a, p);
  p.q_len = a.q_lengths;
  p.kv_len = a.kv_lengths;
  p.len_i64 = a.lengths_type == ATTN_INDEX_I64 ? 1 : 0;
  p.pad_side = static_cast<int>(a.padding_side);
  p.n_seqs = a.padding_side == ATTN_PAD_PACKED ? static_cast<int>(a.num_seqs) : 1;
  p.Z = static_cast<int>(z);
  // With lengths the softmax is safe: a row left with no key is 0 (attn.sdpa).
  if (a.q_lengths || a.kv_lengths) p.safe_softmax = 1;
  // A decode-shaped problem with a workspace splits its keys.
  const bool split = a.workspace != nullptr && plan.n_splits > 1;
  p.path = split ? KernelPath::Decode : path;
  p.n_splits = split ? plan.n_splits : 1;
  p.split_len = split ? plan.split_len : static_cast<int>(sh.S);
  if (split) {
    p.ws_o = static_cast<float*>(a.workspace);
    p.ws_lse = p.ws_o + static_cast<size_t>(z * sh.Hkv) * plan.n_splits * (sh.Hq / sh.Hkv) * sh.L * sh.Ev;
  }
  *out_params = p;
  return ATTN_OK;
}

attn_status prepare_mod_tensors(const attn_tensor4* mods, int n, FwdParams* params, char* err, size_t err_len) {
  if (n < 0 || n > kMaxModTensors || (n > 0 && mods == nullptr)) {
    return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "%d score modifier tensors (at most %d)", n, kMaxModTensors);
  }
  const int64_t scores[4] = {params->B, params->Hq, params->L, params->S};
  static const char* const kScoreDims[4] = {"B", "Hq", "L", "S"};
  for (int t = 0; t < n; ++t) {
    const attn_tensor4& m = mods[t];
    if (m.data == nullptr) {
      return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len, "score modifier tensor %d: data is NULL", t);
    }
    int64_t strides[4];
    for (int d = 0; d < 4; ++d) {
      if (m.sizes[d] != 1 && m.sizes[d] != scores[d]) {
        return fail(ATTN_ERR_INVALID_ARGUMENT, err, err_len,
                    "score modifier tensor %d: sizes[%d] is %" PRId64 ", neither 1 nor the scores' %s = %" PRId64, t, d,
                    m.sizes[d], kScoreDims[d], scores[d]);
      }
      if (m.sizes[d] != 1 && m.strides[d] < 0) {
        return fail(ATTN_ERR_UNSUPPORTED, err, err_len, "score modifier tensor %d: negative strides[%d]", t, d);
      }
      strides[d] = m.sizes[d] == 1 ? 0 : m.strides[d];
    }
    params->mods[t] = ModTensor{m.data, strides[0], strides[1], strides[2], strides[3]};
  }
  params->n_mods = n;
  return ATTN_OK;
}

}  // namespace detail
}  // namespace attn

extern "C" size_t attn_cuda_sdpa_fwd_workspace_size(const attn_sdpa_fwd_args* args) {
  if (!args) return 0;
  attn_sdpa_fwd_args a = *args;
  a.workspace = nullptr;  // the size must not depend on a workspace already given
  attn::detail::FwdParams p;
  if (attn::detail::prepare_fwd_params(&a, &p, nullptr, 0) != ATTN_OK) return 0;
  return attn::detail::decode_split_plan(p.Z, p.Hkv, p.group, p.L, p.S, p.Ev).bytes;
}

extern "C" void attn_sdpa_fwd_args_init(attn_sdpa_fwd_args* args) {
  std::memset(args, 0, sizeof(*args));
  args->masked_value = -INFINITY;
  args->window_left = ATTN_WINDOW_UNBOUNDED;
  args->window_right = ATTN_WINDOW_UNBOUNDED;
}

extern "C" attn_status attn_cuda_validate_sdpa_fwd(const attn_sdpa_fwd_args* args, char* err, size_t err_len) {
  return attn::detail::prepare_fwd_params(args, nullptr, err, err_len);
}

extern "C" const char* attn_status_string(attn_status s) {
  switch (s) {
    case ATTN_OK:
      return "ATTN_OK";
    case ATTN_ERR_INVALID_ARGUMENT:
      return "ATTN_ERR_INVALID_ARGUMENT";
    case ATTN_ERR_UNSUPPORTED:
      return "ATTN_ERR_UNSUPPORTED";
    case ATTN_ERR_CUDA:
      return "ATTN_ERR_CUDA";
  }
  return "ATTN_<unknown>";
}
