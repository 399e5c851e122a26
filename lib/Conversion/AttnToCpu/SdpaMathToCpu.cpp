//===- SdpaMathToCpu.cpp - attn.sdpa as materialised scores (math path) ---===//
//
// The reference implementation of the contract: the `[..., L, S]` scores in
// f32 (f64 for f64) as linalg.generic ops on tensors: q.k^T, the score step
// (scale, masks, causal, sequence lengths), softmax along S, optional dropout, p.v, rounded
// once to the element type.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "SdpaPlan.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {
/// A `[qBatch..., rows, cols]` f32 (compute type) tensor of the math path.
struct MathTensor {
  RankedTensorType type;
  SmallVector<Value> sizes, dynamicSizes;
};
} // namespace

static MathTensor getMathTensor(const SdpaPlan &plan, ArrayRef<int64_t> shape,
                                ArrayRef<Value> sizes) {
  MathTensor t;
  t.type = RankedTensorType::get(shape, plan.computeType);
  t.sizes.assign(sizes.begin(), sizes.end());
  for (auto [i, size] : llvm::enumerate(sizes))
    if (t.type.isDynamicDim(i))
      t.dynamicSizes.push_back(size);
  return t;
}

/// A contraction over loops (b..., t0, t1, t2) whose tail loop `reduction`
/// is summed: lhs, rhs and out index their last two dims with the tail
/// loops `lhsTail`, `rhsTail`, `outTail`; rhs reads the key/value batch
/// indices. Products in the compute type, reassociable sums.
static Value buildBatchContraction(OpBuilder &b, Location loc,
                                   const SdpaPlan &plan, Value lhs, Value rhs,
                                   ArrayRef<unsigned> lhsTail,
                                   ArrayRef<unsigned> rhsTail,
                                   ArrayRef<unsigned> outTail,
                                   unsigned reduction, const MathTensor &out) {
  MLIRContext *ctx = b.getContext();
  int64_t nb = plan.numBatch;
  unsigned n = nb + 3;
  SmallVector<AffineExpr> lhsE, rhsE(kvBatchExprs(plan, ctx)), outE;
  for (int64_t i = 0; i < nb; ++i) {
    lhsE.push_back(getAffineDimExpr(i, ctx));
    outE.push_back(getAffineDimExpr(i, ctx));
  }
  for (unsigned d : lhsTail)
    lhsE.push_back(getAffineDimExpr(nb + d, ctx));
  for (unsigned d : rhsTail)
    rhsE.push_back(getAffineDimExpr(nb + d, ctx));
  for (unsigned d : outTail)
    outE.push_back(getAffineDimExpr(nb + d, ctx));
  SmallVector<AffineMap> maps = {AffineMap::get(n, 0, lhsE, ctx),
                                 AffineMap::get(n, 0, rhsE, ctx),
                                 AffineMap::get(n, 0, outE, ctx)};
  SmallVector<utils::IteratorType> iters(n, utils::IteratorType::parallel);
  iters[nb + reduction] = utils::IteratorType::reduction;
  Value init = createFilled(b, loc, out.type, out.dynamicSizes, 0.0);
  Type ct = plan.computeType;
  auto fastmath = getReassocFlags(ctx);
  return linalg::GenericOp::create(
             b, loc, TypeRange{out.type}, ValueRange{lhs, rhs},
             ValueRange{init}, maps, iters,
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value x = castFloat(b, l, args[0], ct);
               Value y = castFloat(b, l, args[1], ct);
               Value m = arith::MulFOp::create(b, l, x, y, fastmath);
               linalg::YieldOp::create(
                   b, l,
                   Value(arith::AddFOp::create(b, l, args[2], m, fastmath)));
             })
      .getResult(0);
}

