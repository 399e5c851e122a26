//===- FuseSdpa.cpp - fuse attention chains into attn.sdpa ----------------===//
//
// `attn-opt --attn-fuse-sdpa`: normalise, then match one core structure per
// softmax,
//
//   matmul(q', kT') -> {scale | bool mask | additive mask}* -> softmax(-1)
//                   -> [dropout] -> matmul(., v)
//
// and replace it by one attn.sdpa computing the same function. Every guard
// is an explicit check with a reason; the reasons become match-failure notes
// and, with `explain=true`, remarks on the softmax that was not fused.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <tuple>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSESDPA
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static std::string str(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

static std::string opName(Operation *op) {
  return ("'" + op->getName().getStringRef() + "'").str();
}

/// The value of a scalar float constant (a rank-0 or splat `arith.constant`),
/// rounded to `elementType` as an elementwise op using it would round it.
static std::optional<APFloat> getScalarConstant(Value v, Type elementType) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  APFloat f = attr.getSplatValue<APFloat>();
  bool losesInfo = false;
  f.convert(cast<FloatType>(elementType).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &losesInfo);
  return f;
}

static APFloat roundTo(double value, Type elementType) {
  APFloat f(value);
  bool losesInfo = false;
  f.convert(cast<FloatType>(elementType).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &losesInfo);
  return f;
}

/// The type elementwise ops compute in (f32 for f16/bf16, as the lowerings
/// do): a rank-0 scale constant of another float type takes part at this
/// precision, and the product is rounded to the element type once.
static Type computeType(Type elementType) {
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  return elementType;
}

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// If `v` is `x * c`, `c * x` or `x / c` with a scalar constant `c` and the
/// type of `x` (no broadcasting up), returns `x` and multiplies `factor` by
/// `c` (or `1/c`).
static Value peelScalarScale(Value v, double &factor) {
  while (Operation *def = v.getDefiningOp()) {
    Type et = computeType(tensorType(v).getElementType());
    Value x;
    std::optional<APFloat> c;
    bool divide = false;
    if (auto mul = dyn_cast<MulOp>(def)) {
      if ((c = getScalarConstant(mul.getRhs(), et)))
        x = mul.getLhs();
      else if ((c = getScalarConstant(mul.getLhs(), et)))
        x = mul.getRhs();
    } else if (auto div = dyn_cast<DivOp>(def)) {
      if ((c = getScalarConstant(div.getRhs(), et))) {
        x = div.getLhs();
        divide = true;
      }
    }
    if (!x || x.getType() != v.getType() || !c->isFiniteNonZero())
      return v;
    double d = c->convertToDouble();
    factor *= divide ? 1.0 / d : d;
    v = x;
  }
  return v;
}

/// True for a transpose of the last two dims.
static bool isLastTwoTranspose(TransposeOp op) {
  int64_t rank = op.getInput().getType().getRank();
  return op.getNormalizedDims() == std::make_pair(rank - 2, rank - 1);
}

