//===- ToolOptions.cpp - command-line options of the compiling tools ------===//

#include "attn/Pipelines/ToolOptions.h"

#include "llvm/Target/TargetMachine.h"

using namespace mlir;
namespace cl = llvm::cl;

attn::AttnToolOptions::AttnToolOptions(cl::OptionCategory &category)
    : noFuse("no-fuse", cl::cat(category),
             cl::desc("Do not run attn-fuse-sdpa")),
      noOutlineKernels(
          "no-outline-kernels", cl::cat(category),
          cl::desc("Lower every GEMM, attention and loop where it is, instead "
                   "of once per distinct kernel in a noinline function")),
      noTileAndFuse(
          "no-tile-and-fuse", cl::cat(category),
          cl::desc("Run each large loop nest whole on one thread, instead of "
                   "in parallel row blocks with its producers fused")),
      backend("backend", cl::cat(category), cl::init(SdpaCpuBackend::Auto),
              cl::desc("CPU lowering of attn.sdpa"), sdpaCpuBackendValues()),
      numThreads("num-threads", cl::cat(category), cl::init(0),
                 cl::desc("Threads of the generated code: 0 = OpenMP default "
                          "(OMP_NUM_THREADS, else all cores), 1 = sequential "
                          "(no OpenMP), N = N"),
                 cl::value_desc("N")),
      quantizedActivations(
          "quantized-activations", cl::cat(category),
          cl::init(QuantizedActivations::None),
          cl::desc("Inputs of quantized decode products (opt-in: the "
                   "numbers change): none = f32 as given, int8 = quantized "
                   "per block of 32 and multiplied in integers where the "
                   "target has VNNI (docs/quantization.md)"),
          quantizedActivationsValues()),
      mcpu("mcpu", cl::cat(category),
           cl::desc("Target CPU (default: the host's)")),
      mattr("mattr", cl::cat(category),
            cl::desc("Target features, e.g. +avx2,-fma (added to the host's "
                     "when --mcpu is not given)")) {}

void attn::AttnToolOptions::applyTo(AttnPipelineOptions &options) const {
  options.fuse = !noFuse;
  options.outlineKernels = !noOutlineKernels;
  options.tileAndFuse = !noTileAndFuse;
  options.backend = backend.getValue();
  options.numThreads = numThreads.getValue();
  options.quantizedActivations = quantizedActivations.getValue();
}

LogicalResult attn::AttnToolOptions::checkThreads(std::string &error) const {
  if (numThreads <= kMaxThreads)
    return success();
  error = "--num-threads=" + std::to_string(numThreads) + ": at most " +
          std::to_string(kMaxThreads) +
          " threads (0 = OpenMP's default, 1 = sequential)";
  return failure();
}

LogicalResult attn::checkOmpNumThreadsEnvironment(std::string &error) {
  const char *value = std::getenv("OMP_NUM_THREADS");
  if (!value)
    return success();
  SmallVector<StringRef> counts;
  StringRef(value).split(counts, ',');
  for (StringRef count : counts) {
    unsigned n = 0;
    // getAsInteger takes a sign and a radix prefix; OpenMP wants digits.
    StringRef digits = count.trim();
    if (digits.empty() ||
        !llvm::all_of(digits, [](char c) { return c >= '0' && c <= '9'; }) ||
        digits.getAsInteger(10, n) || n < 1 || n > kMaxThreads) {
      error = "OMP_NUM_THREADS='" + std::string(value) +
              "': expected a thread count from 1 to " +
              std::to_string(kMaxThreads) +
              " (or a comma-separated list of them); libomp would stop the "
              "process (unset it for OpenMP's default)";
      return failure();
    }
  }
  return success();
}

std::unique_ptr<llvm::TargetMachine>
attn::AttnToolOptions::createTargetMachine(unsigned optLevel,
                                           std::string &error) const {
  AttnTargetOptions target;
  target.cpu = mcpu;
  target.features = mattr;
  target.optLevel = optLevel;
  return createAttnTargetMachine(target, error);
}
