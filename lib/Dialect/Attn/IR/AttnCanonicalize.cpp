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

ConstantMaskKind mlir::attn::classifyConstantBoolMask(DenseElementsAttr attr,
                                                      int64_t l, int64_t s,
                                                      bool keepValue) {
  auto values = attr.getValues<bool>();
  auto keep = [&](int64_t i) { return values[i] == keepValue; };
  if (attr.isSplat())
    return keep(0) ? ConstantMaskKind::KeepsAll : ConstantMaskKind::Other;
  auto type = cast<RankedTensorType>(attr.getType());
  int64_t n = type.getNumElements(), rank = type.getRank();
  if (llvm::all_of(llvm::seq<int64_t>(0, n), keep))
    return ConstantMaskKind::KeepsAll;
  // Causal needs the mask to span the full L x S (no broadcast there).
  if (rank < 2 || ShapedType::isDynamic(l) || ShapedType::isDynamic(s) ||
      type.getDimSize(rank - 2) != l || type.getDimSize(rank - 1) != s)
    return ConstantMaskKind::Other;
  for (int64_t idx = 0; idx < n; ++idx) {
    int64_t j = idx % s, i = (idx / s) % l;
    if (keep(idx) != (j <= i))
      return ConstantMaskKind::Other;
  }
  return ConstantMaskKind::Causal;
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
    ConstantMaskKind kind;
    if (op.hasBoolMask()) {
      kind = classifyConstantBoolMask(attr, l, s, /*keepValue=*/true);
    } else {
      // Additive: only an all-zero mask goes (s + 0 == s, NaN and infinities
      // included). A 0/-inf causal pattern does NOT become is_causal: the
      // chain computes s + (-inf), which is NaN where s is NaN or +inf,
      // while is_causal replaces s outright.
      auto isZero = [](const APFloat &v) { return v.isZero(); };
      bool allZero = attr.isSplat()
                         ? isZero(attr.getSplatValue<APFloat>())
                         : llvm::all_of(attr.getValues<APFloat>(), isZero);
      kind = allZero ? ConstantMaskKind::KeepsAll : ConstantMaskKind::Other;
    }
    if (kind == ConstantMaskKind::Other)
      return rewriter.notifyMatchFailure(op, "mask is neither causal nor "
                                             "all-keep");
    rewriter.modifyOpInPlace(op, [&] {
      op.getMaskAndExtrasMutable().erase(0);
      if (kind == ConstantMaskKind::Causal)
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
