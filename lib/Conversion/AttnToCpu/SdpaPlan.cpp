//===- SdpaPlan.cpp - what both attn.sdpa CPU lowerings know about one op -===//

#include "SdpaPlan.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

bool SdpaPlan::canSkipOutsideBand() const {
  return !band.keepsAll() && std::isinf(maskedValue) && maskedValue < 0;
}

bool SdpaPlan::canSkipMaskedTiles() const {
  return hasBoolMask && std::isinf(maskedValue) && maskedValue < 0;
}

Value cpu::buildAnyKeyKept(
    OpBuilder &b, Location loc, Value kv0, Value kvEnd,
    function_ref<Value(OpBuilder &, Location, Value key)> keyKept) {
  Value no = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Type types[] = {b.getIndexType(), b.getI1Type()};
  // A kept key jumps to the end: the loop's flag is the last key's.
  auto loop = scf::WhileOp::create(
      b, loc, types, ValueRange{kv0, no},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value more = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ult,
                                           args[0], kvEnd);
        scf::ConditionOp::create(nb, nloc, more, args);
      },
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value kept = keyKept(nb, nloc, args[0]);
        Value next = arith::SelectOp::create(
            nb, nloc, kept, kvEnd,
            arith::AddIOp::create(nb, nloc, args[0], one));
        scf::YieldOp::create(nb, nloc, ValueRange{next, kept});
      });
  return loop.getResult(1);
}

Value cpu::buildMaskKeeps(OpBuilder &b, Location loc, const SdpaPlan &plan,
                          Value maskElem) {
  if (!plan.maskDrops)
    return maskElem;
  Value one =
      arith::ConstantOp::create(b, loc, b.getOneAttr(maskElem.getType()));
  return arith::XOrIOp::create(b, loc, maskElem, one);
}

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

/// The run-time checks of one lengths operand (`name`, for messages): one
/// length per sequence (a dynamic batch dim) and every length in
/// [0, `size`]. The lowerings clamp what they read, so that no buffer is
/// read out of bounds after a failed check.
static void checkLengths(OpBuilder &b, Location loc, const SdpaPlan &plan,
                         Value lengths, Value size, StringRef name) {
  if (!lengths)
    return;
  Value n = getDimSize(b, loc, lengths, 0);
  assertEqualSizes(b, loc, n, plan.qBatch[0],
                   ("attn.sdpa: " + name +
                    " must have one length per sequence (the query's batch "
                    "dim 0)")
                       .str());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, zero, n, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value raw = tensor::ExtractOp::create(b, loc, lengths,
                                        ValueRange{loop.getInductionVar()});
  Type intType = raw.getType();
  Value lo = arith::ConstantOp::create(b, loc, b.getIntegerAttr(intType, 0));
  Value hi = arith::IndexCastOp::create(b, loc, intType, size);
  Value ok = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, raw, lo),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, raw, hi));
  cf::AssertOp::create(b, loc, ok,
                       ("attn.sdpa: a " + name +
                        " value is out of range (below 0 or above the "
                        "padded length)")
                           .str());
}

/// The run-time checks of the packed layout's lengths: one of each per
/// sequence, none below 0, and each side's lengths summing to its length
/// (`size`: L or S). The lowerings clamp what they read.
static void checkPackedLengths(OpBuilder &b, Location loc, Value qLengths,
                               Value kvLengths, Value l, Value s) {
  Value n = getDimSize(b, loc, qLengths, 0);
  assertEqualSizes(b, loc, getDimSize(b, loc, kvLengths, 0), n,
                   "attn.sdpa: the packed layout needs as many kv_lengths as "
                   "q_lengths");
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, zero, n, one, ValueRange{zero, zero});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    SmallVector<Value> sums;
    for (auto [lengths, sum, name] :
         {std::tuple<Value, Value, StringRef>{qLengths,
                                              loop.getRegionIterArg(0),
                                              "q_lengths"},
          {kvLengths, loop.getRegionIterArg(1), "kv_lengths"}}) {
      Value raw = tensor::ExtractOp::create(b, loc, lengths, ValueRange{i});
      Value lo = arith::ConstantOp::create(
          b, loc, b.getIntegerAttr(raw.getType(), 0));
      Value ok =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, raw, lo);
      cf::AssertOp::create(
          b, loc, ok, ("attn.sdpa: a " + name + " value is below 0").str());
      Value length =
          arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
      sums.push_back(arith::AddIOp::create(b, loc, sum, length));
    }
    scf::YieldOp::create(b, loc, sums);
  }
  assertEqualSizes(b, loc, loop.getResult(0), l,
                   "attn.sdpa: the packed q_lengths must sum to the query's "
                   "length");
  assertEqualSizes(b, loc, loop.getResult(1), s,
                   "attn.sdpa: the packed kv_lengths must sum to the key's "
                   "length");
}

