//===- FuseSdpa.cpp - fuse attention chains into attn.sdpa ----------------===//
//
// `attn-opt --attn-fuse-sdpa`: normalise (exact local rewrites, folders),
// then match one attention chain per softmax (AttentionMatch.cpp) and
// replace it by one attn.sdpa computing the same function: in attribute form
// where the contract's attributes express the steps exactly, else with the
// steps raised op by op into a score_mod region.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/FuseSdpa.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSESDPA
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

namespace {
/// cast(softmax(cast(x : f16 -> f32)) : f32 -> f16) -> softmax(x : f16), the
/// `.float().softmax(-1).type_as(q)` idiom. Exact by the softmax contract.
/// The same for attn.safe_softmax (`SoftmaxTy`).
template <typename SoftmaxTy>
struct FoldSoftmaxUpcast : public OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp outer,
                                PatternRewriter &rewriter) const override {
    auto softmax = outer.getInput().template getDefiningOp<SoftmaxTy>();
    if (!softmax)
      return rewriter.notifyMatchFailure(outer, "input is not a softmax");
    auto inner = softmax.getInput().template getDefiningOp<CastOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "softmax input is not a cast");
    Type narrow = outer.getType().getElementType();
    Type wide = inner.getType().getElementType();
    if (inner.getInput().getType() != outer.getType() ||
        !(narrow.isF16() || narrow.isBF16()) || !wide.isF32())
      return rewriter.notifyMatchFailure(outer, "not an f16/bf16 -> f32 -> "
                                                "f16/bf16 round trip");
    if (!softmax.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(outer, "f32 softmax has other users");
    rewriter.replaceOpWithNewOp<SoftmaxTy>(outer, outer.getType(),
                                           inner.getInput(), softmax.getDim());
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// The transform
//===----------------------------------------------------------------------===//

static Value invertMask(RewriterBase &rewriter, Location loc, Value mask) {
  auto type = cast<RankedTensorType>(mask.getType());
  DenseElementsAttr attr;
  if (matchPattern(mask, m_Constant(&attr))) {
    SmallVector<bool> inverted;
    inverted.reserve(type.getNumElements());
    if (attr.isSplat()) {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(type, !attr.getSplatValue<bool>()));
    }
    for (bool b : attr.getValues<bool>())
      inverted.push_back(!b);
    return arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(type, ArrayRef<bool>(inverted)));
  }
  if (Value source = getInvertedOperand(mask))
    return source;
  Value allTrue = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(type, true));
  return arith::XOrIOp::create(rewriter, loc, mask, allTrue);
}

/// The single mask operand of the attribute form and its polarity: the
/// additive mask, or the boolean masks in the first one's polarity, as
/// written (a masked_fill mask drops, a where condition keeps): keep masks
/// and-ed, drop masks or-ed, a mask of the other polarity inverted.
static std::pair<Value, MaskPolarity>
buildMaskOperand(RewriterBase &rewriter, Location loc, AttentionMatch &m) {
  if (m.boolMasks.empty())
    return {m.additiveMask, MaskPolarity::keep};
  assert(!m.additiveMask && "the attribute form has one kind of mask");
  bool drops = !m.boolMasks.front().second;
  Value mask;
  for (auto [boolMask, keeps] : m.boolMasks) {
    Value v = keeps != drops ? boolMask : invertMask(rewriter, loc, boolMask);
    if (!mask)
      mask = v;
    else if (drops)
      mask = arith::OrIOp::create(rewriter, loc, mask, v);
    else
      mask = arith::AndIOp::create(rewriter, loc, mask, v);
  }
  return {mask, drops ? MaskPolarity::drop : MaskPolarity::keep};
}

/// A splat constant operand becomes a scalar constant inside the region.
static std::optional<TypedAttr> getSplatScalar(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return cast<TypedAttr>(attr.getSplatValue<Attribute>());
}

