//===- SdpaDecodeToCpu.cpp - attn.sdpa for a few query rows (decode) -----===//
//
// The flash path puts query rows along vector lanes, so with one query row
// (token-by-token decode against a KV cache) it would use one lane in 8 or
// 16. This path puts the head dim along the lanes instead and splits the
// keys across work items (Flash-Decoding):
//
//   scf.forall (query batch dims, heads in groups that share a key/value
//               head, x key splits)                       partial pass
//     per key block (with lengths: only the sequence's keys; with a
//                    boolean mask and -inf: not the blocks it removes for
//                    every row, a left-padded cache's padding):
//       s[r, j] = score step(sum_e q[r, e] k[j, e]) for all rows r at once
//       (a chain of FMAs along e per row, sharing each vector of the
//       key row; the chains' lanes summed by one tree of shuffles), then per row the block's
//       online-softmax update, then acc[r, :] = acc * alpha + sum_j p v[j, :]
//       for all rows (a rows x value-column-vectors register tile: each
//       vector of a value row is loaded once for all rows)
//     -> the split's running max, sum and accumulator
//     -> with one split (at most splitKV keys: a decode step over a
//        short cache), the output row itself
//   scf.if (more than one split)
//     scf.forall (query batch dims x rows)                combine
//       out = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s
//
// The query heads that read one key/value head (grouped-query heads, or a
// key/value head broadcast to several) are one work item, their L rows
// each the item's rows (up to kMaxFoldedRows): each key and value vector
// is read, widened from f16/bf16, and multiplied into all of them at once.
// The splits keep both threads busy when there are few work items. A single
// split writes what the combine would (the same operations on one part),
// without the combine's parallel loop: one fork and join per attention
// less in a decode step.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "SdpaPlan.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// Keys per block and per split; the p.v register tile: at most pvColVecs
/// vectors of value columns, at most pvAccumulators accumulators (rows x
/// column vectors) in vector registers.
struct DecodeTiling {
  int64_t lanes = 8;
  int64_t blockKV = 64;
  int64_t splitKV = 1024;
  int64_t pvColVecs = 4;
  int64_t pvAccumulators = 12;
  /// Independent FMA chains in q.k (query rows x keys per group): enough
  /// to hide the FMA latency.
  int64_t qkChains = 4;
};

class DecodeLowering : Emitter {
public:
  DecodeLowering(OpBuilder &b, Location loc, SdpaOp op, const SdpaPlan &plan,
                 const DecodeTiling &tiling)
      : Emitter(b, loc, plan.computeType, tiling.lanes), op(op),
        plan(plan), t(tiling) {}

  Value emit();

private:
  /// A row of a work item: the query batch indices and query row it is.
  struct QueryRow {
    SmallVector<Value> qIdx;
    Value row;
  };
  /// Row `r` of the work item whose batch indices are `item` (with
  /// folded heads, the item's head dim counts groups of `fold` heads).
  QueryRow getQueryRow(ArrayRef<Value> item, Value r);
  /// Chooses foldDim and fold.
  void chooseFold();
  /// The lane sum of each vector of `vecs`.
  SmallVector<Value> reduceEach(ArrayRef<Value> vecs);

  Value reduceLoop(Value lo, Value hi, Value step, ValueRange init,
                   function_ref<SmallVector<Value>(Value, ValueRange)> body,
                   unsigned result = 0);
  Value loadRowVector(Value buf, ArrayRef<Value> prefix, Value row, Value col);
  Value loadRowScalar(Value buf, ArrayRef<Value> prefix, Value row, Value col);

  void emitSplit(ValueRange ivs);
  /// out[qIdx, r, :] from the one split's max, sum (`stats`) and
  /// accumulator: emitCombine's result for numSplits == 1.
  void emitSingleSplitResult(ArrayRef<Value> item, Value r, Value stats,
                             function_ref<SmallVector<Value>(Value)> partIdx);
  void emitScores(ArrayRef<QueryRow> queryRowsOf, ArrayRef<Value> kvIdx,
                  Value kv0, Value keys, Value scores,
                  const std::optional<SeqBounds> &seq);
  using PartIndexFn = function_ref<SmallVector<Value>(Value row)>;
  void emitSoftmaxStep(Value r, Value keys, Value scores, Value stats);
  void emitStartRows(Value stats, PartIndexFn partIdx);
  void emitPv(ArrayRef<Value> kvIdx, PartIndexFn partIdx, Value kv0,
              Value keys, Value scores, Value stats);
  void emitCombine(ValueRange ivs);

