// Generic CUDA-core forward kernel (head dims not covered by the tensor-core
// path: E, Ev multiples of 8 and <= 256, E != Ev allowed; and every f32 problem).
#include "generic_fwd_launch.cuh"

namespace attn {
namespace detail {

cudaError_t launch_generic_fwd(const FwdParams& p, cudaStream_t stream) {
  if (p.is_f32) return launch_generic_typed<false, true, NoScoreMod>(p, stream);
  if (p.is_bf16) return launch_generic_typed<true, false, NoScoreMod>(p, stream);
  return launch_generic_typed<false, false, NoScoreMod>(p, stream);
}

}  // namespace detail
}  // namespace attn
