// Internal: launchers implemented in the per-head-dim translation units.
#pragma once

#include <cuda_runtime.h>

#include "attn_internal.h"
#include "fwd_params.h"

namespace attn {
namespace detail {

// Tensor-core kernel for one (dtype, head dim, has-mask) combination and the
// given tile shape (M16 or M32; Auto is not accepted here).
// Explicitly instantiated in flash_fwd_hdim64.cu / flash_fwd_hdim128.cu.
template <bool kBF16, int D, bool kHasMask>
cudaError_t launch_flash_fwd(const FwdParams& p, cudaStream_t stream, TcVariant variant);

// Generic CUDA-core fallback (generic_fwd.cu).
cudaError_t launch_generic_fwd(const FwdParams& p, cudaStream_t stream);

// Split-key decode: split pass + combine pass (decode_fwd.cu).
cudaError_t launch_decode_fwd(const FwdParams& p, cudaStream_t stream);

}  // namespace detail
}  // namespace attn
