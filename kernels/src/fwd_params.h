// Internal: the validated, normalised problem description handed to the
// kernels, and the f16/bf16 rounding of a value to a kernel dtype.
//
// This header must stay free of CUDA headers: it is shared by the CUDA
// library, the host-only validation code and the CPU emulation test
// (tests/test_kernel_emulation.cpp) which compiles the kernel bodies with the
// host C++ compiler.
#pragma once

#include <cstdint>
#include <cstring>

#include "attn/kernels/attn_cuda.h"
#include "attn/kernels/float_bits.h"
#include "attn/kernels/sdpa_contract.h"

namespace attn {
namespace detail {

// Tile geometry of the tensor-core kernel (flash_fwd_core.h). Shared with the
// host so launch code, emulation and docs agree.
constexpr int kTcThreads = 128; // 4 warps
constexpr int kTcSmemPad = 8;   // elements of padding per smem row (16 bytes): conflict-free ldmatrix

// One compile-time configuration of the tensor-core kernel.
//   D:        head dim (E == Ev)
//   kMT:      16-row mma tiles per warp (block = 4 warps x 16 kMT query rows)
//   kBlockN:  keys per K/V tile
//   kQInRegs: Q fragments loaded once into registers (else re-read from smem
//             with ldmatrix for every key tile, which saves 4 kMT D/16 registers)
template <int D_, int kMT_, int kBlockN_, bool kQInRegs_>
struct TcConfig {
  static constexpr int D = D_;
  static constexpr int kMT = kMT_;
  static constexpr int kBlockM = 4 * 16 * kMT_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr bool kQInRegs = kQInRegs_;
  static constexpr int kStride = D_ + kTcSmemPad;  // smem row stride (elements)
  // sQ [kBlockM][D+8] + sK [kBlockN][D+8] + sV [kBlockN][D+8], 2 bytes per element.
  static constexpr int kSmemBytes = (kBlockM + 2 * kBlockN_) * kStride * 2;
};

// The two tile shapes the library ships (selected at run time, see
// attn_internal.h):
//   M16: 16 query rows per warp, 64-key tiles, Q in registers. Smallest
//        register footprint; every K/V fragment read from smem feeds 1 mma row tile.
//   M32: 32 query rows per warp (FA2's 128-row blocks): every K/V fragment
//        feeds 2 mma row tiles, halving smem traffic per flop; D=128 uses
//        32-key tiles and re-reads Q from smem to stay within 255 registers.
template <int D> using TcConfigM16 = TcConfig<D, 1, 64, true>;
template <int D> using TcConfigM32 = TcConfig<D, 2, (D <= 64 ? 64 : 32), (D <= 64)>;

// Generic (non tensor core) fallback kernel geometry (generic_fwd_core.h).
constexpr int kGenWarps = 4;          // one query row per warp
constexpr int kGenThreads = kGenWarps * 32;
constexpr int kGenMaxHeadDim = static_cast<int>(cuda::kMaxHeadDim);  // E and Ev <= 256
constexpr int kGenSmemBytes = kGenWarps * kGenMaxHeadDim * 4;  // the q row of each warp in f32

constexpr int kWinNone = 0x7FFFFFFF;  // an unbounded window side in FwdParams

// Split-key decode (decode_fwd_core.h): 4 warps x kDecRowsPerWarp packed
// (head, query) rows per block, kDecTileN keys per staged tile. Taken for
// L <= kDecMaxL when the caller gives a workspace and the problem splits
// into >= 2 key ranges of >= kDecMinKeys keys (decode_split_plan).
constexpr int kDecThreads = 128;
constexpr int kDecRowsPerWarp = 4;
constexpr int kDecRows = 4 * kDecRowsPerWarp;
constexpr int kDecTileN = 32;
constexpr int kDecMaxL = static_cast<int>(cuda::kDecodeMaxQueries);
constexpr int kDecMinKeys = 128;
// Blocks to aim for: about two waves on a 132-SM H100/H200 (the plan is a
// pure function of the shape, so the workspace size is known on the host).
constexpr int kDecTargetBlocks = 256;

enum class KernelPath : int { TensorCore = 0, Generic = 1, Decode = 2 };

// A tensor that a generated score modifier reads (an extra operand of an
// attn.sdpa score_mod region), viewed as broadcast to the scores [B, Hq, L, S]:
// element (b, h, i, j) is at data + b*sb + h*sh + i*sl + j*ss (elements; a
// broadcast dim has stride 0). Filled by prepare_mod_tensors.
constexpr int kMaxModTensors = cuda::kMaxModTensors;
struct ModTensor {
  const void* data;
  int64_t sb, sh, sl, ss;
};

// Everything the kernels read. Strides are in elements; a dimension of size 1
// has its stride normalised to 0 so that indexing never needs a size check.
struct FwdParams {
  const void* q;
  const void* k;
  const void* v;
  void* out;
  const void* mask;  // nullptr unless mask_kind != NONE
  float* lse;        // optional

