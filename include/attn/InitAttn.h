//===- InitAttn.h - register everything AttnFuse provides -------*- C++ -*-===//
//
// One place that tools call to register the attn dialect, the upstream
// dialects our pipelines use, and every AttnFuse pass, so that attn-opt,
// attn-compile and attn-run all accept the same IR and flags.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITATTN_H
#define ATTN_INITATTN_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::attn {

/// The attn dialect, all upstream dialects and their extensions/interfaces.
void registerAllAttnDialects(DialectRegistry &registry);

/// Every AttnFuse pass and pipeline (upstream passes are registered by the
/// tools that want them).
void registerAllAttnPasses();

} // namespace mlir::attn

#endif // ATTN_INITATTN_H
