// Generic CUDA-core forward kernel (head dims not covered by the tensor-core
// path: E, Ev multiples of 8 and <= 256, E != Ev allowed; and every f32 problem).
#include "device_ops.cuh"
#include "generic_fwd_core.h"
#include "launch.h"

namespace attn {
namespace detail {

template <bool kBF16, bool kF32>
__global__ void __launch_bounds__(kGenThreads) generic_fwd_kernel(const FwdParams p) {
  __shared__ float sq[kGenWarps][kGenMaxHeadDim];
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int row = static_cast<int>(blockIdx.x) * kGenWarps + warp;
  if (row >= p.L) return;  // uniform per warp; no block-level barrier below
  generic_fwd_row<DeviceOps, kBF16, kF32>(p, row, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z), lane, sq[warp]);
}

cudaError_t launch_generic_fwd(const FwdParams& p, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(ceil_div(p.L, kGenWarps)), static_cast<unsigned>(p.Hq),
                  static_cast<unsigned>(p.B));
  if (p.is_f32) {
    generic_fwd_kernel<false, true><<<grid, kGenThreads, 0, stream>>>(p);
  } else if (p.is_bf16) {
    generic_fwd_kernel<true, false><<<grid, kGenThreads, 0, stream>>>(p);
  } else {
    generic_fwd_kernel<false, false><<<grid, kGenThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace attn
