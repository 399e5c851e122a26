//===- BatchReshapes.cpp - batch reshapes out of attention chains --------===//
//
// PyTorch code views the scores `[B, H, L, S]` as `[B*H, L, S]` and back
// between the matmuls (`torch.bmm` wants rank 3, masks broadcast at rank 4).
// A reshape that only splits or merges batch dims (the last two are groups
// of their own) commutes with every step of the chain: the matmuls, the
// elementwise steps and the softmax treat batch elements independently, and
// dropout's mask, a function of the row-major flat index, is the same
// before and after it. The fusion's normalisation moves such reshapes out of
// the chain: a reshape of the scores up through the scores matmul (and
// scalar-operand steps) onto q and k, a reshape of the weights down through
// the softmax, dropout, cast and the output matmul onto v and the result.
// The chain then runs in one shape and fuses there; the output gets the
// reshape back. attn.reshape ops of batch dims become the equivalent
// tensor.expand_shape / collapse_shape first.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/FuseSdpa.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

/// True when `reassoc` keeps the last two dims as groups of their own.
static bool keepsLastTwoDims(ArrayRef<ReassociationIndices> reassoc) {
  return reassoc.size() >= 3 && reassoc.back().size() == 1 &&
         reassoc[reassoc.size() - 2].size() == 1;
}

/// The reassociation of a tensor.expand_shape/collapse_shape that only
/// splits or merges batch dims; nullopt for any other op.
static std::optional<SmallVector<ReassociationIndices>>
getBatchReassociation(Operation *op) {
  if (!isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
    return std::nullopt;
  SmallVector<ReassociationIndices> reassoc =
      isa<tensor::ExpandShapeOp>(op)
          ? cast<tensor::ExpandShapeOp>(op).getReassociationIndices()
          : cast<tensor::CollapseShapeOp>(op).getReassociationIndices();
  if (!keepsLastTwoDims(reassoc))
    return std::nullopt;
  return reassoc;
}

/// True when `v` has the rank and the batch dims (all but the last two) of
/// `batchOf`; a `?` matches a `?` (the dialect checks at run time that it
/// equals the size it meets).
static bool hasBatchOf(Value v, RankedTensorType batchOf) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getRank() == batchOf.getRank() &&
         t.getShape().drop_back(2) == batchOf.getShape().drop_back(2);
}

/// `v` reshaped along its batch dims as the batch reshape `r` maps its
/// source to its result (`inverse`: its result back to its source); the
/// last two dims of `v` are kept. `v` has the batch dims of r's source
/// (result). An expand of `?` dims takes the sizes r's expand was given, or
/// (inverse of a collapse) infers them from `v` (see canExpandInverse).
static Value reshapeBatchLike(OpBuilder &b, Location loc, Operation *r, Value v,
                              bool inverse) {
  auto vt = cast<RankedTensorType>(v.getType());
  auto target = cast<RankedTensorType>(inverse ? r->getOperand(0).getType()
                                               : r->getResult(0).getType());
  SmallVector<int64_t> shape(target.getShape().drop_back(2));
  shape.append(vt.getShape().take_back(2).begin(), vt.getShape().end());
  auto type = RankedTensorType::get(shape, vt.getElementType());
  SmallVector<ReassociationIndices> reassoc = *getBatchReassociation(r);
  if (isa<tensor::ExpandShapeOp>(r) == inverse)
    return tensor::CollapseShapeOp::create(b, loc, type, v, reassoc);
  if (inverse)
    return tensor::ExpandShapeOp::create(b, loc, type, v, reassoc);
  SmallVector<OpFoldResult> sizes =
      cast<tensor::ExpandShapeOp>(r).getMixedOutputShape();
  sizes.pop_back_n(2);
  llvm::append_range(sizes,
                     ArrayRef(tensor::getMixedSizes(b, loc, v)).take_back(2));
  return tensor::ExpandShapeOp::create(b, loc, type, v, reassoc, sizes);
}

/// True when reshapeBatchLike(r, v, inverse = true) can infer the sizes of
/// an expand from `v`: r is no collapse of a group with two `?` dims. (The
/// weights' own sizes would be read through a tensor.dim, a second user
/// that blocks the fusion.)
static bool canExpandInverse(Operation *r) {
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(r);
  if (!collapse)
    return true;
  ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
  return llvm::all_of(collapse.getReassociationIndices(), [&](auto group) {
    return llvm::count_if(group, [&](int64_t d) {
             return ShapedType::isDynamic(shape[d]);
           }) <= 1;
  });
}