  SdpaOp op;
  const SdpaPlan &plan;
  DecodeTiling t;
  SdpaBuffers buf;
  /// Partial results per (query batch..., split, row): max, sum, acc[Ev].
  Value partM, partL, partAcc;
  Value numSplits;
  /// numSplits == 1: the partial pass writes the output.
  Value singleSplit;
  /// L (static, at most half the lanes).
  int64_t queryRows = 1;
  /// Grouped-query heads folded into the rows: query batch dim `foldDim`
  /// (-1: none) is split into work items of `fold` consecutive heads that
  /// read the same keys and values (a group of grouped-query heads, or
  /// heads of one broadcast key/value head), and their fold x L rows are
  /// the item's rows (row r: head item * fold + r / L, query row r % L),
  /// so that each key and value vector is loaded, widened from f16/bf16,
  /// and multiplied into every row of the group at once.
  int64_t foldDim = -1, fold = 1;
  /// The rows of a work item: fold x L.
  int64_t rows = 1;
};

/// The most rows a work item gets by folding heads (the register tiles of
/// q.k and p.v hold a few accumulators per row).
constexpr int64_t kMaxFoldedRows = 8;

} // namespace

/// An scf.for carrying `init` through `body(iv, iter)`; returns result
/// number `result`.
Value DecodeLowering::reduceLoop(
    Value lo, Value hi, Value step, ValueRange init,
    function_ref<SmallVector<Value>(Value, ValueRange)> body,
    unsigned result) {
  auto loop = scf::ForOp::create(
      b, loc, lo, hi, step, init,
      [&](OpBuilder &, Location, Value iv, ValueRange iter) {
        scf::YieldOp::create(b, loc, body(iv, iter));
      });
  return loop.getResult(result);
}

DecodeLowering::QueryRow DecodeLowering::getQueryRow(ArrayRef<Value> item,
                                                     Value r) {
  QueryRow q{SmallVector<Value>(item), r};
  if (fold == 1)
    return q;
  Value head = r;
  if (queryRows == 1) {
    q.row = idx(0);
  } else {
    head = arith::DivUIOp::create(b, loc, r, idx(queryRows));
    q.row = arith::RemUIOp::create(b, loc, r, idx(queryRows));
  }
  q.qIdx[foldDim] = add(mul(item[foldDim], idx(fold)), head);
  return q;
}

void DecodeLowering::chooseFold() {
  // The heads that share a key/value head: a grouped-query dim's group, or
  // a static dim whose key/value size is 1. The last such dim (the heads);
  // not the first with sequence lengths, which are per first index.
  RankedTensorType qType = op.getQuery().getType();
  for (int64_t i = plan.numBatch - 1; i >= 0; --i) {
    int64_t group = 1;
    if (plan.kvKind[i] == BatchIndexKind::Group)
      group = plan.kvGroup[i];
    else if (plan.kvKind[i] == BatchIndexKind::Broadcast &&
             !qType.isDynamicDim(i))
      group = qType.getDimSize(i);
    if (group <= 1 || (i == 0 && (plan.hasQLengths || plan.hasKvLengths)))
      continue;
    // The largest divisor of the group that keeps the rows within
    // kMaxFoldedRows.
    for (int64_t f = std::min(group, kMaxFoldedRows / queryRows); f > 1; --f) {
      if (group % f == 0) {
        foldDim = i;
        fold = f;
        return;
      }
    }
  }
}

