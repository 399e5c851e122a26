// Internal: the GPU implementation of the Ops policy (see kernel_common.h):
// inline PTX for mma.sync / ldmatrix / cp.async (sm_80+), warp shuffles and
// the fast exp2 used by the online softmax.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernel_common.h"

namespace attn {
namespace detail {

struct DeviceOps {
  static __device__ __forceinline__ void sync() { __syncthreads(); }
  static __device__ __forceinline__ void syncwarp() { __syncwarp(); }

  static __device__ __forceinline__ float shfl_xor(float v, int lane_mask) {
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
  }
  static __device__ __forceinline__ float shfl_idx(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }

  static __device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const uint16_t* smem_row) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem_row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  }
  static __device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const uint16_t* smem_row) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem_row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  }

  // d += a * b on a 16x8x16 tile, f32 accumulators.
  template <bool kBF16>
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (kBF16) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
          "{%0, %1, %2, %3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
  }

  // 16-byte global -> shared copy that bypasses L1 (.cg); src-size 0 writes zeros.
  static __device__ __forceinline__ void cp_async_16(uint16_t* smem, const uint16_t* gmem, bool pred) {
    const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    const int n = pred ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n) : "memory");
  }
  static __device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
  static __device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

  // ex2.approx: ~2 ulp, exp2(-inf) = +0, NaN in -> NaN out. This is the MUFU
  // op the scale*log2(e) folding is for.
  static __device__ __forceinline__ float exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
  }
  static __device__ __forceinline__ float log2(float x) { return log2f(x); }  // once per row: use the accurate one

  template <bool kBF16>
  static __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if constexpr (kBF16) {
      const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
      return *reinterpret_cast<const uint32_t*>(&v);
    } else {
      const __half2 v = __floats2half2_rn(lo, hi);
      return *reinterpret_cast<const uint32_t*>(&v);
    }
  }
  template <bool kBF16>
  static __device__ __forceinline__ float to_float(uint16_t bits) {
    if constexpr (kBF16) {
      return __bfloat162float(__ushort_as_bfloat16(bits));
    } else {
      return __half2float(__ushort_as_half(bits));
    }
  }

  static __device__ __forceinline__ uint8_t ld_u8(const uint8_t* p) { return __ldg(p); }
  static __device__ __forceinline__ uint16_t ld_u16(const uint16_t* p) {
    return __ldg(reinterpret_cast<const unsigned short*>(p));
  }
  static __device__ __forceinline__ U4 ld_u4(const uint16_t* p) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
    return U4{v.x, v.y, v.z, v.w};
  }
  static __device__ __forceinline__ float ld_f32(const float* p) { return __ldg(p); }
  static __device__ __forceinline__ int32_t ld_i32(const int32_t* p) { return __ldg(reinterpret_cast<const int*>(p)); }
  static __device__ __forceinline__ int64_t ld_i64(const int64_t* p) {
    return __ldg(reinterpret_cast<const long long*>(p));
  }
  // Plain shared-memory loads (the decode kernel's staged K/V tiles).
  static __device__ __forceinline__ U4 lds_u4(const void* p) { return *static_cast<const U4*>(p); }
  static __device__ __forceinline__ uint16_t lds_u16(const uint16_t* p) { return *p; }
  static __device__ __forceinline__ float lds_f32(const float* p) { return *p; }
  static __device__ __forceinline__ void st_u32(uint16_t* p, uint32_t v) { *reinterpret_cast<uint32_t*>(p) = v; }
  static __device__ __forceinline__ void st_f32(float* p, float v) { *p = v; }
};

}  // namespace detail
}  // namespace attn
