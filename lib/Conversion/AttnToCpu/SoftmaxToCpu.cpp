//===- SoftmaxToCpu.cpp - attn.softmax to linalg.generic ------------------===//
//
// softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max), in f32 for
// f16/bf16 (f64 for f64): a max reduction, a sum-of-exp reduction and a
// normalising elementwise generic. A slice whose entries are all -inf has
// max = -inf, so x - max = -inf - -inf = NaN and the whole slice is NaN,
// exactly as torch.softmax. attn.safe_softmax selects 0 where the max is
// -inf: maximumf propagates NaN and +inf, so max = -inf means every entry is
// -inf, and a slice holding a NaN stays NaN.
//
// Not linalg.softmax: its decomposition (AggregatedOpInterface, LLVM 22)
// computes in the element type (f16/bf16 sums and exps, where PyTorch uses
// f32), writes exp(x - max) out as a tensor before dividing (one more pass
// over the slice) and sums without reassociation, so the sum does not
// vectorise; nor does it have the safe variant.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// attn.softmax and attn.safe_softmax (`SoftmaxTy`).
template <typename SoftmaxTy>
struct SoftmaxOpLowering : OpRewritePattern<SoftmaxTy> {
  using OpRewritePattern<SoftmaxTy>::OpRewritePattern;
  static constexpr bool kSafe = std::is_same_v<SoftmaxTy, SafeSoftmaxOp>;

  LogicalResult matchAndRewrite(SoftmaxTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = op.getInput();
    auto type = op.getType();
    Type et = type.getElementType();
    Type ct = getComputeType(et);
    int64_t rank = type.getRank();
    int64_t dim = op.getNormalizedDim();

    SmallVector<int64_t> reducedShape;
    SmallVector<Value> reducedDyn, fullDyn;
    SmallVector<AffineExpr> reducedExprs;
    for (int64_t i = 0; i < rank; ++i) {
      Value size;
      if (type.isDynamicDim(i)) {
        size = tensor::DimOp::create(rewriter, loc, input, i);
        fullDyn.push_back(size);
      }
      if (i == dim)
        continue;
      reducedShape.push_back(type.getDimSize(i));
      reducedExprs.push_back(getAffineDimExpr(i, ctx));
      if (size)
        reducedDyn.push_back(size);
    }
    auto reducedType = RankedTensorType::get(reducedShape, ct);
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap reducedMap = AffineMap::get(rank, 0, reducedExprs, ctx);
    SmallVector<utils::IteratorType> reduceIters(rank,
                                                 utils::IteratorType::parallel);
    reduceIters[dim] = utils::IteratorType::reduction;
    SmallVector<utils::IteratorType> parallelIters(
        rank, utils::IteratorType::parallel);

    // max over `dim` (maximumf propagates NaN, like torch.max).
    Value maxInit = createFilled(rewriter, loc, reducedType, reducedDyn,
                                 -std::numeric_limits<double>::infinity());
    Value max =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{reducedType}, ValueRange{input},
            ValueRange{maxInit}, ArrayRef<AffineMap>{id, reducedMap},
            reduceIters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value x = castFloat(b, l, args[0], ct);
              linalg::YieldOp::create(
                  b, l, Value(arith::MaximumFOp::create(b, l, x, args[1])));
            })
            .getResult(0);

    // sum of exp(x - max); reassociable so that LLVM vectorises it.
    Value sumInit = createFilled(rewriter, loc, reducedType, reducedDyn, 0.0);
    Value sum =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{reducedType}, ValueRange{input, max},
            ValueRange{sumInit},
            ArrayRef<AffineMap>{id, reducedMap, reducedMap}, reduceIters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value x = castFloat(b, l, args[0], ct);
              Value d = arith::SubFOp::create(b, l, x, args[1]);
              Value e = math::ExpOp::create(b, l, d);
              linalg::YieldOp::create(
                  b, l,
                  Value(arith::AddFOp::create(b, l, args[2], e,
                                              getReassocFlags(ctx))));
            })
            .getResult(0);

    // exp(x - max) / sum, rounded once to the element type: over x in
    // place when its buffer may be reused (findReusableInput), else into a
    // new tensor.
    bool inPlace = findReusableInput(op, type, ValueRange{input}) != nullptr;
    SmallVector<Value> ins = {max, sum};
    SmallVector<AffineMap> maps = {reducedMap, reducedMap, id};
    if (!inPlace) {
      ins.insert(ins.begin(), input);
      maps.insert(maps.begin(), id);
    }
    Value init = inPlace ? input : createEmpty(rewriter, loc, type, fullDyn);
    Value result =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{type}, ins, ValueRange{init}, maps,
            parallelIters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value in = inPlace ? args[2] : args[0];
              Value m = args[inPlace ? 0 : 1], total = args[inPlace ? 1 : 2];
              Value x = castFloat(b, l, in, ct);
              Value d = arith::SubFOp::create(b, l, x, m);
              Value e = math::ExpOp::create(b, l, d);
              Value r = arith::DivFOp::create(b, l, e, total);
              if (kSafe)
                r = buildZeroWhereAllMasked(b, l, m, r);
              linalg::YieldOp::create(b, l, castFloat(b, l, r, et));
            })
            .getResult(0);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::attn::populateAttnSoftmaxToCpuPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxOpLowering<SoftmaxOp>, SoftmaxOpLowering<SafeSoftmaxOp>>(
      patterns.getContext());
}
