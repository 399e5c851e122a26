//===- ElementwiseToCpu.cpp - attn elementwise ops to linalg.generic ------===//
//
// attn.mul/div/add/sub, masked_fill, where, cast and dropout become one
// elementwise linalg.generic each, with NumPy broadcasting expressed in the
// indexing maps (a static size-1 dim reads index 0).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// lhs OP rhs in the compute type (f32 for f16/bf16), rounded once to the
/// result type. For + - * / on f16/bf16 this equals the exactly rounded
/// half-precision result; a rank-0 operand of another float type (a scalar)
/// takes part at compute precision, as PyTorch's CPU scalar path does.
template <typename AttnOp, typename ArithOp>
struct BinaryOpLowering : OpRewritePattern<AttnOp> {
  using OpRewritePattern<AttnOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AttnOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Type et = resultType.getElementType();
    Type ct = getComputeType(et);
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, {op.getLhs(), op.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value a = castFloat(b, loc, args[0], ct);
          Value c = castFloat(b, loc, args[1], ct);
          Value r = ArithOp::create(b, loc, a, c);
          return castFloat(b, loc, r, et);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MaskedFillOpLowering : OpRewritePattern<MaskedFillOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MaskedFillOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = op.getType();
    Type et = resultType.getElementType();
    double value = op.getValue().convertToDouble();
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, {op.getInput(), op.getMask()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          // The fill value is rounded to the element type (as PyTorch does).
          Value fill = createFloatConstant(b, loc, et, value);
          return arith::SelectOp::create(b, loc, args[1], fill, args[0]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct WhereOpLowering : OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(WhereOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = op.getType();
    Type et = resultType.getElementType();
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, {op.getCond(), op.getA(), op.getB()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value a = castFloat(b, loc, args[1], et);
          Value c = castFloat(b, loc, args[2], et);
          return arith::SelectOp::create(b, loc, args[0], a, c);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CastOpLowering : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = op.getType();
    Type et = resultType.getElementType();
    if (!isSupportedFloatCast(op.getInput().getType().getElementType(), et))
      return rewriter.notifyMatchFailure(op, "unsupported float cast");
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, {op.getInput()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return castFloat(b, loc, args[0], et);
        });
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
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::attn::populateAttnElementwiseToCpuPatterns(
    RewritePatternSet &patterns) {
  patterns.add<BinaryOpLowering<MulOp, arith::MulFOp>,
               BinaryOpLowering<DivOp, arith::DivFOp>,
               BinaryOpLowering<AddOp, arith::AddFOp>,
               BinaryOpLowering<SubOp, arith::SubFOp>, MaskedFillOpLowering,
               WhereOpLowering, CastOpLowering, DropoutOpLowering>(
      patterns.getContext());
}
