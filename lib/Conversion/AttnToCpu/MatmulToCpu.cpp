//===- MatmulToCpu.cpp - attn.matmul/transpose/repeat_interleave ----------===//
//
// The ops that contract or move dims: attn.matmul (batch dims broadcast
// NumPy style), and linalg.matmul/batch_matmul on f32/f64 tensors, become
// the register-tiled GEMM of GemmToCpu.cpp, accumulating in f32 (f64 for
// f64; a linalg product whose f32 result is only rounded to bf16/f16
// rounds in the GEMM's output loop instead, and the elementwise consumers
// after it run there too: GemmEpilogue.h); nn.Linear's x . W^T reads
// W [N, K] in place (dot products for a few rows, else the GEMM packing W
// transposed); attn.transpose becomes linalg.transpose;
// attn.repeat_interleave a generic reading slice `i floordiv repeats`.
// attn.pack_weight packs a weight into the GEMM's panels, and a
// linalg.matmul whose rhs is attn.unpack_weight reads them.
//
//===----------------------------------------------------------------------===//

#include "GemmToCpu.h"
#include "GemvToCpu.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// result[b..., m, n] = sum_k lhs[b..., m, k] * rhs[b..., k, n] as the
/// register-tiled GEMM (GemmToCpu.h), after the run-time checks of the
/// dynamic sizes that must agree.
struct MatmulOpLowering : OpRewritePattern<MatmulOp> {
  MatmulOpLowering(MLIRContext *ctx, const AttnCpuLoweringOptions &options)
      : OpRewritePattern(ctx), target(options.target) {}

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getType();
    auto lhsType = op.getLhs().getType();
    auto rhsType = op.getRhs().getType();
    int64_t rank = resultType.getRank();
    int64_t numBatch = rank - 2;

    // Batch sizes broadcast; M from lhs, N from rhs. K must agree.
    GemmOperands gemm{op.getLhs(), op.getRhs(), nullptr, nullptr, resultType,
                      {}};
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
      if (!resultType.isDynamicDim(r)) {
        gemm.resultSizes.push_back(arith::ConstantIndexOp::create(
            rewriter, loc, resultType.getDimSize(r)));
        continue;
      }
      if (!candidates.empty()) {
        gemm.resultSizes.push_back(candidates.front());
        continue;
      }
      // Static operand sizes under a `?` result dim.
      int64_t size = 1;
      for (RankedTensorType t : {lhsType, rhsType}) {
        int64_t i = r - (numBatch - (t.getRank() - 2));
        if (i >= 0 && t.getDimSize(i) != 1)
          size = t.getDimSize(i);
      }
      gemm.resultSizes.push_back(
          arith::ConstantIndexOp::create(rewriter, loc, size));
    }
    gemm.resultSizes.push_back(
        getDimSize(rewriter, loc, op.getLhs(), lhsType.getRank() - 2));
    gemm.resultSizes.push_back(
        getDimSize(rewriter, loc, op.getRhs(), rhsType.getRank() - 1));
    if (lhsType.isDynamicDim(lhsType.getRank() - 1) ||
        rhsType.isDynamicDim(rhsType.getRank() - 2))
      assertEqualSizes(
          rewriter, loc,
          getDimSize(rewriter, loc, op.getLhs(), lhsType.getRank() - 1),
          getDimSize(rewriter, loc, op.getRhs(), rhsType.getRank() - 2),
          "attn.matmul: contraction dims differ at run time");
    rewriter.replaceOp(op,
                       buildGemm(rewriter, loc, gemm, target));
    return success();
  }

  cpu::Target target;
};