/// Exact conversions for the softmax upcast: the f16/bf16 softmax is defined
/// as computed in f32 and rounded once, which is what the cast chain does.
static bool isSoftmaxUpcast(Type narrow, Type wide) {
  return (narrow.isF16() || narrow.isBF16()) && wide.isF32();
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

namespace {
/// cast(softmax(cast(x : f16 -> f32)) : f32 -> f16) -> softmax(x : f16), the
/// `.float().softmax(-1).type_as(q)` idiom. Exact by the softmax contract.
struct FoldSoftmaxUpcast : public OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp outer,
                                PatternRewriter &rewriter) const override {
    auto softmax = outer.getInput().getDefiningOp<SoftmaxOp>();
    if (!softmax)
      return rewriter.notifyMatchFailure(outer, "input is not a softmax");
    auto inner = softmax.getInput().getDefiningOp<CastOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "softmax input is not a cast");
    if (inner.getInput().getType() != outer.getType() ||
        !isSoftmaxUpcast(outer.getType().getElementType(),
                         inner.getType().getElementType()))
      return rewriter.notifyMatchFailure(outer, "not an f16/bf16 -> f32 -> "
                                                "f16/bf16 round trip");
    if (!softmax.getResult().hasOneUse())
      return rewriter.notifyMatchFailure(outer, "f32 softmax has other users");
    rewriter.replaceOpWithNewOp<SoftmaxOp>(outer, outer.getType(),
                                           inner.getInput(), softmax.getDim());
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// The attention matcher
//===----------------------------------------------------------------------===//

namespace {
/// Classifies constant boolean masks, caching by attribute so that a mask
/// constant shared by many blocks is scanned once (keeps the pass linear).
class MaskClassifier {
public:
  /// `fillPolarity`: the mask is true where positions are masked out.
  ConstantMaskKind classify(DenseElementsAttr attr, int64_t l, int64_t s,
                            bool fillPolarity) {
    auto key = std::make_tuple(attr.getAsOpaquePointer(), l, s,
                               static_cast<int>(fillPolarity));
    auto [it, inserted] = cache.try_emplace(key, ConstantMaskKind::Other);
    if (inserted)
      it->second = classifyConstantBoolMask(attr, l, s, !fillPolarity);
    return it->second;
  }

private:
  DenseMap<std::tuple<const void *, int64_t, int64_t, int>, ConstantMaskKind>
      cache;
};

/// One op between the first matmul and the softmax.
struct Step {
  enum Kind { Scale, BoolMask, AddMask } kind;
  Operation *op;
  /// The scores flowing through the step.
  Value input;
  /// Scale: the factor c (the step computes x * c or x / c), in the compute
  /// type of the scores' element type. BoolMask: the fill value in the
  /// scores' element type.
  APFloat constant = APFloat(0.0);
  bool divide = false;
  /// BoolMask: the i1 mask; AddMask: the float mask.
  Value mask;
  /// BoolMask: true when `mask` is true where scores are kept (where(m, x, c)).
  bool maskKeeps = false;
};

/// Everything the rewrite needs, found by `matchAttention`.
struct AttentionMatch {
  SoftmaxOp softmax;
  MatmulOp scoresMatmul, outputMatmul;
  DropoutOp dropout;
  Value query, key, keyTransposed, value;
  double scale = 1.0;
  double dropoutP = 0.0;
  bool isCausal = false;
  /// Boolean masks (polarity in the bool) still to combine into one.
  SmallVector<std::pair<Value, bool>> boolMasks;
  /// Per entry of `boolMasks` (before classification): applied after the
  /// additive mask in the chain.
  SmallVector<bool> boolMaskAfterAdditive;
  /// A constant causal mask was applied before the additive mask.
  bool causalBeforeAdditive = false;
  Value additiveMask;
  std::optional<APFloat> fill;
};
} // namespace

/// What the result of `def` is called in "has N users" explanations.
static std::string valueName(Operation *def) {
  if (isa<MatmulOp>(def))
    return "scores";
  if (isa<MulOp, DivOp>(def))
    return "scaled scores";
  if (isa<MaskedFillOp, WhereOp, AddOp>(def))
    return "masked scores";
  return "scores from " + opName(def);
}

/// Splits the operands of a binary op into (scores, other): the scores are
/// the operand defined by an op of the chain (preferring lhs), else the one
/// of type `type`.
static std::pair<Value, Value> splitScoresOperand(Value lhs, Value rhs,
                                                  Type type) {
  auto isChainOp = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def &&
           isa<MatmulOp, MulOp, DivOp, MaskedFillOp, WhereOp, AddOp>(def);
  };
  if (isChainOp(lhs))
    return {lhs, rhs};
  if (isChainOp(rhs))
    return {rhs, lhs};
  if (rhs.getType() == type && lhs.getType() != type)
    return {rhs, lhs};
  return {lhs, rhs};
}

