// Internal: the kernels of one generated score modifier. A `.cu` generated
// from an attn.sdpa score_mod region (attn-lower-sdpa-to-cuda) defines the
// modifier, a launcher that calls launch_fwd_with_mod with the op's static
// facts, and its C entry point (kernels/runtime/attnrt_cuda_call.h); nvcc
// compiles it from `attn-compile --target=cuda`. Only the kernels the op can
// take are instantiated: the tensor-core kernel (both tile shapes) when its
// head dims are a tensor-core pair, the generic kernel, and the split-key
// decode pass when L may be <= kDecMaxL.
#pragma once

#include "decode_fwd_launch.cuh"
#include "flash_fwd_launch.cuh"
#include "generic_fwd_launch.cuh"
#include "launch.h"

namespace attn {
namespace detail {

// kTcHeadDim: E (== Ev) when the op's head dims are a tensor-core pair of a
// 16-bit dtype, else 0. kHasMask: the op has a mask operand. kMayDecode: L
// is dynamic or <= kDecMaxL.
template <class Mod, bool kBF16, bool kF32, int kTcHeadDim, bool kHasMask, bool kMayDecode>
cudaError_t launch_fwd_with_mod(const FwdParams& p, cudaStream_t stream, TcVariant variant) {
  if ((p.mask_kind != ATTN_MASK_NONE) != kHasMask || p.is_f32 != (kF32 ? 1 : 0) || p.is_bf16 != (kBF16 ? 1 : 0))
    return cudaErrorInvalidValue;  // not the op this modifier was generated for
  if (p.path == KernelPath::Decode) {
    if constexpr (kMayDecode) return launch_decode_typed<kBF16, kF32, Mod>(p, stream);
    return cudaErrorInvalidValue;
  }
  if (p.path == KernelPath::TensorCore) {
    if constexpr (kTcHeadDim != 0 && !kF32) {
      if (p.E == kTcHeadDim) return launch_flash_fwd<kBF16, kTcHeadDim, kHasMask, Mod>(p, stream, variant);
    }
    return cudaErrorInvalidValue;
  }
  return launch_generic_typed<kBF16, kF32, Mod>(p, stream);
}

}  // namespace detail
}  // namespace attn