/// The sum of the lanes of each vector of `vecs` (all of one type whose
/// lane count is a power of 2): with one vector, its vector.reduction;
/// with several, a tree of two-source shuffles and adds, as for a
/// transpose, that sums the lanes of up to `lanes` vectors at once.
/// Level by level, a vector holds m segments of w lanes (m x w = lanes),
/// segment s the partial sums of one input; two vectors become one of 2m
/// segments of w / 2 lanes, each the sum of the two halves of an old
/// segment, and when one vector is left its segments are halved alone (the
/// vector with them). So 4 vectors of 16 lanes take 6 shuffles and 3 adds
/// on 16 lanes, then 4 shuffles and 2 adds on 8 and 4 lanes, where 4
/// reductions take 4 levels of a shuffle and an add each.
SmallVector<Value> DecodeLowering::reduceEach(ArrayRef<Value> vecs) {
  if (vecs.size() == 1)
    return {vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                        vecs.front(),
                                        arith::FastMathFlags::reassoc)};
  auto type = cast<VectorType>(vecs.front().getType());
  int64_t width = type.getDimSize(0);
  SmallVector<Value> sums;
  for (size_t first = 0; first < vecs.size(); first += width) {
    size_t count = std::min<size_t>(width, vecs.size() - first);
    SmallVector<Value> level(vecs.begin() + first,
                             vecs.begin() + first + count);
    // Segments per vector and lanes per segment.
    int64_t m = 1, w = width;
    // The lanes [half * w / 2, (half + 1) * w / 2) of each of the m
    // segments of a vector of m * w lanes, as shuffle indices (plus
    // `offset`: the second source's lanes).
    auto halves = [&](int64_t half, int64_t offset) {
      SmallVector<int64_t> mask;
      for (int64_t seg = 0; seg < m; ++seg)
        for (int64_t i = 0; i < w / 2; ++i)
          mask.push_back(offset + seg * w + half * (w / 2) + i);
      return mask;
    };
    while (level.size() > 1) {
      if (level.size() % 2)
        level.push_back(createFloatConstantOfType(b, loc, type, 0.0));
      SmallVector<Value> next;
      for (size_t i = 0; i < level.size(); i += 2) {
        SmallVector<int64_t> low = halves(0, 0), high = halves(1, 0);
        llvm::append_range(low, halves(0, width));
        llvm::append_range(high, halves(1, width));
        next.push_back(arith::AddFOp::create(
            b, loc,
            vector::ShuffleOp::create(b, loc, level[i], level[i + 1], low),
            vector::ShuffleOp::create(b, loc, level[i], level[i + 1], high)));
      }
      level = std::move(next);
      m *= 2;
      w /= 2;
    }
    // One vector of m segments of w lanes: halve them alone.
    Value v = level.front();
    while (w > 1) {
      v = arith::AddFOp::create(
          b, loc, vector::ShuffleOp::create(b, loc, v, v, halves(0, 0)),
          vector::ShuffleOp::create(b, loc, v, v, halves(1, 0)));
      w /= 2;
    }
    for (size_t i = 0; i < count; ++i)
      sums.push_back(vector::ExtractOp::create(b, loc, v, int64_t(i)));
  }
  return sums;
}

/// A vector of `lanes` elements of buf[prefix..., row, col...] in the
/// compute type (f16/bf16 converted on load).
Value DecodeLowering::loadRowVector(Value buf, ArrayRef<Value> prefix,
                                    Value row, Value col) {
  SmallVector<Value> indices(prefix);
  indices.append({row, col});
  Type et = cast<MemRefType>(buf.getType()).getElementType();
  Value x = vector::LoadOp::create(b, loc, VectorType::get({t.lanes}, et), buf,
                                   indices);
  return castFloat(b, loc, x, vecType);
}

Value DecodeLowering::loadRowScalar(Value buf, ArrayRef<Value> prefix,
                                    Value row, Value col) {
  SmallVector<Value> indices(prefix);
  indices.append({row, col});
  return castFloat(b, loc, memref::LoadOp::create(b, loc, buf, indices), ct);
}

