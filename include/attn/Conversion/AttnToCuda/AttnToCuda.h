//===- AttnToCuda.h - lower attn.sdpa to the CUDA kernels' ABI --*- C++ -*-===//
//
// `attn-lower-sdpa-to-cuda` rewrites each attn.sdpa the CUDA kernels in
// kernels/ support into a call of the runtime bridge (kernels/runtime/), which
// fills an attn_sdpa_fwd_args from memref descriptors and launches the flash
// kernel. The other attn.sdpa ops stay for the CPU lowering, with a remark
// saying why (or an error when the GPU is required).
//
// Memory: the bridge takes device-accessible pointers. Modules compiled for
// CUDA allocate through the runtime's _mlir_memref_to_llvm_* functions
// (finalize-memref-to-llvm{use-generic-functions}), which use CUDA managed
// memory, so results and any op left on the CPU see the same bytes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOCUDA_ATTNTOCUDA_H
#define ATTN_CONVERSION_ATTNTOCUDA_ATTNTOCUDA_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include <string>

namespace mlir::attn {

/// Why the CUDA kernels cannot run `op`, or an empty string when they can.
/// Checked from static types and attributes only; the bridge re-validates at
/// run time (dynamic sizes, pointer alignment).
std::string getCudaUnsupportedReason(SdpaOp op);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOCUDA_ATTNTOCUDA_H
