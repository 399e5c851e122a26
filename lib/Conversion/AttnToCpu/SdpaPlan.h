//===- SdpaPlan.h - what both attn.sdpa CPU lowerings know about one op ---===//
//
// One SdpaPlan per attn.sdpa, built once by the pattern and read by the math
// and flash lowerings. The rules that both implement live here, once: how a
// key/value or mask batch dim is indexed from the query's (broadcast,
// grouped-query), and the score step of the contract (scale, additive mask,
// boolean mask, causal), which works on a scalar (math) or on a vector of
// scores (flash).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_ATTNTOCPU_SDPAPLAN_H
#define LIB_CONVERSION_ATTNTOCPU_SDPAPLAN_H

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::cpu {

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
  bool hasBoolMask = false, hasAddMask = false;
  /// The boolean mask's true elements are the masked-out positions
  /// (`mask_polarity = drop`).
  bool maskDrops = false;
  /// is_causal and the sliding window (the keys each row attends to).
  MaskBand band;
  double dropoutP = 0.0;
  int64_t seed = 0;
  /// Rows whose scores are all -inf get p = 0 (attn.safe_softmax), not NaN.
  /// Always with sequence lengths.
  bool safeSoftmax = false;
  /// q_lengths / kv_lengths are given; padding comes first (left).
  bool hasQLengths = false, hasKvLengths = false, padsLeft = false;
  /// The packed layout: the sequences are back to back along L and S
  /// (padding_side = packed; both lengths given).
  bool packed = false;
  /// One sink logit per query head joins each row's softmax.
  bool hasSinks = false;
  /// Per query batch dim: how key/value index it (and the group size).
  SmallVector<BatchIndexKind> kvKind;
  SmallVector<int64_t> kvGroup;
  /// Per mask dim: true when it broadcasts (reads index 0).
  SmallVector<bool> maskBroadcast;
  /// The same per dim of each extra operand of the score_mod region.
  SmallVector<SmallVector<bool>> extraBroadcast;
  /// Sizes (index values): query batch dims, L, S, E, Ev.
  SmallVector<Value> qBatch;
  Value l, s, e, ev;

  /// True when keys outside the band are -inf for every row (the default
  /// masked value): their exp is exactly 0, so whole key blocks outside a
  /// query block's band can be skipped.
  bool canSkipOutsideBand() const;

  /// True when a boolean mask removes positions with -inf: a (query block,
  /// key block) tile that the mask removes entirely adds exactly nothing to
  /// any row's online softmax (p = exp(-inf - m) = 0, alpha = 1, and a row
  /// that no tile keeps ends as it would: m = -inf, l = 0, acc = 0), so it
  /// can be skipped (buildAnyKeyKept). Not for a finite masked_value (a
  /// fully masked row averages every key) nor for additive masks (a NaN or
  /// +inf score plus -inf is NaN: the chain's row is NaN).
  bool canSkipMaskedTiles() const;
};

/// The real query rows [qBegin, qEnd) and keys [kvBegin, kvEnd) of one
/// sequence of a batch with lengths (index values); a side without lengths
/// is [0, L) or [0, S).
struct SeqBounds {
  Value qBegin, qEnd, kvBegin, kvEnd;
};

/// The bounds of the sequence whose lengths are `qLength` and `kvLength`
/// (integer scalars, checked by buildSdpaPlan; null for a side without
/// lengths), clamped to [0, L] and [0, S].
SeqBounds getSeqBounds(OpBuilder &b, Location loc, const SdpaPlan &plan,
                       Value qLength, Value kvLength);

/// The bounds of query batch index `batch` read from the lengths buffers
/// (null for a side without lengths).
SeqBounds loadSeqBounds(OpBuilder &b, Location loc, const SdpaPlan &plan,
                        Value qLengths, Value kvLengths, Value batch);

/// i1 (a scalar, or a vector of the shape of `row`/`col`): true where row
/// `row` and key `col` are both real.
Value buildSeqKeep(OpBuilder &b, Location loc, const SeqBounds &bounds,
                   Value row, Value col);

/// i1: whether the boolean mask keeps any position of a tile, scanning keys
/// [kv0, kvEnd) in order and stopping at the first key that `keyKept` (i1:
/// the mask keeps key `key` for some row of the tile) says is kept, so that
/// a dense mask costs one test per tile. For canSkipMaskedTiles.
Value buildAnyKeyKept(
    OpBuilder &b, Location loc, Value kv0, Value kvEnd,
    function_ref<Value(OpBuilder &, Location, Value key)> keyKept);

/// i1 (of the shape of `maskElem`): true where the boolean mask element
/// `maskElem` keeps its position (mask_polarity).
Value buildMaskKeeps(OpBuilder &b, Location loc, const SdpaPlan &plan,
                     Value maskElem);

/// The operands of one attn.sdpa as buffers, and its output.
struct SdpaBuffers {
  Value q, k, v, mask, out;
  /// q_lengths and kv_lengths, or null.
  Value qLengths, kvLengths;
  /// The sinks ([H]), or null.
  Value sinks;
  /// The score_mod region's extra operands.
  SmallVector<Value> extras;
};

