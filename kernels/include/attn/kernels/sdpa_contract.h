//===- sdpa_contract.h - the attn.sdpa ops the CUDA kernels run --*- C++ -*-===//
//
// The one statement of which attn.sdpa ops the CUDA kernels take and of how
// a compiled module passes an op's attributes to them. Included by the
// kernel library (validation and kernel choice, src/attn_prepare.cpp), by
// the runtime bridge that compiled modules call (runtime/attnrt_cuda.cpp,
// runtime/attnrt_cuda_call.h) and by the compiler: `attn-lower-sdpa-to-cuda`
// (getCudaUnsupportedReason and the call it emits) and the score_mod
// generator (lib/Conversion/AttnToCuda/). Plain C++17 over the C ABI of
// attn_cuda.h: no CUDA and no MLIR headers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_KERNELS_SDPA_CONTRACT_H
#define ATTN_KERNELS_SDPA_CONTRACT_H

#include "attn/kernels/attn_cuda.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace attn {
namespace cuda {

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

// Tensors are viewed as [B, H, L, E]: ranks 1 to 4, missing leading dims
// are 1 (the bridge) and attn.sdpa has rank >= 2 (the compiler).
constexpr int kMaxRank = 4;

// Head dims: a multiple of 8 elements, so that every row is 16-byte aligned
// for cp.async, and at most 256, the generic kernel's registers per lane.
constexpr int64_t kHeadDimMultiple = 8;
constexpr int64_t kMaxHeadDim = 256;

// The tensors a score modifier reads: the extra operands of a score_mod
// region (FwdParams::mods).
constexpr int kMaxModTensors = 8;

// Query rows up to which a problem may take the split-key decode kernels
// (with a workspace and enough keys, see decode_split_plan).
constexpr int64_t kDecodeMaxQueries = 16;

// Whether a head dim (E or Ev) is one the kernels take.
constexpr bool is_supported_head_dim(int64_t d) {
  return d > 0 && d % kHeadDimMultiple == 0 && d <= kMaxHeadDim;
}

// Whether a problem runs on the tensor-core kernel: a 16-bit element type
// and E == Ev in {64, 128}. Every other supported problem runs on the
// generic (or, for decode shapes, the split-key) kernel.
constexpr bool uses_tensor_cores(attn_dtype dtype, int64_t e, int64_t ev) {
  return dtype != ATTN_DTYPE_F32 && e == ev && (e == 64 || e == 128);
}

// ---------------------------------------------------------------------------
// The call
// ---------------------------------------------------------------------------

// The attributes of one attn.sdpa call. `attn-lower-sdpa-to-cuda` writes
// them into a constant global of sizeof(SdpaCallAttrs) bytes, which the
// module passes after its tensors as a memref<sizeof x i8>; the bridge
// checks the size and copies them into attn_sdpa_fwd_args
// (apply_call_attrs). A new attribute the kernels honour is a field here,
// its line in apply_call_attrs and its value in the lowering; no function
// signature changes. Fields are ordered by size, so the layout has no
// padding inside and is the same for every compiler of one ABI.
struct SdpaCallAttrs {
  int64_t window_left = ATTN_WINDOW_UNBOUNDED;   // ATTN_WINDOW_UNBOUNDED: no bound
  int64_t window_right = ATTN_WINDOW_UNBOUNDED;  // (is_causal already folded in)
  float scale = 1.f;
  float masked_value = -INFINITY;  // the attribute, not yet rounded to the dtype
  int32_t is_causal = 0;           // 0 or 1
  int32_t mask_polarity = ATTN_MASK_KEEP;  // attn_mask_polarity of a BOOL mask
  int32_t safe_softmax = 0;        // 0 or 1
  int32_t padding_side = ATTN_PAD_RIGHT;  // attn_padding_side of the lengths
  int32_t lengths = 0;             // kLengths* bits: which lengths the call passes, their type
  int32_t reserved = 0;            // 0; keeps the size a multiple of 8 explicitly
};
static_assert(std::is_trivially_copyable<SdpaCallAttrs>::value, "passed as bytes");
static_assert(sizeof(SdpaCallAttrs) == 48 && offsetof(SdpaCallAttrs, scale) == 16 &&
                  offsetof(SdpaCallAttrs, is_causal) == 24 && offsetof(SdpaCallAttrs, padding_side) == 36 &&
                  offsetof(SdpaCallAttrs, reserved) == 44,
              "the layout the compiler writes and the bridge reads");

// SdpaCallAttrs::lengths. A call with lengths goes to the `_lengths` entry
// points, which take two length memrefs after the result (q_lengths, then
// kv_lengths); the memref of a side without lengths (its bit clear) is the
// other side's, and is not read for it.
constexpr int32_t kLengthsQ = 1;    // q_lengths given
constexpr int32_t kLengthsKv = 2;   // kv_lengths given
constexpr int32_t kLengthsI64 = 4;  // the lengths are i64 (else i32)

// Copies the call's attributes into the kernel library's arguments.
inline void apply_call_attrs(const SdpaCallAttrs& attrs, attn_sdpa_fwd_args* args) {
  args->window_left = attrs.window_left;
  args->window_right = attrs.window_right;
  args->scale = attrs.scale;
  args->masked_value = attrs.masked_value;
  args->is_causal = attrs.is_causal;
  args->mask_polarity = static_cast<attn_mask_polarity>(attrs.mask_polarity);
  args->safe_softmax = attrs.safe_softmax;
  args->padding_side = static_cast<attn_padding_side>(attrs.padding_side);
  args->lengths_type = (attrs.lengths & kLengthsI64) ? ATTN_INDEX_I64 : ATTN_INDEX_I32;
}

// The run-time checks of attn.sdpa's length values (the CPU lowering's
// asserts), on the n lengths of each side copied to the host (nullptr: the
// side has none): "" when they hold, else the message. Padded layouts: every
// value in [0, L] ([0, S]); packed: none below 0, the sums L and S.
inline std::string check_length_values(const int64_t* q, const int64_t* kv, int64_t n, int64_t L, int64_t S,
                                       bool packed) {
  int64_t sums[2] = {0, 0};
  const int64_t* sides[2] = {q, kv};
  const int64_t limits[2] = {L, S};
  static const char* const kNames[2] = {"q_lengths", "kv_lengths"};
  for (int side = 0; side < 2; ++side) {
    if (!sides[side]) continue;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = sides[side][i];
      if (v < 0 || (!packed && v > limits[side]))
        return std::string("attn.sdpa: a ") + kNames[side] + " value is out of range (" + std::to_string(v) +
               (packed ? " is below 0)" : std::string(" is not in [0, ") + std::to_string(limits[side]) + "])");
      // The sum, saturated just past the limit (no overflow; reported below).
      sums[side] = v > limits[side] - sums[side] ? limits[side] + 1 : sums[side] + v;
    }
  }
  if (packed && q && sums[0] != L) return "attn.sdpa: the packed q_lengths must sum to the query's length";
  if (packed && kv && sums[1] != S) return "attn.sdpa: the packed kv_lengths must sum to the key's length";
  return "";
}

}  // namespace cuda
}  // namespace attn

#endif  // ATTN_KERNELS_SDPA_CONTRACT_H