/// The packed layout at score (row, col): whether both are of one sequence,
/// and their positions within their sequences (the sequences found by
/// scanning the lengths: the reference's simplicity over its speed).
static std::tuple<Value, Value, Value> packedSeqKeep(OpBuilder &b,
                                                     Location loc, SdpaOp op,
                                                     Value row, Value col) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value none = arith::ConstantIndexOp::create(b, loc, -1);
  Value noneKv = arith::ConstantIndexOp::create(b, loc, -2);
  Value n = tensor::DimOp::create(b, loc, op.getQLengths(), 0);
  // (row offset, key offset, row's sequence, row's position, key's
  // sequence, key's position)
  auto loop = scf::ForOp::create(
      b, loc, zero, n, arith::ConstantIndexOp::create(b, loc, 1),
      ValueRange{zero, zero, none, zero, noneKv, zero},
      [&](OpBuilder &b, Location l, Value i, ValueRange it) {
        SmallVector<Value> next;
        for (auto [lengths, x, k] : {std::tuple<Value, Value, int>{
                                         op.getQLengths(), row, 0},
                                     {op.getKvLengths(), col, 1}}) {
          Value begin = it[k];
          Value length = tensor::ExtractOp::create(b, l, lengths, i);
          length = arith::IndexCastOp::create(b, l, b.getIndexType(), length);
          length = arith::MaxSIOp::create(b, l, length, zero);
          Value end = arith::AddIOp::create(b, l, begin, length);
          Value from =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, x, begin);
          Value to =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, x, end);
          Value in = arith::AndIOp::create(b, l, from, to);
          next.push_back(end);
          next.push_back(
              arith::SelectOp::create(b, l, in, i, it[2 + 2 * k]));
          next.push_back(arith::SelectOp::create(
              b, l, in, arith::SubIOp::create(b, l, x, begin),
              it[3 + 2 * k]));
        }
        scf::YieldOp::create(b, l, ValueRange{next[0], next[3], next[1],
                                              next[2], next[4], next[5]});
      });
  Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     loop.getResult(2), loop.getResult(4));
  return {same, loop.getResult(3), loop.getResult(5)};
}

/// The contract's score step on every score, in place.
static Value emitScoreStep(OpBuilder &b, Location loc, SdpaOp op,
                           const SdpaPlan &plan, const MathTensor &scores,
                           Value raw) {
  MLIRContext *ctx = b.getContext();
  unsigned r = plan.rank;
  int64_t nb = plan.numBatch;
  SmallVector<Value> ins;
  if (Value mask = op.getMask())
    ins.push_back(mask);
  llvm::append_range(ins, op.getExtras());
  SmallVector<AffineMap> maps;
  for (Value in : ins)
    maps.push_back(getBroadcastMap(cast<RankedTensorType>(in.getType()),
                                   scores.type.getShape(), r, 0, ctx));
  // The lengths of the score's sequence (query batch dim 0), last.
  AffineMap batchMap = AffineMap::get(r, 0, getAffineDimExpr(0, ctx));
  for (Value lengths : {op.getQLengths(), op.getKvLengths()}) {
    // The packed layout's lengths are read whole (packedSeqKeep).
    if (!lengths || plan.packed)
      continue;
    ins.push_back(lengths);
    maps.push_back(batchMap);
  }
  maps.push_back(b.getMultiDimIdentityMap(r));
  SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{scores.type}, ins, ValueRange{raw}, maps, iters,
             [&](OpBuilder &b, Location l, ValueRange args) {
               ValueRange elems = args.drop_back();
               Value qLength, kvLength;
               if (plan.hasKvLengths && !plan.packed) {
                 kvLength = elems.back();
                 elems = elems.drop_back();
               }
               if (plan.hasQLengths && !plan.packed) {
                 qLength = elems.back();
                 elems = elems.drop_back();
               }
               Value maskElem;
               if (op.getMask()) {
                 maskElem = elems.front();
                 elems = elems.drop_front();
               }
               bool hasMod = op.getScoreModBlock() != nullptr;
               Value row, col;
               SmallVector<Value> batch;
               bool lengths = plan.hasQLengths || plan.hasKvLengths;
               if (!plan.band.keepsAll() || hasMod || lengths) {
                 row = linalg::IndexOp::create(b, l, nb);
                 col = linalg::IndexOp::create(b, l, nb + 1);
               }
               for (int64_t d = 0; hasMod && d < nb; ++d)
                 batch.push_back(linalg::IndexOp::create(b, l, d));
               ScoreModInputs mod{batch, row, col, llvm::to_vector(elems)};
               Value seqKeep;
               if (plan.packed)
                 std::tie(seqKeep, row, col) =
                     packedSeqKeep(b, l, op, row, col);
               else if (lengths)
                 seqKeep = buildSeqKeep(
                     b, l, getSeqBounds(b, l, plan, qLength, kvLength), row,
                     col);
               linalg::YieldOp::create(
                   b, l,
                   buildMaskedScore(b, l, plan, op, args.back(), maskElem,
                                    row, col, mod, seqKeep));
             })
      .getResult(0);
}

