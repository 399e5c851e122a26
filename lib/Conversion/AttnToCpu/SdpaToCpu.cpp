//===- SdpaToCpu.cpp - attn.sdpa to CPU loops (math and flash) ------------===//
//
// Two implementations of attn.sdpa's contract (see AttnOps.td):
//
// - math: the reference. Materialises the scores `[..., L, S]` in f32 (f64
//   for f64): q.k^T, scale, masks, softmax, optional dropout, p.v, rounded
//   once to the element type.
// - flash: `scf.forall` over (query batch dims x query blocks of blockQ
//   rows); inside, an `scf.for` over key/value blocks of blockKV rows keeps
//   a running row max `m`, running sum `l` and f32 accumulator `acc`
//   (online softmax). Only block-sized scratch exists: [blockQ, blockKV]
//   scores, [blockQ, Ev] accumulator, [blockQ] statistics.
//
// Batch dims of key/value read index 0 where they are 1 (broadcast) and
// `h floordiv (Hq / Hkv)` on the head dim for grouped-query attention.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// How a key/value (or mask) batch dim is indexed from the query's.
enum class BatchIndexKind { Same, Broadcast, Group };

/// Everything both implementations need to know about one attn.sdpa.
struct SdpaPlan {
  int64_t rank = 0, numBatch = 0;
  Type elementType, computeType;
  double scale = 1.0;
  /// The scale as a run-time value (compute type) when it is the default
  /// 1/sqrt(E) and E is dynamic in both query and key; null otherwise (then
  /// `scale` holds it).
  Value scaleValue;
  /// The masked score, already rounded to the element type.
  double maskedValue = 0.0;
  bool isCausal = false, hasBoolMask = false, hasAddMask = false;
  double dropoutP = 0.0;
  int64_t seed = 0;
  /// Per query batch dim: how key/value index it (and the group size).
  SmallVector<BatchIndexKind> kvKind;
  SmallVector<int64_t> kvGroup;
  /// Per mask dim: true when it broadcasts (reads index 0).
  SmallVector<bool> maskBroadcast;
  /// The same for each extra operand of the score_mod region.
  SmallVector<SmallVector<bool>> extraBroadcast;
  /// Sizes (index values): query batch dims, L, S, E, Ev.
  SmallVector<Value> qBatch;
  Value l, s, e, ev;
};

} // namespace

/// Per dim of `operand` (the mask or an extra operand, broadcast to the
/// scores [..., L, S]): true where it broadcasts (reads index 0). Emits the
/// run-time check that a dynamic dim equals the scores dim.
static SmallVector<bool> getScoresBroadcast(OpBuilder &b, Location loc,
                                            const SdpaPlan &plan, SdpaOp op,
                                            Value operand) {
  auto qType = op.getQuery().getType();
  auto kType = op.getKey().getType();
  int64_t rank = plan.rank;
  auto mType = cast<RankedTensorType>(operand.getType());
  int64_t mRank = mType.getRank();
  SmallVector<bool> flags;
  for (int64_t j = 0; j < mRank; ++j) {
    int64_t t = rank - mRank + j;
    int64_t target = t < plan.numBatch ? qType.getDimSize(t)
                     : t == rank - 2   ? qType.getDimSize(rank - 2)
                                       : kType.getDimSize(rank - 2);
    bool broadcast = mType.getDimSize(j) == 1 && target != 1;
    flags.push_back(broadcast);
    if (!broadcast &&
        (mType.isDynamicDim(j) || ShapedType::isDynamic(target))) {
      Value targetSize = t < plan.numBatch ? plan.qBatch[t]
                         : t == rank - 2   ? plan.l
                                           : plan.s;
      assertEqualSizes(b, loc, getDimSize(b, loc, operand, j), targetSize,
                       "attn.sdpa: a dynamic mask dim must equal the "
                       "scores dim at run time");
    }
  }
  return flags;
}

