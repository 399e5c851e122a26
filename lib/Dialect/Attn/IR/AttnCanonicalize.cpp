//===- AttnCanonicalize.cpp - canonicalization patterns of attn.sdpa ------===//
//
// Constant masks that say nothing beyond causality (or nothing at all) are
// folded into attributes, and an inverted boolean mask into the other mask
// polarity, so that lowerings see the cheapest equivalent op.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

MaskBand MaskBand::intersect(const MaskBand &other) const {
  auto tighter = [](std::optional<int64_t> a, std::optional<int64_t> b) {
    if (!a || !b)
      return a ? a : b;
    return std::optional<int64_t>(std::min(*a, *b));
  };
  return {tighter(left, other.left), tighter(right, other.right)};
}

/// The band that the kept columns of one l x s slice form: per row the kept
/// columns must be one interval [lo, hi], and a row that does not reach
/// column 0 (or s - 1) fixes `left` (or `right`); rows that keep nothing
/// fix neither. Verified against every element by the caller.
static std::optional<MaskBand> deriveBand(function_ref<bool(int64_t)> keep,
                                          int64_t l, int64_t s) {
  MaskBand band;
  bool anyKept = false;
  for (int64_t i = 0; i < l; ++i) {
    int64_t lo = 0;
    while (lo < s && !keep(i * s + lo))
      ++lo;
    if (lo == s)
      continue;
    anyKept = true;
    int64_t hi = lo;
    while (hi + 1 < s && keep(i * s + hi + 1))
      ++hi;
    if (lo > 0) {
      if (band.left && *band.left != i - lo)
        return std::nullopt;
      band.left = i - lo;
    }
    if (hi < s - 1) {
      if (band.right && *band.right != hi - i)
        return std::nullopt;
      band.right = hi - i;
    }
  }
  if (!anyKept)
    return std::nullopt;
  return band;
}

std::optional<MaskBand>
mlir::attn::classifyConstantBoolMask(DenseElementsAttr attr, int64_t l,
                                     int64_t s, bool keepValue) {
  auto values = attr.getValues<bool>();
  auto keep = [&](int64_t i) { return values[i] == keepValue; };
  if (attr.isSplat())
    return keep(0) ? std::optional<MaskBand>(MaskBand{}) : std::nullopt;
  auto type = cast<RankedTensorType>(attr.getType());
  int64_t n = type.getNumElements(), rank = type.getRank();
  if (llvm::all_of(llvm::seq<int64_t>(0, n), keep))
    return MaskBand{};
  // A band needs the mask to span the full L x S (no broadcast there).
  if (rank < 2 || ShapedType::isDynamic(l) || ShapedType::isDynamic(s) ||
      type.getDimSize(rank - 2) != l || type.getDimSize(rank - 1) != s)
    return std::nullopt;
  std::optional<MaskBand> band = deriveBand(keep, l, s);
  if (!band)
    return std::nullopt;
  for (int64_t idx = 0; idx < n; ++idx) {
    int64_t j = idx % s, i = (idx / s) % l;
    if (keep(idx) != band->keeps(i, j))
      return std::nullopt;
  }
  return band;
}

Value mlir::attn::getInvertedOperand(Value v) {
  auto xori = v.getDefiningOp<arith::XOrIOp>();
  if (!xori)
    return Value();
  auto isAllTrue = [](Value c) {
    DenseElementsAttr attr;
    return matchPattern(c, m_Constant(&attr)) && attr.isSplat() &&
           attr.getElementType().isInteger(1) && attr.getSplatValue<bool>();
  };
  if (isAllTrue(xori.getRhs()))
    return xori.getLhs();
  if (isAllTrue(xori.getLhs()))
    return xori.getRhs();
  return Value();
}

/// Sets `band` on `op` in its canonical spelling: `right == 0` is
/// is_causal, the rest are window attributes.
void mlir::attn::setBand(SdpaOp op, const MaskBand &band) {
  Builder b(op.getContext());
  bool causal = band.right && *band.right == 0;
  op.setIsCausal(causal);
  if (band.left)
    op.setWindowLeftAttr(b.getI64IntegerAttr(*band.left));
  else
    op.removeWindowLeftAttr();
  if (band.right && !causal)
    op.setWindowRightAttr(b.getI64IntegerAttr(*band.right));
  else
    op.removeWindowRightAttr();
}

namespace {
/// attn.sdpa with a constant mask that keeps everything (true, or 0.0 when
/// additive) drops the mask; a boolean one that is exactly a band (causal,
/// a sliding window) becomes is_causal and window attributes (both replace
/// the masked scores by masked_value).
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
    std::optional<MaskBand> band;
    if (op.hasBoolMask()) {
      band = classifyConstantBoolMask(attr, l, s,
                                      /*keepValue=*/!op.maskDrops());
    } else {
      // Additive: only an all-zero mask goes (s + 0 == s, NaN and infinities
      // included). A 0/-inf band does NOT become attributes: the chain
      // computes s + (-inf), which is NaN where s is NaN or +inf, while
      // is_causal and windows replace s outright.
      auto isZero = [](const APFloat &v) { return v.isZero(); };
      bool allZero = attr.isSplat()
                         ? isZero(attr.getSplatValue<APFloat>())
                         : llvm::all_of(attr.getValues<APFloat>(), isZero);
      if (allZero)
        band = MaskBand{};
    }
    if (!band)
      return rewriter.notifyMatchFailure(op, "mask is no band");
    rewriter.modifyOpInPlace(op, [&] {
      op.getMaskMutable().clear();
      op.setMaskPolarity(MaskPolarity::keep);
      setBand(op, op.getBand().intersect(*band));
    });
    return success();
  }
};

