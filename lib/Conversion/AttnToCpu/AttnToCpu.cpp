//===- AttnToCpu.cpp - the attn-lower-to-cpu pass and CPU pipeline --------===//

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"

#include "LoweringUtils.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOCPU
#define GEN_PASS_DEF_ATTNCPUEMITCINTERFACE
#define GEN_PASS_DEF_ATTNCPUEXPAPPROXIMATION
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

static constexpr SdpaCpuBackend kAllSdpaCpuBackends[] = {
    SdpaCpuBackend::Auto, SdpaCpuBackend::Flash, SdpaCpuBackend::Math};

StringRef mlir::attn::stringifySdpaCpuBackend(SdpaCpuBackend backend) {
  switch (backend) {
  case SdpaCpuBackend::Auto:
    return "auto";
  case SdpaCpuBackend::Flash:
    return "flash";
  case SdpaCpuBackend::Math:
    return "math";
  }
  llvm_unreachable("covered switch");
}

FailureOr<SdpaCpuBackend> mlir::attn::parseSdpaCpuBackend(StringRef name) {
  for (SdpaCpuBackend backend : kAllSdpaCpuBackends)
    if (name == stringifySdpaCpuBackend(backend))
      return backend;
  return failure();
}

llvm::cl::ValuesClass mlir::attn::sdpaCpuBackendValues() {
  auto value = [](SdpaCpuBackend backend, StringRef description) {
    return llvm::cl::OptionEnumValue{stringifySdpaCpuBackend(backend),
                                     static_cast<int>(backend), description};
  };
  return llvm::cl::values(
      value(SdpaCpuBackend::Auto, "flash, or math when dropout_p > 0"),
      value(SdpaCpuBackend::Flash, "tiled online softmax, no L x S scores"),
      value(SdpaCpuBackend::Math, "materialised scores (the reference)"));
}

SdpaCpuBackend mlir::attn::getSdpaCpuBackend(Operation *sdpa,
                                             SdpaCpuBackend passDefault) {
  if (auto name = sdpa->getAttrOfType<StringAttr>(kSdpaCpuBackendAttrName))
    if (FailureOr<SdpaCpuBackend> b = parseSdpaCpuBackend(name.getValue());
        succeeded(b))
      return *b;
  return passDefault;
}

static constexpr StringLiteral kTraceBegin = "attnrt_trace_begin";
static constexpr StringLiteral kTraceEnd = "attnrt_trace_end";

/// Declares `name : (i64) -> ()` as a private function of `module` (once).
static void declareTraceFunction(ModuleOp module, StringRef name) {
  if (module.lookupSymbol<func::FuncOp>(name))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto fnType = b.getFunctionType({b.getI64Type()}, {});
  auto fn = func::FuncOp::create(b, module.getLoc(), name, fnType);
  fn.setPrivate();
}

namespace {

struct AttnLowerToCpuPass
    : public mlir::attn::impl::AttnLowerToCpuBase<AttnLowerToCpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    AttnCpuLoweringOptions options;
    options.backend = backend;
    options.enableTrace = trace;
    if (blockQ < 0 || blockKV < 0) {
      module.emitError()
          << "attn-lower-to-cpu: block sizes must be >= 0 (0: chosen for "
             "the target)";
      return signalPassFailure();
    }
    if (!llvm::is_contained(ArrayRef<int64_t>{0, 128, 256, 512}, vectorBits)) {
      module.emitError() << "attn-lower-to-cpu: vector-bits must be 0 (the "
                            "host's), 128, 256 or 512, not "
                         << static_cast<int64_t>(vectorBits);
      return signalPassFailure();
    }
    options.blockQ = blockQ;
    options.blockKV = blockKV;
    options.vectorBits = vectorBits;

