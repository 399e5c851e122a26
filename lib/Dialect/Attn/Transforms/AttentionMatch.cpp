//===- AttentionMatch.cpp - find attention chains for attn-fuse-sdpa ------===//
//
// `matchAttention` in five units, each a screen or two:
//   0. attention sinks: the scores joined with a sink column per head, an
//      optional subtraction of the row max, the softmax, the slice that
//      drops the sink column;
//   1. the weights side: softmax -> [dropout] -> [cast back] -> matmul(., v);
//   2. the chain walk: the scores matmul and every op between it and the
//      softmax, with the users check;
//   3. operand binding and shape legality: q, k, v (scalar scales peeled,
//      k's transpose and repeat_interleave seen through);
//   4. the form: the attribute form (steps replayed in the contract's order,
//      masks classified, numeric guards), else the score_mod form (every op
//      has a scalar function, ScalarElementwiseOpInterface).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/FuseSdpa.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

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

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static APFloat roundTo(APFloat f, Type elementType) {
  bool losesInfo = false;
  f.convert(cast<FloatType>(elementType).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &losesInfo);
  return f;
}

/// The value of a scalar float constant (a rank-0 or splat `arith.constant`),
/// rounded to `elementType` as an elementwise op using it would round it.
static std::optional<APFloat> getScalarConstant(Value v, Type elementType) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return roundTo(attr.getSplatValue<APFloat>(), elementType);
}

/// If `v` is `x * c`, `c * x` or `x / c` with a scalar constant `c` and the
/// type of `x` (no broadcasting up), returns `x` and multiplies `factor` by
/// `c` (or `1/c`); else null.
static Value peelOneScalarScale(Value v, double &factor) {
  Operation *def = v.getDefiningOp();
  Type ct = getComputeType(tensorType(v).getElementType());
  Value x;
  std::optional<APFloat> c;
  bool divide = false;
  if (auto mul = dyn_cast_or_null<MulOp>(def)) {
    if ((c = getScalarConstant(mul.getRhs(), ct)))
      x = mul.getLhs();
    else if ((c = getScalarConstant(mul.getLhs(), ct)))
      x = mul.getRhs();
  } else if (auto div = dyn_cast_or_null<DivOp>(def)) {
    if ((c = getScalarConstant(div.getRhs(), ct))) {
      x = div.getLhs();
      divide = true;
    }
  }
  if (!x || x.getType() != v.getType() || !c->isFiniteNonZero())
    return nullptr;
  double d = c->convertToDouble();
  factor *= divide ? 1.0 / d : d;
  return x;
}

/// Peels every scalar scale off `v` (see peelOneScalarScale).
static Value peelScalarScale(Value v, double &factor) {
  while (Value x = peelOneScalarScale(v, factor))
    v = x;
  return v;
}

/// Exact conversions for the softmax upcast: the f16/bf16 softmax is defined
/// as computed in f32 and rounded once, which is what the cast chain does.
static bool isSoftmaxUpcast(Type narrow, Type wide) {
  return (narrow.isF16() || narrow.isBF16()) && wide.isF32();
}

static std::string usersText(Value v) {
  return std::to_string(std::distance(v.getUses().begin(), v.getUses().end())) +
         " users";
}

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

std::optional<MaskBand> MaskClassifier::classify(DenseElementsAttr attr,
                                                 int64_t l, int64_t s,
                                                 bool fillPolarity) {
  auto key = std::make_tuple(attr.getAsOpaquePointer(), l, s,
                             static_cast<int>(fillPolarity));
  auto [it, inserted] = cache.try_emplace(key, std::nullopt);
  if (inserted)
    it->second = classifyConstantBoolMask(attr, l, s, !fillPolarity);
  return it->second;
}

//===----------------------------------------------------------------------===//
// 0. Attention sinks
//===----------------------------------------------------------------------===//

