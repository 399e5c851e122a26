// Internal: launchers implemented in the per-head-dim translation units.
#pragma once

#include <cuda_runtime.h>

#include "attn_internal.h"
#include "fwd_params.h"
#include "score_mod.h"

namespace attn {
namespace detail {

// Tensor-core kernel for one (dtype, head dim, has-mask) combination and the
// given tile shape (M16 or M32; Auto is not accepted here).
// Explicitly instantiated in flash_fwd_hdim64.cu / flash_fwd_hdim128.cu.
template <bool kBF16, int D, bool kHasMask, class Mod = NoScoreMod>
cudaError_t launch_flash_fwd(const FwdParams& p, cudaStream_t stream, TcVariant variant);

// Generic CUDA-core fallback (generic_fwd.cu).
cudaError_t launch_generic_fwd(const FwdParams& p, cudaStream_t stream);

// Split-key decode: split pass + combine pass (decode_fwd.cu).
cudaError_t launch_decode_fwd(const FwdParams& p, cudaStream_t stream);

// Launches the kernels of a validated problem with tile shape `variant`.
using FwdLauncher = cudaError_t (*)(const FwdParams& p, cudaStream_t stream, TcVariant variant);

// attn_cuda_sdpa_fwd with other kernels: validates `args` and the `n_mods`
// tensors a score modifier reads (prepare_mod_tensors), checks the device,
// and runs `launch` (a generated kernel's launcher, score_mod_launch.cuh).
// Same codes and messages as attn_cuda_sdpa_fwd (attn_cuda.cu).
attn_status sdpa_fwd_custom(const attn_sdpa_fwd_args* args, const attn_tensor4* mods, int n_mods, FwdLauncher launch,
                            char* err, size_t err_len);

// The combine pass alone (decode_fwd.cu), after a split pass of any modifier.
cudaError_t launch_decode_combine(const FwdParams& p, cudaStream_t stream);

}  // namespace detail
}  // namespace attn
