//===- attnrt_cuda_call.h - one attn.sdpa call through the CUDA bridge ----===//
//
// Internal to the bridge and the entry points that `.cu` files generated from
// score_mod regions define (attn-lower-sdpa-to-cuda): an attn.sdpa call as
// the compiled module makes it (MLIR unranked memrefs: a rank and a pointer
// to the ranked descriptor; the op's attributes are one such memref holding
// an attn::cuda::SdpaCallAttrs), and the function that checks and runs it.
// Compiled with the kernels' src/ on the include path.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_KERNELS_RUNTIME_ATTNRT_CUDA_CALL_H
#define ATTN_KERNELS_RUNTIME_ATTNRT_CUDA_CALL_H

#include "attn/kernels/attn_cuda.h"
#include "attn/kernels/sdpa_contract.h"
#include "launch.h"

#include <cstddef>
#include <cstdint>

namespace attnrt {

/// An MLIR unranked memref argument.
struct Memref {
  int64_t rank = 0;
  void *descriptor = nullptr;
};

/// One attn.sdpa call. `extras` are the tensors a score modifier reads
/// (`extraElementSizes` bytes per element), broadcast to the scores;
/// `attrs` holds the bytes of one attn::cuda::SdpaCallAttrs (a memref of
/// sizeof(SdpaCallAttrs) i8, sdpa_contract.h); `launch` runs the kernels of
/// that modifier (null: the library's own). `qLengths` / `kvLengths` are
/// the rank-1 length memrefs of a call whose attrs have kLengths* bits.
struct SdpaCall {
  attn_dtype dtype = ATTN_DTYPE_F16;
  attn_mask_kind maskKind = ATTN_MASK_NONE;
  Memref q, k, v, mask, out;
  const Memref *extras = nullptr;
  const size_t *extraElementSizes = nullptr;
  int numExtras = 0;
  Memref attrs;
  Memref qLengths, kvLengths;
  attn::detail::FwdLauncher launch = nullptr;
};

/// Runs `call` and waits for it; 0 or the attn_status, with the kernel
/// library's message on stderr.
int32_t runSdpa(const SdpaCall &call);

} // namespace attnrt

#endif // ATTN_KERNELS_RUNTIME_ATTNRT_CUDA_CALL_H