/// `x` when `v` is `x - max(x)` along the last dim, the max kept as a size-1
/// dim (`x - x.max(-1, keepdim=True).values`): a linalg.generic reducing x
/// with arith.maximumf from -inf, reshaped to [..., 1]. Null otherwise. The
/// softmax of it is the softmax of x (a finite shift of each row; an
/// infinite or NaN max gives NaN either way).
static Value peelRowMaxSubtract(Value v, Operation *&maxOp) {
  auto sub = v.getDefiningOp<SubOp>();
  if (!sub || sub.getLhs().getType() != v.getType())
    return nullptr;
  Value x = sub.getLhs(), rhs = sub.getRhs();
  int64_t rank = tensorType(x).getRank();
  auto rhsType = tensorType(rhs);
  if (rhsType.getRank() != rank || rhsType.getShape().back() != 1)
    return nullptr;
  Value max;
  if (auto expand = rhs.getDefiningOp<tensor::ExpandShapeOp>())
    max = expand.getSrc();
  else if (auto reshape = rhs.getDefiningOp<ReshapeOp>())
    max = reshape.getInput();
  auto generic = max ? max.getDefiningOp<linalg::GenericOp>() : nullptr;
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getDpsInputOperand(0)->get() != x ||
      tensorType(max).getShape() != tensorType(x).getShape().drop_back())
    return nullptr;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
  if (!maps[0].isIdentity() ||
      maps[1] != maps[0].getMajorSubMap(rank - 1) ||
      iters.back() != utils::IteratorType::reduction ||
      llvm::count(iters, utils::IteratorType::reduction) != 1)
    return nullptr;
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto maximum = yield.getValues().front().getDefiningOp<arith::MaximumFOp>();
  if (body->getOperations().size() != 2 || !maximum ||
      !llvm::is_contained(maximum->getOperands(), body->getArgument(0)) ||
      !llvm::is_contained(maximum->getOperands(), body->getArgument(1)))
    return nullptr;
  auto fill = generic.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  FloatAttr init;
  if (!fill || !matchPattern(fill.getInputs().front(), m_Constant(&init)) ||
      !init.getValue().isInfinity() || !init.getValue().isNegative())
    return nullptr;
  maxOp = generic;
  return x;
}

namespace {
/// One piece of a concatenation along the last dim: `source` written at
/// [offset, offset + width) of that dim, whole along the others, by
/// `reader`.
struct ConcatPiece {
  Value source;
  int64_t offset, width;
  Operation *reader;
};
} // namespace

/// The pieces of `v` when it is a concatenation of two tensors along its
/// last dim (torch.cat: two tensor.insert_slice into one tensor, or
/// tensor.concat), in order of their offsets; failure otherwise.
static FailureOr<std::pair<ConcatPiece, ConcatPiece>>
matchLastDimConcat(Value v) {
  auto type = tensorType(v);
  int64_t rank = type.getRank();
  if (ShapedType::isDynamic(type.getShape().back()))
    return failure();
  int64_t n = type.getShape().back();
  SmallVector<ConcatPiece> pieces;
  if (auto concat = v.getDefiningOp<tensor::ConcatOp>()) {
    if (concat.getDim() != static_cast<uint64_t>(rank - 1) ||
        concat.getInputs().size() != 2)
      return failure();
    int64_t offset = 0;
    for (Value in : concat.getInputs()) {
      int64_t w = tensorType(in).getShape().back();
      if (ShapedType::isDynamic(w))
        return failure();
      pieces.push_back({in, offset, w, concat.getOperation()});
      offset += w;
    }
  } else {
    // Two insert_slices, the first into a tensor the two overwrite whole.
    Value x = v;
    for (int i = 0; i < 2; ++i) {
      auto insert = x.getDefiningOp<tensor::InsertSliceOp>();
      if (!insert || (i == 1 && !insert->hasOneUse()) ||
          insert.getSourceType().getRank() != rank)
        return failure();
      if (!llvm::all_of(insert.getStaticStrides(),
                        [](int64_t s) { return s == 1; }))
        return failure();
      ArrayRef<int64_t> offsets = insert.getStaticOffsets();
      ArrayRef<int64_t> sizes = insert.getStaticSizes();
      for (int64_t d = 0; d < rank - 1; ++d)
        if (offsets[d] != 0 || ShapedType::isDynamic(sizes[d]) ||
            sizes[d] != type.getDimSize(d))
          return failure();
      if (ShapedType::isDynamic(offsets.back()) ||
          ShapedType::isDynamic(sizes.back()))
        return failure();
      pieces.push_back({insert.getSource(), offsets.back(), sizes.back(),
                        insert.getOperation()});
      x = insert.getDest();
    }
  }
  llvm::sort(pieces, [](const ConcatPiece &a, const ConcatPiece &b) {
    return a.offset < b.offset;
  });
  if (pieces[0].offset != 0 || pieces[1].offset != pieces[0].width ||
      pieces[0].width + pieces[1].width != n)
    return failure();
  return std::make_pair(pieces[0], pieces[1]);
}

