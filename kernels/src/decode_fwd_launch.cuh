// Internal: __global__ wrappers and launcher of the split-key decode kernels
// (decode_fwd_core.h), for any score modifier Mod (score_mod.h; the combine
// pass, which has none, is the library's launch_decode_combine). Included by decode_fwd.cu and by generated score-modifier
// kernels (score_mod_launch.cuh).
#pragma once

#include "decode_fwd_core.h"
#include "device_ops.cuh"
#include "launch.h"

namespace attn {
namespace detail {

template <bool kBF16, bool kF32, class Mod>
__global__ void __launch_bounds__(kDecThreads) decode_split_kernel(const FwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int split = static_cast<int>(blockIdx.x) % p.n_splits;
  const int rb = static_cast<int>(blockIdx.x) / p.n_splits;
  decode_split_block<DeviceOps, kBF16, kF32, Mod>(p, split, rb, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z),
                                             static_cast<int>(threadIdx.x), smem_raw);
}

// The split and combine passes of one element type (f16, bf16 or f32).
template <bool kBF16, bool kF32, class Mod>
cudaError_t launch_decode_typed(const FwdParams& p, cudaStream_t stream) {
  const int smem = decode_smem_bytes(p.E, p.Ev, kF32 ? 4 : 2);
  auto split_kernel = decode_split_kernel<kBF16, kF32, Mod>;
  if (smem > 48 * 1024) {
    // Large head dims (f32 with E = Ev = 256 needs ~82 KiB); a cheap host call.
    const cudaError_t e = cudaFuncSetAttribute(split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
  }
  const int row_blocks = ceil_div(p.group * p.L, kDecRows);
  const dim3 grid(static_cast<unsigned>(row_blocks * p.n_splits), static_cast<unsigned>(p.Hkv),
                  static_cast<unsigned>(p.Z));
  split_kernel<<<grid, kDecThreads, smem, stream>>>(p);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  return launch_decode_combine(p, stream);
}

}  // namespace detail
}  // namespace attn