/// Fills `plan` and emits run-time checks for dims that are dynamic and
/// assumed equal.
static SdpaPlan buildPlan(OpBuilder &b, Location loc, SdpaOp op) {
  SdpaPlan plan;
  auto qType = op.getQuery().getType();
  auto kType = op.getKey().getType();
  auto vType = op.getValue().getType();
  plan.rank = qType.getRank();
  plan.numBatch = plan.rank - 2;
  plan.elementType = qType.getElementType();
  plan.computeType = getComputeType(plan.elementType);
  plan.maskedValue =
      roundToType(plan.elementType, op.getEffectiveMaskedValue());
  plan.isCausal = op.getIsCausal();
  plan.hasBoolMask = op.hasBoolMask();
  plan.hasAddMask = op.hasAdditiveMask();
  plan.dropoutP = op.getDropoutP().convertToDouble();
  plan.seed = getDropoutSeed(op);

  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  int64_t rank = plan.rank;
  for (int64_t i = 0; i < plan.numBatch; ++i) {
    int64_t qd = qType.getDimSize(i), kd = kType.getDimSize(i);
    Value qSize = getDimSize(b, loc, q, i);
    plan.qBatch.push_back(qSize);
    if (kType.isDynamicDim(i) || vType.isDynamicDim(i))
      assertEqualSizes(b, loc, getDimSize(b, loc, k, i),
                       getDimSize(b, loc, v, i),
                       "attn.sdpa: key and value batch dims differ");
    if (kd == 1 && qd != 1) {
      plan.kvKind.push_back(BatchIndexKind::Broadcast);
      plan.kvGroup.push_back(1);
    } else if (!ShapedType::isDynamic(qd) && !ShapedType::isDynamic(kd) &&
               qd != kd) {
      // The verifier allows this only on the head dim, dividing evenly.
      plan.kvKind.push_back(BatchIndexKind::Group);
      plan.kvGroup.push_back(qd / kd);
    } else {
      plan.kvKind.push_back(BatchIndexKind::Same);
      plan.kvGroup.push_back(1);
      if (ShapedType::isDynamic(qd) || ShapedType::isDynamic(kd))
        assertEqualSizes(b, loc, qSize, getDimSize(b, loc, k, i),
                         "attn.sdpa: a dynamic key/value batch dim must equal "
                         "the query's at run time (broadcast and grouped "
                         "heads need static sizes)");
    }
  }
  plan.l = getDimSize(b, loc, q, rank - 2);
  plan.e = getDimSize(b, loc, q, rank - 1);
  plan.s = getDimSize(b, loc, k, rank - 2);
  plan.ev = getDimSize(b, loc, v, rank - 1);
  if (qType.isDynamicDim(rank - 1) || kType.isDynamicDim(rank - 1))
    assertEqualSizes(b, loc, plan.e, getDimSize(b, loc, k, rank - 1),
                     "attn.sdpa: query and key head dims differ");
  // The default scale 1/sqrt(E) with E dynamic in query and key: computed
  // at run time (in f64, rounded once to the compute type, as the constant
  // is).
  if (std::optional<double> scale = op.getEffectiveScale()) {
    plan.scale = *scale;
  } else {
    Type f64 = b.getF64Type();
    Value eInt = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), plan.e);
    Value eF = arith::UIToFPOp::create(b, loc, f64, eInt);
    Value root = math::SqrtOp::create(b, loc, eF);
    Value inv = arith::DivFOp::create(
        b, loc, createFloatConstant(b, loc, f64, 1.0), root);
    plan.scaleValue = castFloat(b, loc, inv, plan.computeType);
  }
  if (kType.isDynamicDim(rank - 2) || vType.isDynamicDim(rank - 2))
    assertEqualSizes(b, loc, plan.s, getDimSize(b, loc, v, rank - 2),
                     "attn.sdpa: key and value sequence lengths differ");

  if (Value mask = op.getMask())
    plan.maskBroadcast = getScoresBroadcast(b, loc, plan, op, mask);
  for (Value extra : op.getExtras())
    plan.extraBroadcast.push_back(
        getScoresBroadcast(b, loc, plan, op, extra));
  return plan;
}

/// The key/value batch index expressions of a loop nest whose first
/// `numBatch` dims are the query batch dims.
static SmallVector<AffineExpr> kvBatchExprs(const SdpaPlan &plan,
                                            MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < plan.numBatch; ++i) {
    AffineExpr d = getAffineDimExpr(i, ctx);
    switch (plan.kvKind[i]) {
    case BatchIndexKind::Same:
      exprs.push_back(d);
      break;
    case BatchIndexKind::Broadcast:
      exprs.push_back(getAffineConstantExpr(0, ctx));
      break;
    case BatchIndexKind::Group:
      exprs.push_back(d.floorDiv(plan.kvGroup[i]));
      break;
    }
  }
  return exprs;
}

/// The key/value batch indices for query batch indices `qIdx`.
static SmallVector<Value> kvBatchIndices(OpBuilder &b, Location loc,
                                         const SdpaPlan &plan,
                                         ValueRange qIdx) {
  SmallVector<Value> idx;
  for (int64_t i = 0; i < plan.numBatch; ++i) {
    switch (plan.kvKind[i]) {
    case BatchIndexKind::Same:
      idx.push_back(qIdx[i]);
      break;
    case BatchIndexKind::Broadcast:
      idx.push_back(arith::ConstantIndexOp::create(b, loc, 0));
      break;
    case BatchIndexKind::Group:
      idx.push_back(arith::DivUIOp::create(
          b, loc, qIdx[i],
          arith::ConstantIndexOp::create(b, loc, plan.kvGroup[i])));
      break;
    }
  }
  return idx;
}

namespace {
/// What one score position reads besides its raw score: its indices (query
/// batch dims, row, column) and its mask and extra-operand elements.
struct ScorePosition {
  SmallVector<Value> batch;
  Value row, col;
  Value maskElem;
  SmallVector<Value> extraElems;
};
} // namespace

