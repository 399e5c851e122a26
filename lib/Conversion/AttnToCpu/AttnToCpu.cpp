//===- AttnToCpu.cpp - the attn-lower-to-cpu pass -------------------------===//

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"

#include "GemmToCpu.h"
#include "attn/Codegen/Cpu/AmxTile.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Conversion/AttnToCpu/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERTOCPU
#include "attn/Conversion/AttnToCpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

#include "attn/Conversion/AttnToCpu/CpuEnums.cpp.inc"

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

llvm::cl::ValuesClass mlir::attn::quantizedActivationsValues() {
  auto value = [](QuantizedActivations q, StringRef description) {
    return llvm::cl::OptionEnumValue{stringifyQuantizedActivations(q),
                                     static_cast<int>(q), description};
  };
  return llvm::cl::values(
      value(QuantizedActivations::None,
            "quantized products multiply the f32 inputs (exact)"),
      value(QuantizedActivations::Int8,
            "decode products quantize the inputs to int8 per block of 32 "
            "and multiply in integers (targets with VNNI)"));
}

SdpaCpuBackend mlir::attn::getSdpaCpuBackend(Operation *sdpa,
                                             SdpaCpuBackend passDefault) {
  if (auto name = sdpa->getAttrOfType<StringAttr>(kSdpaCpuBackendAttrName))
    if (std::optional<SdpaCpuBackend> b =
            symbolizeSdpaCpuBackend(name.getValue()))
      return *b;
  return passDefault;
}

/// A located error unless every user of `op` is a GEMM that reads its
/// panels (the rhs of a 2-D linalg.matmul on tensors with an f32 result;
/// with a bf16 lhs for bf16 pairs) and the target can read them: whole
/// vectors in the panels' columns, and for bf16 pairs a target that
/// multiplies them (bf16Dot).
static LogicalResult checkPackedPanels(Operation *op, RankedTensorType packed,
                                       const cpu::Target &target) {
  bool pairs = packed.getElementType().isBF16();
  if (pairs && !target.bf16Dot)
    return op->emitOpError()
           << "cannot be lowered to CPU code: bf16 panels are packed in "
              "pairs for AVX512-BF16's vdpbf16ps, which the target does not "
              "use for GEMMs (pack the weight for this target, or not at "
              "all)";
  if (!cpu::isPackedRhsLowerable(packed, target))
    return op->emitOpError()
           << "cannot be lowered to CPU code: the panels' nc = "
           << (pairs ? packed.getDimSize(3) / 2 : packed.getDimSize(3))
           << " is not a whole number of " << target.vectorBits
           << "-bit vectors";
  auto unpack = dyn_cast<UnpackWeightOp>(op);
  if (!unpack)
    return success();
  for (OpOperand &use : unpack->getUses()) {
    auto matmul = dyn_cast<linalg::MatmulOp>(use.getOwner());
    if (!matmul || use.getOperandNumber() != 1 ||
        !matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps() ||
        !cast<ShapedType>(matmul.getDpsInits()[0].getType())
             .getElementType()
             .isF32())
      return unpack.emitOpError()
             << "cannot be lowered to CPU code: its only users must be "
                "2-D linalg.matmul ops with an f32 result that take it as "
                "their right operand";
    if (pairs && !cast<ShapedType>(matmul.getDpsInputs()[0].getType())
                      .getElementType()
                      .isBF16())
      return unpack.emitOpError()
             << "cannot be lowered to CPU code: bf16 pairs are multiplied "
                "only with a bf16 left operand";
  }
  return success();
}

/// A located error for an op that no pattern can lower (checked before
/// anything changes).
static LogicalResult checkLowerable(Operation *op, SdpaCpuBackend backend,
                                    const cpu::Target &target) {
  if (failed(cpu::checkLowerableToCpu(op)))
    return failure();
  if (auto pack = dyn_cast<PackWeightOp>(op))
    return checkPackedPanels(op, pack.getType(), target);
  if (auto unpack = dyn_cast<UnpackWeightOp>(op))
    return checkPackedPanels(op, unpack.getPacked().getType(), target);
  auto sdpa = dyn_cast<SdpaOp>(op);
  if (!sdpa)
    return success();
  if (Attribute attr = sdpa->getAttr(kSdpaCpuBackendAttrName)) {
    auto name = dyn_cast<StringAttr>(attr);
    if (!name || !symbolizeSdpaCpuBackend(name.getValue()))
      return sdpa.emitOpError() << "'" << kSdpaCpuBackendAttrName
                                << "' must be \"auto\", \"flash\" or \"math\"";
  }
  if (getSdpaCpuBackend(sdpa, backend) == SdpaCpuBackend::Flash &&
      sdpa.getDropoutP().convertToDouble() > 0.0)
    return sdpa.emitOpError()
           << "cannot be lowered with backend=flash: dropout_p > 0 is "
              "only implemented by the math backend (use backend=auto or "
              "math)";
  return success();
}

