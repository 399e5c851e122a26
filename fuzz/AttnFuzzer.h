//===- AttnFuzzer.h - shared driver of the libFuzzer targets ----*- C++ -*-===//
//
// Each fuzz target parses its input as an MLIR module with every AttnFuse
// dialect registered (as attn-opt does), verifies it and, if that succeeds,
// runs a pass pipeline on it. Diagnostics (parse errors, verifier errors,
// pass failures, remarks) are expected and swallowed: only a crash, a
// sanitizer report or a pass that succeeds but leaves invalid IR is a bug.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_FUZZ_ATTNFUZZER_H
#define ATTN_FUZZ_ATTNFUZZER_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::attn::fuzz {

/// A fuzz input read as a stream of choices; past its end, zeros.
struct Reader {
  const uint8_t *data;
  size_t size, pos = 0;
  /// The next choice among n (0 .. n - 1).
  unsigned pick(unsigned n) { return pos < size ? data[pos++] % n : 0; }
};

/// Parses and verifies `data` in a fresh context, then (when `buildPipeline`
/// is given, and the module has at most `maxFunctions` functions with a
/// body, where that is not 0) runs the passes it adds on the module. Aborts
/// when a pass succeeds but the module no longer verifies. Returns 0
/// (libFuzzer's convention) for every input that did not crash.
int parseVerifyAndRun(const uint8_t *data, size_t size,
                      llvm::function_ref<void(OpPassManager &)> buildPipeline,
                      unsigned maxFunctions = 0);

/// A fresh context for the differential targets, which JIT-compile what
/// they build: every attn dialect and the LLVM IR translations (one registry
/// built once), threading off, every diagnostic appended to `diagnostics`
/// (which must outlive the context).
std::unique_ptr<MLIRContext> createJitContext(std::string &diagnostics);

/// The differential targets' LLVMFuzzerInitialize: the host's target for
/// the JIT, and `onCheckFailure` as the runtime's check-failure handler (a
/// run-time check that fails on a valid module is a bug). Returns 0.
int initializeJitTarget(void (*onCheckFailure)(const char *message));

} // namespace mlir::attn::fuzz

#endif // ATTN_FUZZ_ATTNFUZZER_H