SeqBounds cpu::getSeqBounds(OpBuilder &b, Location loc, const SdpaPlan &plan,
                            Value qLength, Value kvLength) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto bounds = [&](Value length, Value size) -> std::pair<Value, Value> {
    if (!length)
      return {zero, size};
    Value n = arith::IndexCastOp::create(b, loc, b.getIndexType(), length);
    n = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, n, zero),
                               size);
    if (plan.padsLeft)
      return {arith::SubIOp::create(b, loc, size, n), size};
    return {zero, n};
  };
  SeqBounds s;
  std::tie(s.qBegin, s.qEnd) = bounds(qLength, plan.l);
  std::tie(s.kvBegin, s.kvEnd) = bounds(kvLength, plan.s);
  return s;
}

SeqBounds cpu::loadSeqBounds(OpBuilder &b, Location loc, const SdpaPlan &plan,
                             Value qLengths, Value kvLengths, Value batch) {
  auto load = [&](Value lengths) -> Value {
    if (!lengths)
      return Value();
    return memref::LoadOp::create(b, loc, lengths, ValueRange{batch});
  };
  return getSeqBounds(b, loc, plan, load(qLengths), load(kvLengths));
}

Value cpu::buildSeqKeep(OpBuilder &b, Location loc, const SeqBounds &bounds,
                        Value row, Value col) {
  auto splat = [&](Value x, Value like) -> Value {
    if (auto vt = dyn_cast<VectorType>(like.getType()))
      return vector::BroadcastOp::create(b, loc, vt, x);
    return x;
  };
  auto within = [&](Value x, Value lo, Value hi) -> Value {
    return arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x,
                              splat(lo, x)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x,
                              splat(hi, x)));
  };
  return arith::AndIOp::create(b, loc, within(row, bounds.qBegin, bounds.qEnd),
                               within(col, bounds.kvBegin, bounds.kvEnd));
}

SdpaPlan cpu::buildSdpaPlan(OpBuilder &b, Location loc, SdpaOp op) {
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
  // Bounds beyond +-2^62 mean the same as 2^62 for any index a buffer can
  // have, and keep `j + left`, `i + right` and `row0 - left` in range.
  constexpr int64_t kMaxBound = int64_t(1) << 62;
  plan.band = op.getBand();
  for (std::optional<int64_t> *bound : {&plan.band.left, &plan.band.right})
    if (*bound)
      **bound = std::clamp(**bound, -kMaxBound, kMaxBound);
  plan.hasBoolMask = op.hasBoolMask();
  plan.maskDrops = op.maskDrops();
  plan.hasAddMask = op.hasAdditiveMask();
  plan.dropoutP = op.getDropoutP().convertToDouble();
  plan.hasQLengths = op.getQLengths() != nullptr;
  plan.hasSinks = op.getSinks() != nullptr;
  plan.hasKvLengths = op.getKvLengths() != nullptr;
  plan.padsLeft = op.padsLeft();
  plan.packed = op.isPacked();
  // PyTorch's SDPA gives 0 for a row its mask removes entirely, which is
  // what padded query rows (and rows without real keys) are.
  plan.safeSoftmax = op.getSafeSoftmax() || op.hasLengths();
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

  if (plan.packed) {
    checkPackedLengths(b, loc, op.getQLengths(), op.getKvLengths(), plan.l,
                       plan.s);
  } else {
    checkLengths(b, loc, plan, op.getQLengths(), plan.l, "q_lengths");
    checkLengths(b, loc, plan, op.getKvLengths(), plan.s, "kv_lengths");
  }
  if (Value mask = op.getMask())
    plan.maskBroadcast = getScoresBroadcast(b, loc, plan, op, mask);
  for (Value extra : op.getExtras())
    plan.extraBroadcast.push_back(getScoresBroadcast(b, loc, plan, op, extra));
  return plan;
}