/// The scores of every query row against keys [kv0, kv0 + keys) into
/// `scores` [rows, blockKV]: per key, q[r] . k[key] for all rows at once
/// (each vector of the key row is loaded once and feeds `rows` independent
/// FMA chains, whose lanes reduceEach sums), then the score step.
void DecodeLowering::emitScores(ArrayRef<QueryRow> queryRowsOf,
                                ArrayRef<Value> kvIdx,
                                Value kv0, Value keys, Value scores,
                                const std::optional<SeqBounds> &seq) {
  Value lanes = idx(t.lanes);
  Value vecEnd = arith::SubIOp::create(
      b, loc, plan.e, arith::RemUIOp::create(b, loc, plan.e, lanes));
  Value zeroVec = createFloatConstantOfType(b, loc, vecType, 0.0);
  // `nk` keys from block position j0: rows x nk independent FMA chains over
  // e (each key vector loaded once for all rows, each query vector once
  // for all keys), then the score step of each.
  auto emitKeys = [&](Value j0, int64_t nk) {
    SmallVector<Value> keyOf;
    for (int64_t k = 0; k < nk; ++k)
      keyOf.push_back(add(kv0, add(j0, idx(k))));
    // Chains over e in [lo, hi) by `step`: vectors, then the scalar tail.
    auto chains = [&](Value lo, Value hi, Value step, ValueRange init,
                      bool vectors) {
      auto load = [&](Value buf, ArrayRef<Value> prefix, Value row, Value e) {
        return vectors ? loadRowVector(buf, prefix, row, e)
                       : loadRowScalar(buf, prefix, row, e);
      };
      auto loop = scf::ForOp::create(
          b, loc, lo, hi, step, init,
          [&](OpBuilder &, Location, Value e, ValueRange acc) {
            SmallVector<Value> kv, next;
            for (int64_t k = 0; k < nk; ++k)
              kv.push_back(load(buf.k, kvIdx, keyOf[k], e));
            for (int64_t r = 0; r < rows; ++r) {
              const QueryRow &q = queryRowsOf[r];
              Value qv = load(buf.q, q.qIdx, q.row, e);
              for (int64_t k = 0; k < nk; ++k) {
                Value a = acc[r * nk + k];
                next.push_back(
                    vectors
                        ? vector::FMAOp::create(b, loc, qv, kv[k], a)
                              .getResult()
                        : math::FmaOp::create(b, loc, qv, kv[k], a)
                              .getResult());
              }
            }
            scf::YieldOp::create(b, loc, next);
          });
      return SmallVector<Value>(loop.getResults());
    };
    SmallVector<Value> dots = reduceEach(chains(
        idx(0), vecEnd, lanes, SmallVector<Value>(rows * nk, zeroVec), true));
    dots = chains(vecEnd, plan.e, idx(1), dots, false);
    for (int64_t r = 0; r < rows; ++r) {
      const QueryRow &q = queryRowsOf[r];
      Value row = q.row;
      for (int64_t k = 0; k < nk; ++k) {
        Value key = keyOf[k];
        Value maskElem;
        if (buf.mask)
          maskElem = memref::LoadOp::create(
              b, loc, buf.mask,
              scoreOperandIndices(b, loc, plan, plan.maskBroadcast, q.qIdx,
                                  row, key));
        ScoreModInputs mod{ValueRange(q.qIdx), row, key, {}};
        for (auto [buf, broadcast] :
             llvm::zip_equal(buf.extras, plan.extraBroadcast))
          mod.extras.push_back(memref::LoadOp::create(
              b, loc, buf,
              scoreOperandIndices(b, loc, plan, broadcast, q.qIdx, row, key)));
        Value seqKeep =
            seq ? buildSeqKeep(b, loc, *seq, row, key) : Value();
        Value s = buildMaskedScore(b, loc, plan, op, dots[r * nk + k],
                                   maskElem, row, key, mod, seqKeep);
        memref::StoreOp::create(b, loc, s, scores,
                                ValueRange{idx(r), add(j0, idx(k))});
      }
    }
  };
  // Enough keys per group for about qkChains independent chains.
  int64_t nk = std::max<int64_t>(1, t.qkChains / rows);
  Value groupEnd = arith::SubIOp::create(
      b, loc, keys, arith::RemUIOp::create(b, loc, keys, idx(nk)));
  forLoop(idx(0), groupEnd, idx(nk), [&](Value j0) { emitKeys(j0, nk); });
  if (nk > 1)
    forLoop(groupEnd, keys, idx(1), [&](Value j0) { emitKeys(j0, 1); });
}

/// One query row's online-softmax update for a key block whose scores are
/// in `scores` [rows, blockKV]: `stats` [rows, 3] (m, l, and alpha, the
/// rescale of the row's accumulator); p overwrites the row's scores. The
/// block max and exp(s - m) run on vectors of keys, then the keys past the
/// last whole vector one by one.
void DecodeLowering::emitSoftmaxStep(Value r, Value keys, Value scores,
                                     Value stats) {
  double inf = std::numeric_limits<double>::infinity();
  Value lanes = idx(t.lanes);
  Value vecEnd = arith::SubIOp::create(
      b, loc, keys, arith::RemUIOp::create(b, loc, keys, lanes));
  // Over [0, vecEnd) by vectors, then [vecEnd, keys) by scalars: `step`
  // gets a score vector or scalar and the running value of the same type.
  auto overKeys = [&](Value vecInit, Value scalarInit, vector::CombiningKind
                      kind, function_ref<Value(Value, Value, Value)> step) {
    Value acc = reduceLoop(
        idx(0), vecEnd, lanes, ValueRange{vecInit},
        [&](Value j, ValueRange iter) -> SmallVector<Value> {
          Value s = vector::LoadOp::create(b, loc, vecType, scores,
                                           ValueRange{r, j});
          return {step(s, iter[0], j)};
        });
    Value combined = vector::ReductionOp::create(
        b, loc, kind, acc, scalarInit, arith::FastMathFlags::reassoc);
    return reduceLoop(vecEnd, keys, idx(1), ValueRange{combined},
                      [&](Value j, ValueRange iter) -> SmallVector<Value> {
                        Value s = memref::LoadOp::create(b, loc, scores,
                                                         ValueRange{r, j});
                        return {step(s, iter[0], j)};
                      });
  };
  // The block max (NaN skipped, as the flash path does; the lanes never
  // hold NaN, so maxnumf combines them).
  Value blockMax = overKeys(
      createFloatConstantOfType(b, loc, vecType, -inf), fconst(-inf),
      vector::CombiningKind::MAXNUMF,
      [&](Value s, Value max, Value) { return buildMaxIgnoringNaN(b, loc, s, max); });
  Value mOld = memref::LoadOp::create(b, loc, stats, ValueRange{r, idx(0)});
  Value lOld = memref::LoadOp::create(b, loc, stats, ValueRange{r, idx(1)});
  Value mNew = buildMaxIgnoringNaN(b, loc, blockMax, mOld);
  Value sub = buildSafeMax(b, loc, mNew);
  Value alpha =
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, mOld, sub));
  Value subVec = vector::BroadcastOp::create(b, loc, vecType, sub);
  Value sum = overKeys(
      createFloatConstantOfType(b, loc, vecType, 0.0), fconst(0.0),
      vector::CombiningKind::ADD, [&](Value s, Value total, Value j) {
        Value p = math::ExpOp::create(
            b, loc,
            arith::SubFOp::create(b, loc, s,
                                  isa<VectorType>(s.getType()) ? subVec : sub));
        if (isa<VectorType>(p.getType()))
          vector::StoreOp::create(b, loc, p, scores, ValueRange{r, j});
        else
          memref::StoreOp::create(b, loc, p, scores, ValueRange{r, j});
        return arith::AddFOp::create(b, loc, total, p).getResult();
      });
  memref::StoreOp::create(b, loc, mNew, stats, ValueRange{r, idx(0)});
  memref::StoreOp::create(
      b, loc, math::FmaOp::create(b, loc, lOld, alpha, sum), stats,
      ValueRange{r, idx(1)});
  memref::StoreOp::create(b, loc, alpha, stats, ValueRange{r, idx(2)});
}