/// Recognises one step between the scores matmul and the softmax.
static LogicalResult classifyStep(Operation *op, Step &step,
                                  std::string &why) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type et = resultType.getElementType();
  step.op = op;
  if (auto mul = dyn_cast<MulOp>(op)) {
    auto [x, c] = splitScoresOperand(mul.getLhs(), mul.getRhs(), resultType);
    std::optional<APFloat> value = getScalarConstant(c, computeType(et));
    if (!value) {
      why = "the scores are multiplied by a value that is not a scalar "
            "constant";
      return failure();
    }
    if (x.getType() != resultType) {
      why = "the scale broadcasts the scores to a bigger shape";
      return failure();
    }
    step.kind = Step::Scale;
    step.input = x;
    step.constant = *value;
    return success();
  }
  if (auto div = dyn_cast<DivOp>(op)) {
    std::optional<APFloat> value =
        getScalarConstant(div.getRhs(), computeType(et));
    if (!value) {
      why = "the scores are divided by a value that is not a scalar constant";
      return failure();
    }
    if (div.getLhs().getType() != resultType) {
      why = "the scale broadcasts the scores to a bigger shape";
      return failure();
    }
    step.kind = Step::Scale;
    step.input = div.getLhs();
    step.constant = *value;
    step.divide = true;
    return success();
  }
  if (auto fill = dyn_cast<MaskedFillOp>(op)) {
    step.kind = Step::BoolMask;
    step.input = fill.getInput();
    step.mask = fill.getMask();
    step.constant = roundTo(fill.getValue().convertToDouble(), et);
    return success();
  }
  if (auto where = dyn_cast<WhereOp>(op)) {
    step.kind = Step::BoolMask;
    step.mask = where.getCond();
    std::optional<APFloat> a = getScalarConstant(where.getA(), et);
    std::optional<APFloat> b = getScalarConstant(where.getB(), et);
    if (where.getA().getType() == resultType && b) {
      step.input = where.getA();
      step.constant = *b;
      step.maskKeeps = true;
      return success();
    }
    if (where.getB().getType() == resultType && a) {
      step.input = where.getB();
      step.constant = *a;
      return success();
    }
    if (where.getA().getType() != resultType &&
        where.getB().getType() != resultType) {
      why = "the where broadcasts the scores to a bigger shape";
      return failure();
    }
    why = "the other branch of the where is not a scalar constant";
    return failure();
  }
  if (auto add = dyn_cast<AddOp>(op)) {
    auto [x, mask] = splitScoresOperand(add.getLhs(), add.getRhs(), resultType);
    if (x.getType() != resultType) {
      why = "the additive mask broadcasts the scores to a bigger shape";
      return failure();
    }
    auto maskType = tensorType(mask);
    if (maskType.getRank() == 0) {
      why = "the scores get a scalar added, not a mask";
      return failure();
    }
    if (maskType.getElementType() != et) {
      why = "the additive mask's element type " +
            str(maskType.getElementType()) + " differs from the scores' " +
            str(et);
      return failure();
    }
    step.kind = Step::AddMask;
    step.input = x;
    step.mask = mask;
    return success();
  }
  if (auto castOp = dyn_cast<CastOp>(op)) {
    why = "the scores change element type from " +
          str(castOp.getInput().getType().getElementType()) + " to " +
          str(et) + " before the softmax, without a matching cast back";
    return failure();
  }
  why = "the scores come from " + opName(op) +
        ", not from a matmul through scale and mask steps";
  return failure();
}

static std::string usersText(Value v) {
  return std::to_string(std::distance(v.getUses().begin(), v.getUses().end())) +
         " users";
}

/// True for a constant float tensor whose entries are all -inf or in
/// [-16, 16]: added to f16/bf16 scores, it changes them by no more than the
/// scores' own rounding scale, so the chain and attn.sdpa differ by rounding.
static bool isSmallAdditiveConstant(Value mask) {
  DenseFPElementsAttr attr;
  if (!matchPattern(mask, m_Constant(&attr)))
    return false;
  auto small = [](const APFloat &f) {
    if (f.isInfinity() && f.isNegative())
      return true;
    return f.isFinite() && std::fabs(f.convertToDouble()) <= 16.0;
  };
  if (attr.isSplat())
    return small(attr.getSplatValue<APFloat>());
  return llvm::all_of(attr.getValues<APFloat>(), small);
}

/// True for a constant float tensor with no +inf and no NaN entry.
static bool isConstantWithoutPosInfOrNaN(Value mask) {
  DenseFPElementsAttr attr;
  if (!matchPattern(mask, m_Constant(&attr)))
    return false;
  auto ok = [](const APFloat &f) {
    return !f.isNaN() && !(f.isInfinity() && !f.isNegative());
  };
  if (attr.isSplat())
    return ok(attr.getSplatValue<APFloat>());
  return llvm::all_of(attr.getValues<APFloat>(), ok);
}

