//===- CpuLoweringPipeline.cpp - attn on tensors to the LLVM dialect ------===//
//
// buildAttnCpuLoweringPipeline and its registration as
// `attn-cpu-lowering-pipeline`: attn-lower-to-cpu, bufferization, loops,
// OpenMP and the conversions to the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/CpuPipeline.h"

#include "attn/Conversion/AttnToCpu/Passes.h"
#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

cpu::Target AttnCpuPipelineOptions::getTarget() const {
  cpu::Target target;
  target.vectorBits = vectorBits;
  target.bf16Dot = bf16Dot;
  target.amx = amx;
  target.nativeBf16 = nativeBf16;
  target.f16c = !expandF16Conversions;
  target.vnni = vnni;
  target.avxVnni = avxVnni;
  target.vnni512 = vnni512;
  target.avx2 = avx2;
  return target;
}

void AttnCpuPipelineOptions::setTarget(const cpu::Target &target) {
  vectorBits = target.vectorBits;
  bf16Dot = target.bf16Dot;
  amx = target.amx;
  nativeBf16 = target.nativeBf16;
  expandF16Conversions = !target.f16c;
  vnni = target.vnni;
  avxVnni = target.avxVnni;
  vnni512 = target.vnni512;
  avx2 = target.avx2;
}

/// attn ops to upstream ops on tensors, functions marked for C callers.
static void addAttnToTensorPasses(OpPassManager &pm,
                                  const AttnCpuPipelineOptions &options) {
  AttnLowerToCpuOptions lowerOptions;
  lowerOptions.backend = options.backend;
  lowerOptions.blockQ = options.blockQ;
  lowerOptions.blockKV = options.blockKV;
  cpu::Target target = options.getTarget();
  setTargetOptions(lowerOptions, target);
  lowerOptions.positionBound = options.positionBound;
  lowerOptions.quantizedActivations = options.quantizedActivations;
  // Before the lowering, which puts each op's code where the op was, that is
  // between the op's two trace calls.
  if (options.trace) {
    AttnInstrumentTraceOptions traceOptions;
    traceOptions.locations = options.traceLocations;
    traceOptions.linalgOps = options.traceLinalgOps;
    pm.addPass(createAttnInstrumentTrace(traceOptions));
  }
  // CSE runs here, on tensors, and not again before bufferization: the
  // lowering reads operands through `bufferization.to_buffer`, which is pure,
  // so CSE would merge a later GEMM's to_buffer into an earlier one, and the
  // merged memref would be read after bufferization had let another op write
  // over that buffer in place.
  pm.addPass(createCSEPass());
  // The elementwise consumers of each product as one generic, which the
  // product's lowering then applies as it stores (not with trace calls:
  // their work would move into the product's span).
  if (!options.trace)
    pm.addNestedPass<func::FuncOp>(createAttnCpuFuseProductConsumers());
  // Repeated GEMMs and attention become calls of one function each before
  // they are lowered, so that each form is lowered (and compiled) once.
  if (options.outlineKernels)
    pm.addPass(createAttnCpuOutlineKernels());
  // With amx the lowering declares the runtime's attnrt_amx_available in
  // the module, so it runs on the module rather than on each function.
  if (target.amx)
    pm.addPass(createAttnLowerToCpu(lowerOptions));
  else
    pm.addNestedPass<func::FuncOp>(createAttnLowerToCpu(lowerOptions));
  // Integer arithmetic whose range analysis fits 32 bits in 32 bits: a
  // score_mod region's position term (j - i, converted to f32 on every
  // score vector) then converts packed i32 lanes, which AVX2 has, instead
  // of i64 lanes, which it does not.
  arith::ArithIntRangeNarrowingOptions narrow;
  narrow.bitwidthsSupported = {32};
  pm.addNestedPass<func::FuncOp>(arith::createArithIntRangeNarrowing(narrow));
  // Elementwise arith on tensors (the fusion's mask inversion, or a
  // frontend's) has no bufferization of its own: make it linalg. After the
  // lowering, which can fold the fusion's inversion into its mask copy.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createAttnCpuEmitCInterface());
  pm.addPass(createCanonicalizerPass());
  // One loop nest per elementwise chain; not with trace calls, whose spans
  // would lose the code of every op fused into a later one. (No CSE here:
  // see above.)
  if (!options.trace)
    pm.addNestedPass<func::FuncOp>(createAttnCpuFuseElementwise());
  // Large loop nests in parallel blocks of rows, a norm's reductions inside
  // each block (not with trace calls either, for the same reason).
  if (options.tileAndFuse && !options.trace)
    pm.addNestedPass<func::FuncOp>(createAttnCpuTileAndFuse());
  // The fused loops (norms, activations, rotary embeddings) of repeated
  // layers, once each.
  if (options.outlineKernels) {
    AttnCpuOutlineKernelsOptions outline;
    outline.linalgOps = true;
    pm.addPass(createAttnCpuOutlineKernels(outline));
  }
}

