//===- ElementwiseToCpu.cpp - attn elementwise ops to linalg.generic ------===//
//
// Every elementwise attn op (ScalarElementwiseOpInterface, and dropout)
// becomes one linalg.generic, with NumPy broadcasting expressed in the
// indexing maps (a static size-1 dim reads index 0).
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// Every op with a scalar function (ScalarElementwiseOpInterface: the
/// arithmetic, comparisons, masked_fill, where, cast) becomes one
/// linalg.generic whose body is that function, the same code the fusion's
/// score_mod regions hold.
struct ScalarElementwiseLowering
    : OpInterfaceRewritePattern<ScalarElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(ScalarElementwiseOpInterface op,
                                PatternRewriter &rewriter) const override {
    if (auto cast = dyn_cast<CastOp>(op.getOperation());
        cast && !isSupportedFloatCast(cast.getInput().getType().getElementType(),
                                      cast.getType().getElementType()))
      return rewriter.notifyMatchFailure(op, "unsupported float cast");
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, op->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return op.buildScalar(b, loc, args);
        },
        op.getOperation());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Training-mode dropout with the counter-based RNG of
/// `buildDropoutElement`: deterministic, a function of (row-major index,
/// seed). The seed is the op's `seed` attribute, 0 when absent.
struct DropoutOpLowering : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getType();
    double p = op.getP().convertToDouble();
    if (!op.getTrain() || p == 0.0) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    Type et = resultType.getElementType();
    Type ct = getComputeType(et);
    int64_t seed = getDropoutSeed(op);
    SmallVector<Value> sizes;
    for (int64_t i = 0, e = resultType.getRank(); i < e; ++i)
      sizes.push_back(getDimSize(rewriter, loc, op.getInput(), i));
    Value result = buildElementwise(
        rewriter, loc, resultType, {op.getInput()},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value flat = buildFlatIndex(b, l, sizes);
          Value x = castFloat(b, l, args[0], ct);
          return castFloat(b, l, buildDropoutElement(b, l, x, flat, p, seed),
                           et);
        },
        op);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// attn.iota: a generic with no inputs whose body is the op's scalar
/// function of linalg.index along `dimension`.
struct IotaOpLowering : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(IotaOp op,
                                PatternRewriter &rewriter) const override {
    // No inputs to take the sizes from: the op's own dynamic sizes.
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Value init = createEmpty(rewriter, loc, type, op.getDynamicSizes());
    int64_t rank = type.getRank();
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)}, iterators,
        [&](OpBuilder &b, Location l, ValueRange) {
          Value position = linalg::IndexOp::create(b, l, op.getDimension());
          linalg::YieldOp::create(b, l, op.buildScalar(b, l, position));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::attn::populateAttnElementwiseToCpuPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ScalarElementwiseLowering, DropoutOpLowering, IotaOpLowering>(
      patterns.getContext());
}

/// Rewrites every tensor.dim in `root` in terms of the sizes its operand
/// was built from (a generic's init, a tensor.empty's sizes, a reshape's
/// shape), where upstream's patterns can.
static void resolveDims(Operation *root) {
  SmallVector<Operation *> dims;
  root->walk([&](tensor::DimOp op) { dims.push_back(op); });
  if (dims.empty())
    return;
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  tensor::DimOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::EmptyOp::getCanonicalizationPatterns(patterns, ctx);
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(dims, std::move(patterns), config);
}

LogicalResult mlir::attn::lowerAttnElementwiseOps(Operation *root) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  populateAttnElementwiseToCpuPatterns(patterns);
  ConversionTarget target(*ctx);
  target.markUnknownOpDynamicallyLegal(
      [](Operation *op) -> std::optional<bool> {
        if (isa<ScalarElementwiseOpInterface, DropoutOp, IotaOp>(op))
          return std::nullopt;
        return true;
      });
  // Without rollback: the lowering of an op sees the ops lowered before it
  // as they are now (findReusableInput).
  ConversionConfig conversion;
  conversion.allowPatternRollback = false;
  if (failed(applyPartialConversion(root, target, std::move(patterns),
                                    conversion)))
    return failure();
  // The generics' run-time size checks read their operands' dims: in terms
  // of the sizes those were built from, a product's consumers have no other
  // users (and equal sizes fold).
  resolveDims(root);
  return success();
}