/// A located error for a tensor.expand_shape whose `output_shape` disagrees
/// with a static dim of its result type. MLIR's tensor verifier accepts such
/// an op, but its bufferization is a memref.expand_shape that the memref
/// verifier rejects: the pipeline would otherwise produce invalid IR.
static LogicalResult checkExpandShape(tensor::ExpandShapeOp op) {
  ArrayRef<int64_t> given = op.getStaticOutputShape();
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (ShapedType::isDynamic(size) || given[i] == size)
      continue;
    InFlightDiagnostic diag = op.emitOpError()
                              << "output_shape gives dim " << i << " as ";
    if (ShapedType::isDynamic(given[i]))
      diag << "a value";
    else
      diag << given[i];
    return diag << ", but the result type has the static size " << size
                << " there (the lowering cannot bufferize it)";
  }
  return success();
}

namespace {
struct AttnLowerToCpuPass
    : public mlir::attn::impl::AttnLowerToCpuBase<AttnLowerToCpuPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    FailureOr<AttnCpuLoweringOptions> options = getLoweringOptions(root);
    if (failed(options))
      return signalPassFailure();

    bool ok = true;
    root->walk([&](Operation *op) {
      // attn.yield belongs to its attn.sdpa's score_mod and goes with it.
      if (isa_and_nonnull<AttnDialect>(op->getDialect()) && !isa<YieldOp>(op))
        ok &= succeeded(
            checkLowerable(op, options->backend, options->target));
      else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
        ok &= succeeded(checkExpandShape(expand));
    });
    if (!ok || (options->target.amx && failed(declareAmxAvailable(root))))
      return signalPassFailure();


    // The elementwise ops first: a GEMM then finds the generics that
    // consume its result (an activation, a gate, a residual add) and applies
    // them as it stores (getProductConsumers).
    if (failed(lowerAttnElementwiseOps(root)))
      return signalPassFailure();

    RewritePatternSet patterns(&getContext());
    populateAttnMatmulToCpuPatterns(patterns, *options);
    populateAttnQuantizedMatmulToCpuPatterns(patterns, *options);
    populateAttnQuantizedEmbeddingToCpuPatterns(patterns, *options);
    populateAttnElementwiseToCpuPatterns(patterns);
    populateAttnSoftmaxToCpuPatterns(patterns);
    populateAttnReshapeToCpuPatterns(patterns);
    populateAttnSdpaToCpuPatterns(patterns, *options);
    // Every attn op must go (attn.yield with its attn.sdpa); the rest stays
    // unless a pattern takes it (linalg matmuls become the GEMM). The checks
    // above gave a located error for each op no pattern lowers, so a failure
    // here is an internal one, reported by the driver at the op.
    ConversionTarget target(getContext());
    target.addIllegalDialect<AttnDialect>();
    // attn.unpack_weight goes once its GEMMs read the panels (checked
    // above), with the dead code below.
    target.addLegalOp<YieldOp, UnpackWeightOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<linalg::MatmulOp, linalg::BatchMatmulOp>(
        [](Operation *) { return std::optional<bool>(); });
    // Without rollback, a replaced op is gone at once: the elementwise
    // lowering writes over an operand's buffer when this op is its last
    // user, which it cannot see while the replaced ops linger. The patterns
    // fail only before they change anything and create no attn op, which is
    // what the driver asks of them in this mode.
    ConversionConfig conversion;
    conversion.allowPatternRollback = false;
    if (failed(applyPartialConversion(root, target, std::move(patterns),
                                      conversion)))
      return signalPassFailure();
    // The conversion folds only the ops it converts: fold the constants and
    // index arithmetic the emitters created, and drop what they left dead
    // (a linalg.fill taken as a GEMM's start value).
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(root, FrozenRewritePatternSet(), config);
    if (options->target.amx && failed(outlineAmxBranches(root)))
      return signalPassFailure();
  }

