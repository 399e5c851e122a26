//===- AttnFuzzerJit.cpp - set-up of the differential fuzz targets --------===//
//
// Apart from AttnFuzzer.cpp so that only the targets that run compiled code
// (and link the C runtime) pull it in.
//
//===----------------------------------------------------------------------===//

#include "AttnFuzzer.h"

#include "attn/Runtime/AttnRuntime.h"

#include "llvm/Support/TargetSelect.h"

using namespace mlir;

int attn::fuzz::initializeJitTarget(void (*onCheckFailure)(const char *)) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  attnrt_set_check_failure_handler(onCheckFailure);
  return 0;
}