/// Attention sinks: softmax([scores, sink] or [sink, scores] along the last
/// dim, optionally minus its row max) whose only user drops the sink
/// column, the sink broadcast from one value per head. Sets `scoresIn`,
/// `scoresReader`, `sinks` and `sinkSlice`; leaves them when the softmax
/// input is no such concatenation.
static LogicalResult matchSinks(AttentionMatch &m, std::string &why) {
  m.scoresIn = m.softmax.getInput();
  m.scoresReader = m.softmax.getOperation();
  Value joined = m.softmax.getInput();
  Operation *maxOp = nullptr;
  if (Value x = peelRowMaxSubtract(joined, maxOp)) {
    if (!llvm::all_of(x.getUsers(), [&](Operation *user) {
          return user == joined.getDefiningOp() || user == maxOp;
        }))
      return success();
    joined = x;
  }
  FailureOr<std::pair<ConcatPiece, ConcatPiece>> pieces =
      matchLastDimConcat(joined);
  if (failed(pieces))
    return success();
  auto [first, second] = *pieces;
  if (first.width != 1 && second.width != 1)
    return success();
  auto type = tensorType(joined);
  int64_t rank = type.getRank();
  if (m.softmax.getNormalizedDim() != rank - 1)
    return success();
  // The sink is the width-1 piece; with two, the last (the usual cat).
  bool sinkFirst = second.width != 1;
  ConcatPiece sink = sinkFirst ? first : second;
  ConcatPiece scores = sinkFirst ? second : first;
  if (rank < 3) {
    why = "attention sinks: the scores have rank " + std::to_string(rank) +
          " (attn.sdpa's sinks need a head dim)";
    return failure();
  }
  // The weights: one slice dropping exactly the sink column.
  Value weights = m.softmax.getResult();
  auto slice = weights.hasOneUse()
                   ? dyn_cast<tensor::ExtractSliceOp>(*weights.user_begin())
                   : tensor::ExtractSliceOp();
  if (!slice) {
    why = "attention sinks: the softmax of the scores joined with a sink "
          "column does not feed one slice dropping that column";
    return failure();
  }
  bool dropsSink =
      slice.getResultType().getRank() == rank &&
      llvm::all_of(slice.getStaticStrides(),
                   [](int64_t s) { return s == 1; }) &&
      slice.getStaticOffsets().back() == (sinkFirst ? 1 : 0) &&
      slice.getStaticSizes().back() == scores.width;
  for (int64_t d = 0; dropsSink && d < rank - 1; ++d)
    dropsSink = slice.getStaticOffsets()[d] == 0 &&
                slice.getStaticSizes()[d] == type.getDimSize(d);
  if (!dropsSink) {
    why = std::string("attention sinks: the slice after the softmax does not "
                      "drop exactly the sink column (the ") +
          (sinkFirst ? "first" : "last") + " one)";
    return failure();
  }
  // The sink column: one value per head, broadcast over the other dims.
  Value source = sink.source;
  while (Value s = getBroadcastSource(source))
    source = s;
  auto sourceType = tensorType(source);
  int64_t sr = sourceType.getRank();
  int64_t heads = type.getDimSize(rank - 3);
  for (int64_t k = 0; k < sr; ++k) {
    int64_t size = sourceType.getDimSize(k);
    bool head = k == sr - 3;
    if (head ? (ShapedType::isDynamic(size) || size != heads) : size != 1) {
      why = "attention sinks: the sink column is not one value per head "
            "(broadcast from " +
            str(sourceType) + ", the scores have " +
            std::to_string(heads) + " heads)";
      return failure();
    }
  }
  if (sr < 3) {
    why = "attention sinks: the sink column is one value for every head "
          "(attn.sdpa takes one per head)";
    return failure();
  }
  m.scoresIn = scores.source;
  m.scoresReader = scores.reader;
  m.sinks = source;
  m.sinkSlice = slice.getOperation();
  return success();
}

//===----------------------------------------------------------------------===//
// 1. The weights side
//===----------------------------------------------------------------------===//

/// softmax(last dim) -> [dropout] -> [cast back] -> matmul(weights, v).
static LogicalResult matchWeightsSide(AttentionMatch &m, std::string &why) {
  SoftmaxOpInterface softmax = m.softmax;
  int64_t rank = tensorType(m.scoresIn).getRank();
  if (rank < 2) {
    why = "the softmax input has rank " + std::to_string(rank) + " (< 2)";
    return failure();
  }
  if (softmax.getNormalizedDim() != rank - 1) {
    why = "the softmax is over dim " + std::to_string(softmax.getDim()) +
          ", not the last dim";
    return failure();
  }
  Value weights = softmax.getResult();
  if (m.sinkSlice)
    weights = m.sinkSlice->getResult(0);
  auto nextUser = [&](StringRef what) -> Operation * {
    if (!weights.hasOneUse()) {
      why = what.str() + " have " + usersText(weights);
      return nullptr;
    }
    return *weights.getUsers().begin();
  };
  Operation *user = nextUser("attention weights");
  if (!user)
    return failure();
  if (auto dropout = dyn_cast<DropoutOp>(user)) {
    m.dropout = dropout;
    if (dropout.getTrain())
      m.dropoutP = dropout.getP().convertToDouble();
    weights = dropout.getResult();
    if (!(user = nextUser("dropped-out attention weights")))
      return failure();
  }
  // `.float().softmax(-1)` then dropout, then `.type_as(q)`: the cast back
  // pairs with an upcast of the scores (checked by the chain walk).
  if (auto cast = dyn_cast<CastOp>(user)) {
    if (!isSoftmaxUpcast(cast.getType().getElementType(),
                         tensorType(weights).getElementType())) {
      why = "attention weights are cast to " +
            str(cast.getType().getElementType()) + " before the matmul";
      return failure();
    }
    m.weightsCast = cast;
    weights = cast.getResult();
    if (!(user = nextUser("cast attention weights")))
      return failure();
  }
  m.outputMatmul = dyn_cast<MatmulOp>(user);
  if (std::string reshape = explainReshapeMiss(user); !reshape.empty()) {
    why = "attention weights go through a reshape: " + reshape;
    return failure();
  }
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
  return success();
}

