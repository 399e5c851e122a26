//===- ToolOptions.h - command-line options of the compiling tools -*- C++ -*-//
//
// The flags attn-compile and attn-run share (--no-fuse,
// --no-outline-kernels, --backend, --num-threads, --quantized-activations,
// --mcpu, --mattr), declared
// once: each tool constructs one AttnToolOptions in its option category, then
// builds its pipeline options and target machine from it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_TOOLOPTIONS_H
#define ATTN_PIPELINES_TOOLOPTIONS_H

#include "attn/Pipelines/Pipelines.h"

#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::attn {

struct AttnToolOptions {
  /// Registers the options in `category`; construct once, before the
  /// command line is parsed.
  explicit AttnToolOptions(llvm::cl::OptionCategory &category);

  llvm::cl::opt<bool> noFuse;
  llvm::cl::opt<bool> noOutlineKernels;
  llvm::cl::opt<bool> noTileAndFuse;
  llvm::cl::opt<SdpaCpuBackend> backend;
  llvm::cl::opt<unsigned> numThreads;
  llvm::cl::opt<QuantizedActivations> quantizedActivations;
  llvm::cl::opt<std::string> mcpu;
  llvm::cl::opt<std::string> mattr;

  /// Sets fuse, outline-kernels, tile-and-fuse, backend, num-threads and
  /// quantized-activations of `options` from the flags.
  void applyTo(AttnPipelineOptions &options) const;

  /// Fails with `error` set where --num-threads is above kMaxThreads.
  LogicalResult checkThreads(std::string &error) const;

  /// The target machine of --mcpu/--mattr (the host's by default) at LLVM
  /// optimization level `optLevel`; null with `error` set on failure.
  std::unique_ptr<llvm::TargetMachine>
  createTargetMachine(unsigned optLevel, std::string &error) const;
};

/// The most threads a tool or a library may be asked for, in --num-threads
/// or OMP_NUM_THREADS: libomp stops the process (an assertion) on counts it
/// cannot create, and a count in the tens of thousands starves the machine
/// before that.
inline constexpr unsigned kMaxThreads = 1024;

/// Fails with `error` set where the environment's OMP_NUM_THREADS, which
/// libomp reads when a process first runs parallel code, is set but is not
/// a comma-separated list of thread counts from 1 to kMaxThreads (libomp
/// aborts on '', '-1', 'abc' or '99999999999').
LogicalResult checkOmpNumThreadsEnvironment(std::string &error);

} // namespace mlir::attn

#endif // ATTN_PIPELINES_TOOLOPTIONS_H