/// Applies scale, the score_mod region, the additive mask, the boolean mask
/// and the causal mask to one raw score `acc` (compute type), in the
/// contract's order. Both implementations call it per score.
static Value buildMaskedScore(OpBuilder &b, Location loc, const SdpaPlan &plan,
                              SdpaOp op, Value acc, const ScorePosition &pos) {
  Type ct = plan.computeType;
  Value scale = plan.scaleValue
                    ? plan.scaleValue
                    : createFloatConstant(b, loc, ct, plan.scale);
  Value s = arith::MulFOp::create(b, loc, acc, scale);
  Value maskElem = pos.maskElem, row = pos.row, col = pos.col;
  if (op.getScoreModBlock()) {
    SmallVector<Value> indices(pos.batch);
    indices.append({row, col});
    s = op.buildScoreMod(b, s, indices, pos.extraElems);
  }
  if (plan.hasAddMask)
    s = arith::AddFOp::create(b, loc, s, castFloat(b, loc, maskElem, ct));
  Value masked;
  if (plan.hasBoolMask)
    masked = arith::XOrIOp::create(
        b, loc, maskElem,
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  if (plan.isCausal) {
    Value future =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, col, row);
    masked = masked ? arith::OrIOp::create(b, loc, masked, future).getResult()
                    : future;
  }
  if (masked)
    s = arith::SelectOp::create(
        b, loc, masked, createFloatConstant(b, loc, ct, plan.maskedValue), s);
  return s;
}