/// reshapeBatchLike for k^T: a transpose of the last two dims stays last,
/// so that the reshape lands on k (where it may cancel the caller's view)
/// and the fusion still sees k^T.
static Value reshapeKeysLike(OpBuilder &b, Location loc, Operation *r,
                             Value kt) {
  auto transpose = kt.getDefiningOp<TransposeOp>();
  int64_t rank = cast<RankedTensorType>(kt.getType()).getRank();
  auto lastTwo = [&](std::pair<int64_t, int64_t> d) {
    return std::min(d.first, d.second) == rank - 2 &&
           std::max(d.first, d.second) == rank - 1;
  };
  if (!transpose || !lastTwo(transpose.getNormalizedDims()) ||
      !hasBatchOf(transpose.getInput(), transpose.getType()))
    return reshapeBatchLike(b, loc, r, kt, false);
  Value k = reshapeBatchLike(b, loc, r, transpose.getInput(), false);
  return TransposeOp::create(b, loc, k, -2, -1);
}

/// True when `v` is attention weights: a softmax result, or a dropout or
/// cast of weights.
static bool isWeights(Value v) {
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<SoftmaxOpInterface>(def))
    return true;
  if (isa_and_nonnull<DropoutOp, CastOp>(def))
    return isWeights(def->getOperand(0));
  return false;
}

/// True when `v` reaches a softmax through elementwise steps and batch
/// reshapes (at most `depth` of them): `v` is on the scores side.
static bool feedsSoftmax(Value v, int depth = 8) {
  for (Operation *user : v.getUsers()) {
    if (isa<SoftmaxOpInterface>(user))
      return true;
    bool step = isa<ScalarElementwiseOpInterface>(user) ||
                getBatchReassociation(user).has_value();
    if (depth > 0 && step && user->getNumResults() == 1 &&
        feedsSoftmax(user->getResult(0), depth - 1))
      return true;
  }
  return false;
}

/// A copy of the one-result `op` on `operands` (the same values reshaped)
/// with result type `type`; the ops moved here have no shape attributes.
static Value cloneReshaped(RewriterBase &rewriter, Operation *op,
                           ValueRange operands, Type type) {
  Operation *moved = rewriter.clone(*op);
  rewriter.modifyOpInPlace(moved, [&] {
    moved->setOperands(operands);
    moved->getResult(0).setType(type);
  });
  return moved->getResult(0);
}

namespace {
/// attn.reshape that splits or merges batch dims -> tensor.expand_shape or
/// tensor.collapse_shape, which the patterns below move.
struct BatchReshapeToTensor : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType src = op.getInput().getType(), dst = op.getType();
    std::optional<SmallVector<ReassociationIndices>> reassoc =
        getReassociationIndicesForReshape(src, dst);
    if (!reassoc || !keepsLastTwoDims(*reassoc))
      return rewriter.notifyMatchFailure(op, "not a batch-dim reshape");
    if (src.getRank() < dst.getRank())
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, dst, op.getInput(),
                                                         *reassoc);
    else
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
          op, dst, op.getInput(), *reassoc);
    return success();
  }
};

/// reshape(matmul(a, b)) -> matmul(reshape(a), reshape(b)), and
/// reshape(step(x, scalars)) -> step(reshape(x), scalars), on the scores
/// side. Operands must have the full batch dims (no broadcast).
template <typename ReshapeTy>
struct HoistBatchReshapeOverScores : public OpRewritePattern<ReshapeTy> {
  using OpRewritePattern<ReshapeTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeTy op,
                                PatternRewriter &rewriter) const override {
    Operation *def = op->getOperand(0).getDefiningOp();
    if (!def || !getBatchReassociation(op) || !def->hasOneUse() ||
        !feedsSoftmax(op.getResult()))
      return rewriter.notifyMatchFailure(op, "not a scores batch reshape");
    auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
    Location loc = op.getLoc();
    if (auto matmul = dyn_cast<MatmulOp>(def)) {
      if (isWeights(matmul.getLhs()) || !hasBatchOf(matmul.getLhs(), srcType) ||
          !hasBatchOf(matmul.getRhs(), srcType))
        return rewriter.notifyMatchFailure(op, "matmul operands broadcast");
      Value lhs = reshapeBatchLike(rewriter, loc, op, matmul.getLhs(), false);
      Value rhs = reshapeKeysLike(rewriter, loc, op, matmul.getRhs());
      rewriter.replaceOpWithNewOp<MatmulOp>(op, lhs, rhs);
      return success();
    }
    if (!isa<ScalarElementwiseOpInterface>(def) || def->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "not a matmul or a step");
    // An operand with the scores' batch dims reshapes with them, whatever
    // its last two dims (BLOOM's ALiBi bias [B*H, 1, S] added by baddbmm).
    SmallVector<Value> operands;
    for (Value v : def->getOperands()) {
      auto t = cast<RankedTensorType>(v.getType());
      if (t.getRank() == 0)
        operands.push_back(v);
      else if (hasBatchOf(v, srcType))
        operands.push_back(reshapeBatchLike(rewriter, loc, op, v, false));
      else
        return rewriter.notifyMatchFailure(op, "a step operand broadcasts "
                                               "over the batch dims");
    }
    rewriter.replaceOp(op,
                       cloneReshaped(rewriter, def, operands, op.getType()));
    return success();
  }
};