/// The key/value batch index expressions of a loop nest whose first
/// `numBatch` dims are the query batch dims.
SmallVector<AffineExpr> cpu::kvBatchExprs(const SdpaPlan &plan,
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
SmallVector<Value> cpu::kvBatchIndices(OpBuilder &b, Location loc,
                                       const SdpaPlan &plan, ValueRange qIdx) {
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

SmallVector<Value> cpu::scoreOperandIndices(OpBuilder &b, Location loc,
                                            const SdpaPlan &plan,
                                            ArrayRef<bool> broadcast,
                                            ValueRange qIdx, Value row,
                                            Value col) {
  SmallVector<Value> idx;
  Value c0;
  int64_t rank = broadcast.size();
  for (int64_t jm = 0; jm < rank; ++jm) {
    int64_t t = plan.rank - rank + jm;
    if (broadcast[jm]) {
      if (!c0)
        c0 = arith::ConstantIndexOp::create(b, loc, 0);
      idx.push_back(c0);
    } else if (t < plan.numBatch) {
      idx.push_back(qIdx[t]);
    } else {
      idx.push_back(t == plan.numBatch ? row : col);
    }
  }
  return idx;
}

/// 1 / c for a division by the constant `divisor` when that is a normal
/// float of its type: x * (1 / c) is then within 1 ulp of x / c for every
/// x (infinities, NaN and signed zeros alike), and a multiplication, where
/// a vector division would stall the score step (soft-capping divides each
/// score by its cap; docs/cpu-math.md).
static std::optional<APFloat> exactEnoughReciprocal(Value divisor) {
  FloatAttr c;
  if (!matchPattern(divisor, m_Constant(&c)))
    return std::nullopt;
  APFloat r(c.getValue().getSemantics(), 1);
  APFloat::opStatus status =
      r.divide(c.getValue(), APFloat::rmNearestTiesToEven);
  if ((status & ~APFloat::opInexact) != APFloat::opOK || !r.isNormal())
    return std::nullopt;
  return r;
}

/// The score_mod region on a vector of scores: each op of the region again
/// with vector results (scalar operands broadcast, constants splat), so
/// that the scalar code serves the whole register tile. A division by a
/// constant becomes a multiplication by its reciprocal
/// (exactEnoughReciprocal); the scalar code (the math lowering, the
/// reference) keeps the division.
static Value buildScoreModOnVector(OpBuilder &b, Location loc, SdpaOp op,
                                   Value scores, ArrayRef<Value> args) {
  auto vecType = cast<VectorType>(scores.getType());
  auto toVector = [&](Value v) -> Value {
    if (isa<VectorType>(v.getType()))
      return v;
    return vector::BroadcastOp::create(b, loc, vecType.clone(v.getType()), v);
  };
  Block *block = op.getScoreModBlock();
  IRMapping mapping;
  mapping.map(block->getArgument(0), scores);
  for (auto [arg, v] : llvm::zip_equal(block->getArguments().drop_front(),
                                       args))
    mapping.map(arg, toVector(v));
  for (Operation &inner : block->without_terminator()) {
    Value result;
    auto div = dyn_cast<arith::DivFOp>(inner);
    std::optional<APFloat> reciprocal =
        div ? exactEnoughReciprocal(div.getRhs()) : std::nullopt;
    if (auto cst = dyn_cast<arith::ConstantOp>(inner)) {
      auto type = vecType.clone(cst.getType());
      result = arith::ConstantOp::create(
          b, loc, type,
          DenseElementsAttr::get(type, cast<TypedAttr>(cst.getValue())));
    } else if (reciprocal) {
      auto type = vecType.clone(div.getType());
      Value r = arith::ConstantOp::create(
          b, loc, type, DenseElementsAttr::get(type, *reciprocal));
      result = arith::MulFOp::create(b, loc, toVector(mapping.lookup(div.getLhs())),
                                     r, div.getFastmathAttr());
    } else {
      OperationState state(loc, inner.getName());
      for (Value operand : inner.getOperands())
        state.addOperands(toVector(mapping.lookup(operand)));
      for (Type t : inner.getResultTypes())
        state.addTypes(vecType.clone(t));
      state.addAttributes(inner.getAttrs());
      result = b.create(state)->getResult(0);
    }
    mapping.map(inner.getResult(0), result);
  }
  return mapping.lookup(cast<YieldOp>(block->getTerminator()).getScore());
}

/// The region on one score (scalar) or a vector of scores.
static Value applyScoreMod(OpBuilder &b, Location loc, SdpaOp op, Value s,
                           const ScoreModInputs &mod) {
  SmallVector<Value> args(mod.batch.begin(), mod.batch.end());
  args.append({mod.row, mod.col});
  if (!isa<VectorType>(s.getType()))
    return op.buildScoreMod(b, s, args, mod.extras);
  llvm::append_range(args, mod.extras);
  return buildScoreModOnVector(b, loc, op, s, args);
}

/// Applies scale, additive mask, boolean mask and the causal mask to raw
/// scores (see the header). Works elementwise, so the same ops serve a
/// scalar and a vector of scores.
Value cpu::buildMaskedScore(OpBuilder &b, Location loc, const SdpaPlan &plan,
                            SdpaOp op, Value raw, Value maskElem, Value row,
                            Value col, const ScoreModInputs &mod,
                            Value seqKeep) {
  Type type = raw.getType();
  Value scale = plan.scaleValue;
  if (scale && isa<VectorType>(type))
    scale = vector::BroadcastOp::create(b, loc, type, scale);
  if (!scale)
    scale = createFloatConstantOfType(b, loc, type, plan.scale);
  Value s = arith::MulFOp::create(b, loc, raw, scale);
  if (op.getScoreModBlock())
    s = applyScoreMod(b, loc, op, s, mod);
  if (plan.hasAddMask)
    s = arith::AddFOp::create(b, loc, s, castFloat(b, loc, maskElem, type));
  // `keep`: the position takes part (a keep mask true, inside the band);
  // a drop mask removes the positions where it is true.
  Value keep = plan.hasBoolMask && !plan.maskDrops ? maskElem : Value();
  auto both = [&](Value a, Value c) -> Value {
    return a ? arith::AndIOp::create(b, loc, a, c).getResult() : c;
  };
  // i - left <= j <=> i <= j + left, and j <= i + right, in signed index
  // arithmetic (a bound may be negative).
  auto shifted = [&](Value v, int64_t by) -> Value {
    Value c = arith::ConstantIndexOp::create(b, loc, by);
    if (auto vt = dyn_cast<VectorType>(v.getType()))
      c = vector::BroadcastOp::create(b, loc, vt, c);
    return arith::AddIOp::create(b, loc, v, c);
  };
  if (std::optional<int64_t> left = plan.band.left)
    keep = both(keep, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                            row, shifted(col, *left)));
  if (std::optional<int64_t> right = plan.band.right)
    keep = both(keep, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                            col, shifted(row, *right)));
  if (seqKeep)
    keep = both(keep, seqKeep);
  Value fill;
  if (keep || (plan.hasBoolMask && plan.maskDrops))
    fill = createFloatConstantOfType(b, loc, type, plan.maskedValue);
  if (plan.hasBoolMask && plan.maskDrops)
    s = arith::SelectOp::create(b, loc, maskElem, fill, s);
  if (keep)
    s = arith::SelectOp::create(b, loc, keep, s, fill);
  return s;
}