/// The subtrahend of the online softmax for a running max `m`: `m`, or 0
/// when `m` is -inf. See the flash lowering for why.
static Value safeMax(OpBuilder &b, Location loc, Value m) {
  Type t = m.getType();
  Value negInf =
      createFloatConstant(b, loc, t, -std::numeric_limits<double>::infinity());
  Value isNegInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  return arith::SelectOp::create(b, loc, isNegInf,
                                 createFloatConstant(b, loc, t, 0.0), m);
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

static Value lowerSdpaMath(OpBuilder &b, Location loc, SdpaOp op,
                           const SdpaPlan &plan) {
  MLIRContext *ctx = b.getContext();
  Type et = plan.elementType, ct = plan.computeType;
  int64_t nb = plan.numBatch;
  auto qType = op.getQuery().getType();
  auto kType = op.getKey().getType();
  auto resultType = op.getType();
  auto fastmath = getReassocFlags(ctx);

  // Scores [qBatch..., L, S].
  SmallVector<int64_t> scoreShape(qType.getShape().drop_back(1));
  scoreShape.push_back(kType.getDimSize(plan.rank - 2));
  auto scoreType = RankedTensorType::get(scoreShape, ct);
  SmallVector<Value> scoreSizes(plan.qBatch);
  scoreSizes.push_back(plan.l);
  scoreSizes.push_back(plan.s);
  SmallVector<Value> scoreDyn;
  for (auto [i, size] : llvm::enumerate(scoreSizes))
    if (scoreType.isDynamicDim(i))
      scoreDyn.push_back(size);

  auto batchExprs = [&](SmallVectorImpl<AffineExpr> &exprs) {
    for (int64_t i = 0; i < nb; ++i)
      exprs.push_back(getAffineDimExpr(i, ctx));
  };
  SmallVector<AffineExpr> kvExprs = kvBatchExprs(plan, ctx);

  // 1. q.k^T over loops (b..., l, s, e).
  unsigned n = nb + 3;
  AffineExpr dl = getAffineDimExpr(nb, ctx), ds = getAffineDimExpr(nb + 1, ctx),
             de = getAffineDimExpr(nb + 2, ctx);
  SmallVector<AffineExpr> qE, kE(kvExprs), oE;
  batchExprs(qE);
  batchExprs(oE);
  qE.append({dl, de});
  kE.append({ds, de});
  oE.append({dl, ds});
  SmallVector<AffineMap> maps = {AffineMap::get(n, 0, qE, ctx),
                                 AffineMap::get(n, 0, kE, ctx),
                                 AffineMap::get(n, 0, oE, ctx)};
  SmallVector<utils::IteratorType> iters(n, utils::IteratorType::parallel);
  iters[nb + 2] = utils::IteratorType::reduction;
  Value init = createFilled(b, loc, scoreType, scoreDyn, 0.0);
  Value scores =
      linalg::GenericOp::create(
          b, loc, TypeRange{scoreType}, ValueRange{op.getQuery(), op.getKey()},
          ValueRange{init}, maps, iters,
          [&](OpBuilder &nb2, Location l, ValueRange args) {
            Value x = castFloat(nb2, l, args[0], ct);
            Value y = castFloat(nb2, l, args[1], ct);
            Value m = arith::MulFOp::create(nb2, l, x, y, fastmath);
            Value s = arith::AddFOp::create(nb2, l, args[2], m, fastmath);
            linalg::YieldOp::create(nb2, l, s);
          })
          .getResult(0);

  // 2. scale and masks, in place over loops (b..., l, s).
  unsigned r = plan.rank;
  SmallVector<Value> ins;
  if (Value mask = op.getMask())
    ins.push_back(mask);
  llvm::append_range(ins, op.getExtras());
  SmallVector<AffineMap> maskMaps;
  for (Value in : ins)
    maskMaps.push_back(getBroadcastMap(cast<RankedTensorType>(in.getType()),
                                       scoreShape, r, 0, ctx));
  maskMaps.push_back(b.getMultiDimIdentityMap(r));
  SmallVector<utils::IteratorType> piters(r, utils::IteratorType::parallel);
  scores =
      linalg::GenericOp::create(
          b, loc, TypeRange{scoreType}, ins, ValueRange{scores}, maskMaps,
          piters,
          [&](OpBuilder &nb2, Location l, ValueRange args) {
            ScorePosition pos;
            ValueRange elems = args.drop_back();
            if (op.getMask()) {
              pos.maskElem = elems.front();
              elems = elems.drop_front();
            }
            pos.extraElems.assign(elems.begin(), elems.end());
            bool needsIndices = plan.isCausal || op.getScoreModBlock();
            for (int64_t d = 0; needsIndices && d < nb; ++d)
              pos.batch.push_back(linalg::IndexOp::create(nb2, l, d));
            if (needsIndices) {
              pos.row = linalg::IndexOp::create(nb2, l, nb);
              pos.col = linalg::IndexOp::create(nb2, l, nb + 1);
            }
            linalg::YieldOp::create(
                nb2, l, buildMaskedScore(nb2, l, plan, op, args.back(), pos));
          })
          .getResult(0);

  // 3. softmax along S (rows of all -inf become NaN, as torch.softmax).
  SmallVector<int64_t> rowShape(scoreShape.begin(), scoreShape.end() - 1);
  auto rowType = RankedTensorType::get(rowShape, ct);
  SmallVector<Value> rowDyn;
  for (auto [i, size] : llvm::enumerate(ArrayRef(scoreSizes).drop_back()))
    if (rowType.isDynamicDim(i))
      rowDyn.push_back(size);
  AffineMap id = b.getMultiDimIdentityMap(r);
  AffineMap rowMap = id.getMajorSubMap(r - 1);
  SmallVector<utils::IteratorType> riters(r, utils::IteratorType::parallel);
  riters[r - 1] = utils::IteratorType::reduction;
  Value maxInit = createFilled(b, loc, rowType, rowDyn,
                               -std::numeric_limits<double>::infinity());
  Value max =
      linalg::GenericOp::create(
          b, loc, TypeRange{rowType}, ValueRange{scores}, ValueRange{maxInit},
          ArrayRef<AffineMap>{id, rowMap}, riters,
          [&](OpBuilder &nb2, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb2, l,
                Value(arith::MaximumFOp::create(nb2, l, args[0], args[1])));
          })
          .getResult(0);
  Value sumInit = createFilled(b, loc, rowType, rowDyn, 0.0);
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{rowType}, ValueRange{scores, max},
          ValueRange{sumInit}, ArrayRef<AffineMap>{id, rowMap, rowMap}, riters,
          [&](OpBuilder &nb2, Location l, ValueRange args) {
            Value d = arith::SubFOp::create(nb2, l, args[0], args[1]);
            Value e = math::ExpOp::create(nb2, l, d);
            linalg::YieldOp::create(
                nb2, l,
                Value(arith::AddFOp::create(nb2, l, args[2], e, fastmath)));
          })
          .getResult(0);
  // p = exp(s - max) / sum, then dropout (same RNG as attn.dropout over
  // the [..., L, S] probabilities, so that the unfused chain
  // softmax -> dropout -> matmul in f32 with the same seed agrees).
  Value probs =
      linalg::GenericOp::create(
          b, loc, TypeRange{scoreType}, ValueRange{max, sum},
          ValueRange{scores}, ArrayRef<AffineMap>{rowMap, rowMap, id}, piters,
          [&](OpBuilder &nb2, Location l, ValueRange args) {
            Value d = arith::SubFOp::create(nb2, l, args[2], args[0]);
            Value e = math::ExpOp::create(nb2, l, d);
            Value p = arith::DivFOp::create(nb2, l, e, args[1]);
            if (plan.dropoutP > 0.0) {
              Value flat = buildFlatIndex(nb2, l, scoreSizes);
              p = buildDropoutElement(nb2, l, p, flat, plan.dropoutP,
                                      plan.seed);
            }
            linalg::YieldOp::create(nb2, l, p);
          })
          .getResult(0);

  // 4. p.v over loops (b..., l, s, d), d innermost.
  unsigned n2 = nb + 3;
  AffineExpr ol = getAffineDimExpr(nb, ctx), os = getAffineDimExpr(nb + 1, ctx),
             od = getAffineDimExpr(nb + 2, ctx);
  SmallVector<AffineExpr> pE, vE(kvExprs), rE;
  batchExprs(pE);
  batchExprs(rE);
  pE.append({ol, os});
  vE.append({os, od});
  rE.append({ol, od});
  SmallVector<AffineMap> pvMaps = {AffineMap::get(n2, 0, pE, ctx),
                                   AffineMap::get(n2, 0, vE, ctx),
                                   AffineMap::get(n2, 0, rE, ctx)};
  SmallVector<utils::IteratorType> pvIters(n2, utils::IteratorType::parallel);
  pvIters[nb + 1] = utils::IteratorType::reduction;
  auto accType = RankedTensorType::get(resultType.getShape(), ct);
  SmallVector<Value> accSizes(plan.qBatch);
  accSizes.push_back(plan.l);
  accSizes.push_back(plan.ev);
  SmallVector<Value> accDyn;
  for (auto [i, size] : llvm::enumerate(accSizes))
    if (accType.isDynamicDim(i))
      accDyn.push_back(size);
  Value accInit = createFilled(b, loc, accType, accDyn, 0.0);
  Value out =
      linalg::GenericOp::create(
          b, loc, TypeRange{accType}, ValueRange{probs, op.getValue()},
          ValueRange{accInit}, pvMaps, pvIters,
          [&](OpBuilder &nb2, Location l, ValueRange args) {
            Value y = castFloat(nb2, l, args[1], ct);
            Value m = arith::MulFOp::create(nb2, l, args[0], y, fastmath);
            Value s = arith::AddFOp::create(nb2, l, args[2], m, fastmath);
            linalg::YieldOp::create(nb2, l, s);
          })
          .getResult(0);
  if (ct == et)
    return out;
  return buildElementwise(
      b, loc, resultType, {out},
      [&](OpBuilder &nb2, Location l, ValueRange args) -> Value {
        return castFloat(nb2, l, args[0], et);
      });
}