/// The score_mod region of the ScoreMod form: the score rounded to the
/// scores' element type (as the matmul rounds it), then every chain op's
/// scalar function in program order; other operands are extra operands,
/// except splat constants, which become scalar constants, and expressions
/// of positions (attn.iota masks, also over other tensors: a band over a
/// padding mask), which are computed from the indices and read only their
/// leaves as extra operands.
static void buildScoreModRegion(RewriterBase &rewriter, Location loc,
                                AttentionMatch &m, SdpaOp sdpa,
                                SmallVectorImpl<Value> &extras) {
  Type et = m.scoresMatmul.getType().getElementType();
  Type ct = getComputeType(et);
  int64_t rank = m.scoresMatmul.getType().getRank();
  llvm::SetVector<Value> extraSet;
  for (Operation *op : m.chain)
    for (Value v : op->getOperands()) {
      bool derived = v == m.regionInput ||
                     llvm::is_contained(m.chain, v.getDefiningOp());
      if (derived || getSplatScalar(v) || isPositionExpression(v))
        continue;
      if (isPositionDependent(v))
        collectPositionLeaves(v, extraSet);
      else
        extraSet.insert(v);
    }
  extras.append(extraSet.begin(), extraSet.end());
  DenseMap<Value, unsigned> extraIndex;
  for (auto [i, v] : llvm::enumerate(extras))
    extraIndex[v] = i;
  SmallVector<Type> argTypes{ct};
  argTypes.append(rank, rewriter.getIndexType());
  for (Value v : extras)
    argTypes.push_back(cast<RankedTensorType>(v.getType()).getElementType());
  SmallVector<Location> argLocs(argTypes.size(), loc);
  Region &region = sdpa.getScoreMod().front();
  OpBuilder::InsertionGuard guard(rewriter);
  Block *block = rewriter.createBlock(&region, {}, argTypes, argLocs);
  IRMapping scalars;
  scalars.map(m.regionInput,
              castFloat(rewriter, loc, block->getArgument(0), et));
  for (auto [v, i] : extraIndex)
    scalars.map(v, block->getArgument(1 + rank + i));
  for (Operation *op : m.chain) {
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      if (Value s = scalars.lookupOrNull(v))
        operands.push_back(s);
      else if (isPositionExpression(v) || isPositionDependent(v))
        operands.push_back(buildPositionScalar(
            rewriter, loc, v, block->getArguments().slice(1, rank), scalars));
      else
        operands.push_back(
            arith::ConstantOp::create(rewriter, loc, *getSplatScalar(v)));
    }
    auto scalarOp = cast<ScalarElementwiseOpInterface>(op);
    scalars.map(op->getResult(0),
                scalarOp.buildScalar(rewriter, op->getLoc(), operands));
  }
  Value score = scalars.lookupOrNull(m.regionOutput);
  if (!score)
    score = scalars.lookup(m.regionInput);
  YieldOp::create(rewriter, loc, castFloat(rewriter, loc, score, ct));
}