/// softmax(reshape(x)) -> reshape(softmax(x)) along the last dim; the same
/// for a dropout or cast of weights.
template <typename OpTy>
struct SinkBatchReshapeThroughWeights : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *reshape = op->getOperand(0).getDefiningOp();
    if (!reshape || !getBatchReassociation(reshape) || !reshape->hasOneUse())
      return rewriter.notifyMatchFailure(op, "input is not a batch reshape");
    Value x = reshape->getOperand(0);
    if (auto softmax = dyn_cast<SoftmaxOpInterface>(op.getOperation())) {
      if (softmax.getNormalizedDim() !=
          softmax.getInput().getType().getRank() - 1)
        return rewriter.notifyMatchFailure(op, "softmax not over the last dim");
    } else if (!isWeights(x)) {
      return rewriter.notifyMatchFailure(op, "not attention weights");
    }
    auto xType = cast<RankedTensorType>(x.getType());
    SmallVector<Value> operands(op->getOperands());
    operands[0] = x;
    Value moved = cloneReshaped(rewriter, op, operands,
                                xType.clone(op.getType().getElementType()));
    rewriter.replaceOp(
        op, reshapeBatchLike(rewriter, op.getLoc(), reshape, moved, false));
    return success();
  }
};

/// matmul(reshape(weights), v) -> reshape(matmul(weights, reshape^-1(v))).
struct SinkBatchReshapeThroughOutputMatmul : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Operation *reshape = op.getLhs().getDefiningOp();
    if (!reshape || !getBatchReassociation(reshape) || !reshape->hasOneUse() ||
        !isWeights(reshape->getOperand(0)))
      return rewriter.notifyMatchFailure(op, "lhs is not reshaped weights");
    if (!hasBatchOf(op.getRhs(), op.getLhs().getType()) ||
        !canExpandInverse(reshape))
      return rewriter.notifyMatchFailure(op, "v broadcasts or has no sizes");
    Location loc = op.getLoc();
    Value v = reshapeBatchLike(rewriter, loc, reshape, op.getRhs(), true);
    Value out = MatmulOp::create(rewriter, loc, reshape->getOperand(0), v);
    rewriter.replaceOp(op,
                       reshapeBatchLike(rewriter, loc, reshape, out, false));
    return success();
  }
};
} // namespace

void mlir::attn::populateBatchReshapeNormalizationPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<BatchReshapeToTensor,
               HoistBatchReshapeOverScores<tensor::ExpandShapeOp>,
               HoistBatchReshapeOverScores<tensor::CollapseShapeOp>,
               SinkBatchReshapeThroughWeights<SoftmaxOp>,
               SinkBatchReshapeThroughWeights<SafeSoftmaxOp>,
               SinkBatchReshapeThroughWeights<DropoutOp>,
               SinkBatchReshapeThroughWeights<CastOp>,
               SinkBatchReshapeThroughOutputMatmul>(context);
}

std::string mlir::attn::explainReshapeMiss(Operation *op) {
  if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, ReshapeOp>(op))
    return "";
  auto src = cast<RankedTensorType>(op->getOperand(0).getType());
  auto dst = cast<RankedTensorType>(op->getResult(0).getType());
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName() << " reshapes " << src << " to " << dst;
  bool lastTwoKept = src.getRank() >= 2 && dst.getRank() >= 2 &&
                     src.getShape().take_back(2) == dst.getShape().take_back(2);
  if (!lastTwoKept)
    os << ", which changes the last two dims (only batch dims may be split "
          "or merged)";
  else
    os << " and stays inside the chain (only reshapes that split or "
          "merge batch dims of operands without broadcast move out)";
  return s;
}
