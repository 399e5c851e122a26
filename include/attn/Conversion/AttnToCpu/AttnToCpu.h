//===- AttnToCpu.h - lower attn ops to CPU code -----------------*- C++ -*-===//
//
// buildAttnCpuLoweringPipeline takes attn on tensors to the LLVM dialect with
// _mlir_ciface_ entry points (CpuLoweringPipeline.cpp).
// With numThreads != 1 the code calls the OpenMP runtime: load libomp.so
// (Debian package libomp-22-dev: /usr/lib/llvm-22/lib/libomp.so) in the JIT,
// link -lomp for AOT.
//
// The lowering (`attn-lower-to-cpu`) rewrites attn ops into linalg, tensor,
// arith, math, cf (run-time size checks) and scf on tensors. attn.sdpa has
// two implementations, picked like PyTorch's backend selection:
//   - math:  materialises the [..., L, S] scores (the reference);
//   - flash: scf.forall over (batch dims x query blocks), scf.for over
//            key/value blocks with online softmax in register-tiled vector
//            code (vector width from the target); only block-sized scratch.
// `auto` is flash unless dropout_p > 0 (math). A discardable string
// attribute `attn.cpu_backend` on an attn.sdpa overrides the choice per op.
//
// Conventions the rest of the project relies on:
//   - Dynamic (`?`) dims never broadcast at run time: where a `?` dim meets
//     another size, a cf.assert checks they are equal.
//   - Dropout (attn.dropout, attn.sdpa's math path) is a counter-based hash
//     of the row-major element index and the op's optional `seed` (i64)
//     attribute (0 when absent); see cpu::buildDropoutElement. attn.sdpa
//     drops out its [..., L, S] probabilities with the same stream as
//     attn.dropout on that tensor, so fused and unfused agree (f32) when the
//     seeds agree. It cannot match PyTorch's RNG.
//   - Trace: the attn-instrument-trace pass (the pipeline's enableTrace)
//     puts each op, and so its lowered code, between
//     attnrt_trace_begin(i64 id) and attnrt_trace_end(i64 id) (private
//     external functions); the module gets `attn.trace_names`.
//   - AOT: compile for the host CPU (llc -mcpu=native or an explicit
//     -mattr) or the loops are not vectorised for AVX-512 and f16 <-> f32
//     conversions become libcalls (__extendhfsf2/__truncsfhf2, in libgcc).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
#define ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace mlir::attn {

/// Which attn.sdpa implementation to emit.
enum class SdpaCpuBackend { Auto, Flash, Math };

/// "auto", "flash" or "math": the one spelling of each backend, used by the
/// pass and pipeline options, the tools' flags and `attn.cpu_backend`.
StringRef stringifySdpaCpuBackend(SdpaCpuBackend backend);

/// Parses a name printed by stringifySdpaCpuBackend.
FailureOr<SdpaCpuBackend> parseSdpaCpuBackend(StringRef name);

/// The values of a typed `backend` command-line option: anything else is
/// rejected when the option is parsed.
llvm::cl::ValuesClass sdpaCpuBackendValues();

/// A discardable string attribute on an attn.sdpa ("auto", "flash" or
/// "math") that overrides the pass's backend for that op (used to compare
/// the two implementations in one module).
inline constexpr StringLiteral kSdpaCpuBackendAttrName = "attn.cpu_backend";

/// The backend for `sdpa`: its `attn.cpu_backend` attribute, else
/// `passDefault`.
SdpaCpuBackend getSdpaCpuBackend(Operation *sdpa, SdpaCpuBackend passDefault);

/// The module attribute in which attn-instrument-trace records the op names
/// of the trace spans, indexed by span id.
inline constexpr StringLiteral kTraceNamesAttrName = "attn.trace_names";