FailureOr<SdpaOp> mlir::attn::fuseAttention(RewriterBase &rewriter,
                                            AttentionMatch &m) {
  MatmulOp out = m.outputMatmul;
  Location loc = rewriter.getFusedLoc(
      {m.scoresMatmul.getLoc(), m.softmax.getLoc(), out.getLoc()});
  rewriter.setInsertionPoint(out);
  Value key = m.key;
  if (!key)
    key = TransposeOp::create(rewriter, loc, m.keyTransposed, -2, -1);
  bool attributes = m.form == SdpaForm::Attributes;
  auto [mask, polarity] = attributes
                              ? buildMaskOperand(rewriter, loc, m)
                              : std::make_pair(Value(), MaskPolarity::keep);
  // The sinks' broadcast source, [1..., H, 1, 1], as [H].
  Value sinks = m.sinks;
  if (sinks && cast<RankedTensorType>(sinks.getType()).getRank() != 1) {
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(
        0, cast<RankedTensorType>(sinks.getType()).getRank()));
    sinks = tensor::CollapseShapeOp::create(
        rewriter, loc, sinks, ArrayRef<ReassociationIndices>{all});
  }
  auto sdpa = SdpaOp::create(rewriter, loc, out.getType(), m.query, key,
                             m.value, mask, /*extras=*/{},
                             /*withScoreMod=*/!attributes);
  sdpa.setScaleAttr(rewriter.getF64FloatAttr(attributes ? m.scale : m.qkScale));
  sdpa.setMaskPolarity(polarity);
  if (m.fill && !(m.fill->isInfinity() && m.fill->isNegative()))
    sdpa.setMaskedValueAttr(
        rewriter.getF64FloatAttr(m.fill->convertToDouble()));
  if (m.dropoutP > 0.0) {
    sdpa.setDropoutP(APFloat(m.dropoutP));
    sdpa.setSeedAttr(m.dropout.getSeedAttr());
  }
  sdpa.setSafeSoftmax(isa<SafeSoftmaxOp>(m.softmax));
  setBand(sdpa, m.band);
  if (sinks)
    rewriter.modifyOpInPlace(sdpa,
                             [&] { sdpa.getSinksMutable().assign(sinks); });
  if (!attributes) {
    SmallVector<Value> extras;
    buildScoreModRegion(rewriter, loc, m, sdpa, extras);
    rewriter.modifyOpInPlace(sdpa,
                             [&] { sdpa.getExtrasMutable().append(extras); });
  }
  rewriter.replaceOp(out, sdpa.getResult());
  // The weights side is dead now; erase it so that the chain goes too.
  for (Operation *op : {m.weightsCast.getOperation(), m.dropout.getOperation(),
                        m.sinkSlice, m.softmax.getOperation()})
    if (op && op->use_empty())
      rewriter.eraseOp(op);
  return sdpa;
}

namespace {
struct FuseAttentionIntoSdpa
    : public OpInterfaceRewritePattern<SoftmaxOpInterface> {
  FuseAttentionIntoSdpa(MLIRContext *context, MaskClassifier &classifier,
                        FuseSdpaControlFn control)
      : OpInterfaceRewritePattern(context), classifier(classifier),
        control(std::move(control)) {}

  LogicalResult matchAndRewrite(SoftmaxOpInterface softmax,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<AttentionMatch> match = matchAttention(softmax, classifier, why);
    if (failed(match))
      return rewriter.notifyMatchFailure(softmax, why);
    if (control && !control(*match))
      return rewriter.notifyMatchFailure(softmax, "declined by the control");
    if (failed(fuseAttention(rewriter, *match)))
      return failure();
    return success();
  }

  MaskClassifier &classifier;
  FuseSdpaControlFn control;
};
} // namespace

void mlir::attn::populateFuseSdpaPatterns(RewritePatternSet &patterns,
                                          MaskClassifier &classifier,
                                          FuseSdpaControlFn control) {
  patterns.add<FuseAttentionIntoSdpa>(patterns.getContext(), classifier,
                                      std::move(control));
}

//===----------------------------------------------------------------------===//
// Explanations
//===----------------------------------------------------------------------===//

/// True when `v` comes from an attn.matmul through at most `depth` attn
/// elementwise ops (any operand).
static bool comesFromMatmul(Value v, int depth) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<MatmulOp>(def))
    return true;
  // tensor.insert_slice: torch.cat of the scores with other logits
  // (attention sinks).
  if (depth == 0 ||
      !isa<MulOp, DivOp, AddOp, SubOp, MaskedFillOp, WhereOp, CastOp, ReshapeOp,
           tensor::ExpandShapeOp, tensor::CollapseShapeOp,
           tensor::InsertSliceOp>(def))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return comesFromMatmul(operand, depth - 1);
  });
}

