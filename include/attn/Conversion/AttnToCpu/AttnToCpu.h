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
//   - Trace: the attn-instrument-trace pass (the pipeline's `trace`)
//     puts each op, and so its lowered code, between
//     attnrt_trace_begin(i64 id) and attnrt_trace_end(i64 id) (private
//     external functions); the module gets `attn.trace_names`.
//   - Target: the code is tiled for `vector-bits` (kDefaultVectorBits
//     unless set); the lowering never looks at the host. The tools set it,
//     `bf16-dot`, `amx`, `native-bf16` and `expand-f16` from the machine
//     they compile for.
//   - AMX: with `amx`, each bf16 GEMM calls the runtime's
//     attnrt_amx_available() (kAmxAvailableFunction, declared by
//     attn-lower-to-cpu, which then runs on the module) and branches to its
//     AMX tiles or to the vector code.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
#define ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

/// SdpaCpuBackend (Auto, Flash, Math) with stringifySdpaCpuBackend and
/// symbolizeSdpaCpuBackend ("auto", "flash", "math"): CpuEnums.td.
#include "attn/Conversion/AttnToCpu/CpuEnums.h.inc"

namespace mlir::attn {

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

/// The runtime function (lib/Runtime, `int32_t (void)`) that GEMMs lowered
/// with the `amx` option call to learn whether the process may run AMX
/// tile instructions.
inline constexpr StringLiteral kAmxAvailableFunction = "attnrt_amx_available";

/// The unit attribute on the scf.if whose then-region holds a GEMM's AMX
/// work items: attn-lower-to-cpu outlines that region into a noinline
/// function, so that no tile instruction (nor the ldtilecfg LLVM puts at
/// the entry of a function that uses tiles) runs on the fallback path.
inline constexpr StringLiteral kAmxBranchAttrName = "attn.amx_branch";

/// The module attribute in which attn-instrument-trace records the op names
/// of the trace spans, indexed by span id.
inline constexpr StringLiteral kTraceNamesAttrName = "attn.trace_names";

/// The vector register width, in bits, that the CPU lowering tiles for
/// unless an option says otherwise: AVX2's (x86-64-v3). Nothing in the
/// lowering probes the host; the tools set the width of the machine they
/// compile for (attn::applyTargetMachine).
inline constexpr int64_t kDefaultVectorBits = 256;

/// The longest dynamic L and S for which the flash lowering narrows a
/// score_mod region's positions to 32 bits (a query row, padding included,
/// stays below 2^30 + the block size, so that i - j, j - i and i + j fit
/// i32); longer ones run the 64-bit code.
inline constexpr int64_t kDefaultPositionBound = int64_t(1) << 30;

/// Options of the op lowerings (the populate functions below), as
/// attn-lower-to-cpu passes them on after checking their values.
struct AttnCpuLoweringOptions {
  SdpaCpuBackend backend = SdpaCpuBackend::Auto;
  /// Flash block sizes (query rows, key/value rows); 0: chosen for the
  /// target. Query blocks are rounded up to a multiple of the vector lanes.
  int64_t blockQ = 0;
  int64_t blockKV = 0;
  /// Vector register width of the target in bits: 128, 256 or 512. The
  /// flash, decode and GEMM code size their vectors and register tiles from
  /// it; code for a wider width still runs correctly where LLVM splits the
  /// vectors, only slower.
  int64_t vectorBits = kDefaultVectorBits;
  /// The target has AVX512-BF16: bf16 x bf16 GEMMs accumulated in f32 use
  /// vdpbf16ps (x86vector.avx512.dot) on pair-packed bf16 panels instead of
  /// FMAs on panels widened to f32.
  bool bf16Dot = false;
  /// The target has AMX (amx-tile, amx-bf16): bf16 x bf16 GEMMs accumulated
  /// in f32, and the q.k^T and p.v of bf16 flash attention whose E and Ev
  /// are multiples of 32 (512-bit vectors), run on AMX tiles where
  /// kAmxAvailableFunction says the process may use them, and the paths
  /// above otherwise.
  bool amx = false;
  /// See kDefaultPositionBound (a smaller one runs the 64-bit version on
  /// short lengths: tests).
  int64_t positionBound = kDefaultPositionBound;
};

/// The options of the whole CPU lowering: one struct for the C++ API
/// (buildAttnCpuLoweringPipeline) and for the registered pipeline
/// `attn-cpu-lowering-pipeline`, whose option names are the ones below.
struct AttnCpuPipelineOptions
    : public PassPipelineOptions<AttnCpuPipelineOptions> {
  Option<SdpaCpuBackend> backend{
      *this, "backend", llvm::cl::desc("attn.sdpa implementation"),
      llvm::cl::init(SdpaCpuBackend::Auto), sdpaCpuBackendValues()};
  /// Run attn-instrument-trace first: each lowered attn op sits between
  /// attnrt_trace_begin/end(i64) calls and the module attribute
  /// `attn.trace_names` records the op names.
  Option<bool> trace{*this, "trace",
                     llvm::cl::desc("emit attnrt_trace_begin/end calls"),
                     llvm::cl::init(false)};
  /// 1: sequential code (scf.forall -> scf.for, no OpenMP); 0: OpenMP with
  /// the runtime's default thread count; N > 1: OpenMP with N threads.
  /// OpenMP code needs libomp.so when it runs (JIT: pass it as a shared
  /// library; AOT: link -lomp).
  Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("1: no OpenMP; 0: OpenMP default; N: N threads"),
      llvm::cl::init(0)};
  /// Replace exp, tanh, erf... by polynomial approximations
  /// (attn-cpu-math-approximation) so that the loops vectorise (otherwise a
  /// scalar libm call per element).
  Option<bool> fastMath{
      *this, "fast-math",
      llvm::cl::desc("polynomial exp, tanh, erf... (vectorise)"),
      llvm::cl::init(true)};
  Option<int64_t> maxCallsPerFunction{
      *this, "max-calls-per-function",
      llvm::cl::desc("split a function block of more calls into parts of "
                     "this many (attn-cpu-split-large-functions; 0: never)"),
      llvm::cl::init(32)};
  Option<int64_t> blockQ{*this, "block-q",
                         llvm::cl::desc("flash query rows (0: auto)"),
                         llvm::cl::init(0)};
  Option<int64_t> blockKV{*this, "block-kv",
                          llvm::cl::desc("flash keys per block (0: auto)"),
                          llvm::cl::init(0)};
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("target vector width in bits (128, 256 or 512)"),
      llvm::cl::init(kDefaultVectorBits)};
  /// bf16 GEMMs with AVX512-BF16's vdpbf16ps (a target that has it: the
  /// tools set it from the machine they compile for).
  Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 GEMMs with vdpbf16ps (target has AVX512-BF16)"),
      llvm::cl::init(false)};
  /// bf16 GEMMs on AMX tiles (a target that has AMX-BF16: the tools set
  /// it from the machine they compile for). The code then calls the
  /// runtime's kAmxAvailableFunction.
  Option<bool> amx{*this, "amx",
                   llvm::cl::desc("bf16 GEMMs and attention on AMX tiles "
                                  "(target has AMX-BF16)"),
                   llvm::cl::init(false)};
  Option<int64_t> positionBound{
      *this, "position-bound",
      llvm::cl::desc("dynamic lengths with 32-bit score_mod positions"),
      llvm::cl::init(kDefaultPositionBound)};
  /// Expand f16 <-> f32 conversions in integer code (a target without
  /// F16C, where LLVM would call compiler-rt's __extendhfsf2/__truncsfhf2).
  /// bf16 and f64 -> f16 conversions are always expanded.
  Option<bool> expandF16Conversions{
      *this, "expand-f16",
      llvm::cl::desc("expand f16 <-> f32 conversions (no F16C)"),
      llvm::cl::init(false)};
  /// Round f32 to bf16 with the target's vcvtneps2bf16 (AVX512-BF16: the
  /// tools set it from the machine they compile for) instead of integer
  /// code: f32 subnormals then round to zero (attn-cpu-expand-narrow-floats).
  Option<bool> nativeBf16{
      *this, "native-bf16",
      llvm::cl::desc("f32 -> bf16 with vcvtneps2bf16 (target has "
                     "AVX512-BF16; subnormals become zero)"),
      llvm::cl::init(false)};
  /// Run attn-check-allocations: a buffer size that overflows and a failed
  /// malloc fail a run-time check.
  Option<bool> checkAllocations{
      *this, "check-allocations",
      llvm::cl::desc("check buffer sizes and malloc results at run time"),
      llvm::cl::init(false)};
  /// Lower cf.assert (the run-time checks) to a call of the AttnFuse
  /// runtime's attnrt_check_failed(message), which calls a handler the
  /// program can set, instead of LLVM's puts + abort. The code then needs
  /// lib/Runtime when it runs.
  Option<bool> checkFailureCalls{
      *this, "check-failure-calls",
      llvm::cl::desc("failed checks call attnrt_check_failed"),
      llvm::cl::init(false)};
  /// Allocate through _mlir_memref_to_llvm_alloc/free instead of
  /// malloc/free (the CUDA runtime provides them with managed memory).
  Option<bool> useGenericAllocFunctions{
      *this, "generic-alloc",
      llvm::cl::desc("allocate through _mlir_memref_to_llvm_alloc/free"),
      llvm::cl::init(false)};
  /// Run attn-cpu-outline-kernels before the lowering (GEMMs, attention)
  /// and after the elementwise fusion (other linalg ops): each kernel
  /// repeated in the module is emitted once, as a noinline function (what
  /// keeps the compile time of N identical layers from growing N-fold).
  Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("emit each repeated kernel once, as a noinline function"),
      llvm::cl::init(true)};
  /// Run attn-cpu-tile-and-fuse after the elementwise fusion: large linalg
  /// ops (norms, activations, rotary embeddings) run in parallel blocks of
  /// rows, each block's producers fused into it.
  Option<bool> tileAndFuse{
      *this, "tile-and-fuse",
      llvm::cl::desc("run large linalg ops in parallel row blocks with their "
                     "producers fused"),
      llvm::cl::init(true)};
};

/// Patterns lowering each attn op family (one file each).
void populateAttnMatmulToCpuPatterns(RewritePatternSet &patterns,
                                     const AttnCpuLoweringOptions &options);
void populateAttnElementwiseToCpuPatterns(RewritePatternSet &patterns);

/// Lowers the elementwise attn ops in `root` (those of
/// populateAttnElementwiseToCpuPatterns) to generics, then rewrites the
/// tensor.dim ops in terms of the sizes their operands were built from:
/// what attn-lower-to-cpu does first, so that a product sees the generics
/// that consume it.
LogicalResult lowerAttnElementwiseOps(Operation *root);
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
                                  const AttnCpuPipelineOptions &options);

/// Registers `attn-cpu-lowering-pipeline` (AttnCpuPipelineOptions) for
/// attn-opt.
void registerAttnCpuLoweringPipeline();

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