/// acc[r, :] = acc[r, :] * alpha[r] + sum_j p[r, j] v[j, :] for every row:
/// a register tile of all rows x `nv` vectors of value columns, so that
/// each vector of a value row is loaded once for all rows; then the scalar
/// tail of Ev.
void DecodeLowering::emitPv(ArrayRef<Value> kvIdx, PartIndexFn partIdx,
                            Value kv0, Value keys, Value scores,
                            Value stats) {
  Value lanes = idx(t.lanes);
  Value vecEnd = arith::SubIOp::create(
      b, loc, plan.ev, arith::RemUIOp::create(b, loc, plan.ev, lanes));
  auto accIndices = [&](int64_t r, Value c) {
    SmallVector<Value> indices = partIdx(idx(r));
    indices.push_back(c);
    return indices;
  };
  SmallVector<Value> alphas;
  for (int64_t r = 0; r < rows; ++r)
    alphas.push_back(
        memref::LoadOp::create(b, loc, stats, ValueRange{idx(r), idx(2)}));
  int64_t nv =
      std::max<int64_t>(1, std::min(t.pvColVecs, t.pvAccumulators / rows));
  int64_t group = nv * t.lanes;
  Value groupEnd = arith::SubIOp::create(
      b, loc, vecEnd, arith::RemUIOp::create(b, loc, vecEnd, idx(group)));
  auto emitColumns = [&](Value c0, int64_t n) {
    SmallVector<Value> init;
    for (int64_t r = 0; r < rows; ++r) {
      Value alpha = vector::BroadcastOp::create(b, loc, vecType, alphas[r]);
      for (int64_t v = 0; v < n; ++v)
        init.push_back(arith::MulFOp::create(
            b, loc,
            vector::LoadOp::create(b, loc, vecType, partAcc,
                                   accIndices(r, add(c0, idx(v * t.lanes)))),
            alpha));
    }
    auto loop = scf::ForOp::create(
        b, loc, idx(0), keys, idx(1), init,
        [&](OpBuilder &, Location, Value j, ValueRange acc) {
          SmallVector<Value> vv;
          for (int64_t v = 0; v < n; ++v)
            vv.push_back(loadRowVector(buf.v, kvIdx, add(kv0, j),
                                       add(c0, idx(v * t.lanes))));
          SmallVector<Value> next;
          for (int64_t r = 0; r < rows; ++r) {
            Value p = vector::BroadcastOp::create(
                b, loc, vecType,
                memref::LoadOp::create(b, loc, scores, ValueRange{idx(r), j}));
            for (int64_t v = 0; v < n; ++v)
              next.push_back(
                  vector::FMAOp::create(b, loc, p, vv[v], acc[r * n + v]));
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < n; ++v)
        vector::StoreOp::create(b, loc, loop.getResult(r * n + v), partAcc,
                                accIndices(r, add(c0, idx(v * t.lanes))));
  };
  forLoop(idx(0), groupEnd, idx(group),
          [&](Value c0) { emitColumns(c0, nv); });
  forLoop(groupEnd, vecEnd, lanes, [&](Value c0) { emitColumns(c0, 1); });
  for (int64_t r = 0; r < rows; ++r) {
    forLoop(vecEnd, plan.ev, idx(1), [&](Value c) {
      Value acc = memref::LoadOp::create(b, loc, partAcc, accIndices(r, c));
      Value total = reduceLoop(
          idx(0), keys, idx(1),
          ValueRange{arith::MulFOp::create(b, loc, acc, alphas[r])},
          [&](Value j, ValueRange iter) -> SmallVector<Value> {
            Value p =
                memref::LoadOp::create(b, loc, scores, ValueRange{idx(r), j});
            Value v = loadRowScalar(buf.v, kvIdx, add(kv0, j), c);
            return {math::FmaOp::create(b, loc, p, v, iter[0])};
          });
      memref::StoreOp::create(b, loc, total, partAcc, accIndices(r, c));
    });
  }
}

/// The partial pass of one (query batch..., split) work item: every query
/// row over the split's keys (with a band whose outside is -inf, only the
/// blocks that meet some row's band).
void DecodeLowering::emitSplit(ValueRange ivs) {
  SmallVector<Value> item(ivs.drop_back());
  Value split = ivs.back();
  SmallVector<QueryRow> queryRowsOf;
  for (int64_t r = 0; r < rows; ++r)
    queryRowsOf.push_back(getQueryRow(item, idx(r)));
  // Every row of the item reads the same key/value head.
  SmallVector<Value> kvIdx =
      kvBatchIndices(b, loc, plan, queryRowsOf.front().qIdx);
  Value begin = mul(split, idx(t.splitKV));
  Value end = arith::MinUIOp::create(b, loc, plan.s, add(begin, idx(t.splitKV)));
  Value scores = alloc({b.getIndexAttr(rows), b.getIndexAttr(t.blockKV)});
  Value stats = alloc({b.getIndexAttr(rows), b.getIndexAttr(3)});
  auto partIdx = [&](Value r) {
    QueryRow q = getQueryRow(item, r);
    SmallVector<Value> indices(q.qIdx);
    indices.append({split, q.row});
    return indices;
  };
  emitStartRows(stats, partIdx);
  if (plan.canSkipOutsideBand()) {
    // Query rows 0 .. L-1 see keys in [0 - left, L - 1 + right].
    if (std::optional<int64_t> left = plan.band.left)
      begin = arith::MaxSIOp::create(b, loc, begin, idx(-*left));
    if (std::optional<int64_t> right = plan.band.right)
      end = arith::MinSIOp::create(b, loc, end, idx(queryRows + *right));
  }
  // Sequence lengths: only the sequence's keys, none when every row is
  // padding.
  std::optional<SeqBounds> seq;
  if (plan.hasQLengths || plan.hasKvLengths) {
    seq = loadSeqBounds(b, loc, plan, buf.qLengths, buf.kvLengths,
                        item.front());
    begin = arith::MaxSIOp::create(b, loc, begin, seq->kvBegin);
    end = arith::MinSIOp::create(b, loc, end, seq->kvEnd);
    Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       seq->qBegin, seq->qEnd);
    end = arith::SelectOp::create(b, loc, live, end, begin);
  }
  forLoop(begin, end, idx(t.blockKV), [&](Value kv0) {
    Value keys = arith::MinUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, end, kv0), idx(t.blockKV));
    auto emitBlock = [&] {
      emitScores(queryRowsOf, kvIdx, kv0, keys, scores, seq);
      forLoop(idx(0), idx(rows), idx(1),
              [&](Value r) { emitSoftmaxStep(r, keys, scores, stats); });
      emitPv(kvIdx, partIdx, kv0, keys, scores, stats);
    };
    if (!plan.canSkipMaskedTiles()) {
      emitBlock();
      return;
    }
    // A key block that the boolean mask removes for every row adds nothing
    // (canSkipMaskedTiles): the left padding of a batch's KV cache.
    Value kept = buildAnyKeyKept(
        b, loc, kv0, add(kv0, keys),
        [&](OpBuilder &, Location, Value key) -> Value {
          Value any;
          for (const QueryRow &q : queryRowsOf) {
            Value elem = memref::LoadOp::create(
                b, loc, buf.mask,
                scoreOperandIndices(b, loc, plan, plan.maskBroadcast, q.qIdx,
                                    q.row, key));
            Value keeps = buildMaskKeeps(b, loc, plan, elem);
            any = any ? Value(arith::OrIOp::create(b, loc, any, keeps)) : keeps;
          }
          return any;
        });
    scf::IfOp::create(b, loc, kept, [&](OpBuilder &, Location) {
      emitBlock();
      scf::YieldOp::create(b, loc);
    });
  });
  SmallVector<Value, 2> parts = {partM, partL};
  scf::IfOp::create(
      b, loc, singleSplit,
      [&](OpBuilder &, Location) {
        forLoop(idx(0), idx(rows), idx(1), [&](Value r) {
          emitSingleSplitResult(item, r, stats, partIdx);
        });
        scf::YieldOp::create(b, loc);
      },
      [&](OpBuilder &, Location) {
        forLoop(idx(0), idx(rows), idx(1), [&](Value r) {
          for (auto [i, part] : llvm::enumerate(parts))
            memref::StoreOp::create(
                b, loc,
                memref::LoadOp::create(b, loc, stats, ValueRange{r, idx(i)}),
                part, partIdx(r));
        });
        scf::YieldOp::create(b, loc);
      });
}

