//===- CpuLoweringPipeline.cpp - attn on tensors to the LLVM dialect ------===//
//
// buildAttnCpuLoweringPipeline and its registration as
// `attn-cpu-lowering-pipeline`: attn-lower-to-cpu, bufferization, loops,
// OpenMP and the conversions to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

/// attn ops to upstream ops on tensors, functions marked for C callers.
static void addAttnToTensorPasses(OpPassManager &pm,
                                  const AttnCpuLoweringOptions &options) {
  AttnLowerToCpuOptions lowerOptions;
  lowerOptions.backend = options.backend;
  lowerOptions.blockQ = options.blockQ;
  lowerOptions.blockKV = options.blockKV;
  lowerOptions.vectorBits = options.vectorBits;
  // Before the lowering, which puts each op's code where the op was, that is
  // between the op's two trace calls.
  if (options.enableTrace)
    pm.addPass(createAttnInstrumentTrace());
  // CSE runs here, on tensors, and not again before bufferization: the
  // lowering reads operands through `bufferization.to_buffer`, which is pure,
  // so CSE would merge a later GEMM's to_buffer into an earlier one, and the
  // merged memref would be read after bufferization had let another op write
  // over that buffer in place.
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createAttnLowerToCpu(lowerOptions));
  // Elementwise arith on tensors (the fusion's mask inversion, or a
  // frontend's) has no bufferization of its own: make it linalg. After the
  // lowering, which can fold the fusion's inversion into its mask copy.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createAttnCpuEmitCInterface());
  pm.addPass(createCanonicalizerPass());
}

/// Tensors to buffers, buffers freed, then loops (parallel ones on OpenMP
/// unless numThreads == 1).
static void addBufferizeToLoopsPasses(OpPassManager &pm,
                                      const AttnCpuLoweringOptions &options) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // Deallocation leaves bufferization.clone where a function returns a
  // buffer it does not own (e.g. one of its arguments).
  pm.addPass(createConvertBufferizationToMemRefPass());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (options.numThreads == 1) {
    pm.addPass(createForallToForLoopPass());
  } else {
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(omp));
  }
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Loops, memrefs and the rest to the LLVM dialect.
static void addToLLVMPasses(OpPassManager &pm,
                            const AttnCpuLoweringOptions &options) {
  if (options.fastMath)
    pm.addNestedPass<func::FuncOp>(createAttnCpuMathApproximation());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // expand-strided-metadata emits affine.apply for offsets and sizes.
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.useGenericAllocFunctions;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM intrinsic (math.erf of the exporter's GELU) calls libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  if (options.checkFailureCalls)
    pm.addPass(createAttnCheckFailureCalls());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::attn::buildAttnCpuLoweringPipeline(
    OpPassManager &pm, const AttnCpuLoweringOptions &options) {
  addAttnToTensorPasses(pm, options);
  addBufferizeToLoopsPasses(pm, options);
  addToLLVMPasses(pm, options);
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<SdpaCpuBackend> backend{
      *this, "backend", llvm::cl::desc("attn.sdpa implementation"),
      llvm::cl::init(SdpaCpuBackend::Auto), sdpaCpuBackendValues()};
  Option<bool> trace{*this, "trace", llvm::cl::desc("emit trace calls"),
                     llvm::cl::init(false)};
  Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("1: no OpenMP; 0: OpenMP default; N: N threads"),
      llvm::cl::init(0)};
  Option<bool> fastMath{
      *this, "fast-math",
      llvm::cl::desc("polynomial exp, tanh, erf... (vectorise)"),
      llvm::cl::init(true)};
  Option<int64_t> blockQ{*this, "block-q",
                         llvm::cl::desc("flash query rows (0: auto)"),
                         llvm::cl::init(0)};
  Option<int64_t> blockKV{*this, "block-kv",
                          llvm::cl::desc("flash keys per block (0: auto)"),
                          llvm::cl::init(0)};
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("target vector width in bits (0: the host's)"),
      llvm::cl::init(0)};
  Option<bool> checkFailureCalls{
      *this, "check-failure-calls",
      llvm::cl::desc("failed checks call attnrt_check_failed"),
      llvm::cl::init(false)};
};
} // namespace

void mlir::attn::registerAttnCpuLoweringPipeline() {
  PassPipelineRegistration<PipelineOptions>(
      "attn-cpu-lowering-pipeline",
      "attn on tensors to the LLVM dialect (attn-lower-to-cpu, bufferize, "
      "loops, OpenMP, LLVM)",
      [](OpPassManager &pm, const PipelineOptions &o) {
        AttnCpuLoweringOptions options;
        options.backend = o.backend;
        options.enableTrace = o.trace;
        options.numThreads = o.numThreads;
        options.fastMath = o.fastMath;
        options.blockQ = o.blockQ;
        options.blockKV = o.blockKV;
        options.checkFailureCalls = o.checkFailureCalls;
        options.vectorBits = o.vectorBits;
        buildAttnCpuLoweringPipeline(pm, options);
      });
}