/// The rule for remarks: a softmax is plausibly attention when its input
/// comes from a matmul through at most 6 elementwise ops, reshapes or
/// concatenations, or its result feeds a matmul directly or through one
/// dropout/cast/mul/div/reshape/slice (a sink's column dropped).
bool mlir::attn::isPlausiblyAttention(SoftmaxOpInterface softmax) {
  if (comesFromMatmul(softmax.getInput(), 6))
    return true;
  for (Operation *user : softmax->getUsers()) {
    if (isa<MatmulOp>(user))
      return true;
    if (isa<DropoutOp, CastOp, MulOp, DivOp, ReshapeOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp, tensor::ExtractSliceOp>(user) &&
        llvm::any_of(user->getUsers(),
                     [](Operation *u) { return isa<MatmulOp>(u); }))
      return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The canonicalization patterns of every attn op (sdpa's constant masks).
static void addAttnCanonicalizations(RewritePatternSet &patterns,
                                     MLIRContext *context) {
  context->getLoadedDialect<AttnDialect>()->getCanonicalizationPatterns(
      patterns);
  for (RegisteredOperationName name : context->getRegisteredOperations())
    if (&name.getDialect() == context->getLoadedDialect<AttnDialect>())
      name.getCanonicalizationPatterns(patterns, context);
}

namespace {
struct AttnFuseSdpaPass
    : public mlir::attn::impl::AttnFuseSdpaBase<AttnFuseSdpaPass> {
  using AttnFuseSdpaBase::AttnFuseSdpaBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    Operation *root = getOperation();
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);

    // Phase 1: normalise (exact local rewrites, folders, canonicalization).
    {
      RewritePatternSet patterns(context);
      patterns
          .add<FoldSoftmaxUpcast<SoftmaxOp>, FoldSoftmaxUpcast<SafeSoftmaxOp>>(
              context);
      populateBatchReshapeNormalizationPatterns(patterns);
      addAttnCanonicalizations(patterns, context);
      // Convergence is not required: unfused IR is still correct.
      (void)applyPatternsGreedily(root, std::move(patterns), config);
    }

    // Phase 2: match and fuse, canonicalizing the new attn.sdpa ops. With
    // explain, each fusion says which form it took.
    MaskClassifier classifier;
    int64_t fused = 0;
    {
      RewritePatternSet patterns(context);
      populateSdpaMaskOperandPatterns(patterns);
      populateFuseSdpaPatterns(
          patterns, classifier, [&](AttentionMatch &m) {
            ++fused;
            if (!explain)
              return true;
            StringRef sinks = m.sinks ? " with attention sinks" : "";
            if (m.form == SdpaForm::Attributes)
              m.softmax.emitRemark()
                  << "fused into attn.sdpa (attribute form)" << sinks;
            else
              m.softmax.emitRemark()
                  << "fused into attn.sdpa with a score_mod region (no "
                     "attribute form: "
                  << m.attributeFormMiss << ")" << sinks;
            return true;
          });
      addAttnCanonicalizations(patterns, context);
      (void)applyPatternsGreedily(root, std::move(patterns), config);
    }
    numFused += fused;

    // Phase 3: count (and explain) the near misses.
    int64_t missed = 0;
    root->walk([&](SoftmaxOpInterface softmax) {
      if (!isPlausiblyAttention(softmax))
        return;
      ++missed;
      if (!explain)
        return;
      std::string why;
      if (succeeded(matchAttention(softmax, classifier, why)))
        why = "the rewrite did not apply";
      softmax.emitRemark() << "not fused: " << why;
    });
    numMissed += missed;
    // Debian's LLVM compiles llvm::Statistic out (NDEBUG), so
    // -mlir-pass-statistics shows nothing there: report-counts gives the same
    // counts as a remark.
    if (reportCounts)
      root->emitRemark() << "attn-fuse-sdpa: fused " << fused
                         << " attention chain(s), " << missed
                         << " softmax(es) that look like attention not fused";
  }
};
} // namespace
