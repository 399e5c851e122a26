//===- PositionMasks.cpp - masks built from attn.iota positions -----------===//
//
// Masks that models build from positions (`torch.arange` compared: causal,
// sliding windows; ALiBi biases) are functions of the score indices, not
// data. The fusion turns the ones that are a band into is_causal and window
// attributes, and copies the others into the score_mod region, where the
// lowerings compute them per tile instead of reading an [L, S] tensor.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/FuseSdpa.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// The splat value of a float constant, or nullopt.
static std::optional<APFloat> getSplat(Value v) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>();
}

/// The score dim (of a rank-`scoresRank` score tensor) that dim `d` of a
/// rank-`rank` operand broadcasts to (NumPy aligns trailing dims).
static int64_t scoreDimOf(int64_t d, int64_t rank, int64_t scoresRank) {
  return d + scoresRank - rank;
}

/// isPositionExpression with a cache, so that a DAG that reuses values is
/// walked once per value (not once per path).
static bool isPositionExpressionCached(Value v,
                                       DenseMap<Value, bool> &cache) {
  if (auto it = cache.find(v); it != cache.end())
    return it->second;
  cache[v] = false; // No cycles in SSA; guards re-entry all the same.
  Operation *def = v.getDefiningOp();
  bool result = false;
  if (def && isa<IotaOp>(def)) {
    result = true;
  } else if (def && isa<ScalarElementwiseOpInterface>(def)) {
    result = llvm::all_of(def->getOperands(),
                          [&](Value operand) {
                            return getSplat(operand) ||
                                   isPositionExpressionCached(operand, cache);
                          }) &&
             llvm::any_of(def->getOperands(), [&](Value operand) {
               return cache.lookup(operand);
             });
  }
  cache[v] = result;
  return result;
}

bool mlir::attn::isPositionExpression(Value v) {
  DenseMap<Value, bool> cache;
  return isPositionExpressionCached(v, cache);
}

/// isPositionDependent with a cache (one visit per value of a DAG).
static bool isPositionDependentCached(Value v, DenseMap<Value, bool> &cache) {
  if (auto it = cache.find(v); it != cache.end())
    return it->second;
  cache[v] = false;
  Operation *def = v.getDefiningOp();
  bool result = def && isa<ScalarElementwiseOpInterface>(def) &&
                llvm::any_of(def->getOperands(), [&](Value operand) {
                  return operand.getDefiningOp<IotaOp>() ||
                         isPositionDependentCached(operand, cache);
                });
  cache[v] = result;
  return result;
}

bool mlir::attn::isPositionDependent(Value v) {
  DenseMap<Value, bool> cache;
  return isPositionDependentCached(v, cache);
}

void mlir::attn::collectPositionLeaves(Value v,
                                       llvm::SetVector<Value> &leaves) {
  DenseMap<Value, bool> cache;
  DenseSet<Value> visited;
  SmallVector<Value> worklist{v};
  while (!worklist.empty()) {
    Value x = worklist.pop_back_val();
    if (!visited.insert(x).second || getSplat(x) || x.getDefiningOp<IotaOp>())
      continue;
    if (!isPositionDependentCached(x, cache)) {
      leaves.insert(x);
      continue;
    }
    for (Value operand : x.getDefiningOp()->getOperands())
      worklist.push_back(operand);
  }
}

namespace {
/// `ci * i + cj * j + c` over the query row i and key column j, with a
/// bound on its magnitude (to check that the float arithmetic is exact).
struct Affine {
  int64_t ci = 0, cj = 0;
  double c = 0.0;
  double bound = 0.0;
};
} // namespace

/// True when every integer of magnitude up to `bound` is exact in `type`.
static bool isExactUpTo(double bound, Type type) {
  unsigned precision = APFloat::semanticsPrecision(
      cast<FloatType>(getElementTypeOrSelf(type)).getFloatSemantics());
  return bound <= std::ldexp(1.0, precision);
}

/// `v` as an affine function of (i, j), computed exactly in its float type;
/// nullopt when it is not one (a batch position, a product, an inexact
/// step).
using AffineCache = DenseMap<Value, std::optional<Affine>>;

static std::optional<Affine> getAffineUncached(Value v, int64_t scoresRank,
                                               AffineCache &cache);

/// getAffine with a cache (one visit per value of a DAG).
static std::optional<Affine> getAffine(Value v, int64_t scoresRank,
                                       AffineCache &cache) {
  if (auto it = cache.find(v); it != cache.end())
    return it->second;
  cache[v] = std::nullopt;
  std::optional<Affine> result = getAffineUncached(v, scoresRank, cache);
  cache[v] = result;
  return result;
}