/// Matches the attention structure rooted at `softmax`, or says why not.
/// Pure analysis: creates nothing.
static FailureOr<AttentionMatch> matchAttention(SoftmaxOp softmax,
                                                MaskClassifier &classifier,
                                                std::string &why) {
  AttentionMatch m;
  m.softmax = softmax;
  auto scoresType = softmax.getInput().getType();
  int64_t rank = scoresType.getRank();
  Type et = scoresType.getElementType();
  if (rank < 2) {
    why = "the softmax input has rank " + std::to_string(rank) + " (< 2)";
    return failure();
  }
  if (softmax.getNormalizedDim() != rank - 1) {
    why = "the softmax is over dim " + std::to_string(softmax.getDim()) +
          ", not the last dim";
    return failure();
  }

  // Weights side: softmax -> [dropout] -> matmul(., v).
  Value weights = softmax.getResult();
  if (!weights.hasOneUse()) {
    why = "attention weights have " + usersText(weights);
    return failure();
  }
  Operation *user = *weights.getUsers().begin();
  if (auto dropout = dyn_cast<DropoutOp>(user)) {
    m.dropout = dropout;
    if (dropout.getTrain())
      m.dropoutP = dropout.getP().convertToDouble();
    weights = dropout.getResult();
    if (!weights.hasOneUse()) {
      why = "dropped-out attention weights have " + usersText(weights);
      return failure();
    }
    user = *weights.getUsers().begin();
  }
  m.outputMatmul = dyn_cast<MatmulOp>(user);
  if (!m.outputMatmul) {
    why = "attention weights feed " + opName(user) + ", not a matmul";
    return failure();
  }
  if (m.outputMatmul.getLhs() != weights) {
    why = "attention weights are the right operand of the second matmul "
          "(expected weights . v)";
    return failure();
  }
  m.value = m.outputMatmul.getRhs();

  // Scores side: walk up from the softmax to the first matmul.
  SmallVector<Step> steps;
  Value x = softmax.getInput();
  while (true) {
    Operation *def = x.getDefiningOp();
    if (!def) {
      why = "the scores are a block argument, not a matmul";
      return failure();
    }
    if (!x.hasOneUse()) {
      why = "the " + valueName(def) + " have " + usersText(x);
      return failure();
    }
    if (auto matmul = dyn_cast<MatmulOp>(def)) {
      m.scoresMatmul = matmul;
      break;
    }
    Step step;
    if (failed(classifyStep(def, step, why)))
      return failure();
    x = step.input;
    steps.push_back(step);
  }

  // Replay the steps in program order, checking each against the
  // contract's order: scale, then the additive mask, then boolean masks and
  // causality (replace with the fill). Out-of-order steps that are still
  // exact are accepted here and checked once the masks are classified.
  for (const Step &step : llvm::reverse(steps)) {
    switch (step.kind) {
    case Step::Scale: {
      if (m.additiveMask) {
        why = "a scale is applied after the additive mask";
        return failure();
      }
      double c = step.constant.convertToDouble();
      if (m.fill) {
        // Masked positions hold the fill, which this step scales as well.
        if (!(c > 0.0)) {
          why = "a non-positive scale is applied after the boolean mask";
          return failure();
        }
        // As the chain computes it: in the compute type, rounded once to the
        // element type (a wider scalar can push a finite fill to -inf).
        APFloat f = *m.fill;
        bool losesInfo = false;
        f.convert(step.constant.getSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
        if (step.divide)
          f.divide(step.constant, APFloat::rmNearestTiesToEven);
        else
          f.multiply(step.constant, APFloat::rmNearestTiesToEven);
        f.convert(m.fill->getSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
        m.fill = f;
      }
      m.scale *= step.divide ? 1.0 / c : c;
      break;
    }
    case Step::BoolMask: {
      // After an additive mask, only a constant causal mask is exact (the
      // contract adds first, then replaces); any other boolean mask then
      // fails below, as attn.sdpa takes one mask operand.
      if (m.fill && !m.fill->bitwiseIsEqual(step.constant)) {
        why = "two boolean masks fill different values";
        return failure();
      }
      m.fill = step.constant;
      m.boolMasks.push_back({step.mask, step.maskKeeps});
      m.boolMaskAfterAdditive.push_back(static_cast<bool>(m.additiveMask));
      break;
    }
    case Step::AddMask:
      if (m.additiveMask) {
        why = "the scores get two additive masks";
        return failure();
      }
      m.additiveMask = step.mask;
      break;
    }
  }
  if (m.fill && m.fill->isNaN()) {
    why = "the masked positions are filled with NaN";
    return failure();
  }
  if (m.fill && m.fill->isInfinity() && !m.fill->isNegative()) {
    why = "the masked positions are filled with +inf";
    return failure();
  }

  // q and k^T, with scalar scales folded into the scale.
  auto scoresMatmulType = m.scoresMatmul.getType();
  m.query = peelScalarScale(m.scoresMatmul.getLhs(), m.scale);
  Value kt = peelScalarScale(m.scoresMatmul.getRhs(), m.scale);
  if (auto transpose = kt.getDefiningOp<TransposeOp>();
      transpose && isLastTwoTranspose(transpose))
    m.key = peelScalarScale(transpose.getInput(), m.scale);
  else
    m.keyTransposed = kt;
  if (!std::isfinite(m.scale)) {
    why = "the combined scale is not finite";
    return failure();
  }

  // Grouped-query attention: un-expand k and v together.
  Value kv = m.key ? m.key : m.keyTransposed;
  auto kRep = kv.getDefiningOp<RepeatInterleaveOp>();
  auto vRep = m.value.getDefiningOp<RepeatInterleaveOp>();
  if (kRep && vRep && rank >= 3 && kRep.getNormalizedDim() == rank - 3 &&
      vRep.getNormalizedDim() == rank - 3 &&
      kRep.getRepeats() == vRep.getRepeats()) {
    (m.key ? m.key : m.keyTransposed) = kRep.getInput();
    m.value = vRep.getInput();
  }

  // Shapes attn.sdpa can represent.
  auto qType = tensorType(m.query);
  auto kType = tensorType(m.key ? m.key : m.keyTransposed);
  auto vType = tensorType(m.value);
  if (scoresMatmulType != scoresType) {
    why = "the scale/mask steps change the scores type";
    return failure();
  }
  if (qType.getRank() != rank || kType.getRank() != rank ||
      vType.getRank() != rank) {
    why = "query, key and value do not all have the scores' rank " +
          std::to_string(rank);
    return failure();
  }
  if (vType.getElementType() != et || qType.getElementType() != et) {
    why = "query, key and value element types differ from the scores' " +
          str(et);
    return failure();
  }
  ArrayRef<int64_t> qs = qType.getShape(), ks = kType.getShape(),
                    vs = vType.getShape();
  // A `?` dim never broadcasts at run time (the dialect's rule, checked by
  // the lowering of the chain and of attn.sdpa alike): it equals its
  // partner. Only a static 1 broadcasts.
  auto sameSize = [](int64_t a, int64_t b) {
    return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
  };
  for (int64_t i = 0; i < rank - 2; ++i) {
    if (!sameSize(ks[i], vs[i])) {
      why = "key and value batch dims differ (attn.sdpa needs them equal)";
      return failure();
    }
    bool divides = i == rank - 3 && !ShapedType::isDynamic(ks[i]) &&
                   !ShapedType::isDynamic(qs[i]) && ks[i] > 0 &&
                   qs[i] % ks[i] == 0;
    if (!sameSize(ks[i], qs[i]) && ks[i] != 1 && !divides) {
      why = "the query batch dims broadcast against the key's";
      return failure();
    }
  }
  SmallVector<int64_t> resultShape(qs.drop_back(1));
  resultShape.push_back(vs.back());
  if (RankedTensorType::get(resultShape, et) != m.outputMatmul.getType()) {
    why = "the query batch dims broadcast up in the matmuls (the fused op's "
          "result would be " +
          str(RankedTensorType::get(resultShape, et)) + ", not " +
          str(m.outputMatmul.getType()) + ")";
    return failure();
  }

  // Boolean masks: constant causal ones become is_causal, all-keep ones go.
  int64_t l = qs[rank - 2];
  int64_t s = scoresType.getShape()[rank - 1];
  SmallVector<std::pair<Value, bool>> rest;
  for (auto [i, entry] : llvm::enumerate(m.boolMasks)) {
    auto [mask, keeps] = entry;
    DenseElementsAttr attr;
    if (matchPattern(mask, m_Constant(&attr))) {
      ConstantMaskKind kind = classifier.classify(attr, l, s, !keeps);
      if (kind == ConstantMaskKind::Causal) {
        m.isCausal = true;
        m.causalBeforeAdditive |=
            m.additiveMask && !m.boolMaskAfterAdditive[i];
        continue;
      }
      if (kind == ConstantMaskKind::KeepsAll)
        continue;
    }
    if (tensorType(mask).getRank() == 0) {
      why = "the boolean mask is a scalar";
      return failure();
    }
    rest.push_back({mask, keeps});
  }
  for (auto &[mask, keeps] : rest) {
    if (mask.getType() != rest.front().first.getType()) {
      why = "boolean masks of different shapes cannot be combined into one";
      return failure();
    }
  }
  // A mask that must be inverted (xor with an all-true constant) or combined
  // with another one (andi) needs a static shape: a dense constant cannot
  // have `?` dims, and two `?`-shaped masks may broadcast differently.
  if (!rest.empty() && (rest.size() > 1 || !rest.front().second) &&
      !tensorType(rest.front().first).hasStaticShape()) {
    why = "a dynamic-shaped boolean mask would have to be inverted or "
          "combined";
    return failure();
  }
  m.boolMasks = std::move(rest);
  if (!m.boolMasks.empty() && m.additiveMask) {
    why = "both a boolean and an additive mask (attn.sdpa takes one mask)";
    return failure();
  }
  if (m.boolMasks.empty() && !m.isCausal)
    m.fill.reset();
  // The chain fills the future positions, then adds the mask there too
  // (fill + mask); attn.sdpa adds the mask, then replaces the future
  // positions by masked_value. Equal only when the fill is -inf and the mask
  // holds no +inf or NaN (-inf + +inf is NaN in the chain).
  if (m.causalBeforeAdditive) {
    if (!m.fill->isInfinity()) {
      SmallString<16> fill;
      m.fill->toString(fill);
      why = "a causal mask with the finite fill " + fill.str().str() +
            " followed by an additive mask (attn.sdpa replaces the future "
            "positions by masked_value after adding the mask)";
      return failure();
    }
    if (!isConstantWithoutPosInfOrNaN(m.additiveMask)) {
      why = "a causal mask followed by an additive mask that is not a "
            "constant free of +inf and NaN (the chain gives NaN where such a "
            "mask meets a filled position; attn.sdpa replaces the position "
            "after adding the mask)";
      return failure();
    }
  }
  // f16/bf16: the chain adds the mask in the element type (rounding every
  // masked score), attn.sdpa adds it in f32. With large finite mask values
  // (-1e4, the dtype's lowest, as Hugging Face pads) a row of masked scores
  // rounds to equal values in the chain (a uniform average) but keeps the
  // scores' differences in f32 (a softmax-weighted one). Only a constant
  // mask of small values and -inf is the same function up to rounding.
  if (m.additiveMask && (et.isF16() || et.isBF16()) &&
      !isSmallAdditiveConstant(m.additiveMask)) {
    why = "the additive mask is not a constant of values in [-16, 16] or "
          "-inf: the chain adds it in " + str(et) +
          ", attn.sdpa in f32 (large finite mask values round the scores "
          "away)";
    return failure();
  }
  return m;
}

/// `not mask` for an i1 tensor: folds constants and double negations.
static Value invertMask(PatternRewriter &rewriter, Location loc, Value mask) {
  auto type = tensorType(mask);
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
  auto isAllTrue = [](Value v) {
    DenseElementsAttr c;
    return matchPattern(v, m_Constant(&c)) && c.isSplat() &&
           c.getSplatValue<bool>();
  };
  if (auto xori = mask.getDefiningOp<arith::XOrIOp>()) {
    if (isAllTrue(xori.getRhs()))
      return xori.getLhs();
    if (isAllTrue(xori.getLhs()))
      return xori.getRhs();
  }
  Value allTrue = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(type, true));
  return arith::XOrIOp::create(rewriter, loc, mask, allTrue);
}

/// Replaces the matched chain with attn.sdpa.
static void rewriteAttention(AttentionMatch &m,
                             PatternRewriter &rewriter) {
  MatmulOp out = m.outputMatmul;
  Location loc = rewriter.getFusedLoc(
      {m.scoresMatmul.getLoc(), m.softmax.getLoc(), out.getLoc()});
  rewriter.setInsertionPoint(out);
  Value key = m.key;
  if (!key)
    key = TransposeOp::create(rewriter, loc, m.keyTransposed, -2, -1);
  Value mask = m.additiveMask;
  for (auto [boolMask, keeps] : m.boolMasks) {
    Value keep = keeps ? boolMask : invertMask(rewriter, loc, boolMask);
    mask = mask ? arith::AndIOp::create(rewriter, loc, mask, keep).getResult()
                : keep;
  }
  FloatAttr maskedValue;
  if (m.fill && !(m.fill->isInfinity() && m.fill->isNegative()))
    maskedValue = rewriter.getF64FloatAttr(m.fill->convertToDouble());
  auto sdpa = SdpaOp::create(rewriter, loc, out.getType(), m.query, key,
                             m.value, mask, rewriter.getF64FloatAttr(m.scale),
                             m.isCausal, APFloat(m.dropoutP), maskedValue,
                             m.dropoutP > 0.0 ? m.dropout.getSeedAttr() : nullptr);
  rewriter.replaceOp(out, sdpa.getResult());
  // Dropout is not Pure, so dead-code elimination would keep it.
  if (m.dropout && m.dropout->use_empty())
    rewriter.eraseOp(m.dropout);
  if (m.softmax->use_empty())
    rewriter.eraseOp(m.softmax);
}

namespace {
struct FuseAttentionIntoSdpa : public OpRewritePattern<SoftmaxOp> {
  FuseAttentionIntoSdpa(MLIRContext *context, MaskClassifier &classifier,
                        int64_t &numFused)
      : OpRewritePattern(context), classifier(classifier), numFused(numFused) {
  }

  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<AttentionMatch> match =
        matchAttention(softmax, classifier, why);
    if (failed(match))
      return rewriter.notifyMatchFailure(softmax, why);
    rewriteAttention(*match, rewriter);
    ++numFused;
    return success();
  }

  MaskClassifier &classifier;
  int64_t &numFused;
};
} // namespace

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
  if (depth == 0 ||
      !isa<MulOp, DivOp, AddOp, SubOp, MaskedFillOp, WhereOp, CastOp>(def))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return comesFromMatmul(operand, depth - 1);
  });
}