Value cpu::buildSafeMax(OpBuilder &b, Location loc, Value m) {
  Type t = m.getType();
  Value negInf = createFloatConstantOfType(
      b, loc, t, -std::numeric_limits<double>::infinity());
  Value isNegInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  return arith::SelectOp::create(b, loc, isNegInf,
                                 createFloatConstantOfType(b, loc, t, 0.0), m);
}

Value cpu::buildMaxIgnoringNaN(OpBuilder &b, Location loc, Value x, Value y) {
  Value greater =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  return arith::SelectOp::create(b, loc, greater, x, y);
}

Value cpu::loadSink(OpBuilder &b, Location loc, const SdpaPlan &plan,
                    Value sinks, ValueRange qIdx) {
  Value sink = memref::LoadOp::create(b, loc, sinks, ValueRange{qIdx.back()});
  return castFloat(b, loc, sink, plan.computeType);
}

Value cpu::buildOnlineSoftmaxResult(OpBuilder &b, Location loc,
                                    const SdpaPlan &plan, Value acc, Value l,
                                    Value m, Value sink) {
  Type ct = plan.computeType;
  Value negInf =
      createFloatConstant(b, loc, ct, -std::numeric_limits<double>::infinity());
  if (sink) {
    // The sink as one more key with no value, folded in after the others.
    Value newMax = buildMaxIgnoringNaN(b, loc, m, sink);
    Value sub = buildSafeMax(b, loc, newMax);
    Value alpha = math::ExpOp::create(b, loc,
                                      arith::SubFOp::create(b, loc, m, sub));
    Value ps = math::ExpOp::create(b, loc,
                                   arith::SubFOp::create(b, loc, sink, sub));
    acc = arith::MulFOp::create(b, loc, acc, alpha);
    l = math::FmaOp::create(b, loc, l, alpha, ps);
    m = newMax;
  }
  Value allMasked =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  Value noKeys = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, plan.s,
      arith::ConstantIndexOp::create(b, loc, 0));
  Value masked = plan.safeSoftmax
                     ? acc
                     : createFloatConstant(
                           b, loc, ct, std::numeric_limits<double>::quiet_NaN());
  Value r = arith::DivFOp::create(b, loc, acc, l);
  r = arith::SelectOp::create(b, loc, allMasked, masked, r);
  return arith::SelectOp::create(b, loc, noKeys,
                                 createFloatConstant(b, loc, ct, 0.0), r);
}