/// The prologue of the flash and decode lowerings: reads the operands of
/// `op` as read-only buffers and allocates its output (element type, 64-byte
/// aligned, the plan's sizes for its dynamic dims).
SdpaBuffers getSdpaBuffers(OpBuilder &b, Location loc, SdpaOp op,
                           const SdpaPlan &plan);

/// Fills the plan of `op` and emits run-time checks for dims that are
/// dynamic and assumed equal.
SdpaPlan buildSdpaPlan(OpBuilder &b, Location loc, SdpaOp op);

/// The key/value batch index expressions of a loop nest whose first
/// `numBatch` dims are the query batch dims.
SmallVector<AffineExpr> kvBatchExprs(const SdpaPlan &plan, MLIRContext *ctx);

/// The key/value batch indices for query batch indices `qIdx`.
SmallVector<Value> kvBatchIndices(OpBuilder &b, Location loc,
                                  const SdpaPlan &plan, ValueRange qIdx);

/// The indices of the element (row, col) of an operand broadcast to the
/// scores (the mask, an extra operand; `broadcast` its plan flags) for query
/// batch indices `qIdx` (broadcast dims read 0).
SmallVector<Value> scoreOperandIndices(OpBuilder &b, Location loc,
                                       const SdpaPlan &plan,
                                       ArrayRef<bool> broadcast,
                                       ValueRange qIdx, Value row, Value col);

/// What the score_mod region reads besides the score: the query batch
/// indices (scalars), the row and column (index, or vector of index) and one
/// element (or vector of elements) per extra operand.
struct ScoreModInputs {
  ValueRange batch;
  Value row, col;
  SmallVector<Value> extras;
};

/// The contract's score step: scale, the score_mod region, additive mask,
/// boolean mask, causal and window, sequence lengths. `raw` is q.k (compute
/// type), a scalar or a vector of scores; `maskElem` (or null) the mask
/// element(s) of the same shape; `row`/`col` the query row and key column
/// (index, or vector of index of the same shape; only read with a band or
/// `seqKeep`); `mod` what the region reads (only read when `op` has one);
/// `seqKeep` (buildSeqKeep, or null without lengths) the real positions.
Value buildMaskedScore(OpBuilder &b, Location loc, const SdpaPlan &plan,
                       SdpaOp op, Value raw, Value maskElem, Value row,
                       Value col, const ScoreModInputs &mod,
                       Value seqKeep = Value());

/// The subtrahend of the online softmax for a running max `m` (scalar or
/// vector): `m`, or 0 when `m` is -inf, so that exp(s - m) never computes
/// -inf - -inf.
Value buildSafeMax(OpBuilder &b, Location loc, Value m);

/// The sink of the query row whose batch indices are `qIdx` (the head is
/// the last), read from the sinks buffer in the compute type.
Value loadSink(OpBuilder &b, Location loc, const SdpaPlan &plan,
               Value sinks, ValueRange qIdx);

/// The result element of an online softmax from a row's accumulator `acc`,
/// sum `l` and max `m` (compute type): acc / l; where m stayed -inf (every
/// score -inf) NaN, or with safe_softmax `acc` itself (0 when every p was
/// 0, NaN when a NaN score passed: the max skips NaN, p does not); 0 when
/// there are no keys (S = 0: the chain's p . v is an empty sum). With a
/// `sink` (loadSink; the plan has sinks) the sink joins the row once, here:
/// M = max(m, sink), acc and l rescaled by exp(m - M), l += exp(sink - M),
/// so a row whose scores are all -inf gives 0 (NaN only when the sink is
/// -inf too). The flash and decode lowerings end every row with it.
Value buildOnlineSoftmaxResult(OpBuilder &b, Location loc,
                               const SdpaPlan &plan, Value acc, Value l,
                               Value m, Value sink = Value());

/// max(x, y) as `x > y ? x : y` (one vmaxps on x86): skips a NaN `x`
/// instead of propagating it as arith.maximumf would. A row with a NaN
/// score still ends NaN: p = exp(NaN - m) = NaN, hence l and acc are NaN.
Value buildMaxIgnoringNaN(OpBuilder &b, Location loc, Value x, Value y);

/// True when the decode lowering (head dim along the lanes, keys split
/// across work items) beats flash, which puts query rows along the lanes:
/// a static L of at most half the target's compute-type lanes.
bool prefersDecode(const SdpaPlan &plan,
                   const AttnCpuLoweringOptions &options);

/// The lowerings (SdpaMathToCpu.cpp, SdpaFlashToCpu.cpp,
/// SdpaDecodeToCpu.cpp).
Value lowerSdpaMath(OpBuilder &b, Location loc, SdpaOp op,
                    const SdpaPlan &plan);
Value lowerSdpaFlash(OpBuilder &b, Location loc, SdpaOp op,
                     const SdpaPlan &plan,
                     const AttnCpuLoweringOptions &options);
Value lowerSdpaDecode(OpBuilder &b, Location loc, SdpaOp op,
                      const SdpaPlan &plan,
                      const AttnCpuLoweringOptions &options);

} // namespace mlir::attn::cpu

#endif // LIB_CONVERSION_ATTNTOCPU_SDPAPLAN_H
