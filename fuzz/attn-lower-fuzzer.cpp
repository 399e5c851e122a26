//===- attn-lower-fuzzer.cpp - fuzz the CPU lowering pipeline -------------===//
//
// Parse + verify, then `attn-opt --attn-cpu-lowering-pipeline` down to the
// LLVM dialect (each pass's result is verified). An `attn.cpu_backend =
// "math"` attribute in the input (in the dictionary) selects the other
// attn.sdpa lowering.
//
// The target's vector width and the threading are taken from the input's
// bytes, never from the host: the lowering sizes its register tiles from the
// width (128, 256 or 512 bits), so every width is fuzzed on any machine, and
// a crash input reproduces the same way on a machine with another CPU.
//
// Only modules of at most kMaxFunctions functions are lowered (the others
// are parsed and verified): each function is lowered on its own, so more
// of them add time, not coverage; 44 GEMMs took 12-15 s under ASan, near
// the 20 s timeout on a loaded machine.
//
//===----------------------------------------------------------------------===//

#include "AttnFuzzer.h"

#include "attn/Pipelines/CpuPipeline.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned sum = 0;
  for (size_t i = 0; i < size; ++i)
    sum += data[i];
  attn::AttnCpuPipelineOptions options;
  options.vectorBits = int64_t{128} << (sum % 3);
  options.numThreads = (sum / 3) % 2; // 0: OpenMP, 1: sequential.
  constexpr unsigned kMaxFunctions = 8;
  return attn::fuzz::parseVerifyAndRun(
      data, size,
      [&](OpPassManager &pm) {
        attn::buildAttnCpuLoweringPipeline(pm, options);
      },
      kMaxFunctions);
}
