// Internal: __global__ wrapper and launcher of the generic CUDA-core kernel,
// for any score modifier Mod (score_mod.h). Included by generic_fwd.cu and by
// generated score-modifier kernels (score_mod_launch.cuh).
#pragma once

#include "device_ops.cuh"
#include "generic_fwd_core.h"
#include "launch.h"

namespace attn {
namespace detail {

template <bool kBF16, bool kF32, class Mod>
__global__ void __launch_bounds__(kGenThreads) generic_fwd_kernel(const FwdParams p) {
  __shared__ float sq[kGenWarps][kGenMaxHeadDim];
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kGenWarps + warp;
  if (row >= p.L) return;  // uniform per warp; no block-level barrier below
  generic_fwd_row<DeviceOps, kBF16, kF32, Mod>(p, row, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z), lane,
                                               sq[warp]);
}

// The generic kernel of one element type (f16, bf16 or f32).
template <bool kBF16, bool kF32, class Mod>
cudaError_t launch_generic_typed(const FwdParams& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.L, kGenWarps)), static_cast<unsigned>(p.Hq),
                  static_cast<unsigned>(p.Z));
  generic_fwd_kernel<kBF16, kF32, Mod><<<grid, kGenThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace attn
