//===- attn-parse-fuzzer.cpp - fuzz the attn parser and verifiers ---------===//
//
// Parse + verify an MLIR module with the attn dialect registered.
//
//===----------------------------------------------------------------------===//

#include "AttnFuzzer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return mlir::attn::fuzz::parseVerifyAndRun(data, size, nullptr);
}