    // Located errors for what no pattern can lower, before changing anything.
    SmallVector<Operation *> attnOps;
    bool ok = true;
    module.walk([&](Operation *op) {
      // attn.yield belongs to its attn.sdpa's score_mod and goes with it.
      if (!isa_and_nonnull<AttnDialect>(op->getDialect()) || isa<YieldOp>(op))
        return;
      attnOps.push_back(op);
      if (failed(cpu::checkLowerableToCpu(op)))
        ok = false;
      auto sdpa = dyn_cast<SdpaOp>(op);
      if (!sdpa)
        return;
      if (auto attr = sdpa->getAttr(kSdpaCpuBackendAttrName)) {
        auto name = dyn_cast<StringAttr>(attr);
        if (!name || failed(parseSdpaCpuBackend(name.getValue()))) {
          sdpa.emitOpError() << "'" << kSdpaCpuBackendAttrName
                             << "' must be \"auto\", \"flash\" or \"math\"";
          ok = false;
          return;
        }
      }
      if (getSdpaCpuBackend(sdpa, options.backend) == SdpaCpuBackend::Flash &&
          sdpa.getDropoutP().convertToDouble() > 0.0) {
        sdpa.emitOpError()
            << "cannot be lowered with backend=flash: dropout_p > 0 is "
               "only implemented by the math backend (use backend=auto or "
               "math)";
        ok = false;
      }
    });
    if (!ok)
      return signalPassFailure();

    // Trace brackets: the op's lowered code is inserted where the op is, so
    // it lands between the two calls; the calls have unknown side effects,
    // so nothing later moves the (bufferized) computation across them.
    if (options.enableTrace && !attnOps.empty()) {
      declareTraceFunction(module, kTraceBegin);
      declareTraceFunction(module, kTraceEnd);
      SmallVector<Attribute> names;
      OpBuilder b(ctx);
      for (auto [id, op] : llvm::enumerate(attnOps)) {
        StringRef name = op->getName().stripDialect();
        names.push_back(b.getStringAttr(name));
        b.setInsertionPoint(op);
        Value idValue =
            arith::ConstantIntOp::create(b, op->getLoc(), b.getI64Type(), id);
        func::CallOp::create(b, op->getLoc(), kTraceBegin, TypeRange{},
                             ValueRange{idValue});
        b.setInsertionPointAfter(op);
        func::CallOp::create(b, op->getLoc(), kTraceEnd, TypeRange{},
                             ValueRange{idValue});
      }
      module->setAttr("attn.trace_names", b.getArrayAttr(names));
    }

    RewritePatternSet patterns(ctx);
    populateAttnMatmulToCpuPatterns(patterns);
    populateAttnElementwiseToCpuPatterns(patterns);
    populateAttnSoftmaxToCpuPatterns(patterns);
    populateAttnReshapeToCpuPatterns(patterns);
    populateAttnSdpaToCpuPatterns(patterns, options);
    GreedyRewriteConfig config;
    // Lower op by op in program order.
    config.setUseTopDownTraversal(true);
    (void)applyPatternsGreedily(module, std::move(patterns), config);

    module.walk([&](Operation *op) {
      if (!isa_and_nonnull<AttnDialect>(op->getDialect()))
        return;
      op->emitOpError() << "could not be lowered to CPU code";
      ok = false;
    });
    if (!ok)
      signalPassFailure();
  }
};

struct AttnCpuEmitCInterfacePass
    : public mlir::attn::impl::AttnCpuEmitCInterfaceBase<
          AttnCpuEmitCInterfacePass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal())
        fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&getContext()));
  }
};

struct AttnCpuExpApproximationPass
    : public mlir::attn::impl::AttnCpuExpApproximationBase<
          AttnCpuExpApproximationPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "exp" || name == "math.exp";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::buildAttnCpuLoweringPipeline(
    OpPassManager &pm, const AttnCpuLoweringOptions &options) {
  AttnLowerToCpuOptions lowerOptions;
  lowerOptions.backend = options.backend;
  lowerOptions.trace = options.enableTrace;
  lowerOptions.blockQ = options.blockQ;
  lowerOptions.blockKV = options.blockKV;
  lowerOptions.vectorBits = options.vectorBits;
  // Elementwise arith on tensors (the fusion's mask inversion, or a
  // frontend's) has no bufferization of its own: make it linalg first.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createAttnLowerToCpu(lowerOptions));
  pm.addPass(createAttnCpuEmitCInterface());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

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
  if (options.fastExp)
    pm.addPass(createAttnCpuExpApproximation());
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
  Option<bool> fastExp{*this, "fast-exp",
                       llvm::cl::desc("polynomial exp (vectorises)"),
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
        options.fastExp = o.fastExp;
        options.blockQ = o.blockQ;
        options.blockKV = o.blockKV;
        options.checkFailureCalls = o.checkFailureCalls;
        options.vectorBits = o.vectorBits;
        buildAttnCpuLoweringPipeline(pm, options);
      });
}