/// A reduction along the last dim of `scores` into `[qBatch..., L]`, from
/// `init` in every row or, when given, the rows `initRows`.
static Value emitRowReduction(
    OpBuilder &b, Location loc, const SdpaPlan &plan, const MathTensor &scores,
    ValueRange ins, double init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> combine,
    Value initRows = Value()) {
  unsigned r = plan.rank;
  MathTensor rows = getMathTensor(plan, scores.type.getShape().drop_back(),
                                  ArrayRef(scores.sizes).drop_back());
  AffineMap id = b.getMultiDimIdentityMap(r);
  AffineMap rowMap = id.getMajorSubMap(r - 1);
  SmallVector<AffineMap> maps = {id};
  for (size_t i = 1; i < ins.size(); ++i)
    maps.push_back(rowMap);
  maps.push_back(rowMap);
  SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
  iters[r - 1] = utils::IteratorType::reduction;
  Value initT = initRows ? initRows
                         : createFilled(b, loc, rows.type, rows.dynamicSizes,
                                        init);
  return linalg::GenericOp::create(
             b, loc, TypeRange{rows.type}, ins, ValueRange{initT}, maps, iters,
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(b, l, combine(b, l, args));
             })
      .getResult(0);
}

/// softmax along S (rows of all -inf become NaN, as torch.softmax; 0 with
/// safe_softmax, as torch._safe_softmax; `sinks`, when given, join each
/// row as one more column whose probability is dropped), then
/// dropout with attn.dropout's RNG over the [..., L, S] probabilities, so
/// that the unfused chain softmax -> dropout -> matmul in f32 with the same
/// seed agrees.
static Value emitSoftmax(OpBuilder &b, Location loc, const SdpaPlan &plan,
                         const MathTensor &scores, Value s, Value sinks) {
  auto fastmath = getReassocFlags(b.getContext());
  unsigned r = plan.rank;
  AffineMap id = b.getMultiDimIdentityMap(r);
  AffineMap rowMap = id.getMajorSubMap(r - 1);
  SmallVector<utils::IteratorType> rowIters(r - 1,
                                            utils::IteratorType::parallel);
  // With sinks, each row's max starts at its head's sink, and its sum at
  // exp(sink - max): the sink is one more column of the softmax.
  MathTensor rows = getMathTensor(plan, scores.type.getShape().drop_back(),
                                  ArrayRef(scores.sizes).drop_back());
  auto rowsFrom = [&](ValueRange ins, ArrayRef<AffineMap> inMaps,
                      function_ref<Value(OpBuilder &, Location, ValueRange)>
                          body) -> Value {
    Value init = tensor::EmptyOp::create(b, loc, rows.type.getShape(),
                                         plan.computeType, rows.dynamicSizes);
    SmallVector<AffineMap> maps(inMaps);
    maps.push_back(b.getMultiDimIdentityMap(r - 1));
    return linalg::GenericOp::create(
               b, loc, TypeRange{rows.type}, ins, ValueRange{init}, maps,
               rowIters,
               [&](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(b, l, body(b, l, args));
               })
        .getResult(0);
  };
  Value sinkRows;
  if (sinks)
    sinkRows = rowsFrom(
        ValueRange{sinks},
        {AffineMap::get(r - 1, 0, b.getAffineDimExpr(plan.numBatch - 1))},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return castFloat(b, l, args[0], plan.computeType);
        });
  Value max = emitRowReduction(
      b, loc, plan, scores, ValueRange{s},
      -std::numeric_limits<double>::infinity(),
      [](OpBuilder &b, Location l, ValueRange args) -> Value {
        return arith::MaximumFOp::create(b, l, args[0], args[1]);
      },
      sinkRows);
  Value sumInit;
  if (sinks)
    sumInit = rowsFrom(ValueRange{sinkRows, max},
                       {b.getMultiDimIdentityMap(r - 1),
                        b.getMultiDimIdentityMap(r - 1)},
                       [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                         Value d = arith::SubFOp::create(b, l, args[0], args[1]);
                         return math::ExpOp::create(b, l, d);
                       });
  Value sum = emitRowReduction(
      b, loc, plan, scores, ValueRange{s, max}, 0.0,
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value d = arith::SubFOp::create(b, l, args[0], args[1]);
        Value e = math::ExpOp::create(b, l, d);
        return arith::AddFOp::create(b, l, args[2], e, fastmath);
      },
      sumInit);
  SmallVector<utils::IteratorType> iters(r, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{scores.type}, ValueRange{max, sum},
             ValueRange{s}, ArrayRef<AffineMap>{rowMap, rowMap, id}, iters,
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value d = arith::SubFOp::create(b, l, args[2], args[0]);
               Value e = math::ExpOp::create(b, l, d);
               Value p = arith::DivFOp::create(b, l, e, args[1]);
               if (plan.safeSoftmax)
                 p = buildZeroWhereAllMasked(b, l, args[0], p);
               if (plan.dropoutP > 0.0) {
                 Value flat = buildFlatIndex(b, l, scores.sizes);
                 p = buildDropoutElement(b, l, p, flat, plan.dropoutP,
                                         plan.seed);
               }
               linalg::YieldOp::create(b, l, p);
             })
      .getResult(0);
}

