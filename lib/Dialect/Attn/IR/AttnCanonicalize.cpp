//===- AttnCanonicalize.cpp - canonicalization patterns of attn.sdpa ------===//
//
// Constant masks that say nothing beyond causality (or nothing at all) are
// folded into attributes, so that lowerings see the cheapest equivalent op.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"


using namespace mlir;
using namespace mlir::attn;

namespace {
/// How a constant mask relates to the causal (top-left, j <= i) pattern.
enum class MaskKind { Other, AllKeep, Causal };
} // namespace

/// Classifies a constant mask of shape [..., Lm, Sm] that broadcasts to
/// [..., L, S]. `keep(index)` says whether the flat element takes part.
/// Causal needs the mask to span the full L x S (no broadcast there).
static MaskKind classifyMask(DenseElementsAttr attr, int64_t l, int64_t s,
                             llvm::function_ref<bool(int64_t)> keep) {
  auto type = cast<RankedTensorType>(attr.getType());
  int64_t n = type.getNumElements();
  bool allKeep = true;
  for (int64_t i = 0; i < (attr.isSplat() ? 1 : n) && allKeep; ++i)
    allKeep = keep(i);
  if (allKeep)
    return MaskKind::AllKeep;
  int64_t rank = type.getRank();
  if (attr.isSplat() || rank < 2 || ShapedType::isDynamic(l) ||
      ShapedType::isDynamic(s) || type.getDimSize(rank - 2) != l ||
      type.getDimSize(rank - 1) != s)
    return MaskKind::Other;
  for (int64_t idx = 0; idx < n; ++idx) {
    int64_t j = idx % s, i = (idx / s) % l;
    if (keep(idx) != (j <= i))
      return MaskKind::Other;
  }
  return MaskKind::Causal;
}

namespace {
/// attn.sdpa with a constant mask that keeps everything (true, or 0.0 when
/// additive) drops the mask; a boolean one that is exactly causal becomes
/// is_causal (both replace the masked scores by masked_value).
struct FoldConstantSdpaMask : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    DenseElementsAttr attr;
    if (!mask || !matchPattern(mask, m_Constant(&attr)))
      return rewriter.notifyMatchFailure(op, "mask is not a constant");
    int64_t rank = op.getQuery().getType().getRank();
    int64_t l = op.getQuery().getType().getDimSize(rank - 2);
    int64_t s = op.getKey().getType().getDimSize(rank - 2);
    MaskKind kind;
    if (op.hasBoolMask()) {
      auto values = attr.getValues<bool>();
      kind = classifyMask(attr, l, s, [&](int64_t i) { return values[i]; });
    } else {
      // Additive: only an all-zero mask goes (s + 0 == s, NaN and infinities
      // included). A 0/-inf causal pattern does NOT become is_causal: the
      // chain computes s + (-inf), which is NaN where s is NaN or +inf,
      // while is_causal replaces s outright.
      auto values = attr.getValues<APFloat>();
      kind = classifyMask(attr, l, s,
                          [&](int64_t i) { return values[i].isZero(); });
      if (kind == MaskKind::Causal)
        kind = MaskKind::Other;
    }
    if (kind == MaskKind::Other)
      return rewriter.notifyMatchFailure(op, "mask is neither causal nor "
                                             "all-keep");
    rewriter.modifyOpInPlace(op, [&] {
      op.getMaskMutable().clear();
      if (kind == MaskKind::Causal)
        op.setIsCausal(true);
    });
    return success();
  }
};

/// masked_value only matters with a boolean mask or is_causal.
struct DropUnusedMaskedValue : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMaskedValue() || op.hasBoolMask() || op.getIsCausal())
      return rewriter.notifyMatchFailure(op, "masked_value is in use");
    rewriter.modifyOpInPlace(op, [&] { op.removeMaskedValueAttr(); });
    return success();
  }
};
} // namespace

void SdpaOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldConstantSdpaMask, DropUnusedMaskedValue>(context);
}