/// One spelling per band: `window_right = 0` is is_causal, and a
/// window_right that is_causal already implies goes.
struct CanonicalizeBand : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> right = op.getWindowRight();
    if (!right || (*right != 0 && !op.getIsCausal()))
      return rewriter.notifyMatchFailure(op, "the band is canonical");
    rewriter.modifyOpInPlace(op, [&] { setBand(op, op.getBand()); });
    return success();
  }
};

/// masked_value only matters with a boolean mask, is_causal or a window.
struct DropUnusedMaskedValue : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMaskedValue() || op.hasBoolMask() || !op.getBand().keepsAll())
      return rewriter.notifyMatchFailure(op, "masked_value is in use");
    rewriter.modifyOpInPlace(op, [&] { op.removeMaskedValueAttr(); });
    return success();
  }
};

/// A boolean mask that is `arith.xori %m, true` (either operand order) is
/// `%m` with the other polarity: the lowerings then read `%m` as it is
/// instead of computing the inversion.
struct FoldMaskInversion : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value source =
        op.hasBoolMask() ? getInvertedOperand(op.getMask()) : Value();
    if (!source)
      return rewriter.notifyMatchFailure(op, "the mask is no inversion");
    rewriter.modifyOpInPlace(op, [&] {
      op.getMaskMutable().assign(source);
      op.setMaskPolarity(op.maskDrops() ? MaskPolarity::keep
                                        : MaskPolarity::drop);
    });
    return success();
  }
};
} // namespace

/// Replaces `op` by the same attn.sdpa without its score_mod region, with
/// `mask` (or none) as its mask.
static void replaceWithoutScoreMod(PatternRewriter &rewriter, SdpaOp op,
                                   Value mask) {
  SdpaChanges changes;
  changes.mask = mask;
  changes.extras.emplace();
  changes.scoreMod = SdpaChanges::Region::None;
  rewriter.setInsertionPoint(op);
  rewriter.replaceOp(op, op.cloneWith(rewriter, changes));
}

namespace {
/// A score_mod region's extra operands that it does not read go, and a
/// region that yields its score unchanged goes too.
struct SimplifyScoreMod : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Block *block = op.getScoreModBlock();
    if (!block)
      return rewriter.notifyMatchFailure(op, "no score_mod region");
    unsigned firstExtra = block->getNumArguments() - op.getExtras().size();
    auto yield = cast<YieldOp>(block->getTerminator());
    bool identity = yield.getScore() == block->getArgument(0);
    SmallVector<unsigned> unused;
    for (unsigned i = firstExtra; i < block->getNumArguments(); ++i)
      if (block->getArgument(i).use_empty())
        unused.push_back(i);
    if (!identity && unused.empty())
      return rewriter.notifyMatchFailure(op, "the region is in use");
    if (identity) {
      replaceWithoutScoreMod(rewriter, op, op.getMask());
      return success();
    }
    rewriter.modifyOpInPlace(op, [&] {
      for (unsigned i : llvm::reverse(unused)) {
        op.getExtrasMutable().erase(i - firstExtra);
        block->eraseArgument(i);
      }
    });
    return success();
  }
};

/// A region that only adds an extra operand to the score (`s + e`, `e`
/// widened exactly first or not) is the additive mask operand when the op
/// has no mask: the contract adds the mask right after the region.
struct ScoreModAddToMask : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Block *block = op.getScoreModBlock();
    if (!block || op.getMask() || op.getExtras().size() != 1)
      return rewriter.notifyMatchFailure(op, "not a one-extra region");
    auto add = cast<YieldOp>(block->getTerminator())
                   .getScore()
                   .getDefiningOp<arith::AddFOp>();
    if (!add || std::distance(block->begin(), block->end()) > 3)
      return rewriter.notifyMatchFailure(op, "the region is not s + e");
    Value score = block->getArgument(0);
    Value extra = block->getArgument(block->getNumArguments() - 1);
    Value other = add.getLhs() == score   ? add.getRhs()
                  : add.getRhs() == score ? add.getLhs()
                                          : Value();
    if (auto ext = other ? other.getDefiningOp<arith::ExtFOp>() : nullptr)
      other = ext.getIn();
    if (other != extra || !isa<FloatType>(extra.getType()))
      return rewriter.notifyMatchFailure(op, "the region is not s + e");
    replaceWithoutScoreMod(rewriter, op, op.getExtras().front());
    return success();
  }
};
} // namespace

void SdpaOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<FoldConstantSdpaMask, FoldMaskInversion, CanonicalizeBand,
              DropUnusedMaskedValue, SimplifyScoreMod, ScoreModAddToMask>(
      context);
}