static std::optional<Affine> getAffineUncached(Value v, int64_t scoresRank,
                                               AffineCache &cache) {
  if (std::optional<APFloat> c = getSplat(v)) {
    double d = c->convertToDouble();
    if (!std::isfinite(d) || d != std::trunc(d))
      return std::nullopt;
    return Affine{0, 0, d, std::fabs(d)};
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  std::optional<Affine> result;
  if (auto iota = dyn_cast<IotaOp>(def)) {
    RankedTensorType type = iota.getType();
    int64_t d = iota.getDimension(), n = type.getDimSize(d);
    int64_t scoreDim = scoreDimOf(d, type.getRank(), scoresRank);
    if (n == 1)
      return Affine{};
    // A run-time size has no static bound: take the largest dim a tensor
    // can have (a petabyte of i8), so that sums of a few positions are
    // still known exact in f64, the only type such an iota may have.
    double bound = type.isDynamicDim(d) ? std::ldexp(1.0, 50) : double(n - 1);
    if (scoreDim == scoresRank - 2)
      return Affine{1, 0, 0.0, bound};
    if (scoreDim == scoresRank - 1)
      return Affine{0, 1, 0.0, bound};
    return std::nullopt;
  }
  if (isa<AddOp, SubOp>(def)) {
    std::optional<Affine> a = getAffine(def->getOperand(0), scoresRank, cache);
    std::optional<Affine> b = getAffine(def->getOperand(1), scoresRank, cache);
    if (!a || !b)
      return std::nullopt;
    int64_t sign = isa<SubOp>(def) ? -1 : 1;
    result = Affine{a->ci + sign * b->ci, a->cj + sign * b->cj,
                    a->c + sign * b->c, a->bound + b->bound};
  } else if (auto neg = dyn_cast<NegOp>(def)) {
    std::optional<Affine> a = getAffine(neg.getInput(), scoresRank, cache);
    if (!a)
      return std::nullopt;
    result = Affine{-a->ci, -a->cj, -a->c, a->bound};
  } else if (auto cast = dyn_cast<CastOp>(def)) {
    result = getAffine(cast.getInput(), scoresRank, cache);
  } else {
    return std::nullopt;
  }
  if (!result || !isExactUpTo(result->bound, v.getType()))
    return std::nullopt;
  return result;
}

std::optional<MaskBand> mlir::attn::bandOfPositionMask(Value mask, bool keeps,
                                                       int64_t scoresRank) {
  auto cmp = mask.getDefiningOp<CmpOp>();
  if (!cmp)
    return std::nullopt;
  AffineCache cache;
  std::optional<Affine> a = getAffine(cmp.getLhs(), scoresRank, cache);
  std::optional<Affine> b = getAffine(cmp.getRhs(), scoresRank, cache);
  // Both sides are exact integers, so the comparison is exact too.
  if (!a || !b)
    return std::nullopt;
  // d = lhs - rhs = ci * i + cj * j + c; a band needs d = +-(j - i) + c.
  int64_t ci = a->ci - b->ci, cj = a->cj - b->cj;
  double c = a->c - b->c;
  CmpPredicate pred = cmp.getPredicate();
  if (ci == 1 && cj == -1) {
    // lhs - rhs = -(j - i) + c: compare (j - i) - c against 0 with the
    // predicate mirrored.
    ci = -1;
    cj = 1;
    c = -c;
    switch (pred) {
    case CmpPredicate::lt: pred = CmpPredicate::gt; break;
    case CmpPredicate::le: pred = CmpPredicate::ge; break;
    case CmpPredicate::gt: pred = CmpPredicate::lt; break;
    case CmpPredicate::ge: pred = CmpPredicate::le; break;
    default: break;
    }
  }
  if (ci != -1 || cj != 1)
    return std::nullopt;
  // The kept set is {(i, j) : (j - i) + c pred 0}, i.e. j - i pred -c.
  int64_t k = static_cast<int64_t>(-c);
  // A mask that marks the dropped positions keeps the complement.
  if (!keeps) {
    switch (pred) {
    case CmpPredicate::lt: pred = CmpPredicate::ge; break;
    case CmpPredicate::le: pred = CmpPredicate::gt; break;
    case CmpPredicate::gt: pred = CmpPredicate::le; break;
    case CmpPredicate::ge: pred = CmpPredicate::lt; break;
    case CmpPredicate::eq: pred = CmpPredicate::ne; break;
    case CmpPredicate::ne: pred = CmpPredicate::eq; break;
    }
  }
  // j - i <= r is right = r; j - i >= -l is left = l.
  switch (pred) {
  case CmpPredicate::le: return MaskBand{std::nullopt, k};
  case CmpPredicate::lt: return MaskBand{std::nullopt, k - 1};
  case CmpPredicate::ge: return MaskBand{-k, std::nullopt};
  case CmpPredicate::gt: return MaskBand{-(k + 1), std::nullopt};
  case CmpPredicate::eq: return MaskBand{-k, k};
  case CmpPredicate::ne: return std::nullopt;
  }
  return std::nullopt;
}

Value mlir::attn::buildPositionScalar(OpBuilder &b, Location loc, Value v,
                                      ValueRange indices, IRMapping &scalars) {
  if (Value s = scalars.lookupOrNull(v))
    return s;
  int64_t scoresRank = indices.size();
  Value result;
  if (std::optional<APFloat> c = getSplat(v)) {
    result = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(tensorType(v).getElementType(), *c));
  } else if (auto iota = v.getDefiningOp<IotaOp>()) {
    RankedTensorType type = iota.getType();
    int64_t d = iota.getDimension();
    // A size-1 dim is position 0 whatever the score index (it broadcasts).
    Value position =
        type.getDimSize(d) == 1
            ? arith::ConstantIndexOp::create(b, loc, 0).getResult()
            : indices[scoreDimOf(d, type.getRank(), scoresRank)];
    result = iota.buildScalar(b, loc, position);
  } else {
    Operation *def = v.getDefiningOp();
    SmallVector<Value> operands;
    for (Value operand : def->getOperands())
      operands.push_back(
          buildPositionScalar(b, loc, operand, indices, scalars));
    result = cast<ScalarElementwiseOpInterface>(def).buildScalar(b, loc,
                                                                 operands);
  }
  scalars.map(v, result);
  return result;
}

