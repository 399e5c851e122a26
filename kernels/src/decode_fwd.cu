// Split-key decode (Flash-Decoding): the split pass and the combine pass
// (decode_fwd_core.h), for f16, bf16 and f32.
#include "decode_fwd_launch.cuh"

namespace attn {
namespace detail {

template <bool kBF16, bool kF32>
__global__ void __launch_bounds__(kDecThreads) decode_combine_kernel(const FwdParams p) {
  const int row = static_cast<int>(blockIdx.x) * (kDecThreads / 32) + (static_cast<int>(threadIdx.x) >> 5);
  if (row >= p.Hq * p.L) return;  // uniform per warp; no block-level barrier
  decode_combine_row<DeviceOps, kBF16, kF32>(p, row % p.L, row / p.L, static_cast<int>(blockIdx.y),
                                             static_cast<int>(threadIdx.x) & 31);
}

cudaError_t launch_decode_combine(const FwdParams& p, cudaStream_t stream) {
  const dim3 cgrid(static_cast<unsigned>(ceil_div(p.Hq * p.L, kDecThreads / 32)), static_cast<unsigned>(p.Z));
  if (p.is_f32) decode_combine_kernel<false, true><<<cgrid, kDecThreads, 0, stream>>>(p);
  else if (p.is_bf16) decode_combine_kernel<true, false><<<cgrid, kDecThreads, 0, stream>>>(p);
  else decode_combine_kernel<false, false><<<cgrid, kDecThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_decode_fwd(const FwdParams& p, cudaStream_t stream) {
  if (p.is_f32) return launch_decode_typed<false, true, NoScoreMod>(p, stream);
  if (p.is_bf16) return launch_decode_typed<true, false, NoScoreMod>(p, stream);
  return launch_decode_typed<false, false, NoScoreMod>(p, stream);
}

}  // namespace detail
}  // namespace attn