//===----------------------------------------------------------------------===//
// flash
//===----------------------------------------------------------------------===//

/// A rank-reduced slice type keeping the dims of `keptSizes`.
static RankedTensorType sliceType(ArrayRef<OpFoldResult> keptSizes,
                                  Type elementType) {
  SmallVector<int64_t> shape;
  for (OpFoldResult size : keptSizes) {
    std::optional<int64_t> c = getConstantIntValue(size);
    shape.push_back(c ? *c : ShapedType::kDynamic);
  }
  return RankedTensorType::get(shape, elementType);
}

/// `[batch..., rowOffset, 0]` / `[1..., rows, cols]` slice of a rank-`rank`
/// tensor, rank-reduced to 2-D.
static Value extractTile(OpBuilder &b, Location loc, Value source,
                         ValueRange batchIdx, Value rowOffset, Value rows,
                         Value cols) {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (Value i : batchIdx) {
    offsets.push_back(i);
    sizes.push_back(b.getIndexAttr(1));
    strides.push_back(b.getIndexAttr(1));
  }
  OpFoldResult rowsOfr = getAsOpFoldResult(rows);
  OpFoldResult colsOfr = getAsOpFoldResult(cols);
  offsets.append({rowOffset, b.getIndexAttr(0)});
  sizes.append({rowsOfr, colsOfr});
  strides.append({b.getIndexAttr(1), b.getIndexAttr(1)});
  Type et = cast<RankedTensorType>(source.getType()).getElementType();
  return tensor::ExtractSliceOp::create(b, loc,
                                        sliceType({rowsOfr, colsOfr}, et),
                                        source, offsets, sizes, strides);
}