//===----------------------------------------------------------------------===//
// 2. The chain walk
//===----------------------------------------------------------------------===//

/// True for an op that computes positionwise (attn elementwise ops, casts
/// and comparisons included): what a score_mod region can hold.
static bool isScalarElementwise(Operation *op) {
  return isa<ScalarElementwiseOpInterface>(op);
}

/// The operand of a chain op that carries the scores: a float operand
/// defined by a matmul or another elementwise op (lhs first), else a float
/// one of the result's shape.
static Value scoresOperand(Operation *op) {
  auto isFloat = [](Value v) {
    return !tensorType(v).getElementType().isInteger(1);
  };
  auto isChainLike = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && (isa<MatmulOp>(def) || isScalarElementwise(def));
  };
  ArrayRef<int64_t> shape = tensorType(op->getResult(0)).getShape();
  for (Value v : op->getOperands())
    if (isFloat(v) && isChainLike(v))
      return v;
  for (Value v : op->getOperands())
    if (isFloat(v) && tensorType(v).getShape() == shape)
      return v;
  return nullptr;
}

/// Finds the scores matmul and the ops between it and the softmax input (in
/// program order), and checks that nothing else reads their values.
static LogicalResult walkChain(AttentionMatch &m, std::string &why) {
  Value input = m.scoresIn;
  ArrayRef<int64_t> shape = tensorType(input).getShape();
  // Up from the softmax along the scores operand to the matmul.
  Value x = input;
  while (true) {
    Operation *def = x.getDefiningOp();
    if (!def) {
      why = "the scores are a block argument, not a matmul";
      return failure();
    }
    if (auto matmul = dyn_cast<MatmulOp>(def)) {
      m.scoresMatmul = matmul;
      break;
    }
    if (std::string reshape = explainReshapeMiss(def); !reshape.empty()) {
      why = "the scores go through a reshape: " + reshape;
      return failure();
    }
    if (!isScalarElementwise(def) || def->getBlock() != m.softmax->getBlock()) {
      why = "the scores come from " + opName(def) +
            ", not from a matmul through elementwise steps";
      return failure();
    }
    Value next = scoresOperand(def);
    if (!next) {
      why = "the scores come from " + opName(def) + " with no float operand";
      return failure();
    }
    if (tensorType(next).getShape() != shape) {
      why = "the scores are broadcast to a bigger shape by " + opName(def);
      return failure();
    }
    x = next;
  }
  // The ops between: those that read the matmul's result, directly or
  // through each other, and that the softmax input depends on.
  llvm::SetVector<Operation *> upstream;
  SmallVector<Operation *> worklist{input.getDefiningOp()};
  Block *block = m.softmax->getBlock();
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    // Steps come after the scores matmul, in the softmax's block.
    if (op == m.scoresMatmul || !isScalarElementwise(op) ||
        op->getBlock() != block || op->isBeforeInBlock(m.scoresMatmul) ||
        !upstream.insert(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        worklist.push_back(def);
  }
  DenseSet<Value> derived{m.scoresMatmul.getResult()};
  SmallVector<Operation *> chain(upstream.begin(), upstream.end());
  llvm::sort(chain, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  for (Operation *op : chain)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return derived.contains(v); }))
      derived.insert(op->getResult(0));
  llvm::erase_if(chain, [&](Operation *op) {
    return !derived.contains(op->getResult(0));
  });
  m.chain = chain;
  // Nothing outside the chain may read the scores or a step's result.
  for (Value v : derived) {
    Operation *def = v.getDefiningOp();
    for (Operation *user : v.getUsers()) {
      bool inside = user == m.scoresReader
                        ? v == input
                        : llvm::is_contained(chain, user);
      if (!inside) {
        why = "the " + valueName(def) + " have " + usersText(v);
        return failure();
      }
    }
    if (tensorType(v).getShape() != shape) {
      why = "the scores are broadcast to a bigger shape by " + opName(def);
      return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// 3. Operands and shapes
//===----------------------------------------------------------------------===//

/// q, k (or kT), v with scalar scales peeled into `qkScale` and grouped-query
/// repeat_interleave seen through; checks the shapes attn.sdpa represents.
static LogicalResult bindOperands(AttentionMatch &m, std::string &why) {
  auto scoresType = tensorType(m.scoresIn);
  int64_t rank = scoresType.getRank();
  m.query = peelScalarScale(m.scoresMatmul.getLhs(), m.qkScale);
  Value kt = peelScalarScale(m.scoresMatmul.getRhs(), m.qkScale);
  auto transpose = kt.getDefiningOp<TransposeOp>();
  if (transpose &&
      transpose.getNormalizedDims() == std::make_pair(rank - 2, rank - 1))
    m.key = peelScalarScale(transpose.getInput(), m.qkScale);
  else
    m.keyTransposed = kt;
  if (!std::isfinite(m.qkScale)) {
    why = "the combined scale is not finite";
    return failure();
  }
  Value &k = m.key ? m.key : m.keyTransposed;
  auto kRep = k.getDefiningOp<RepeatInterleaveOp>();
  auto vRep = m.value.getDefiningOp<RepeatInterleaveOp>();
  if (kRep && vRep && rank >= 3 && kRep.getNormalizedDim() == rank - 3 &&
      vRep.getNormalizedDim() == rank - 3 &&
      kRep.getRepeats() == vRep.getRepeats()) {
    k = kRep.getInput();
    m.value = vRep.getInput();
  }

  Type et = m.scoresMatmul.getType().getElementType();
  auto qType = tensorType(m.query), kType = tensorType(k),
       vType = tensorType(m.value);
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
  Type outEt = m.outputMatmul.getType().getElementType();
  if (outEt != et) {
    why = "the weights are multiplied by value in " + str(outEt) +
          ", the scores are " + str(et);
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
  auto resultType = RankedTensorType::get(resultShape, et);
  if (resultType != m.outputMatmul.getType()) {
    why = "the query batch dims broadcast up in the matmuls (the fused op's "
          "result would be " +
          str(resultType) + ", not " + str(m.outputMatmul.getType()) + ")";
    return failure();
  }
  if (m.scoresMatmul.getType().getShape() != scoresType.getShape()) {
    why = "the steps change the scores shape";
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// 4a. The attribute form
//===----------------------------------------------------------------------===//

namespace {
/// One op between the first matmul and the softmax, in attribute terms.
struct Step {
  enum Kind { Scale, BoolMask, AddMask } kind;
  /// Scale: the factor c (the step computes x * c or x / c), in the compute
  /// type of the scores. BoolMask: the fill value in the scores' type.
  APFloat constant = APFloat(0.0);
  bool divide = false;
  /// BoolMask: the i1 mask; AddMask: the float mask.
  Value mask;
  /// BoolMask: true when `mask` is true where scores are kept.
  bool maskKeeps = false;
};
} // namespace

/// Recognises one step as a scale, a boolean mask or an additive mask, given
/// `x`, the operand that carries the scores.
static LogicalResult classifyStep(Operation *op, Value x, Step &step,
                                  std::string &why) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type et = resultType.getElementType();
  auto other = [&]() -> Value {
    for (Value v : op->getOperands())
      if (v != x)
        return v;
    return nullptr;
  };
  if (isa<MulOp, DivOp>(op)) {
    bool divide = isa<DivOp>(op);
    Value c = other();
    std::optional<APFloat> value =
        c && (!divide || op->getOperand(1) == c)
            ? getScalarConstant(c, getComputeType(et))
            : std::nullopt;
    if (!value) {
      why = divide ? "the scores are divided by a value that is not a scalar "
                     "constant"
                   : "the scores are multiplied by a value that is not a "
                     "scalar constant";
      return failure();
    }
    step = {Step::Scale, *value, divide};
    return success();
  }
  if (auto fill = dyn_cast<MaskedFillOp>(op)) {
    step = {Step::BoolMask,
            roundTo(APFloat(fill.getValue().convertToDouble()), et)};
    step.mask = fill.getMask();
    return success();
  }
  if (auto where = dyn_cast<WhereOp>(op)) {
    bool keeps = where.getA() == x;
    std::optional<APFloat> c =
        getScalarConstant(keeps ? where.getB() : where.getA(), et);
    if (!c) {
      why = "the other branch of the where is not a scalar constant";
      return failure();
    }
    step = {Step::BoolMask, *c};
    step.mask = where.getCond();
    step.maskKeeps = keeps;
    return success();
  }
  if (isa<AddOp>(op)) {
    Value mask = other();
    if (!mask || tensorType(mask).getRank() == 0) {
      why = "the scores get a scalar added, not a mask";
      return failure();
    }
    if (tensorType(mask).getElementType() != et) {
      why = "the additive mask's element type " +
            str(tensorType(mask).getElementType()) + " differs from the "
            "scores' " + str(et);
      return failure();
    }
    step = {Step::AddMask};
    step.mask = mask;
    return success();
  }
  why = "the scores go through " + opName(op) +
        ", which is no scale, mask or additive mask";
  return failure();
}

/// True for a constant float tensor whose entries all satisfy `pred`.
static bool isConstantWhere(Value v, function_ref<bool(const APFloat &)> pred) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  if (attr.isSplat())
    return pred(attr.getSplatValue<APFloat>());
  return llvm::all_of(attr.getValues<APFloat>(), pred);
}

/// -inf or within [-16, 16]: added to f16/bf16 scores, it changes them by no
/// more than the scores' own rounding scale.
static bool isSmallOrNegInf(const APFloat &f) {
  if (f.isInfinity() && f.isNegative())
    return true;
  return f.isFinite() && std::fabs(f.convertToDouble()) <= 16.0;
}

static bool isNotPosInfOrNaN(const APFloat &f) {
  return !f.isNaN() && !(f.isInfinity() && !f.isNegative());
}

/// A step applied after a boolean mask scales the fill too: as the chain
/// computes it, in the compute type, rounded once to the element type.
static APFloat scaleFill(APFloat fill, const Step &step) {
  const llvm::fltSemantics &sem = fill.getSemantics();
  bool losesInfo = false;
  fill.convert(step.constant.getSemantics(), APFloat::rmNearestTiesToEven,
               &losesInfo);
  if (step.divide)
    fill.divide(step.constant, APFloat::rmNearestTiesToEven);
  else
    fill.multiply(step.constant, APFloat::rmNearestTiesToEven);
  fill.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
  return fill;
}

/// Replays the steps in program order against the contract's order: scale,
/// then the additive mask, then boolean masks and causality (replace with
/// the fill). Records per boolean mask whether it came after the additive
/// one.
static LogicalResult replaySteps(AttentionMatch &m, ArrayRef<Step> steps,
                                 SmallVectorImpl<bool> &afterAdditive,
                                 std::string &why) {
  m.scale = m.qkScale;
  for (const Step &step : steps) {
    switch (step.kind) {
    case Step::Scale: {
      if (m.additiveMask) {
        why = "a scale is applied after the additive mask";
        return failure();
      }
      double c = step.constant.convertToDouble();
      if (m.fill) {
        if (!(c > 0.0)) {
          why = "a non-positive scale is applied after the boolean mask";
          return failure();
        }
        m.fill = scaleFill(*m.fill, step);
      }
      m.scale *= step.divide ? 1.0 / c : c;
      break;
    }
    case Step::BoolMask:
      if (m.fill && !m.fill->bitwiseIsEqual(step.constant)) {
        why = "two boolean masks fill different values";
        return failure();
      }
      m.fill = step.constant;
      m.boolMasks.push_back({step.mask, step.maskKeeps});
      afterAdditive.push_back(static_cast<bool>(m.additiveMask));
      break;
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
  if (!std::isfinite(m.scale)) {
    why = "the combined scale is not finite";
    return failure();
  }
  return success();
}

/// The band a boolean mask keeps, when it is one: a constant (causal, a
/// sliding window, all-keep) or a mask built from positions (attn.iota
/// compared, see bandOfPositionMask). `keeps`: true means the position takes
/// part.
static std::optional<MaskBand> bandOfMask(Value mask, bool keeps,
                                          RankedTensorType scoresType,
                                          MaskClassifier &classifier) {
  int64_t rank = scoresType.getRank();
  DenseElementsAttr attr;
  if (matchPattern(mask, m_Constant(&attr)))
    return classifier.classify(attr, scoresType.getDimSize(rank - 2),
                               scoresType.getDimSize(rank - 1), !keeps);
  return bandOfPositionMask(mask, keeps, rank);
}

/// Band masks (constant or built from positions) become is_causal and the
/// window attributes, all-keep ones go; what is left must combine into the
/// one mask operand.
static LogicalResult classifyBoolMasks(AttentionMatch &m,
                                       ArrayRef<bool> afterAdditive,
                                       MaskClassifier &classifier,
                                       bool &bandBeforeAdditive,
                                       std::string &why) {
  auto scoresType = tensorType(m.scoresIn);
  SmallVector<std::pair<Value, bool>> rest;
  for (auto [i, entry] : llvm::enumerate(m.boolMasks)) {
    auto [mask, keeps] = entry;
    if (std::optional<MaskBand> band =
            bandOfMask(mask, keeps, scoresType, classifier)) {
      if (!band->keepsAll())
        bandBeforeAdditive |= m.additiveMask && !afterAdditive[i];
      m.band = m.band.intersect(*band);
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
  // (andi) needs a static shape: a dense constant cannot have `?` dims.
  if (!rest.empty() && (rest.size() > 1 || !rest.front().second) &&
      !tensorType(rest.front().first).hasStaticShape()) {
    why = "a dynamic-shaped boolean mask would have to be inverted or "
          "combined";
    return failure();
  }
  m.boolMasks = std::move(rest);
  // Position masks that are no band (also over other tensors: a band
  // selecting a padding mask) would be materialised as [L, S] tensors; the
  // score_mod form computes them per tile instead.
  auto fromPositions = [](Value mask) {
    return isPositionExpression(mask) || isPositionDependent(mask);
  };
  bool positionMask =
      llvm::any_of(m.boolMasks,
                   [&](auto &entry) { return fromPositions(entry.first); }) ||
      (m.additiveMask && fromPositions(m.additiveMask));
  if (positionMask) {
    why = "a mask built from positions that is no band (the score_mod region "
          "computes it per tile)";
    return failure();
  }
  if (!m.boolMasks.empty() && m.additiveMask) {
    why = "both a boolean and an additive mask (attn.sdpa takes one mask)";
    return failure();
  }
  if (m.boolMasks.empty() && m.band.keepsAll())
    m.fill.reset();
  return success();
}

/// The numeric guards of orders the contract reorders.
static LogicalResult checkMaskNumerics(AttentionMatch &m,
                                       bool bandBeforeAdditive,
                                       std::string &why) {
  // The chain fills the positions outside the band, then adds the mask
  // there too; attn.sdpa adds the mask, then replaces them by masked_value.
  // Equal only with a -inf fill and a mask free of +inf and NaN (-inf +
  // +inf is NaN).
  if (bandBeforeAdditive) {
    if (!m.fill->isInfinity()) {
      SmallString<16> fill;
      m.fill->toString(fill);
      why = "a causal or window mask with the finite fill " +
            fill.str().str() +
            " followed by an additive mask (attn.sdpa replaces the masked "
            "positions by masked_value after adding the mask)";
      return failure();
    }
    if (!isConstantWhere(m.additiveMask, isNotPosInfOrNaN)) {
      why = "a causal or window mask followed by an additive mask that is "
            "not a constant free of +inf and NaN";
      return failure();
    }
  }
  // f16/bf16: the chain adds the mask in the element type (rounding every
  // masked score), attn.sdpa's attribute form in f32: only a constant mask
  // of small values and -inf is the same function up to rounding.
  Type et = tensorType(m.scoresIn).getElementType();
  if (m.additiveMask && (et.isF16() || et.isBF16()) &&
      !isConstantWhere(m.additiveMask, isSmallOrNegInf)) {
    why = "the additive mask is not a constant of values in [-16, 16] or "
          "-inf: the chain adds it in " +
          str(et);
    return failure();
  }
  return success();
}

/// The attribute form: a linear chain of steps the contract's attributes
/// reproduce exactly.
static LogicalResult matchAttributeForm(AttentionMatch &m,
                                        MaskClassifier &classifier,
                                        std::string &why) {
  SmallVector<Step> steps;
  Value x = m.scoresMatmul.getResult();
  for (Operation *op : m.chain) {
    // A linear chain: each step reads the previous one's result once and
    // no other value derived from the scores.
    auto isDerived = [&](Value v) {
      return v == m.scoresMatmul.getResult() ||
             llvm::any_of(m.chain,
                          [&](Operation *c) { return c->getResult(0) == v; });
    };
    if (llvm::count_if(op->getOperands(), isDerived) != 1 ||
        !llvm::is_contained(op->getOperands(), x)) {
      why = "the scores are read twice by " + opName(op);
      return failure();
    }
    Step step;
    if (failed(classifyStep(op, x, step, why)))
      return failure();
    steps.push_back(step);
    x = op->getResult(0);
  }
  SmallVector<bool> afterAdditive;
  bool bandBeforeAdditive = false;
  if (failed(replaySteps(m, steps, afterAdditive, why)) ||
      failed(classifyBoolMasks(m, afterAdditive, classifier,
                               bandBeforeAdditive, why)) ||
      failed(checkMaskNumerics(m, bandBeforeAdditive, why)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// 4b. The score_mod form
//===----------------------------------------------------------------------===//

/// Every op of the chain has an exact scalar function; the softmax reads a
/// float (the region yields the score).
static LogicalResult matchScoreModForm(AttentionMatch &m, std::string &why) {
  for (Operation *op : m.chain) {
    if (!isScalarElementwise(op)) {
      why = "the scores go through " + opName(op) + ", which is not elementwise";
      return failure();
    }
  }
  // The upcast idiom around the softmax: a cast back after the softmax
  // pairs with a cast up that the region then holds.
  if (m.weightsCast &&
      m.weightsCast.getType().getElementType() !=
          m.scoresMatmul.getType().getElementType()) {
    why = "the attention weights are cast to another type than the scores'";
    return failure();
  }
  return success();
}

/// Band masks at the end of the chain (right before the softmax, same fill,
/// -inf, or finite in the scores' type) leave the region for is_causal and the window
/// attributes: the contract applies them after the region, exactly as the
/// chain does, and the lowerings then skip the key blocks outside the band.
static void hoistTrailingBands(AttentionMatch &m, MaskClassifier &classifier) {
  m.regionOutput = m.scoresIn;
  auto scoresType = tensorType(m.scoresIn);
  while (!m.chain.empty()) {
    Operation *last = m.chain.back();
    if (last->getResult(0) != m.regionOutput ||
        !isa<MaskedFillOp, WhereOp>(last))
      return;
    Value x = scoresOperand(last);
    Step step;
    std::string ignored;
    if (!x || failed(classifyStep(last, x, step, ignored)) ||
        step.constant.isNaN() ||
        (step.constant.isInfinity() && !step.constant.isNegative()) ||
        (m.fill && !m.fill->bitwiseIsEqual(step.constant)))
      return;
    // masked_value is rounded to the op's element type: a finite fill of a
    // step in another type (after an upcast) would round differently.
    bool negInf = step.constant.isInfinity() && step.constant.isNegative();
    if (!negInf && tensorType(x).getElementType() !=
                       m.scoresMatmul.getType().getElementType())
      return;
    std::optional<MaskBand> band =
        bandOfMask(step.mask, step.maskKeeps, scoresType, classifier);
    if (!band)
      return;
    m.band = m.band.intersect(*band);
    m.fill = step.constant;
    m.regionOutput = x;
    m.chain.pop_back();
  }
}

//===----------------------------------------------------------------------===//
// matchAttention
//===----------------------------------------------------------------------===//

FailureOr<AttentionMatch> mlir::attn::matchAttention(SoftmaxOpInterface softmax,
                                                     MaskClassifier &classifier,
                                                     std::string &why) {
  AttentionMatch m;
  m.softmax = softmax;
  if (failed(matchSinks(m, why)))
    return failure();
  m.regionOutput = m.scoresIn;
  if (failed(matchWeightsSide(m, why)) || failed(walkChain(m, why)) ||
      failed(bindOperands(m, why)))
    return failure();
  if (m.sinks && m.dropoutP > 0.0) {
    why = "attention sinks with dropout (attn.sdpa takes no dropout with "
          "sinks)";
    return failure();
  }
  // The attribute form needs the softmax in the scores' type (the upcast is
  // folded by normalisation) and no cast back of the weights.
  std::string attributeWhy;
  if (!m.weightsCast &&
      m.scoresIn.getType() == m.scoresMatmul.getType() &&
      succeeded(matchAttributeForm(m, classifier, attributeWhy))) {
    m.form = SdpaForm::Attributes;
    return m;
  }
  if (attributeWhy.empty())
    attributeWhy = "the softmax runs in another type than the scores";
  AttentionMatch region = m;
  region.scale = m.qkScale;
  region.band = MaskBand();
  region.boolMasks.clear();
  region.additiveMask = nullptr;
  region.fill.reset();
  if (failed(matchScoreModForm(region, why)))
    return failure();
  // Leading scalar scales of f32/f64 scores are the `scale` attribute (the
  // attribute form's rounding); f16/bf16 chains keep them in the region,
  // after the score is rounded as the matmul rounds it.
  region.regionInput = m.scoresMatmul.getResult();
  Type et = m.scoresMatmul.getType().getElementType();
  while (!region.chain.empty() && (et.isF32() || et.isF64())) {
    Operation *op = region.chain.front();
    double factor = 1.0;
    if (!op->getResult(0).hasOneUse() ||
        peelOneScalarScale(op->getResult(0), factor) != region.regionInput)
      break;
    region.qkScale *= factor;
    region.regionInput = op->getResult(0);
    region.chain.erase(region.chain.begin());
  }
  region.scale = region.qkScale;
  hoistTrailingBands(region, classifier);
  region.form = SdpaForm::ScoreMod;
  region.attributeFormMiss = attributeWhy;
  return region;
}
