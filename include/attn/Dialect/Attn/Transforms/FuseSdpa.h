//===- FuseSdpa.h - attention chains into attn.sdpa -------------*- C++ -*-===//
//
// The fusion as upstream writes fusions: an analysis that returns the match
// or the reason there is none (`matchAttention`), a transform that rewrites
// one match (`fuseAttention`), patterns with a control callback
// (`populateFuseSdpaPatterns`) and the thin pass `attn-fuse-sdpa`.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_FUSESDPA_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_FUSESDPA_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <optional>
#include <string>
#include <tuple>

namespace mlir::attn {

/// How a matched chain becomes attn.sdpa.
enum class SdpaForm {
  /// Every step is the contract's scale, mask operand, is_causal or
  /// masked_value: the form the CUDA kernels and the fast CPU paths run.
  Attributes,
  /// The steps between the two matmuls go, op by op, into a score_mod
  /// region (chains the attributes cannot express exactly).
  ScoreMod
};

/// Classifies constant boolean masks, caching by attribute so that a mask
/// constant shared by many blocks is scanned once (keeps the pass linear).
class MaskClassifier {
public:
  /// `fillPolarity`: the mask is true where positions are masked out.
  std::optional<MaskBand> classify(DenseElementsAttr attr, int64_t l,
                                   int64_t s, bool fillPolarity);

private:
  DenseMap<std::tuple<const void *, int64_t, int64_t, int>,
           std::optional<MaskBand>>
      cache;
};

/// One attention chain, found by `matchAttention`: everything the rewrite
/// needs and nothing it creates.
struct AttentionMatch {
  /// attn.softmax, or attn.safe_softmax (the sdpa gets `safe_softmax`).
  SoftmaxOpInterface softmax;
  MatmulOp scoresMatmul, outputMatmul;
  /// The scores the chain ends with: the softmax input or, with attention
  /// sinks, the scores piece of the softmax input (`scoresReader` reads it:
  /// the softmax, or the op joining the sink column to it).
  Value scoresIn;
  Operation *scoresReader = nullptr;
  /// Attention sinks: the softmax runs over the scores joined with one
  /// column per head (`sinks`: where that column is broadcast from, every
  /// dim 1 but the head dim) and `sinkSlice` (tensor.extract_slice) drops
  /// that column from the weights. Null without sinks.
  Value sinks;
  Operation *sinkSlice = nullptr;
  /// softmax -> [sink slice] -> [dropout] -> [cast back from the f32
  /// upcast] -> matmul.
  DropoutOp dropout;
  CastOp weightsCast;
  Value query, key, keyTransposed, value;
  double dropoutP = 0.0;
  SdpaForm form = SdpaForm::Attributes;
  /// Why the attribute form did not apply (ScoreMod only).
  std::string attributeFormMiss;

  /// Attributes form.
  double scale = 1.0;
  /// is_causal and the sliding window: constant or index-built band masks.
  MaskBand band;
  /// Boolean masks, each with "true means the position takes part".
  SmallVector<std::pair<Value, bool>> boolMasks;
  Value additiveMask;
  std::optional<APFloat> fill;

  /// ScoreMod form: the scalar factor peeled from q and k and, for f32/f64
  /// scores, from the chain's leading scale steps (applied as `scale`); the
  /// value the region's score argument stands for; and the ops between it
  /// and the softmax in program order.
  double qkScale = 1.0;
  Value regionInput;
  /// The value the region yields: the softmax input, or the scores before
  /// trailing band masks that became is_causal/window attributes.
  Value regionOutput;
  SmallVector<Operation *> chain;
};

/// Matches the attention chain rooted at `softmax`. On failure `reason`
/// says which check failed (for remarks and match-failure notes). Pure
/// analysis: creates nothing. `classifier` may be shared across calls.
FailureOr<AttentionMatch> matchAttention(SoftmaxOpInterface softmax,
                                         MaskClassifier &classifier,
                                         std::string &reason);

/// Replaces the matched chain by one attn.sdpa and returns it.
FailureOr<SdpaOp> fuseAttention(RewriterBase &rewriter,
                                AttentionMatch &match);

/// Decides per match whether to fuse (true) or keep the chain.
using FuseSdpaControlFn = std::function<bool(AttentionMatch &)>;

/// The fusion pattern (rooted at attn.softmax and attn.safe_softmax) and the
/// exact local rewrites that normalise chains for it.
void populateFuseSdpaPatterns(RewritePatternSet &patterns,
                              MaskClassifier &classifier,
                              FuseSdpaControlFn control = nullptr);

/// True when `v` is computed from positions only: attn.iota, splat
/// constants and elementwise ops over them (PositionMasks.cpp).
bool isPositionExpression(Value v);

/// True when `v` is an elementwise expression (ScalarElementwiseOpInterface
/// ops) that reads positions (attn.iota) somewhere: a mask the lowerings can
/// compute per tile from the indices and its other operands (the leaves),
/// instead of reading it materialised ([L, S] per batch and head).
bool isPositionDependent(Value v);

/// The operands of the position-dependent expression `v` that are neither
/// positions, splat constants nor position-dependent themselves: the
/// tensors a score_mod region computing `v` reads (extra operands).
void collectPositionLeaves(Value v, llvm::SetVector<Value> &leaves);

/// The band that a boolean position mask keeps (`keeps`: true means the
/// position takes part) over scores of rank `scoresRank`: `j - i` compared
/// with a constant (from iotas along the query row i and the key column j,
/// added, subtracted, negated, all exact in their float type); nullopt for
/// any other mask.
std::optional<MaskBand> bandOfPositionMask(Value mask, bool keeps,
                                           int64_t scoresRank);

/// Emits the scalar value of the position expression `v` at the score
/// position `indices` (one index per score dim), memoised in `scalars`. For
/// a position-dependent expression, `scalars` must map its leaves
/// (collectPositionLeaves) to their elements.
Value buildPositionScalar(OpBuilder &b, Location loc, Value v,
                          ValueRange indices, IRMapping &scalars);

/// The input of `v` when `v` is a linalg.generic that only broadcasts it
/// (NumPy-aligned, static size-1 dims read at 0), else null
/// (PositionMasks.cpp).
Value getBroadcastSource(Value v);

/// Patterns on attn.sdpa operands (PositionMasks.cpp): a mask or extra
/// operand that broadcasts a smaller tensor is read before the broadcast,
/// and an additive mask computed from positions becomes a score_mod region
/// that computes it per tile.
void populateSdpaMaskOperandPatterns(RewritePatternSet &patterns);

/// The normalisation that moves reshapes of batch dims (tensor.expand_shape,
/// tensor.collapse_shape, attn.reshape) out of attention chains, so that the
/// chain runs in one shape (BatchReshapes.cpp).
void populateBatchReshapeNormalizationPatterns(RewritePatternSet &patterns);

/// Why a reshape left in a chain blocks the fusion ("" for other ops).
std::string explainReshapeMiss(Operation *op);

/// True when a softmax is plausibly attention: its input comes from an
/// attn.matmul through elementwise ops, or its result feeds one. The pass
/// explains (and counts) the ones of these it did not fuse.
bool isPlausiblyAttention(SoftmaxOpInterface softmax);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_FUSESDPA_H
