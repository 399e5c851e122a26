// Tensor-core forward kernels for head dim 128: {f16, bf16} x {no mask, mask} x {M16, M32}.
#include "flash_fwd_launch.cuh"

namespace attn {
namespace detail {

template cudaError_t launch_flash_fwd<false, 128, false>(const FwdParams&, cudaStream_t, TcVariant);
template cudaError_t launch_flash_fwd<false, 128, true>(const FwdParams&, cudaStream_t, TcVariant);
template cudaError_t launch_flash_fwd<true, 128, false>(const FwdParams&, cudaStream_t, TcVariant);
template cudaError_t launch_flash_fwd<true, 128, true>(const FwdParams&, cudaStream_t, TcVariant);

}  // namespace detail
}  // namespace attn