/// Every row's running max -inf and sum 0 (`stats`), and its accumulator
/// (at partIdx(row) of partAcc) 0.
void DecodeLowering::emitStartRows(Value stats, PartIndexFn partIdx) {
  Value zero = fconst(0.0);
  forLoop(idx(0), idx(rows), idx(1), [&](Value r) {
    memref::StoreOp::create(b, loc,
                            fconst(-std::numeric_limits<double>::infinity()),
                            stats, ValueRange{r, idx(0)});
    memref::StoreOp::create(b, loc, zero, stats, ValueRange{r, idx(1)});
    forLoop(idx(0), plan.ev, idx(1), [&](Value c) {
      SmallVector<Value> indices = partIdx(r);
      indices.push_back(c);
      memref::StoreOp::create(b, loc, zero, partAcc, indices);
    });
  });
}

/// emitCombine's operations for one split: M = m (the combine's max of
/// m and -inf, m never being NaN), the weight exp(m - M') with M' the
/// safe max, l and each accumulator times it (as the combine's fma onto
/// 0), so that the output is bit for bit the combine's.
void DecodeLowering::emitSingleSplitResult(
    ArrayRef<Value> item, Value r, Value stats,
    function_ref<SmallVector<Value>(Value)> partIdx) {
  QueryRow q = getQueryRow(item, r);
  Value zero = fconst(0.0);
  Value m = memref::LoadOp::create(b, loc, stats, ValueRange{r, idx(0)});
  Value l = memref::LoadOp::create(b, loc, stats, ValueRange{r, idx(1)});
  Value w = math::ExpOp::create(
      b, loc, arith::SubFOp::create(b, loc, m, buildSafeMax(b, loc, m)));
  Value lw = math::FmaOp::create(b, loc, w, l, zero);
  Value sink =
      plan.hasSinks ? loadSink(b, loc, plan, buf.sinks, q.qIdx) : Value();
  forLoop(idx(0), plan.ev, idx(1), [&](Value c) {
    SmallVector<Value> indices = partIdx(r);
    indices.push_back(c);
    Value a = memref::LoadOp::create(b, loc, partAcc, indices);
    Value acc = math::FmaOp::create(b, loc, w, a, zero);
    Value out = buildOnlineSoftmaxResult(b, loc, plan, acc, lw, m, sink);
    SmallVector<Value> outIdx(q.qIdx);
    outIdx.append({q.row, c});
    memref::StoreOp::create(b, loc, castFloat(b, loc, out, plan.elementType),
                            buf.out, outIdx);
  });
}