/// Upstream's buffer-deallocation-pipeline with
/// attn-cpu-dealloc-after-last-use before the deallocations are lowered:
/// each buffer is freed after its last use, not at the end of its block.
static void addDeallocationPasses(OpPassManager &pm) {
  memref::ExpandReallocPassOptions expand;
  expand.emitDeallocs = false;
  pm.addNestedPass<func::FuncOp>(memref::createExpandReallocPass(expand));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Each buffer's own dealloc first: the simplification then sees the few
  // memrefs left in the block's dealloc, not all of them (its alias
  // queries between every pair of one dealloc's memrefs took time
  // quadratic in the number of a function's buffers: 44 s of 48 for a
  // function of 800 attention blocks).
  pm.addPass(createAttnCpuDeallocAfterLastUse());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
}

/// Tensors to buffers, buffers freed, then loops (parallel ones on OpenMP
/// unless numThreads == 1).
static void addBufferizeToLoopsPasses(OpPassManager &pm,
                                      const AttnCpuPipelineOptions &options) {
  // Arguments written in place: their state results are checked and
  // marked before bufferization and dropped after it, so the entry point
  // writes the caller's buffer and returns no copy of it.
  pm.addPass(createAttnMarkInPlaceResults());
  // A value that ends up inserted into another tensor (a KV-cache row, a
  // torch.cat part, a state result) is computed in its destination instead
  // of a temporary that is then copied.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Outlined kernels of dynamic size may be handed views as dense buffers.
  pm.addPass(createAttnCpuDenseCallArguments());
  pm.addPass(createAttnDropInPlaceResults());
  // A value computed in its destination and then inserted there leaves a
  // copy between two equal subviews: CSE makes it a self-copy, which
  // folds.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  addDeallocationPasses(pm);
  // Deallocation leaves bufferization.clone where a function returns a
  // buffer it does not own (e.g. one of its arguments).
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Copies of views (cache rows, dense copies of them for the kernels)
  // in vectors instead of the runtime's element-wise memrefCopy.
  AttnCpuLowerStridedCopiesOptions copies;
  copies.vectorBits = options.getTarget().vectorBits;
  pm.addPass(createAttnCpuLowerStridedCopies(copies));
  // No function of thousands of calls for LLVM's register allocator.
  if (options.maxCallsPerFunction > 0) {
    AttnCpuSplitLargeFunctionsOptions split;
    split.maxCalls = options.maxCallsPerFunction;
    pm.addPass(createAttnCpuSplitLargeFunctions(split));
  }

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  if (options.numThreads == 1) {
    pm.addPass(createForallToForLoopPass());
  } else {
    pm.addPass(createForallToParallelLoopPass());
    ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(omp));
    // A loop of one iteration at run time runs without forking threads.
    pm.addPass(createAttnCpuOmpForkGuard());
  }
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// f16/bf16 arithmetic and math in f32, and every conversion LLVM would
/// turn into a compiler-rt call expanded in IR: the code then needs no
/// libcall beyond libm on any host of its target.
static void addNarrowFloatPasses(OpPassManager &pm,
                                 const AttnCpuPipelineOptions &options) {
  // f16/bf16 math in f32 first (what libm's promotion does), then the
  // vectorisable approximations of the f32 ops.
  pm.addPass(math::createMathExtendToSupportedTypes());
  if (options.fastMath)
    pm.addNestedPass<func::FuncOp>(createAttnCpuMathApproximation());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  AttnCpuExpandNarrowFloatsOptions narrow;
  cpu::Target target = options.getTarget();
  narrow.expandF16 = !target.f16c;
  narrow.nativeBf16 = target.nativeBf16;
  pm.addPass(createAttnCpuExpandNarrowFloats(narrow));
  // The rest of arith-expand (bf16 conversions are expanded above).
  pm.addPass(arith::createArithExpandOpsPass());
}

/// Loops, memrefs and the rest to the LLVM dialect.
static void addToLLVMPasses(OpPassManager &pm,
                            const AttnCpuPipelineOptions &options) {
  // Every allocation exists now (bufferization, deallocation, clones).
  if (options.checkAllocations)
    pm.addPass(createAttnCheckAllocations());
  addNarrowFloatPasses(pm, options);
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // expand-strided-metadata emits affine.apply for offsets and sizes.
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.useGenericAllocFunctions;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // x86vector ops (the bf16 GEMM's avx512.dot) and, with amx, amx ops (its
  // tiles) become LLVM intrinsics.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  vectorToLLVM.amx = options.getTarget().amx;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
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
    OpPassManager &pm, const AttnCpuPipelineOptions &options) {
  pm.addPass(createAttnCpuRejectRecursion());
  pm.addPass(createAttnCpuRejectOpenMPInput());
  addAttnToTensorPasses(pm, options);
  addBufferizeToLoopsPasses(pm, options);
  addToLLVMPasses(pm, options);
}

void mlir::attn::registerAttnCpuLoweringPipeline() {
  PassPipelineRegistration<AttnCpuPipelineOptions>(
      "attn-cpu-lowering-pipeline",
      "attn on tensors to the LLVM dialect (attn-lower-to-cpu, bufferize, "
      "loops, OpenMP, LLVM)",
      buildAttnCpuLoweringPipeline);
}