//===----------------------------------------------------------------------===//
// attn.sdpa mask operands
//===----------------------------------------------------------------------===//
//
// Patterns on attn.sdpa ops themselves, whether the fusion or a frontend
// wrote them (the Python exporter writes F.scaled_dot_product_attention as
// attn.sdpa directly).

/// The body yields the input element; the input map reads each dim at the
/// result's index, NumPy-aligned, or at 0 for a static size-1 dim. The input
/// then broadcasts to whatever `v` broadcasts to.
Value mlir::attn::getBroadcastSource(Value v) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return nullptr;
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (body->getOperations().size() != 1 ||
      yield.getValues().front() != body->getArgument(0))
    return nullptr;
  OpOperand *input = generic.getDpsInputOperand(0);
  auto inType = dyn_cast<RankedTensorType>(input->get().getType());
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!inType || !maps.back().isIdentity() ||
      inType.getElementType() != tensorType(v).getElementType())
    return nullptr;
  int64_t n = maps.back().getNumDims(), r = inType.getRank();
  for (auto [k, expr] : llvm::enumerate(maps.front().getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    auto cst = dyn_cast<AffineConstantExpr>(expr);
    bool aligned = dim && dim.getPosition() == n - r + k;
    bool broadcast = cst && cst.getValue() == 0 && inType.getDimSize(k) == 1;
    if (!aligned && !broadcast)
      return nullptr;
  }
  return input->get();
}

namespace {
/// Replaces each mask and extra operand of attn.sdpa by what `Replace`
/// returns for it (built after the operand's definition), where it returns
/// a value: attn.sdpa broadcasts these operands to the scores itself, so
/// any value that broadcasts to the same scores may stand for them.
template <Value (*Replace)(PatternRewriter &, Value)>
struct ReplaceSdpaOperands : OpRewritePattern<SdpaOp> {
  using OpRewritePattern<SdpaOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    auto replace = [&](MutableOperandRange operands) {
      for (OpOperand &operand : operands) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointAfterValue(operand.get());
        Value replacement = Replace(rewriter, operand.get());
        if (!replacement)
          continue;
        rewriter.modifyOpInPlace(op, [&] { operand.set(replacement); });
        changed = true;
      }
    };
    replace(op.getMaskMutable());
    replace(op.getExtrasMutable());
    return success(changed);
  }
};
} // namespace

/// A mask or extra operand of attn.sdpa that is a broadcast of a smaller
/// tensor (transformers' `mask.expand(B, 1, L, S)` of a [B, 1, 1, S] padding
/// mask) is read before the broadcast: each score reads the same element,
/// from a tensor L times smaller.
static Value readBeforeBroadcast(PatternRewriter &, Value v) {
  return getBroadcastSource(v);
}