private:
  /// Declares kAmxAvailableFunction in `root` (a module) unless it has it:
  /// the GEMMs call it. Nested in a module that lacks it, the pass cannot
  /// add it (passes on functions must not change their parent): an error.
  static LogicalResult declareAmxAvailable(Operation *root) {
    if (SymbolTable::lookupNearestSymbolFrom(root, StringAttr::get(
            root->getContext(), kAmxAvailableFunction)))
      return success();
    auto module = dyn_cast<ModuleOp>(root);
    if (!module)
      return root->emitError()
             << "attn-lower-to-cpu: with amx the pass must run on the module "
                "(it declares " << kAmxAvailableFunction << ")";
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto type = b.getFunctionType({}, {b.getI32Type()});
    auto decl = func::FuncOp::create(b, module.getLoc(),
                                     kAmxAvailableFunction, type);
    decl.setPrivate();
    return success();
  }

  /// Clones the constants that `region` uses from above into it: they stay
  /// constants in the outlined function instead of becoming arguments.
  static void sinkConstants(RewriterBase &rewriter, Region &region) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(region, above);
    rewriter.setInsertionPointToStart(&region.front());
    for (Value value : above) {
      Operation *def = value.getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>())
        continue;
      Value copy = rewriter.clone(*def)->getResult(0);
      replaceAllUsesInRegionWith(value, copy, region);
    }
  }

  /// Moves the then-region of each GEMM's AMX branch (kAmxBranchAttrName)
  /// into a private noinline function: LLVM configures the tiles at the
  /// entry of a function that uses them, and the fallback must not run even
  /// that (an OS that has not enabled AMX faults on it). `root` is a module
  /// (declareAmxAvailable checked it).
  static LogicalResult outlineAmxBranches(Operation *root) {
    SmallVector<scf::IfOp> branches;
    root->walk([&](scf::IfOp op) {
      if (op->hasAttr(kAmxBranchAttrName))
        branches.push_back(op);
    });
    IRRewriter rewriter(root->getContext());
    SymbolTable symbols(root);
    for (scf::IfOp branch : branches) {
      branch->removeAttr(kAmxBranchAttrName);
      auto parent = branch->getParentOfType<func::FuncOp>();
      std::string name = (parent.getSymName() + "_amx").str();
      for (unsigned i = 0; symbols.lookup(name); ++i)
        name = (parent.getSymName() + "_amx" + Twine(i)).str();
      sinkConstants(rewriter, branch.getThenRegion());
      func::FuncOp outlined;
      if (failed(outlineIfOp(rewriter, branch, &outlined, name, nullptr, "")))
        return branch.emitOpError("could not outline the AMX branch");
      outlined.setPrivate();
      outlined->setAttr("passthrough",
                        rewriter.getArrayAttr(rewriter.getStringAttr("noinline")));
      symbols.insert(outlined);
    }
    return success();
  }

  /// The pass options as lowering options; a located error on `root` for
  /// values out of range.
  FailureOr<AttnCpuLoweringOptions> getLoweringOptions(Operation *root) {
    if (blockQ < 0 || blockKV < 0)
      return root->emitError()
             << "attn-lower-to-cpu: block sizes must be >= 0 (0: chosen for "
                "the target)";
    cpu::Target target;
    target.vectorBits = vectorBits;
    target.bf16Dot = bf16Dot;
    target.amx = amx;
    target.vnni = vnni;
    target.avxVnni = avxVnni;
    target.vnni512 = vnni512;
    target.avx2 = avx2;
    if (std::string error = target.validate(); !error.empty())
      return root->emitError() << "attn-lower-to-cpu: " << error;
    if (positionBound < 1 || positionBound > kDefaultPositionBound)
      return root->emitError()
             << "attn-lower-to-cpu: position-bound must be in [1, "
             << kDefaultPositionBound << "], not "
             << static_cast<int64_t>(positionBound);
    AttnCpuLoweringOptions options;
    options.backend = backend;
    options.blockQ = blockQ;
    options.blockKV = blockKV;
    options.target = target;
    options.positionBound = positionBound;
    options.quantizedActivations = quantizedActivations;
    return options;
  }
};
} // namespace

void mlir::attn::setTargetOptions(AttnLowerToCpuOptions &options,
                                  const cpu::Target &target) {
  options.vectorBits = target.vectorBits;
  options.bf16Dot = target.bf16Dot;
  options.amx = target.amx;
  options.vnni = target.vnni;
  options.avxVnni = target.avxVnni;
  options.vnni512 = target.vnni512;
  options.avx2 = target.avx2;
}
