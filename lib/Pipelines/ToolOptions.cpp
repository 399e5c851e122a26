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