SdpaBuffers mlir::attn::cpu::getSdpaBuffers(OpBuilder &b, Location loc,
                                            SdpaOp op, const SdpaPlan &plan) {
  SdpaBuffers buf;
  // q, k and v in place through a transpose of their heads and rows.
  buf.q = toReadOnlyBufferThroughTranspose(b, loc, op.getQuery());
  buf.k = toReadOnlyBufferThroughTranspose(b, loc, op.getKey());
  buf.v = toReadOnlyBufferThroughTranspose(b, loc, op.getValue());
  if (Value mask = op.getMask())
    buf.mask = toReadOnlyBuffer(b, loc, mask);
  if (Value lengths = op.getQLengths())
    buf.qLengths = toReadOnlyBuffer(b, loc, lengths);
  if (Value lengths = op.getKvLengths())
    buf.kvLengths = toReadOnlyBuffer(b, loc, lengths);
  if (Value sinks = op.getSinks())
    buf.sinks = toReadOnlyBuffer(b, loc, sinks);
  for (Value extra : op.getExtras())
    buf.extras.push_back(toReadOnlyBuffer(b, loc, extra));
  RankedTensorType resultType = op.getType();
  int64_t nb = plan.numBatch;
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0; i < nb; ++i)
    if (resultType.isDynamicDim(i))
      dynamicSizes.push_back(plan.qBatch[i]);
  if (resultType.isDynamicDim(nb))
    dynamicSizes.push_back(plan.l);
  if (resultType.isDynamicDim(nb + 1))
    dynamicSizes.push_back(plan.ev);
  buf.out = memref::AllocOp::create(
      b, loc, MemRefType::get(resultType.getShape(), plan.elementType),
      dynamicSizes, b.getI64IntegerAttr(64));
  return buf;
}