static Value lowerSdpaFlash(OpBuilder &b, Location loc, SdpaOp op,
                            const SdpaPlan &plan, int64_t blockQ,
                            int64_t blockKV) {
  MLIRContext *ctx = b.getContext();
  Type et = plan.elementType, ct = plan.computeType;
  int64_t nb = plan.numBatch;
  auto resultType = op.getType();
  auto fastmath = getReassocFlags(ctx);
  double negInf = -std::numeric_limits<double>::infinity();
  bool skipFutureBlocks =
      plan.isCausal && std::isinf(plan.maskedValue) && plan.maskedValue < 0;

  SmallVector<Value> resultDyn;
  for (int64_t i = 0; i < nb; ++i)
    if (resultType.isDynamicDim(i))
      resultDyn.push_back(plan.qBatch[i]);
  if (resultType.isDynamicDim(nb))
    resultDyn.push_back(plan.l);
  if (resultType.isDynamicDim(nb + 1))
    resultDyn.push_back(plan.ev);
  Value outInit = createEmpty(b, loc, resultType, resultDyn);

  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value cBlockQ = arith::ConstantIndexOp::create(b, loc, blockQ);
  Value cBlockKV = arith::ConstantIndexOp::create(b, loc, blockKV);
  Value numQBlocks = arith::CeilDivUIOp::create(b, loc, plan.l, cBlockQ);
  SmallVector<OpFoldResult> ubs;
  for (Value size : plan.qBatch)
    ubs.push_back(getAsOpFoldResult(size));
  if (std::optional<int64_t> l = getConstantIntValue(plan.l))
    ubs.push_back(b.getIndexAttr(
        llvm::divideCeil(static_cast<uint64_t>(*l), blockQ)));
  else
    ubs.push_back(numQBlocks);

  auto forall =
      scf::ForallOp::create(b, loc, ubs, ValueRange{outInit}, std::nullopt);
  Block *body = forall.getBody();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> ivs(forall.getInductionVars());
  SmallVector<Value> qIdx(ArrayRef<Value>(ivs).drop_back());
  Value sharedOut = forall.getRegionIterArgs()[0];

  Value l0 = arith::MulIOp::create(b, loc, ivs.back(), cBlockQ);
  Value rowsLeft = arith::SubIOp::create(b, loc, plan.l, l0);
  Value br = arith::MinUIOp::create(b, loc, rowsLeft, cBlockQ);
  OpFoldResult brOfr = getAsOpFoldResult(br);
  SmallVector<Value> kvIdx = kvBatchIndices(b, loc, plan, qIdx);

  Value qTile =
      extractTile(b, loc, op.getQuery(), qIdx, l0, br, plan.e); // [br, E]

  // Per-query-block scratch, threaded through the key/value loop so that
  // bufferization reuses it in place.
  auto vecType = sliceType({brOfr}, ct);
  SmallVector<Value> vecDyn;
  if (vecType.isDynamicDim(0))
    vecDyn.push_back(br);
  auto accType = sliceType({brOfr, getAsOpFoldResult(plan.ev)}, ct);
  SmallVector<Value> accDyn(vecDyn);
  if (accType.isDynamicDim(1))
    accDyn.push_back(plan.ev);
  Value acc0 = createFilled(b, loc, accType, accDyn, 0.0);
  Value m0 = createFilled(b, loc, vecType, vecDyn, negInf);
  Value sum0 = createFilled(b, loc, vecType, vecDyn, 0.0);
  Value alpha0 = createEmpty(b, loc, vecType, vecDyn);
  Value rowMax0 = createEmpty(b, loc, vecType, vecDyn);
  auto sbufType = sliceType({brOfr, b.getIndexAttr(blockKV)}, ct);
  Value sbuf0 = createEmpty(b, loc, sbufType, vecDyn);

  Value kvEnd = plan.s;
  if (skipFutureBlocks) {
    // Keys j > i are -inf for every row of this block past l0 + br: their
    // exp is exactly 0, so those blocks are skipped.
    Value rowEnd = arith::AddIOp::create(b, loc, l0, br);
    kvEnd = arith::MinUIOp::create(b, loc, plan.s, rowEnd);
  }

  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx);
  auto map2 = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(2, 0, exprs, ctx);
  };
  auto map3 = [&](ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(3, 0, exprs, ctx);
  };
  using IT = utils::IteratorType;
  Value mask = op.getMask();

  auto kvLoop = scf::ForOp::create(
      b, loc, c0, kvEnd, cBlockKV,
      ValueRange{acc0, m0, sum0, alpha0, rowMax0, sbuf0},
      [&](OpBuilder &b, Location loc, Value kv0, ValueRange iter) {
        Value acc = iter[0], m = iter[1], sum = iter[2], alpha = iter[3],
              rowMax = iter[4], sbuf = iter[5];
        Value colsLeft = arith::SubIOp::create(b, loc, plan.s, kv0);
        Value bc = arith::MinUIOp::create(b, loc, colsLeft, cBlockKV);
        Value kTile = extractTile(b, loc, op.getKey(), kvIdx, kv0, bc, plan.e);
        Value vTile =
            extractTile(b, loc, op.getValue(), kvIdx, kv0, bc, plan.ev);
        OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
        SmallVector<OpFoldResult> sOffsets = {zero, zero};
        SmallVector<OpFoldResult> sSizes = {brOfr, getAsOpFoldResult(bc)};
        SmallVector<OpFoldResult> sStrides = {one, one};
        Value s = tensor::ExtractSliceOp::create(
            b, loc, sliceType(sSizes, ct), sbuf, sOffsets, sSizes, sStrides);
        auto sType = cast<RankedTensorType>(s.getType());
        Value zeroF = createFloatConstant(b, loc, ct, 0.0);
        s = linalg::FillOp::create(b, loc, ValueRange{zeroF}, ValueRange{s})
                .getResult(0);

        // s[i, j] = sum_e q[i, e] * k[j, e]  (loops i, j, e).
        s = linalg::GenericOp::create(
                b, loc, TypeRange{sType}, ValueRange{qTile, kTile},
                ValueRange{s},
                ArrayRef<AffineMap>{map3({d0, d2}), map3({d1, d2}),
                                    map3({d0, d1})},
                ArrayRef<IT>{IT::parallel, IT::parallel, IT::reduction},
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value x = castFloat(b, l, args[0], ct);
                  Value y = castFloat(b, l, args[1], ct);
                  Value p = arith::MulFOp::create(b, l, x, y, fastmath);
                  linalg::YieldOp::create(
                      b, l,
                      Value(arith::AddFOp::create(b, l, args[2], p, fastmath)));
                })
                .getResult(0);

        // Scale, masks, causal (global row l0 + i, column kv0 + j).
        s = linalg::GenericOp::create(
                b, loc, TypeRange{sType}, ValueRange{}, ValueRange{s},
                ArrayRef<AffineMap>{map2({d0, d1})},
                ArrayRef<IT>{IT::parallel, IT::parallel},
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value i = linalg::IndexOp::create(b, l, 0);
                  Value j = linalg::IndexOp::create(b, l, 1);
                  Value row = arith::AddIOp::create(b, l, l0, i);
                  Value col = arith::AddIOp::create(b, l, kv0, j);
                  // The element of a mask or extra operand at this
                  // position (index 0 where it broadcasts).
                  auto elementAt = [&](Value t, ArrayRef<bool> broadcast) {
                    int64_t tRank = cast<RankedTensorType>(t.getType())
                                        .getRank();
                    SmallVector<Value> idx;
                    Value c0 = arith::ConstantIndexOp::create(b, l, 0);
                    for (int64_t jm = 0; jm < tRank; ++jm) {
                      int64_t dim = plan.rank - tRank + jm;
                      if (broadcast[jm])
                        idx.push_back(c0);
                      else if (dim < nb)
                        idx.push_back(qIdx[dim]);
                      else if (dim == nb)
                        idx.push_back(row);
                      else
                        idx.push_back(col);
                    }
                    return tensor::ExtractOp::create(b, l, t, idx)
                        .getResult();
                  };
                  ScorePosition pos;
                  pos.batch.assign(qIdx.begin(), qIdx.end());
                  pos.row = row;
                  pos.col = col;
                  if (mask)
                    pos.maskElem = elementAt(mask, plan.maskBroadcast);
                  for (auto [extra, broadcast] :
                       llvm::zip_equal(op.getExtras(), plan.extraBroadcast))
                    pos.extraElems.push_back(elementAt(extra, broadcast));
                  linalg::YieldOp::create(
                      b, l, buildMaskedScore(b, l, plan, op, args[0], pos));
                })
                .getResult(0);

        // Online softmax. With -inf scores the running max can be -inf (a
        // row whose keys so far are all masked); exp(s - m) would then be
        // exp(-inf - -inf) = NaN and poison the row even if later blocks
        // have finite scores. So the subtrahend is safeMax(m) = (m == -inf
        // ? 0 : m): while the row max is -inf, p = exp(-inf - 0) = 0 and the
        // row keeps sum = 0, acc = 0; once a finite score arrives,
        // alpha = exp(-inf - m_new) = 0 discards nothing that mattered. A
        // row whose scores are ALL -inf ends with m = -inf and gives NaN at
        // the end, the contract's (and torch.softmax's) answer.
        Value negInfF = createFloatConstant(b, loc, ct, negInf);
        rowMax = linalg::FillOp::create(b, loc, ValueRange{negInfF},
                                        ValueRange{rowMax})
                     .getResult(0);
        rowMax =
            linalg::GenericOp::create(
                b, loc, TypeRange{rowMax.getType()}, ValueRange{s},
                ValueRange{rowMax},
                ArrayRef<AffineMap>{map2({d0, d1}), map2({d0})},
                ArrayRef<IT>{IT::parallel, IT::reduction},
                [&](OpBuilder &b, Location l, ValueRange args) {
                  linalg::YieldOp::create(
                      b, l,
                      Value(arith::MaximumFOp::create(b, l, args[0], args[1])));
                })
                .getResult(0);
        // m_new = max(m, rowmax); alpha = exp(m - safe(m_new));
        // sum *= alpha.
        auto stats = linalg::GenericOp::create(
            b, loc, TypeRange{m.getType(), alpha.getType(), sum.getType()},
            ValueRange{rowMax}, ValueRange{m, alpha, sum},
            ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx),
                                AffineMap::getMultiDimIdentityMap(1, ctx),
                                AffineMap::getMultiDimIdentityMap(1, ctx),
                                AffineMap::getMultiDimIdentityMap(1, ctx)},
            ArrayRef<IT>{IT::parallel},
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value mOld = args[1];
              Value mNew = arith::MaximumFOp::create(b, l, mOld, args[0]);
              Value a = math::ExpOp::create(
                  b, l, arith::SubFOp::create(b, l, mOld, safeMax(b, l, mNew)));
              Value newSum = arith::MulFOp::create(b, l, args[3], a);
              linalg::YieldOp::create(b, l, ValueRange{mNew, a, newSum});
            });
        m = stats.getResult(0);
        alpha = stats.getResult(1);
        sum = stats.getResult(2);
        // p = exp(s - safe(m_new)), in place.
        s = linalg::GenericOp::create(
                b, loc, TypeRange{sType}, ValueRange{m}, ValueRange{s},
                ArrayRef<AffineMap>{map2({d0}), map2({d0, d1})},
                ArrayRef<IT>{IT::parallel, IT::parallel},
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value d = arith::SubFOp::create(b, l, args[1],
                                                  safeMax(b, l, args[0]));
                  linalg::YieldOp::create(b, l,
                                          Value(math::ExpOp::create(b, l, d)));
                })
                .getResult(0);
        // sum += rowsum(p).
        sum = linalg::GenericOp::create(
                  b, loc, TypeRange{sum.getType()}, ValueRange{s},
                  ValueRange{sum},
                  ArrayRef<AffineMap>{map2({d0, d1}), map2({d0})},
                  ArrayRef<IT>{IT::parallel, IT::reduction},
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    linalg::YieldOp::create(
                        b, l,
                        Value(arith::AddFOp::create(b, l, args[1], args[0],
                                                    fastmath)));
                  })
                  .getResult(0);
        // acc *= alpha.
        acc = linalg::GenericOp::create(
                  b, loc, TypeRange{acc.getType()}, ValueRange{alpha},
                  ValueRange{acc},
                  ArrayRef<AffineMap>{map2({d0}), map2({d0, d1})},
                  ArrayRef<IT>{IT::parallel, IT::parallel},
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    linalg::YieldOp::create(
                        b, l,
                        Value(arith::MulFOp::create(b, l, args[1], args[0])));
                  })
                  .getResult(0);
        // acc[i, d] += sum_j p[i, j] * v[j, d]  (loops i, j, d).
        acc =
            linalg::GenericOp::create(
                b, loc, TypeRange{acc.getType()}, ValueRange{s, vTile},
                ValueRange{acc},
                ArrayRef<AffineMap>{map3({d0, d1}), map3({d1, d2}),
                                    map3({d0, d2})},
                ArrayRef<IT>{IT::parallel, IT::reduction, IT::parallel},
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value y = castFloat(b, l, args[1], ct);
                  Value p = arith::MulFOp::create(b, l, args[0], y, fastmath);
                  linalg::YieldOp::create(
                      b, l,
                      Value(arith::AddFOp::create(b, l, args[2], p, fastmath)));
                })
                .getResult(0);
        sbuf = tensor::InsertSliceOp::create(b, loc, s, sbuf, sOffsets, sSizes,
                                             sStrides);
        scf::YieldOp::create(b, loc,
                             ValueRange{acc, m, sum, alpha, rowMax, sbuf});
      });

  // out = acc / sum, NaN where the row max stayed -inf (every score -inf),
  // 0 when there are no keys at all (S = 0: the chain's p . v is an empty
  // sum, as the math path computes).
  Value accF = kvLoop.getResult(0), mF = kvLoop.getResult(1),
        sumF = kvLoop.getResult(2);
  Value noKeys = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, plan.s,
      arith::ConstantIndexOp::create(b, loc, 0));
  Value outTile = extractTile(b, loc, sharedOut, qIdx, l0, br, plan.ev);
  auto outTileType = cast<RankedTensorType>(outTile.getType());
  outTile = linalg::GenericOp::create(
                b, loc, TypeRange{outTileType}, ValueRange{accF, mF, sumF},
                ValueRange{outTile},
                ArrayRef<AffineMap>{map2({d0, d1}), map2({d0}), map2({d0}),
                                    map2({d0, d1})},
                ArrayRef<IT>{IT::parallel, IT::parallel},
                [&](OpBuilder &b, Location l, ValueRange args) {
                  Value r = arith::DivFOp::create(b, l, args[0], args[2]);
                  Value isNegInf = arith::CmpFOp::create(
                      b, l, arith::CmpFPredicate::OEQ, args[1],
                      createFloatConstant(b, l, ct, negInf));
                  Value nan = createFloatConstant(
                      b, l, ct, std::numeric_limits<double>::quiet_NaN());
                  r = arith::SelectOp::create(b, l, isNegInf, nan, r);
                  r = arith::SelectOp::create(b, l, noKeys,
                                              createFloatConstant(b, l, ct, 0.0),
                                              r);
                  linalg::YieldOp::create(b, l, castFloat(b, l, r, et));
                })
                .getResult(0);

  b.setInsertionPointToStart(forall.getTerminator().getBody());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (Value i : qIdx) {
    offsets.push_back(i);
    sizes.push_back(b.getIndexAttr(1));
    strides.push_back(b.getIndexAttr(1));
  }
  offsets.append({l0, b.getIndexAttr(0)});
  sizes.append({brOfr, getAsOpFoldResult(plan.ev)});
  strides.append({b.getIndexAttr(1), b.getIndexAttr(1)});
  tensor::ParallelInsertSliceOp::create(b, loc, outTile, sharedOut, offsets,
                                        sizes, strides);
  return forall.getResult(0);
}