Value cpu::lowerSdpaMath(OpBuilder &b, Location loc, SdpaOp op,
                         const SdpaPlan &plan) {
  auto qType = op.getQuery().getType();
  auto kType = op.getKey().getType();
  auto resultType = op.getType();

  // Scores [qBatch..., L, S]: q.k^T over loops (b..., l, s, e).
  SmallVector<int64_t> scoreShape(qType.getShape().drop_back(1));
  scoreShape.push_back(kType.getDimSize(plan.rank - 2));
  SmallVector<Value> scoreSizes(plan.qBatch);
  scoreSizes.append({plan.l, plan.s});
  MathTensor scores = getMathTensor(plan, scoreShape, scoreSizes);
  Value s = buildBatchContraction(b, loc, plan, op.getQuery(), op.getKey(),
                                  {0, 2}, {1, 2}, {0, 1}, 2, scores);
  s = emitScoreStep(b, loc, op, plan, scores, s);
  Value p = emitSoftmax(b, loc, plan, scores, s, op.getSinks());

  // p.v over loops (b..., l, s, d), d innermost.
  SmallVector<Value> outSizes(plan.qBatch);
  outSizes.append({plan.l, plan.ev});
  MathTensor out = getMathTensor(plan, resultType.getShape(), outSizes);
  Value result = buildBatchContraction(b, loc, plan, p, op.getValue(), {0, 1},
                                       {1, 2}, {0, 2}, 1, out);
  if (plan.computeType == plan.elementType)
    return result;
  return buildElementwise(
      b, loc, resultType, {result},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        return castFloat(b, l, args[0], plan.elementType);
      });
}