/// out[qIdx, r, :] from the splits: weights exp(m_s - M), then
/// buildOnlineSoftmaxResult with the combined max M, rounded once.
void DecodeLowering::emitCombine(ValueRange ivs) {
  ValueRange qIdx = ivs.drop_back();
  Value r = ivs.back();
  auto part = [&](Value split) {
    SmallVector<Value> indices(qIdx);
    indices.append({split, r});
    return indices;
  };
  Value negInf = fconst(-std::numeric_limits<double>::infinity());
  Value m = reduceLoop(idx(0), numSplits, idx(1), ValueRange{negInf},
                       [&](Value sp, ValueRange iter) -> SmallVector<Value> {
                         Value ms = memref::LoadOp::create(b, loc, partM,
                                                           part(sp));
                         return {buildMaxIgnoringNaN(b, loc, ms, iter[0])};
                       });
  Value sub = buildSafeMax(b, loc, m);
  Value weights = alloc({getAsOpFoldResult(numSplits)});
  Value l = reduceLoop(
      idx(0), numSplits, idx(1), ValueRange{fconst(0.0)},
      [&](Value sp, ValueRange iter) -> SmallVector<Value> {
        Value ms = memref::LoadOp::create(b, loc, partM, part(sp));
        Value w = math::ExpOp::create(b, loc,
                                      arith::SubFOp::create(b, loc, ms, sub));
        memref::StoreOp::create(b, loc, w, weights, ValueRange{sp});
        Value ls = memref::LoadOp::create(b, loc, partL, part(sp));
        return {math::FmaOp::create(b, loc, w, ls, iter[0])};
      });
  // The sink joins the combined row once, after the splits.
  Value sink =
      plan.hasSinks ? loadSink(b, loc, plan, buf.sinks, qIdx) : Value();
  forLoop(idx(0), plan.ev, idx(1), [&](Value c) {
    Value acc = reduceLoop(
        idx(0), numSplits, idx(1), ValueRange{fconst(0.0)},
        [&](Value sp, ValueRange iter) -> SmallVector<Value> {
          SmallVector<Value> indices = part(sp);
          indices.push_back(c);
          Value a = memref::LoadOp::create(b, loc, partAcc, indices);
          Value w = memref::LoadOp::create(b, loc, weights, ValueRange{sp});
          return {math::FmaOp::create(b, loc, w, a, iter[0])};
        });
    Value out = buildOnlineSoftmaxResult(b, loc, plan, acc, l, m, sink);
    SmallVector<Value> indices(qIdx);
    indices.append({r, c});
    memref::StoreOp::create(b, loc, castFloat(b, loc, out, plan.elementType),
                            buf.out, indices);
  });
}