  int64_t q_sb, q_sh, q_sl;
  int64_t k_sb, k_sh, k_sl;
  int64_t v_sb, v_sh, v_sl;
  int64_t o_sb, o_sh, o_sl;
  int64_t m_sb, m_sh, m_sl;  // mask strides (0 for broadcast dims)

  int B, Hq, Hkv, L, S, E, Ev;
  int group;  // Hq / Hkv

  float scale;        // the scale itself (a score modifier sees natural-unit scores)
  float scale_log2;   // scale * log2(e): scores are kept in the log2 domain (exp2 is the native op)
  float masked_log2;  // dtype-rounded masked_value * log2(e); -inf stays -inf, finite values are clamped
                      // to +-FLT_MAX so that a finite masked value never turns into -inf
  float masked_value_rounded;  // dtype-rounded masked_value (natural units, for documentation/tests)
  int mask_kind;      // attn_mask_kind
  uint8_t mask_drop;  // BOOL mask byte b masks the position iff (b != 0) == mask_drop
  int safe_softmax;   // 0/1: a row whose max stays -inf yields its accumulator (0, or NaN after a NaN
                      // score) instead of NaN; see dead_row_inv (kernel_common.h)
  int is_causal;      // 0/1 (only orders the causal launch: the band below already includes it)
  // The band of visible keys, is_causal folded in: query i sees key j iff
  // -win_left <= j - i <= win_right. Clamped to +-kWinNone, which means
  // unbounded (|j - i| < 2^31 always holds).
  int win_left, win_right;
  int has_band;       // 1 iff a side is bounded: tiles crossing the band edge need per-element checks
  int band_skip;      // 1 iff has_band and masked value is -inf: keys outside the band contribute
                      // exp(-inf) = 0, so key tiles outside it are skipped entirely
  int is_bf16;        // dtype: bf16 (16-bit elements)
  int is_f32;         // dtype: f32 (4-byte elements, generic kernel only)
  // Split-key decode (path == Decode): keys [s * split_len, (s + 1) * split_len)
  // go to split s; partials in the caller's workspace, [B, Hkv, n_splits,
  // group * L] rows: ws_o (Ev floats per row) then ws_lse (1 float per row).
  int n_splits, split_len;
  float* ws_o;
  float* ws_lse;
  KernelPath path;
  // Sequence lengths (seq_view.h): q_len / kv_len device arrays of len_i64 ?
  // int64 : int32 (nullptr = that side all real), pad_side an
  // attn_padding_side. Packed: n_seqs sequences per batch slice, else 1.
  // Every kernel's grid z (and the decode workspace's batch) is Z = B x n_seqs.
  const void* q_len;
  const void* kv_len;
  int len_i64;
  int pad_side;
  int n_seqs;
  int Z;
  // The tensors a generated score modifier reads (none for the library's kernels).
  int n_mods;
  ModTensor mods[kMaxModTensors];
};

// The host conversions of float_bits.h, where the kernel code and its tests
// look for them.
using attn::bf16_bits_to_f32;
using attn::bits_f32;
using attn::f16_bits_to_f32;
using attn::f32_bits;
using attn::f32_to_bf16_bits;
using attn::f32_to_f16_bits;

inline uint16_t f32_to_dtype_bits(float f, bool bf16) { return bf16 ? f32_to_bf16_bits(f) : f32_to_f16_bits(f); }
inline float dtype_bits_to_f32(uint16_t h, bool bf16) { return bf16 ? bf16_bits_to_f32(h) : f16_bits_to_f32(h); }
inline float round_to_dtype(float f, bool bf16) { return dtype_bits_to_f32(f32_to_dtype_bits(f, bf16), bf16); }

// How a problem splits its keys for the decode path: n_splits < 2 = not at
// all. `bytes` is the workspace the splits need.
struct DecodePlan {
  int n_splits = 1;
  int split_len = 0;
  size_t bytes = 0;
};
DecodePlan decode_split_plan(int64_t B, int64_t Hkv, int64_t group, int64_t L, int64_t S, int64_t Ev);

// Validates `args` (pure host, no CUDA call) and, on success, fills `*params`
// (may be nullptr). Implemented in attn_prepare.cpp.
attn_status prepare_fwd_params(const attn_sdpa_fwd_args* args, FwdParams* params, char* err, size_t err_len);

// Validates the `n` tensors a generated score modifier reads against the
// scores [B, Hq, L, S] of `*params` (each dim 1, broadcast, or the scores'
// size; a contiguous element stride is not required) and stores them in
// params->mods with broadcast dims at stride 0. ATTN_ERR_INVALID_ARGUMENT
// with a message naming the tensor otherwise. Implemented in attn_prepare.cpp.
attn_status prepare_mod_tensors(const attn_tensor4* mods, int n, FwdParams* params, char* err, size_t err_len);

}  // namespace detail
}  // namespace attn