/// Options of the attn-to-CPU lowering.
struct AttnCpuLoweringOptions {
  SdpaCpuBackend backend = SdpaCpuBackend::Auto;
  /// Pipeline only. Run attn-instrument-trace first: each lowered attn op
  /// sits between attnrt_trace_begin/end(i64) calls and the module attribute
  /// `attn.trace_names` records the op names.
  bool enableTrace = false;
  /// Flash block sizes (query rows, key/value rows); 0: chosen for the
  /// target. Query blocks are rounded up to a multiple of the vector lanes.
  int64_t blockQ = 0;
  int64_t blockKV = 0;
  /// Vector register width of the target in bits (128, 256 or 512); 0: the
  /// host's (AVX-512F: 512, AVX: 256, else 128). The flash path sizes its
  /// vectors and register tiles from it; code for a wider width still runs
  /// correctly where LLVM splits the vectors, only slower.
  int64_t vectorBits = 0;
  /// Pipeline only. 1: sequential code (scf.forall -> scf.for, no OpenMP);
  /// 0: OpenMP with the runtime's default thread count; N > 1: OpenMP with
  /// N threads. OpenMP code needs libomp.so when it runs (JIT: pass it as a
  /// shared library; AOT: link -lomp).
  unsigned numThreads = 0;
  /// Pipeline only. Replace exp, tanh, erf... by MLIR's polynomial
  /// approximations (attn-cpu-math-approximation) so that the loops
  /// vectorise (otherwise a scalar libm call per element).
  bool fastMath = true;
  /// Pipeline only. Allocate through _mlir_memref_to_llvm_alloc/free instead
  /// of malloc/free (the CUDA runtime provides them with managed memory).
  bool useGenericAllocFunctions = false;
  /// Pipeline only. Lower cf.assert (the run-time checks) to a call of the
  /// AttnFuse runtime's attnrt_check_failed(message), which calls a handler
  /// the program can set, instead of LLVM's puts + abort. The code then
  /// needs lib/Runtime when it runs.
  bool checkFailureCalls = false;
  /// Pipeline only. Run attn-check-allocations: a buffer size that
  /// overflows and a failed malloc fail a run-time check.
  bool checkAllocations = false;
  /// Pipeline only. Expand f16 <-> f32 conversions in integer code (a
  /// target without F16C, where LLVM would call compiler-rt's
  /// __extendhfsf2/__truncsfhf2). bf16 and f64 -> f16 conversions are
  /// always expanded.
  bool expandF16Conversions = false;
  /// Pipeline only. Run attn-cpu-outline-kernels before the lowering (GEMMs,
  /// attention) and after the elementwise fusion (other linalg ops): each
  /// kernel repeated in the module is emitted once, as a noinline function.
  bool outlineKernels = true;
};

/// Patterns lowering each attn op family (one file each).
void populateAttnMatmulToCpuPatterns(RewritePatternSet &patterns,
                                     const AttnCpuLoweringOptions &options);
void populateAttnElementwiseToCpuPatterns(RewritePatternSet &patterns);
void populateAttnSoftmaxToCpuPatterns(RewritePatternSet &patterns);
void populateAttnReshapeToCpuPatterns(RewritePatternSet &patterns);
void populateAttnSdpaToCpuPatterns(RewritePatternSet &patterns,
                                   const AttnCpuLoweringOptions &options);

/// Everything from attn on tensors to the LLVM dialect: attn-lower-to-cpu,
/// one-shot bufferization (function boundaries, identity layouts), buffer
/// deallocation, linalg to loops, scf.forall to OpenMP (or to loops when
/// numThreads == 1), then math/arith/index/cf/func/memref/openmp to LLVM and
/// reconcile-unrealized-casts. Public functions get llvm.emit_c_interface.
void buildAttnCpuLoweringPipeline(OpPassManager &pm,
                                  const AttnCpuLoweringOptions &options);

/// Registers `attn-cpu-lowering-pipeline` (options: backend, trace,
/// num-threads, fast-math, block-q, block-kv, vector-bits, check-failure-calls)
/// for attn-opt.
void registerAttnCpuLoweringPipeline();

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
