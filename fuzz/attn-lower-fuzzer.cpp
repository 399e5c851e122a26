//===- attn-lower-fuzzer.cpp - fuzz the CPU lowering pipeline -------------===//
//
// Parse + verify, then `attn-opt --attn-cpu-lowering-pipeline` with its
// default options, down to the LLVM dialect (each pass's result is verified).
// An `attn.cpu_backend = "math"` attribute in the input (in the dictionary)
// selects the other attn.sdpa lowering.
//
//===----------------------------------------------------------------------===//

#include "AttnFuzzer.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return attn::fuzz::parseVerifyAndRun(data, size, [](OpPassManager &pm) {
    attn::buildAttnCpuLoweringPipeline(pm, attn::AttnCpuLoweringOptions());
  });
}