//===----------------------------------------------------------------------===//
// Pattern
//===----------------------------------------------------------------------===//

namespace {

struct SdpaOpLowering : OpRewritePattern<SdpaOp> {
  SdpaOpLowering(MLIRContext *ctx, const AttnCpuLoweringOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    bool hasDropout = op.getDropoutP().convertToDouble() > 0.0;
    SdpaCpuBackend backend = getSdpaCpuBackend(op, options.backend);
    bool useFlash = backend == SdpaCpuBackend::Flash ||
                    (backend == SdpaCpuBackend::Auto && !hasDropout);
    if (useFlash && hasDropout)
      return rewriter.notifyMatchFailure(op, "flash has no dropout");
    // A static head dim of 0 leaves nothing to tile (and no valid slice of
    // it): the math path computes the same empty sums.
    if (op.getQuery().getType().getShape().back() == 0 ||
        op.getValue().getType().getShape().back() == 0)
      useFlash = false;
    Location loc = op.getLoc();
    SdpaPlan plan = buildPlan(rewriter, loc, op);
    Value result = useFlash ? lowerSdpaFlash(rewriter, loc, op, plan,
                                             options.blockQ, options.blockKV)
                            : lowerSdpaMath(rewriter, loc, op, plan);
    rewriter.replaceOp(op, result);
    return success();
  }

  AttnCpuLoweringOptions options;
};

} // namespace

void mlir::attn::populateAttnSdpaToCpuPatterns(
    RewritePatternSet &patterns, const AttnCpuLoweringOptions &options) {
  patterns.add<SdpaOpLowering>(patterns.getContext(), options);
}
