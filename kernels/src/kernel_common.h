// Internal: portability layer for the kernel bodies.
//
// The kernel bodies (flash_fwd_core.h, generic_fwd_core.h) are templates over
// an `Ops` policy that provides every warp-collective / memory-system
// primitive they use. On the GPU, Ops = DeviceOps (device_ops.cuh: inline PTX
// mma.sync / ldmatrix / cp.async, shuffles, __syncthreads). In the CPU
// emulation test, Ops = EmuOps (tests/emu/warp_emu.h), which runs the same
// kernel body with one user-level fiber per CUDA thread and implements the
// primitives from the PTX ISA fragment definitions. This is how the fragment
// layouts and index math are checked on a machine without a GPU.
//
// Required Ops interface (all static):
//   void  sync();                                   // __syncthreads
//   void  syncwarp();                               // __syncwarp
//   float shfl_xor(float v, int lane_mask);         // full-warp butterfly
//   float shfl_idx(float v, int src_lane);          // full-warp broadcast
//   void  ldsm_x4(uint32_t (&r)[4], const uint16_t* smem_row);    // ldmatrix.x4
//   void  ldsm_x4_t(uint32_t (&r)[4], const uint16_t* smem_row);  // ldmatrix.x4.trans
//   template <bool BF16> void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
//                                                   // mma.sync.m16n8k16.row.col.f32.{f16,bf16}, d += a*b
//   void  cp_async_16(uint16_t* smem, const uint16_t* gmem, bool pred);  // 16 bytes, zero-fill if !pred
//   void  cp_async_commit();
//   void  cp_async_wait_all();                      // cp.async.wait_group 0
//   float exp2(float); float log2(float);
//   template <bool BF16> uint32_t pack2(float lo, float hi);  // RNE, lo in the low 16 bits
//   template <bool BF16> float to_float(uint16_t bits);
//   uint8_t ld_u8(const uint8_t*); uint16_t ld_u16(const uint16_t*); U4 ld_u4(const uint16_t*);  // global loads
//   float ld_f32(const float*);                     // global load (read-only path)
//   int32_t ld_i32(const int32_t*); int64_t ld_i64(const int64_t*);  // global loads (sequence lengths)
//   U4 lds_u4(const void*); uint16_t lds_u16(const uint16_t*); float lds_f32(const float*);  // shared loads
//   void st_u32(uint16_t* gmem, uint32_t v); void st_f32(float* gmem, float v);               // global stores
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define ATTN_DEV __device__ __forceinline__
#define ATTN_HD __host__ __device__ __forceinline__
#define ATTN_UNROLL _Pragma("unroll")
#else
#define ATTN_DEV inline
#define ATTN_HD inline
#define ATTN_UNROLL
#endif

namespace attn {
namespace detail {

struct alignas(16) U4 {
  uint32_t x, y, z, w;
};

ATTN_HD float bit_cast_f32(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

ATTN_HD int imin(int a, int b) { return a < b ? a : b; }
ATTN_HD int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Whether a BOOL mask byte removes its position: a zero byte with the KEEP
// polarity (drop == 0), a nonzero byte with DROP (drop == 1).
ATTN_HD bool bool_mask_removes(uint8_t byte, uint8_t drop) { return (byte != 0) == (drop != 0); }

// The keys [*begin, *end) that query rows [row0, row1] can see through the
// band -left <= j - i <= right, clipped to [0, S), in whole tiles of `tile`
// keys. Empty (begin >= end) when no row sees a key. 64-bit math: row +
// right may exceed int.
ATTN_HD void band_key_tiles(int row0, int row1, int left, int right, int S, int tile, int* begin, int* end) {
  const int64_t hi = static_cast<int64_t>(row1) + right;  // last visible key
  const int64_t lo = static_cast<int64_t>(row0) - left;   // first visible key
  const int n_all = (S + tile - 1) / tile;
  *end = hi < 0 ? 0 : (hi / tile + 1 < n_all ? static_cast<int>(hi / tile + 1) : n_all);
  *begin = lo <= 0 ? 0 : (lo / tile < n_all ? static_cast<int>(lo / tile) : n_all);
}

// Whether key `col` lies outside query `row`'s band.
ATTN_HD bool outside_band(int row, int col, int left, int right) {
  const int d = col - row;
  return d > right || d < -left;
}

// The factor a row's accumulator is multiplied by when its running max
// stayed -inf (no key took part): NaN, as torch.softmax gives, or with
// safe_softmax 1, so the row is its accumulator as on the CPU: 0 (every
// probability was exp2(-inf) = 0), or NaN if a NaN score passed.
ATTN_HD float dead_row_inv(int safe_softmax) { return safe_softmax ? 1.f : NAN; }

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

}  // namespace detail
}  // namespace attn