/// `v` computed elementwise with its splat constant operands read as
/// all-ones shapes (same rank, same element type: the result type rule does
/// not change), when that gives a smaller result; else null. T5 adds its
/// zero position bias [1, H, L, S] to a [B, 1, 1, S] padding mask: the sum
/// is a [B, 1, 1, S] value broadcast, which attn.sdpa broadcasts itself.
static Value shrinkSplatOperands(PatternRewriter &rewriter, Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<ScalarElementwiseOpInterface>(def) ||
      def->getNumResults() != 1 || def->getNumRegions() != 0)
    return nullptr;
  auto isOnes = [](ArrayRef<int64_t> shape) {
    return llvm::all_of(shape, [](int64_t d) { return d == 1; });
  };
  SmallVector<DenseElementsAttr> splats;
  SmallVector<int64_t> shape;
  for (Value operand : def->getOperands()) {
    DenseElementsAttr attr;
    ArrayRef<int64_t> dims = tensorType(operand).getShape();
    bool splat = matchPattern(operand, m_Constant(&attr)) && attr.isSplat() &&
                 !isOnes(dims);
    splats.push_back(splat ? attr : DenseElementsAttr());
    SmallVector<int64_t> read =
        splat ? SmallVector<int64_t>(dims.size(), 1) : llvm::to_vector(dims);
    FailureOr<SmallVector<int64_t>> b = broadcastShapes(shape, read);
    if (failed(b))
      return nullptr;
    shape = *b;
  }
  auto type = cast<RankedTensorType>(v.getType());
  if (shape == type.getShape())
    return nullptr;
  SmallVector<Value> operands;
  for (auto [operand, splat] : llvm::zip_equal(def->getOperands(), splats)) {
    if (!splat) {
      operands.push_back(operand);
      continue;
    }
    RankedTensorType t = tensorType(operand);
    auto ones = t.clone(SmallVector<int64_t>(t.getRank(), 1));
    operands.push_back(arith::ConstantOp::create(rewriter, def->getLoc(),
                                                 splat.resizeSplat(ones)));
  }
  OperationState state(def->getLoc(), def->getName(), operands,
                       {type.clone(shape)}, def->getAttrs());
  return rewriter.create(state)->getResult(0);
}

namespace {
/// An additive mask computed from positions (ALiBi biases, relative
/// position tables, a band over a padding mask) becomes a score_mod region
/// that adds it per score: the lowerings compute it per tile from the
/// indices and read only its leaves, instead of an [L, S] tensor per batch
/// and head. The region adds the mask converted to the compute type, as
/// the contract adds a float mask.
struct ComputePositionMaskPerTile : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    if (!mask || !op.hasAdditiveMask() || op.getScoreModBlock() ||
        !(isPositionDependent(mask) || isPositionExpression(mask)))
      return rewriter.notifyMatchFailure(op, "no additive position mask");
    llvm::SetVector<Value> leaves;
    collectPositionLeaves(mask, leaves);
    Location loc = op.getLoc();
    SdpaChanges changes;
    changes.mask = Value();
    changes.extras = SmallVector<Value>(leaves.begin(), leaves.end());
    changes.scoreMod = SdpaChanges::Region::Empty;
    SdpaOp sdpa = op.cloneWith(rewriter, changes);
    Type ct = getComputeType(op.getType().getElementType());
    int64_t rank = op.getType().getRank();
    SmallVector<Type> argTypes{ct};
    argTypes.append(rank, rewriter.getIndexType());
    for (Value leaf : leaves)
      argTypes.push_back(tensorType(leaf).getElementType());
    SmallVector<Location> argLocs(argTypes.size(), loc);
    OpBuilder::InsertionGuard guard(rewriter);
    Block *block =
        rewriter.createBlock(&sdpa.getScoreMod().front(), {}, argTypes, argLocs);
    IRMapping scalars;
    for (auto [i, leaf] : llvm::enumerate(leaves))
      scalars.map(leaf, block->getArgument(1 + rank + i));
    Value m = buildPositionScalar(rewriter, loc, mask,
                                  block->getArguments().slice(1, rank),
                                  scalars);
    Value score = arith::AddFOp::create(rewriter, loc, block->getArgument(0),
                                        castFloat(rewriter, loc, m, ct));
    YieldOp::create(rewriter, loc, score);
    rewriter.replaceOp(op, sdpa.getResult());
    return success();
  }
};
} // namespace

void mlir::attn::populateSdpaMaskOperandPatterns(RewritePatternSet &patterns) {
  patterns.add<ReplaceSdpaOperands<readBeforeBroadcast>,
               ReplaceSdpaOperands<shrinkSplatOperands>,
               ComputePositionMaskPerTile>(patterns.getContext());
}
