//===- MatmulToCpu.cpp - attn.matmul/transpose/repeat_interleave ----------===//
//
// The ops that contract or move dims: attn.matmul becomes a linalg.generic
// whose batch maps broadcast NumPy style and which accumulates in f32 (f64
// for f64); attn.transpose becomes linalg.transpose; attn.repeat_interleave
// a generic reading slice `i floordiv repeats`.
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

/// result[b..., m, n] = sum_k lhs[b..., m, k] * rhs[b..., k, n]. The loops
/// run (b..., m, k, n) so that the innermost loop is contiguous in `rhs` and
/// the result (it vectorises without reassociating the reduction).
struct MatmulOpLowering : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto resultType = op.getType();
    auto lhsType = op.getLhs().getType();
    auto rhsType = op.getRhs().getType();
    Type et = resultType.getElementType();
    Type ct = getComputeType(et);
    int64_t rank = resultType.getRank();
    int64_t numBatch = rank - 2;
    unsigned numLoops = rank + 1;
    unsigned mDim = numBatch, kDim = numBatch + 1, nDim = numBatch + 2;
    ArrayRef<int64_t> resultShape = resultType.getShape();

    // Batch sizes broadcast; M from lhs, N from rhs. K must agree.
    SmallVector<Value> dynSizes;
    for (int64_t r = 0; r < numBatch; ++r) {
      SmallVector<Value> candidates;
      for (auto [v, t] : {std::make_pair(op.getLhs(), lhsType),
                          std::make_pair(op.getRhs(), rhsType)}) {
        int64_t i = r - (numBatch - (t.getRank() - 2));
        if (i >= 0 && t.isDynamicDim(i))
          candidates.push_back(tensor::DimOp::create(rewriter, loc, v, i));
      }
      for (size_t c = 1; c < candidates.size(); ++c)
        assertEqualSizes(rewriter, loc, candidates[0], candidates[c],
                         "attn.matmul: dynamic batch dims must be equal at "
                         "run time");
      if (!resultType.isDynamicDim(r))
        continue;
      if (!candidates.empty()) {
        dynSizes.push_back(candidates.front());
        continue;
      }
      // Static operand sizes under a `?` result dim.
      int64_t size = 1;
      for (RankedTensorType t : {lhsType, rhsType}) {
        int64_t i = r - (numBatch - (t.getRank() - 2));
        if (i >= 0 && t.getDimSize(i) != 1)
          size = t.getDimSize(i);
      }
      dynSizes.push_back(arith::ConstantIndexOp::create(rewriter, loc, size));
    }
    if (resultType.isDynamicDim(rank - 2))
      dynSizes.push_back(
          getDimSize(rewriter, loc, op.getLhs(), lhsType.getRank() - 2));
    if (resultType.isDynamicDim(rank - 1))
      dynSizes.push_back(
          getDimSize(rewriter, loc, op.getRhs(), rhsType.getRank() - 1));
    if (lhsType.isDynamicDim(lhsType.getRank() - 1) ||
        rhsType.isDynamicDim(rhsType.getRank() - 2))
      assertEqualSizes(
          rewriter, loc,
          getDimSize(rewriter, loc, op.getLhs(), lhsType.getRank() - 1),
          getDimSize(rewriter, loc, op.getRhs(), rhsType.getRank() - 2),
          "attn.matmul: contraction dims differ at run time");

    auto operandMap = [&](RankedTensorType t, unsigned rowDim,
                          unsigned colDim) {
      SmallVector<AffineExpr> exprs;
      int64_t tb = t.getRank() - 2;
      for (int64_t i = 0; i < tb; ++i) {
        int64_t r = numBatch - tb + i;
        if (t.getDimSize(i) == 1 && resultShape[r] != 1)
          exprs.push_back(getAffineConstantExpr(0, ctx));
        else
          exprs.push_back(getAffineDimExpr(r, ctx));
      }
      exprs.push_back(getAffineDimExpr(rowDim, ctx));
      exprs.push_back(getAffineDimExpr(colDim, ctx));
      return AffineMap::get(numLoops, 0, exprs, ctx);
    };
    SmallVector<AffineExpr> outExprs;
    for (int64_t r = 0; r < numBatch; ++r)
      outExprs.push_back(getAffineDimExpr(r, ctx));
    outExprs.push_back(getAffineDimExpr(mDim, ctx));
    outExprs.push_back(getAffineDimExpr(nDim, ctx));
    SmallVector<AffineMap> maps = {operandMap(lhsType, mDim, kDim),
                                   operandMap(rhsType, kDim, nDim),
                                   AffineMap::get(numLoops, 0, outExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(numLoops,
                                               utils::IteratorType::parallel);
    iterators[kDim] = utils::IteratorType::reduction;

    auto accType = RankedTensorType::get(resultShape, ct);
    Value acc = createFilled(rewriter, loc, accType, dynSizes, 0.0);
    Value product = linalg::GenericOp::create(
                        rewriter, loc, TypeRange{accType},
                        ValueRange{op.getLhs(), op.getRhs()}, ValueRange{acc},
                        maps, iterators,
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          Value a = castFloat(b, l, args[0], ct);
                          Value c = castFloat(b, l, args[1], ct);
                          Value m = arith::MulFOp::create(b, l, a, c);
                          Value s = arith::AddFOp::create(b, l, args[2], m);
                          linalg::YieldOp::create(b, l, s);
                        })
                        .getResult(0);
    if (ct != et)
      product = buildElementwise(
          rewriter, loc, resultType, {product},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            return castFloat(b, l, args[0], et);
          });
    rewriter.replaceOp(op, product);
    return success();
  }
};

struct TransposeOpLowering : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto [a, b] = op.getNormalizedDims();
    int64_t rank = op.getType().getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[a], perm[b]);
    SmallVector<Value> dynSizes;
    for (int64_t i = 0; i < rank; ++i)
      if (op.getType().isDynamicDim(i))
        dynSizes.push_back(
            tensor::DimOp::create(rewriter, loc, op.getInput(), perm[i]));
    Value init = createEmpty(rewriter, loc, op.getType(), dynSizes);
    auto transpose =
        linalg::TransposeOp::create(rewriter, loc, op.getInput(), init, perm);
    rewriter.replaceOp(op, transpose->getResult(0));
    return success();
  }
};

struct RepeatInterleaveOpLowering : OpRewritePattern<RepeatInterleaveOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RepeatInterleaveOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto resultType = op.getType();
    int64_t rank = resultType.getRank();
    int64_t dim = op.getNormalizedDim();
    int64_t repeats = op.getRepeats();
    SmallVector<Value> dynSizes;
    for (int64_t i = 0; i < rank; ++i) {
      if (!resultType.isDynamicDim(i))
        continue;
      Value size = getDimSize(rewriter, loc, op.getInput(), i);
      if (i == dim)
        size = arith::MulIOp::create(
            rewriter, loc, size,
            arith::ConstantIndexOp::create(rewriter, loc, repeats));
      dynSizes.push_back(size);
    }
    Value init = createEmpty(rewriter, loc, resultType, dynSizes);
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank; ++i) {
      AffineExpr d = getAffineDimExpr(i, ctx);
      exprs.push_back(i == dim ? d.floorDiv(repeats) : d);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, ctx),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{op.getInput()},
        ValueRange{init}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::attn::populateAttnMatmulToCpuPatterns(RewritePatternSet &patterns) {
  patterns
      .add<MatmulOpLowering, TransposeOpLowering, RepeatInterleaveOpLowering>(
          patterns.getContext());
}
