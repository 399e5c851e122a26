//===- AttnToCpu.h - lower attn ops to CPU code -----------------*- C++ -*-===//
//
// The op lowerings of the CPU backend; the pipeline around them (bufferize,
// the CPU transforms, LLVM) is attn/Pipelines/CpuPipeline.h.
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
//   - Target: the code is generated for one cpu::Target (vector width,
//     bf16 pair dots, AMX; attn/Codegen/Cpu/Target.h); the lowering never
//     looks at the host. The tools build it from the machine they compile
//     for.
//   - AMX: with `amx`, each bf16 GEMM calls the runtime's
//     attnrt_amx_available() (kAmxAvailableFunction, declared by
//     attn-lower-to-cpu, which then runs on the module) and branches to its
//     AMX tiles or to the vector code.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
#define ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H

#include "attn/Codegen/Cpu/Target.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

/// SdpaCpuBackend (Auto, Flash, Math) with stringifySdpaCpuBackend and
/// symbolizeSdpaCpuBackend ("auto", "flash", "math"), and
/// QuantizedActivations (None, Int8: "none", "int8"): CpuEnums.td.
#include "attn/Conversion/AttnToCpu/CpuEnums.h.inc"

namespace mlir::attn {

/// The values of a typed `backend` command-line option: anything else is
/// rejected when the option is parsed.
llvm::cl::ValuesClass sdpaCpuBackendValues();
/// The values of a `quantized-activations` option.
llvm::cl::ValuesClass quantizedActivationsValues();

/// A discardable string attribute on an attn.sdpa ("auto", "flash" or
/// "math") that overrides the pass's backend for that op (used to compare
/// the two implementations in one module).
inline constexpr StringLiteral kSdpaCpuBackendAttrName = "attn.cpu_backend";

/// The backend for `sdpa`: its `attn.cpu_backend` attribute, else
/// `passDefault`.
SdpaCpuBackend getSdpaCpuBackend(Operation *sdpa, SdpaCpuBackend passDefault);

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
  /// What the code is generated for (the vector width the flash, decode
  /// and GEMM code size their vectors and register tiles from, and the
  /// instruction families of their products).
  cpu::Target target;
  /// See kDefaultPositionBound (a smaller one runs the 64-bit version on
  /// short lengths: tests).
  int64_t positionBound = kDefaultPositionBound;
  /// Int8: the decode GEMV of attn.quantized_matmul quantizes its input
  /// rows to int8 per block of 32 and multiplies in integers, on a target
  /// with an integer dot product (Target::vnni) and a weight whose blocks
  /// suit it; otherwise (and with None) it multiplies in f32.
  QuantizedActivations quantizedActivations = QuantizedActivations::None;
};

/// Patterns lowering each attn op family (one file each).
void populateAttnMatmulToCpuPatterns(RewritePatternSet &patterns,
                                     const AttnCpuLoweringOptions &options);
void populateAttnElementwiseToCpuPatterns(RewritePatternSet &patterns);
/// attn.quantized_matmul (QuantizedMatmulToCpu.cpp).
void populateAttnQuantizedMatmulToCpuPatterns(
    RewritePatternSet &patterns, const AttnCpuLoweringOptions &options);
/// attn.quantized_embedding (QuantizedEmbeddingToCpu.cpp).
void populateAttnQuantizedEmbeddingToCpuPatterns(
    RewritePatternSet &patterns, const AttnCpuLoweringOptions &options);

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

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOCPU_ATTNTOCPU_H