Value DecodeLowering::emit() {
  queryRows = *getConstantIntValue(plan.l);
  chooseFold();
  rows = fold * queryRows;
  buf = getSdpaBuffers(b, loc, op, plan);

  numSplits = arith::CeilDivUIOp::create(b, loc, plan.s, idx(t.splitKV));
  singleSplit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      numSplits, idx(1));
  // The partial pass's work items (folded heads: groups of `fold`) and
  // the combine's (every query batch index).
  SmallVector<OpFoldResult> partSizes, items;
  RankedTensorType qType = op.getQuery().getType();
  for (auto [i, size] : llvm::enumerate(plan.qBatch)) {
    partSizes.push_back(getAsOpFoldResult(size));
    items.push_back(int64_t(i) == foldDim
                        ? b.getIndexAttr(qType.getDimSize(i) / fold)
                        : getAsOpFoldResult(size));
  }
  SmallVector<OpFoldResult> qBatch(partSizes);
  partSizes.append({getAsOpFoldResult(numSplits), getAsOpFoldResult(plan.l)});
  partM = alloc(partSizes);
  partL = alloc(partSizes);
  partSizes.push_back(getAsOpFoldResult(plan.ev));
  partAcc = alloc(partSizes);

  auto emitForall = [&](ArrayRef<OpFoldResult> batch, OpFoldResult last,
                        function_ref<void(ValueRange)> body) {
    SmallVector<OpFoldResult> bounds(batch);
    bounds.push_back(last);
    auto forall =
        scf::ForallOp::create(b, loc, bounds, ValueRange{}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getBody()->getTerminator());
    body(forall.getInductionVars());
  };
  emitForall(items, getAsOpFoldResult(numSplits),
             [&](ValueRange ivs) { emitSplit(ivs); });
  // No keys (S = 0) make no split: the combine writes the empty rows.
  Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        numSplits, idx(1));
  scf::IfOp::create(b, loc, several, [&](OpBuilder &, Location) {
    emitForall(qBatch, getAsOpFoldResult(plan.l),
               [&](ValueRange ivs) { emitCombine(ivs); });
    scf::YieldOp::create(b, loc);
  });
  return bufferization::ToTensorOp::create(b, loc, op.getType(), buf.out,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

bool cpu::prefersDecode(const SdpaPlan &plan,
                        const AttnCpuLoweringOptions &options) {
  // The packed layout's L holds every sequence's rows: flash splits them.
  if (plan.packed)
    return false;
  std::optional<int64_t> l = getConstantIntValue(plan.l);
  return l && *l <= options.target.getLanes(plan.computeType) / 2;
}

Value cpu::lowerSdpaDecode(OpBuilder &b, Location loc, SdpaOp op,
                           const SdpaPlan &plan,
                           const AttnCpuLoweringOptions &options) {
  DecodeTiling t;
  t.lanes = options.target.getLanes(plan.computeType);
  // The p.v tile: the accumulator registers, in rows of up to a third of
  // them.
  t.pvAccumulators = options.target.getAccumulatorRegisters();
  t.pvColVecs = t.pvAccumulators / 3;
  if (options.blockKV > 0)
    t.blockKV = options.blockKV;
  return DecodeLowering(b, loc, op, plan, t).emit();
}
