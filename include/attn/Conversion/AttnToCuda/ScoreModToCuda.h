//===- ScoreModToCuda.h - attn.sdpa score_mod regions as CUDA source -*- C++ -*-===//
//
// Translates the score_mod region of an attn.sdpa into a CUDA `.cu` file:
// a score modifier (kernels/src/score_mod.h: a struct with a static
// `apply<Ops>(p, s, b, h, i, j)`) computing each op of the region as the CPU
// lowering does (IEEE ops rounded to nearest even and never contracted,
// f16/bf16 rounded after each op, NaN-propagating maximumf/minimumf,
// wrapping integers), the kernels' templates instantiated with it, and a C
// entry point `attnrt_cuda_sdpa_mod_<hash>` with the runtime bridge's
// calling convention plus one unranked memref per extra operand before the
// attributes (kernels/include/attn/kernels/sdpa_contract.h).
// `attn-lower-sdpa-to-cuda` calls it; `attn-compile --target=cuda` compiles
// the source with nvcc.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOCUDA_SCOREMODTOCUDA_H
#define ATTN_CONVERSION_ATTNTOCUDA_SCOREMODTOCUDA_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include <string>

namespace mlir::attn {

/// The module attribute (a dictionary: entry point symbol -> its CUDA
/// source) in which `attn-lower-sdpa-to-cuda` leaves the generated sources
/// for `attn-compile`.
inline constexpr llvm::StringLiteral kCudaSourcesAttrName = "attn.cuda_sources";

/// A generated kernel: its C entry point and the complete `.cu` source.
struct CudaScoreModKernel {
  std::string symbol;
  std::string source;
};

/// Generates the kernel of `op`'s score_mod region. `op` must be one the
/// CUDA kernels take otherwise (element type, rank, head dims). On failure
/// returns failure and sets `reason` to why (naming the op or type that has
/// no translation); nothing is emitted.
FailureOr<CudaScoreModKernel> generateCudaScoreModKernel(SdpaOp op,
                                                         std::string &reason);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOCUDA_SCOREMODTOCUDA_H