/// linalg.matmul and linalg.batch_matmul on tensors with their default
/// indexing maps and an f32 or f64 result (what a front end emits for
/// projections) as the same GEMM, accumulating onto their init operand (or
/// starting from its value when the init is a linalg.fill, from the vector
/// when it is one broadcast to every row: getBroadcastRow). The consumers
/// of getProductConsumers (a rounding to bf16/f16, elementwise generics)
/// run in the GEMM's output loop, and go.
/// Their semantics (operands cast to the result type, then multiplied and
/// added) are those of the GEMM up to the order of the additions and the
/// FMA's single rounding, which linalg leaves open. Other element types
/// (an f16 accumulator rounds at every step) keep linalg's loops.
template <typename LinalgOpTy>
struct LinalgMatmulLowering : OpRewritePattern<LinalgOpTy> {
  LinalgMatmulLowering(MLIRContext *ctx,
                       const AttnCpuLoweringOptions &options)
      : OpRewritePattern<LinalgOpTy>(ctx), target(options.target) {}

  LogicalResult matchAndRewrite(LinalgOpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.hasUserDefinedMaps())
      return rewriter.notifyMatchFailure(op, "not the default tensor form");
    Value init = op.getDpsInits()[0];
    auto resultType = cast<RankedTensorType>(init.getType());
    Type et = resultType.getElementType();
    if (!et.isF32() && !et.isF64())
      return rewriter.notifyMatchFailure(op, "accumulator is not f32/f64");
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    for (Value operand : {lhs, rhs}) {
      Type from = cast<RankedTensorType>(operand.getType()).getElementType();
      if (!isa<FloatType>(from) || !isSupportedFloatCast(from, et))
        return rewriter.notifyMatchFailure(op, "operand is not a float");
    }
    Location loc = op.getLoc();
    GemmOperands gemm{lhs, rhs, init, nullptr, resultType, {}};
    for (int64_t i = 0; i < resultType.getRank(); ++i)
      gemm.resultSizes.push_back(getDimSize(rewriter, loc, init, i));
    // Onto a fill (the usual zero init): the accumulators start at the fill
    // value and the filled tensor need not exist.
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (fill && fill.hasPureTensorSemantics() &&
        isa<FloatType>(fill.getInputs()[0].getType()) &&
        isSupportedFloatCast(fill.getInputs()[0].getType(), et)) {
      gemm.init = nullptr;
      gemm.initValue = fill.getInputs()[0];
    } else if (Value row = getBroadcastRow(init, et)) {
      // Onto a vector broadcast to every row (a bias): the accumulators
      // start at it, read in place; the broadcast tensor need not exist.
      gemm.init = nullptr;
      gemm.initRow = row;
    }
    // The consumers the product applies as it stores its results
    // (GemmEpilogue.h): a rounding to bf16/f16 makes the GEMM round its f32
    // accumulators once, as the rounding would; elementwise consumers after
    // it run on each result in registers, and the GEMM is built where the
    // last of them was (the tensors they read are defined up to there).
    // The GEMM accumulates in the compute type of its result's element
    // type: consumers whose result would change that (an f64 product
    // rounded to f32) stay loops of their own.
    ProductConsumers consumers = getProductConsumers(op);
    if (!consumers.elementwise.empty() &&
        (getComputeType(getElementTypeOrSelf(
             consumers.elementwise.back()->getResult(0))) != et ||
         !llvm::all_of(consumers.elementwise, [](Operation *consumer) {
           return isa<linalg::GenericOp>(consumer);
         })))
      consumers.dropElementwise();
    ArrayRef<Operation *> fused = consumers.getOps();
    if (!fused.empty())
      gemm.resultType =
          resultType.clone(getElementTypeOrSelf(fused.back()->getResult(0)));
    GemmEpilogue epilogue;
    if (!consumers.elementwise.empty()) {
      rewriter.setInsertionPoint(fused.back());
      epilogue =
          buildGemmEpilogue(rewriter, loc, consumers, gemm.resultSizes,
                            getElementTypeOrSelf(consumers.epilogueInput));
      gemm.epilogue = &epilogue;
    }
    Value result;
    if (auto unpack = rhs.getDefiningOp<UnpackWeightOp>()) {
      // Panels packed ahead of time (attn-cpu-prepack-weights), read in
      // place.
      gemm.rhs = unpack.getPacked();
      gemm.rhsPacked = true;
      result = buildGemm(rewriter, loc, gemm, target);
    } else if (auto transpose = getWeightTranspose(op))
      result = buildWithTransposedRhs(rewriter, loc, gemm, transpose);
    else
      result = buildGemm(rewriter, loc, gemm, target);
    if (fused.empty()) {
      rewriter.replaceOp(op, result);
      return success();
    }
    // The reshapes again, on the result, where the last consumer was
    // (their sizes may be defined after the product); the last consumer's
    // uses read their end.
    Type resultElement = gemm.resultType.getElementType();
    Operation *last = fused.back();
    rewriter.setInsertionPoint(last);
    Value value = result;
    for (Operation *reshape : consumers.reshapes) {
      IRMapping map;
      map.map(reshape->getOperand(0), value);
      value = rewriter.clone(*reshape, map)->getResult(0);
      value.setType(
          cast<RankedTensorType>(value.getType()).clone(resultElement));
    }
    rewriter.replaceOp(last, value);
    for (Operation *consumer : llvm::reverse(fused.drop_back()))
      rewriter.eraseOp(consumer);
    rewriter.eraseOp(op);
    return success();
  }

  /// The 2-D transpose that makes a 2-D linalg.matmul's rhs (nn.Linear's
  /// `x . W^T`), or null.
  static linalg::TransposeOp getWeightTranspose(LinalgOpTy op) {
    if (!std::is_same_v<LinalgOpTy, linalg::MatmulOp>)
      return nullptr;
    auto transpose =
        op.getDpsInputs()[1].template getDefiningOp<linalg::TransposeOp>();
    if (!transpose || !transpose.hasPureTensorSemantics() ||
        transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return nullptr;
    return transpose;
  }

  /// x . W^T with W [N, K] as stored, read in place (no transposed copy):
  /// up to kGemvMaxRows rows (a decode step) as dot products along W's
  /// rows, which read W once; more rows as the GEMM that transposes W's
  /// blocks while it packs them. A dynamic M chooses at run time. The
  /// transpose itself stays only for its other users.
  Value buildWithTransposedRhs(PatternRewriter &rewriter, Location loc,
                               GemmOperands gemm,
                               linalg::TransposeOp transpose) const {
    gemm.rhs = transpose.getInput();
    auto gemv = [&](OpBuilder &b, Location l) {
      return buildTransposedGemv(b, l, gemm, target);
    };
    auto full = [&](OpBuilder &b, Location l) {
      GemmOperands g = gemm;
      g.rhsTransposed = true;
      return buildGemm(b, l, g, target);
    };
    return buildRowCountChoice(rewriter, loc, gemm.resultType.getDimSize(0),
                               gemm.resultSizes[0], kGemvMaxRows, gemv, full);
  }

  cpu::Target target;
};

/// attn.pack_weight as the GEMM's pack code over every panel.
struct PackWeightOpLowering : OpRewritePattern<PackWeightOp> {
  PackWeightOpLowering(MLIRContext *ctx, const AttnCpuLoweringOptions &options)
      : OpRewritePattern(ctx), target(options.target) {}

  LogicalResult matchAndRewrite(PackWeightOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildPackWeight(rewriter, op.getLoc(),
                                           op.getWeight(), op.getTransposed(),
                                           op.getType(), target.vectorBits));
    return success();
  }

  cpu::Target target;
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

void mlir::attn::populateAttnMatmulToCpuPatterns(
    RewritePatternSet &patterns, const AttnCpuLoweringOptions &options) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MatmulOpLowering, LinalgMatmulLowering<linalg::MatmulOp>,
               LinalgMatmulLowering<linalg::BatchMatmulOp>,
               PackWeightOpLowering>(ctx, options);
  patterns.add<TransposeOpLowering, RepeatInterleaveOpLowering>(ctx);
}
