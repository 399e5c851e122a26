// Split-key decode (Flash-Decoding): the split pass and the combine pass
// (decode_fwd_core.h), for f16, bf16 and f32.
#include "decode_fwd_core.h"
#include "device_ops.cuh"
#include "launch.h"

namespace attn {
namespace detail {

template <bool kBF16, bool kF32>
__global__ void __launch_bounds__(kDecThreads) decode_split_kernel(const FwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int split = static_cast<int>(blockIdx.x) % p.n_splits;
  const int rb = static_cast<int>(blockIdx.x) / p.n_splits;
  decode_split_block<DeviceOps, kBF16, kF32>(p, split, rb, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z),
                                             static_cast<int>(threadIdx.x), smem_raw);
}

template <bool kBF16, bool kF32>
__global__ void __launch_bounds__(kDecThreads) decode_combine_kernel(const FwdParams p) {
  const int row = static_cast<int>(blockIdx.x) * (kDecThreads / 32) + (static_cast<int>(threadIdx.x) >> 5);
  if (row >= p.Hq * p.L) return;  // uniform per warp; no block-level barrier
  decode_combine_row<DeviceOps, kBF16, kF32>(p, row % p.L, row / p.L, static_cast<int>(blockIdx.y),
                                             static_cast<int>(threadIdx.x) & 31);
}

template <bool kBF16, bool kF32>
cudaError_t launch_decode_typed(const FwdParams& p, cudaStream_t stream) {
  const int smem = decode_smem_bytes(p.E, p.Ev, kF32 ? 4 : 2);
  auto split_kernel = decode_split_kernel<kBF16, kF32>;
  if (smem > 48 * 1024) {
    // Large head dims (f32 with E = Ev = 256 needs ~82 KiB); a cheap host call.
    const cudaError_t e = cudaFuncSetAttribute(split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) return e;
  }
  const int row_blocks = ceil_div(p.group * p.L, kDecRows);
  const dim3 grid(static_cast<unsigned>(row_blocks * p.n_splits), static_cast<unsigned>(p.Hkv),
                  static_cast<unsigned>(p.B));
  split_kernel<<<grid, kDecThreads, smem, stream>>>(p);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  const dim3 cgrid(static_cast<unsigned>(ceil_div(p.Hq * p.L, kDecThreads / 32)), static_cast<unsigned>(p.B));
  decode_combine_kernel<kBF16, kF32><<<cgrid, kDecThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_decode_fwd(const FwdParams& p, cudaStream_t stream) {
  if (p.is_f32) return launch_decode_typed<false, true>(p, stream);
  if (p.is_bf16) return launch_decode_typed<true, false>(p, stream);
  return launch_decode_typed<false, false>(p, stream);
}

}  // namespace detail
}  // namespace attn
