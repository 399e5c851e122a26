// Internal: __global__ wrapper and launcher of the tensor-core kernel, for any
// score modifier Mod (score_mod.h). Included by the per-head-dim translation
// units (each compiles 8 kernels:
// {f16, bf16} x {no mask, mask} x {M16, M32 tile shape}); splitting by head
// dim keeps every nvcc invocation small and lets the build compile them in
// parallel) and by generated score-modifier kernels (score_mod_launch.cuh).
#pragma once

#include <atomic>

#include "device_ops.cuh"
#include "flash_fwd_core.h"
#include "launch.h"

namespace attn {
namespace detail {

template <bool kBF16, class Cfg, bool kHasMask, class Mod>
__global__ void __launch_bounds__(kTcThreads) flash_fwd_kernel(const FwdParams p) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // Causal: later query tiles have more key tiles to visit; launching them
  // first (blockIdx.x reversed) evens out the tail of the grid.
  const int m_block = p.is_causal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  flash_fwd_tc_block<DeviceOps, kBF16, Cfg, kHasMask, Mod>(p, m_block, static_cast<int>(blockIdx.y),
                                                      static_cast<int>(blockIdx.z), static_cast<int>(threadIdx.x),
                                                      reinterpret_cast<uint16_t*>(smem_raw));
}

template <bool kBF16, class Cfg, bool kHasMask, class Mod>
cudaError_t launch_flash_fwd_cfg(const FwdParams& p, cudaStream_t stream) {
  constexpr int kSmem = Cfg::kSmemBytes;
  auto kernel = flash_fwd_kernel<kBF16, Cfg, kHasMask, Mod>;
  if (kSmem > 48 * 1024) {
    // Opting in to > 48 KiB of dynamic smem is per kernel and per device;
    // remember the devices already done (bit i = device i, devices >= 64 are
    // simply set every time).
    static std::atomic<unsigned long long> done_mask{0};
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    const unsigned long long bit = dev < 64 ? (1ull << dev) : 0ull;
    if (bit == 0 || (done_mask.load(std::memory_order_relaxed) & bit) == 0) {
      e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
      if (e != cudaSuccess) return e;
      done_mask.fetch_or(bit, std::memory_order_relaxed);
    }
  }
  // z: batch, or batch x sequence when packed (every sequence gets the
  // blocks of L rows; those past its own rows return at once).
  const dim3 grid(static_cast<unsigned>(ceil_div(p.L, Cfg::kBlockM)), static_cast<unsigned>(p.Hq),
                  static_cast<unsigned>(p.Z));
  kernel<<<grid, kTcThreads, kSmem, stream>>>(p);
  return cudaGetLastError();
}

template <bool kBF16, int D, bool kHasMask, class Mod>
cudaError_t launch_flash_fwd(const FwdParams& p, cudaStream_t stream, TcVariant variant) {
  if (variant == TcVariant::M16) return launch_flash_fwd_cfg<kBF16, TcConfigM16<D>, kHasMask, Mod>(p, stream);
  return launch_flash_fwd_cfg<kBF16, TcConfigM32<D>, kHasMask, Mod>(p, stream);
}

}  // namespace detail
}  // namespace attn