/// The rule for remarks: a softmax is plausibly attention when its input
/// comes from a matmul through at most 6 elementwise ops, or its result
/// feeds a matmul directly or through one dropout/cast/mul/div.
static bool isPlausiblyAttention(SoftmaxOp softmax) {
  if (comesFromMatmul(softmax.getInput(), 6))
    return true;
  for (Operation *user : softmax->getUsers()) {
    if (isa<MatmulOp>(user))
      return true;
    if (isa<DropoutOp, CastOp, MulOp, DivOp>(user) &&
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
      patterns.add<FoldSoftmaxUpcast>(context);
      addAttnCanonicalizations(patterns, context);
      // Convergence is not required: unfused IR is still correct.
      (void)applyPatternsGreedily(root, std::move(patterns), config);
    }

    // Phase 2: match and fuse, canonicalizing the new attn.sdpa ops.
    MaskClassifier classifier;
    int64_t fused = 0;
    {
      RewritePatternSet patterns(context);
      patterns.add<FuseAttentionIntoSdpa>(context, classifier, fused);
      addAttnCanonicalizations(patterns, context);
      (void)applyPatternsGreedily(root, std::move(patterns), config);
    }
    numFused += fused;

    // Phase 3: count (and explain) the near misses.
    int64_t missed = 0;
    root->walk([&](SoftmaxOp softmax) {
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
