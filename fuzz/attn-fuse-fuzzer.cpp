//===- attn-fuse-fuzzer.cpp - fuzz the attn-fuse-sdpa pass ----------------===//
//
// Parse + verify, then `attn-opt --attn-fuse-sdpa` (the result is verified).
//
//===----------------------------------------------------------------------===//

#include "AttnFuzzer.h"

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return attn::fuzz::parseVerifyAndRun(data, size, [](OpPassManager &pm) {
    pm.addPass(attn::createAttnFuseSdpa());
  });
}
