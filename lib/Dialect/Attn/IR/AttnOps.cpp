//===- AttnOps.cpp - attn dialect ops: builders, verifiers, folders -------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

namespace mlir::attn {
/// attn.sdpa's `operandSegmentSizes` (query, key, value, mask, q_lengths,
/// kv_lengths, sinks, extras) as written before an operand was added: 7
/// entries (no sinks) or 5 (mask, then extras) get 0 for the missing ones,
/// so that generic IR other tools wrote then still parses. The generated
/// property parser calls this unqualified; other sizes go on to MLIR's.
static LogicalResult
convertFromAttribute(std::array<int32_t, 8> &storage, Attribute attr,
                     function_ref<InFlightDiagnostic()> emitError) {
  auto sizes = dyn_cast<DenseI32ArrayAttr>(attr);
  if (sizes && (sizes.size() == 7 || sizes.size() == 5)) {
    ArrayRef<int32_t> old = sizes.asArrayRef();
    storage.fill(0);
    llvm::copy(old.take_front(sizes.size() == 7 ? 6 : 4), storage.begin());
    storage.back() = old.back();
    return success();
  }
  return mlir::convertFromAttribute(MutableArrayRef<int32_t>(storage), attr,
                                    emitError);
}
} // namespace mlir::attn

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

bool mlir::attn::isAttnFloatType(Type type) {
  return type.isF16() || type.isBF16() || type.isF32() || type.isF64();
}

std::string mlir::attn::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

/// Prints a double the way a user wrote it (`0.5`, `1e-09`), for diagnostics.
static std::string numStr(double v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%g", v);
  return s;
}

FailureOr<SmallVector<int64_t>>
mlir::attn::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1) {
      result[i] = db;
    } else if (db == 1) {
      result[i] = da;
    } else if (ShapedType::isDynamic(da)) {
      result[i] = db;
    } else if (ShapedType::isDynamic(db) || da == db) {
      result[i] = da;
    } else {
      return failure();
    }
  }
  return result;
}

/// True when `actual` can hold values of shape `expected`: same rank and
/// equal sizes wherever both are static.
static bool isCompatibleShape(ArrayRef<int64_t> expected,
                              ArrayRef<int64_t> actual) {
  if (expected.size() != actual.size())
    return false;
  for (auto [e, a] : llvm::zip_equal(expected, actual))
    if (!ShapedType::isDynamic(e) && !ShapedType::isDynamic(a) && e != a)
      return false;
  return true;
}

static bool sameStaticOrDynamic(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

RankedTensorType mlir::attn::inferElementwiseType(ArrayRef<Value> operands) {
  SmallVector<int64_t> shape;
  Type elementType, scalarElementType;
  for (Value v : operands) {
    auto type = cast<RankedTensorType>(v.getType());
    FailureOr<SmallVector<int64_t>> b = broadcastShapes(shape, type.getShape());
    if (failed(b))
      return {};
    shape = *b;
    Type et = type.getElementType();
    if (!isAttnFloatType(et))
      continue;
    // PyTorch's scalar rule: a rank-0 operand takes the others' type.
    if (type.getRank() > 0 && !elementType)
      elementType = et;
    if (type.getRank() == 0 && !scalarElementType)
      scalarElementType = et;
  }
  if (!elementType)
    elementType = scalarElementType;
  if (!elementType)
    return {};
  return RankedTensorType::get(shape, elementType);
}

static int64_t normalizeDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

/// Checks that `dim` names a dim of a rank-`rank` tensor, PyTorch style.
static LogicalResult verifyDimInRange(Operation *op, StringRef name,
                                      int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= rank)
    return op->emitOpError() << "'" << name << "' " << dim
                             << " is out of range for rank " << rank
                             << " (expected [" << -rank << ", " << rank - 1
                             << "])";
  return success();
}

/// Checks the result type against the one the operands imply.
static LogicalResult verifyResultType(Operation *op, RankedTensorType expected,
                                      Type actual) {
  auto actualType = cast<RankedTensorType>(actual);
  if (expected.getElementType() != actualType.getElementType())
    return op->emitOpError()
           << "result element type " << actualType.getElementType()
           << " does not match the expected " << expected.getElementType();
  // Exactly the inferred shape: a result that refines a `?` (or forgets a
  // static size) would need a run-time check the op does not make; a
  // tensor.cast says it explicitly.
  if (expected.getShape() != actualType.getShape())
    return op->emitOpError()
           << "result shape " << formatShape(actualType.getShape())
           << " does not match the expected "
           << formatShape(expected.getShape());
  return success();
}

/// Element types of floating operands in an elementwise op: all equal, except
/// that rank-0 operands (scalars) may differ.
static LogicalResult verifyElementTypes(Operation *op, ArrayRef<Value> operands,
                                        ArrayRef<StringRef> names) {
  Type first;
  StringRef firstName;
  for (auto [v, name] : llvm::zip_equal(operands, names)) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() == 0)
      continue;
    if (!first) {
      first = type.getElementType();
      firstName = name;
      continue;
    }
    if (first != type.getElementType())
      return op->emitOpError()
             << "element types differ: '" << firstName << "' is " << first
             << " but '" << name << "' is " << type.getElementType();
  }
  return success();
}

/// The operand shapes broadcast together (NumPy rules).
static LogicalResult verifyBroadcast(Operation *op, ArrayRef<Value> operands,
                                     ArrayRef<StringRef> names) {
  SmallVector<int64_t> shape;
  std::string seen;
  for (auto [v, name] : llvm::zip_equal(operands, names)) {
    auto type = cast<RankedTensorType>(v.getType());
    FailureOr<SmallVector<int64_t>> b = broadcastShapes(shape, type.getShape());
    if (failed(b))
      return op->emitOpError()
             << "shape " << formatShape(type.getShape()) << " of '" << name
             << "' does not broadcast with " << formatShape(shape) << " (from "
             << seen << ")";
    shape = *b;
    seen += (seen.empty() ? "'" : ", '") + name.str() + "'";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

/// The result type of torch.matmul for rank >= 2 operands, or null.
static RankedTensorType inferMatmulType(RankedTensorType lhs,
                                        RankedTensorType rhs) {
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return {};
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
      lhs.getShape().drop_back(2), rhs.getShape().drop_back(2));
  if (failed(batch))
    return {};
  SmallVector<int64_t> shape = *batch;
  shape.push_back(lhs.getShape()[lhs.getRank() - 2]);
  shape.push_back(rhs.getShape().back());
  return RankedTensorType::get(shape, lhs.getElementType());
}

void MatmulOp::build(OpBuilder &builder, OperationState &state, Value lhs,
                     Value rhs) {
  build(builder, state,
        inferMatmulType(cast<RankedTensorType>(lhs.getType()),
                        cast<RankedTensorType>(rhs.getType())),
        lhs, rhs);
}

LogicalResult MatmulOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  if (lhs.getRank() < 2)
    return emitOpError() << "'lhs' must have rank >= 2, got shape "
                         << formatShape(lhs.getShape());
  if (rhs.getRank() < 2)
    return emitOpError() << "'rhs' must have rank >= 2, got shape "
                         << formatShape(rhs.getShape());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError() << "element types differ: 'lhs' is "
                         << lhs.getElementType() << " but 'rhs' is "
                         << rhs.getElementType();
  int64_t k0 = lhs.getShape().back();
  int64_t k1 = rhs.getShape()[rhs.getRank() - 2];
  if (!sameStaticOrDynamic(k0, k1))
    return emitOpError() << "contraction dims differ: 'lhs' "
                         << formatShape(lhs.getShape()) << " has " << k0
                         << " columns but 'rhs' " << formatShape(rhs.getShape())
                         << " has " << k1 << " rows";
  RankedTensorType expected = inferMatmulType(lhs, rhs);
  if (!expected)
    return emitOpError() << "batch dims of 'lhs' ("
                         << formatShape(lhs.getShape().drop_back(2))
                         << ") and 'rhs' ("
                         << formatShape(rhs.getShape().drop_back(2))
                         << ") do not broadcast";
  return verifyResultType(*this, expected, getType());
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

void TransposeOp::build(OpBuilder &builder, OperationState &state, Value input,
                        int64_t dim0, int64_t dim1) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[normalizeDim(dim0, type.getRank())],
            shape[normalizeDim(dim1, type.getRank())]);
  build(builder, state, RankedTensorType::get(shape, type.getElementType()),
        input, dim0, dim1);
}

std::pair<int64_t, int64_t> TransposeOp::getNormalizedDims() {
  int64_t rank = getInput().getType().getRank();
  int64_t a = normalizeDim(getDim0(), rank);
  int64_t b = normalizeDim(getDim1(), rank);
  return {std::min(a, b), std::max(a, b)};
}

LogicalResult TransposeOp::verify() {
  auto type = getInput().getType();
  int64_t rank = type.getRank();
  if (failed(verifyDimInRange(*this, "dim0", getDim0(), rank)) ||
      failed(verifyDimInRange(*this, "dim1", getDim1(), rank)))
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[normalizeDim(getDim0(), rank)],
            shape[normalizeDim(getDim1(), rank)]);
  return verifyResultType(
      *this, RankedTensorType::get(shape, type.getElementType()), getType());
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto [a, b] = getNormalizedDims();
  if (a == b && getInput().getType() == getType())
    return getInput();
  // transpose(transpose(x, a, b), a, b) == x.
  if (auto inner = getInput().getDefiningOp<TransposeOp>())
    if (inner.getNormalizedDims() == std::make_pair(a, b) &&
        inner.getInput().getType() == getType())
      return inner.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

static LogicalResult verifyBinaryOp(Operation *op) {
  SmallVector<Value> operands(op->getOperands());
  if (failed(verifyElementTypes(op, operands, {"lhs", "rhs"})) ||
      failed(verifyBroadcast(op, operands, {"lhs", "rhs"})))
    return failure();
  return verifyResultType(op, inferElementwiseType(operands),
                          op->getResult(0).getType());
}

LogicalResult MulOp::verify() { return verifyBinaryOp(*this); }
LogicalResult DivOp::verify() { return verifyBinaryOp(*this); }
LogicalResult AddOp::verify() { return verifyBinaryOp(*this); }
LogicalResult SubOp::verify() { return verifyBinaryOp(*this); }
LogicalResult MaximumOp::verify() { return verifyBinaryOp(*this); }
LogicalResult MinimumOp::verify() { return verifyBinaryOp(*this); }

LogicalResult CmpOp::verify() {
  SmallVector<Value> operands(getOperands());
  if (failed(verifyElementTypes(*this, operands, {"lhs", "rhs"})) ||
      failed(verifyBroadcast(*this, operands, {"lhs", "rhs"})))
    return failure();
  RankedTensorType inferred = inferElementwiseType(operands);
  return verifyResultType(
      *this, inferred.clone(IntegerType::get(getContext(), 1)), getType());
}

LogicalResult IotaOp::verify() {
  RankedTensorType type = getType();
  int64_t rank = type.getRank(), dim = getDimension();
  if (dim < 0 || dim >= rank)
    return emitOpError("dimension ")
           << dim << " is out of range for a rank-" << rank << " result";
  if (static_cast<int64_t>(getDynamicSizes().size()) !=
      type.getNumDynamicDims())
    return emitOpError("has ")
           << getDynamicSizes().size() << " dynamic sizes for the "
           << type.getNumDynamicDims() << " dynamic dims of " << type;
  // Every position 0 .. n-1 must be an exact float: n - 1 <= 2^precision. A
  // run-time size has no static bound; f64 holds every position of any
  // tensor exactly (its dims stay far below 2^53).
  if (type.isDynamicDim(dim)) {
    if (!type.getElementType().isF64())
      return emitOpError("positions along the dynamic dim ")
             << dim << " need f64 to be exact, got " << type.getElementType();
    return success();
  }
  unsigned precision = APFloat::semanticsPrecision(
      cast<FloatType>(type.getElementType()).getFloatSemantics());
  int64_t n = type.getDimSize(dim);
  if (precision < 63 && n - 1 > (int64_t(1) << precision))
    return emitOpError("positions up to ")
           << n - 1 << " are not exact in " << type.getElementType();
  return success();
}

Value IotaOp::buildScalar(OpBuilder &b, Location loc, Value position) {
  Value i = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), position);
  Type et = getType().getElementType();
  Type wide = et.isF64() ? et : b.getF32Type();
  Value f = arith::UIToFPOp::create(b, loc, wide, i);
  return castFloat(b, loc, f, et);
}

/// True when `attr` is a float splat constant equal to `value`.
static bool isSplatFloat(Attribute attr, double value) {
  auto dense = dyn_cast_if_present<DenseFPElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  return dense.getSplatValue<APFloat>().convertToDouble() == value;
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  // x * 1 == x exactly (NaN and signed zeros included).
  if (isSplatFloat(adaptor.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  if (isSplatFloat(adaptor.getLhs(), 1.0) && getRhs().getType() == getType())
    return getRhs();
  return {};
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatFloat(adaptor.getRhs(), 1.0) && getLhs().getType() == getType())
    return getLhs();
  return {};
}

//===----------------------------------------------------------------------===//
// MaskedFillOp
//===----------------------------------------------------------------------===//

LogicalResult MaskedFillOp::verify() {
  auto input = getInput().getType();
  auto mask = getMask().getType();
  FailureOr<SmallVector<int64_t>> b =
      broadcastShapes(input.getShape(), mask.getShape());
  if (failed(b) || !isCompatibleShape(*b, input.getShape()) ||
      mask.getRank() > input.getRank())
    return emitOpError() << "'mask' of shape " << formatShape(mask.getShape())
                         << " does not broadcast to the input shape "
                         << formatShape(input.getShape());
  if (getType() != input)
    return emitOpError() << "result type " << getType()
                         << " differs from the input type " << input;
  return success();
}

//===----------------------------------------------------------------------===//
// WhereOp
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::verify() {
  SmallVector<Value> operands(getOperands());
  if (failed(verifyElementTypes(*this, {getA(), getB()}, {"a", "b"})) ||
      failed(verifyBroadcast(*this, operands, {"cond", "a", "b"})))
    return failure();
  return verifyResultType(*this, inferElementwiseType(operands), getType());
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

/// attn.softmax and attn.safe_softmax: a dim of an input of rank >= 1.
static LogicalResult verifySoftmax(SoftmaxOpInterface op) {
  int64_t rank = op.getInput().getType().getRank();
  if (rank == 0)
    return op->emitOpError() << "'input' must have rank >= 1";
  return verifyDimInRange(op, "dim", op.getDim(), rank);
}

int64_t SoftmaxOp::getNormalizedDim() {
  return normalizeDim(getDim(), getInput().getType().getRank());
}

LogicalResult SoftmaxOp::verify() { return verifySoftmax(*this); }

//===----------------------------------------------------------------------===//
// SafeSoftmaxOp
//===----------------------------------------------------------------------===//

int64_t SafeSoftmaxOp::getNormalizedDim() {
  return normalizeDim(getDim(), getInput().getType().getRank());
}

LogicalResult SafeSoftmaxOp::verify() { return verifySoftmax(*this); }

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto input = getInput().getType();
  if (input.getShape() != getType().getShape())
    return emitOpError() << "result shape " << formatShape(getType().getShape())
                         << " differs from the input shape "
                         << formatShape(input.getShape());
  return success();
}

/// True when every value of `narrow` is exactly representable in `wide`.
static bool isExactWidening(Type narrow, Type wide) {
  if (narrow == wide)
    return true;
  if (narrow.isF16() || narrow.isBF16())
    return wide.isF32() || wide.isF64();
  return narrow.isF32() && wide.isF64();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // narrow -> wide -> narrow is the identity when the widening is exact.
  if (auto inner = getInput().getDefiningOp<CastOp>()) {
    Type mid = inner.getType().getElementType();
    if (inner.getInput().getType() == getType() &&
        isExactWidening(getType().getElementType(), mid))
      return inner.getInput();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError() << "'p' must be in [0, 1), got " << numStr(p);
  return success();
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (!getTrain() || getP().convertToDouble() == 0.0)
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// RepeatInterleaveOp
//===----------------------------------------------------------------------===//

int64_t RepeatInterleaveOp::getNormalizedDim() {
  return normalizeDim(getDim(), getInput().getType().getRank());
}

LogicalResult RepeatInterleaveOp::verify() {
  auto input = getInput().getType();
  if (failed(verifyDimInRange(*this, "dim", getDim(), input.getRank())))
    return failure();
  if (getRepeats() < 1)
    return emitOpError() << "'repeats' must be >= 1, got " << getRepeats();
  SmallVector<int64_t> shape(input.getShape());
  int64_t &d = shape[getNormalizedDim()];
  if (!ShapedType::isDynamic(d))
    d *= getRepeats();
  return verifyResultType(
      *this, RankedTensorType::get(shape, input.getElementType()), getType());
}

OpFoldResult RepeatInterleaveOp::fold(FoldAdaptor) {
  if (getRepeats() == 1 && getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// PackWeightOp, UnpackWeightOp
//===----------------------------------------------------------------------===//

/// Checks that `packed` holds the panels of a static [K, N] operand of
/// element type `element`: f32 [NB, KB, kc, nc] with NB = ceil(N / nc),
/// KB = ceil(K / kc), or bf16 pairs [NB, KB, kc / 2, 2 * nc].
static LogicalResult verifyPackedPanels(Operation *op, RankedTensorType packed,
                                        Type element, int64_t k, int64_t n) {
  if (packed.getElementType() != element)
    return op->emitOpError()
           << "packed panels of " << packed.getElementType()
           << " hold an operand of " << element;
  bool pairs = element.isBF16();
  ArrayRef<int64_t> p = packed.getShape();
  if (packed.getRank() != 4 || !packed.hasStaticShape() || p[2] < 1 ||
      p[3] < 1 || (pairs && p[3] % 2 != 0))
    return op->emitOpError()
           << (pairs ? "packed bf16 pairs must be a static [NB, KB, kc / 2, "
                       "2 * nc] tensor with kc, nc >= 1, got "
                     : "packed panels must be a static [NB, KB, kc, nc] "
                       "tensor with kc, nc >= 1, got ")
           << formatShape(p);
  int64_t kc = pairs ? 2 * p[2] : p[2], nc = pairs ? p[3] / 2 : p[3];
  int64_t nb = llvm::divideCeil(n, nc), kb = llvm::divideCeil(k, kc);
  if (p[0] != nb || p[1] != kb)
    return op->emitOpError()
           << "packed panels " << formatShape(p) << " do not cover a [K, N] = "
           << formatShape({k, n}) << " operand in blocks of kc = " << kc
           << " and nc = " << nc << " (expected " << nb << "x" << kb
           << "x" << p[2] << "x" << p[3] << ")";
  return success();
}

LogicalResult PackWeightOp::verify() {
  auto weight = getWeight().getType();
  if (weight.getRank() != 2 || !weight.hasStaticShape())
    return emitOpError() << "needs a static 2-D weight, got "
                         << formatShape(weight.getShape());
  int64_t k = weight.getDimSize(getTransposed() ? 1 : 0);
  int64_t n = weight.getDimSize(getTransposed() ? 0 : 1);
  return verifyPackedPanels(*this, getPacked().getType(),
                            weight.getElementType(), k, n);
}

LogicalResult UnpackWeightOp::verify() {
  auto result = getType();
  if (result.getRank() != 2 || !result.hasStaticShape())
    return emitOpError() << "needs a static 2-D result, got "
                         << formatShape(result.getShape());
  return verifyPackedPanels(*this, getPacked().getType(),
                            result.getElementType(), result.getDimSize(0),
                            result.getDimSize(1));
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto input = getInput().getType();
  auto result = getType();
  if (!input.hasStaticShape() || !result.hasStaticShape())
    return emitOpError() << "needs static shapes (input "
                         << formatShape(input.getShape()) << ", result "
                         << formatShape(result.getShape()) << ")";
  if (input.getElementType() != result.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " differs from the input element type "
                         << input.getElementType();
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "result " << formatShape(result.getShape()) << " has "
                         << result.getNumElements() << " elements, the input "
                         << formatShape(input.getShape()) << " has "
                         << input.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

std::optional<double> SdpaOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  int64_t e = getQuery().getType().getShape().back();
  if (ShapedType::isDynamic(e))
    e = getKey().getType().getShape().back();
  if (ShapedType::isDynamic(e))
    return std::nullopt;
  return 1.0 / std::sqrt(static_cast<double>(e));
}

double SdpaOp::getEffectiveMaskedValue() {
  if (std::optional<APFloat> v = getMaskedValue())
    return v->convertToDouble();
  return -std::numeric_limits<double>::infinity();
}

MaskBand SdpaOp::getBand() {
  MaskBand band{getWindowLeft(), getWindowRight()};
  if (getIsCausal())
    band = band.intersect(MaskBand{std::nullopt, 0});
  return band;
}

Block *SdpaOp::getScoreModBlock() {
  if (getScoreMod().empty() || getScoreMod().front().empty())
    return nullptr;
  return &getScoreMod().front().front();
}

void SdpaOp::build(OpBuilder &b, OperationState &state, Type result,
                   Value query, Value key, Value value, Value mask,
                   ValueRange extras, bool withScoreMod) {
  build(b, state, result, query, key, value, mask, /*q_lengths=*/Value(),
        /*kv_lengths=*/Value(), /*sinks=*/Value(), extras, /*scale=*/FloatAttr(), /*is_causal=*/false, /*dropout_p=*/APFloat(0.0),
        /*masked_value=*/FloatAttr(), /*seed=*/IntegerAttr(),
        /*window_left=*/IntegerAttr(), /*window_right=*/IntegerAttr(),
        /*safe_softmax=*/false, MaskPolarity::keep, PaddingSide::right,
        withScoreMod ? 1 : 0);
}

SdpaOp SdpaOp::cloneWith(OpBuilder &b, const SdpaChanges &changes) {
  Value mask = changes.mask ? *changes.mask : getMask();
  SmallVector<Value> extras =
      changes.extras ? *changes.extras : SmallVector<Value>(getExtras());
  SmallVector<Value> operands{getQuery(), getKey(), getValue()};
  if (mask)
    operands.push_back(mask);
  for (Value optional : {getQLengths(), getKvLengths(), getSinks()})
    if (optional)
      operands.push_back(optional);
  llvm::append_range(operands, extras);
  Properties props = getProperties();
  props.operandSegmentSizes = {1,
                               1,
                               1,
                               mask ? 1 : 0,
                               getQLengths() ? 1 : 0,
                               getKvLengths() ? 1 : 0,
                               getSinks() ? 1 : 0,
                               static_cast<int32_t>(extras.size())};
  bool boolMask =
      mask &&
      cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1);
  MaskPolarity polarity = changes.maskPolarity.value_or(getMaskPolarity());
  props.setMaskPolarity(MaskPolarityAttr::get(
      getContext(), boolMask ? polarity : MaskPolarity::keep));
  SmallVector<NamedAttribute> discardable((*this)->getDiscardableAttrs());
  OperationState state(getLoc(), getOperationName(), operands, {getType()},
                       discardable);
  state.useProperties(props);
  Block *block = getScoreModBlock();
  if (changes.scoreMod == SdpaChanges::Region::Empty ||
      (changes.scoreMod == SdpaChanges::Region::Copy && block))
    state.addRegion();
  auto copy = cast<SdpaOp>(b.create(state));
  if (changes.scoreMod == SdpaChanges::Region::Copy && block) {
    IRMapping mapping;
    getScoreMod().front().cloneInto(&copy.getScoreMod().front(), mapping);
  }
  return copy;
}

LogicalResult mlir::attn::detail::inferSdpaOperandSegments(Operation *op) {
  auto &sizes = cast<SdpaOp>(op).getProperties().operandSegmentSizes;
  if (llvm::any_of(sizes, [](int32_t size) { return size != 0; }) ||
      op->getNumOperands() < 3)
    return success(); // given (or too few operands, which is reported)
  // The region's arguments past the score and one index per score dim are
  // the extra operands; an operand before them is the mask (lengths need
  // the segment sizes: one integer operand could be either, and so do
  // sinks: a float [H] could be a mask).
  int32_t rest = op->getNumOperands() - 3, extras = 0;
  auto query = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (query && op->getNumRegions() == 1 && !op->getRegion(0).empty()) {
    int32_t fixed = 1 + query.getRank();
    int32_t args = op->getRegion(0).front().getNumArguments();
    extras = std::clamp(args - fixed, 0, rest);
  }
  if (rest - extras > 1)
    return op->emitOpError()
           << "has " << rest << " operands after 'value' but its score_mod "
           << "region reads " << extras
           << " extra operand(s): at most one mask can precede them";
  sizes = {1, 1, 1, rest - extras, 0, 0, 0, extras};
  return success();
}

Value SdpaOp::buildScoreMod(OpBuilder &b, Value score, ValueRange indices,
                           ValueRange extraElements) {
  Block *block = getScoreModBlock();
  if (!block)
    return score;
  IRMapping mapping;
  mapping.map(block->getArgument(0), score);
  for (auto [arg, v] : llvm::zip_equal(
           block->getArguments().slice(1, indices.size()), indices))
    mapping.map(arg, v);
  for (auto [arg, v] : llvm::zip_equal(
           block->getArguments().drop_front(1 + indices.size()),
           extraElements))
    mapping.map(arg, v);
  for (Operation &op : block->without_terminator())
    b.clone(op, mapping);
  return mapping.lookup(cast<YieldOp>(block->getTerminator()).getScore());
}

bool SdpaOp::hasBoolMask() {
  return getMask() &&
         cast<RankedTensorType>(getMask().getType()).getElementType().isInteger(
             1);
}

bool SdpaOp::hasAdditiveMask() { return getMask() && !hasBoolMask(); }

Speculation::Speculatability SdpaOp::getSpeculatability() {
  // A `?` dim is checked against its partners when the op runs, and so are
  // the values of sequence lengths.
  if (hasLengths())
    return Speculation::NotSpeculatable;
  bool allStatic = llvm::all_of(getOperandTypes(), [](Type t) {
    return cast<RankedTensorType>(t).hasStaticShape();
  });
  return allStatic ? Speculation::Speculatable : Speculation::NotSpeculatable;
}

/// Checks that `operand` (`what`, for messages) broadcasts to the scores
/// shape `scores` as the mask and the extra operands must.
static LogicalResult verifyBroadcastsToScores(SdpaOp op, Value operand,
                                              StringRef what,
                                              ArrayRef<int64_t> scores) {
  auto type = cast<RankedTensorType>(operand.getType());
  FailureOr<SmallVector<int64_t>> b = broadcastShapes(scores, type.getShape());
  if (type.getRank() < 1 || type.getRank() > static_cast<int64_t>(scores.size()) ||
      failed(b) || !isCompatibleShape(*b, scores))
    return op.emitOpError() << what << " of shape " << formatShape(type.getShape())
                            << " does not broadcast to the scores shape "
                            << formatShape(scores);
  return success();
}

/// The score_mod region: one block taking (score, one index per score dim,
/// one element per extra operand), yielding the new score; scalar arith and
/// math code.
static LogicalResult verifyScoreMod(SdpaOp op, ArrayRef<int64_t> scores) {
  if (op.getScoreMod().size() > 1)
    return op.emitOpError() << "has " << op.getScoreMod().size()
                            << " regions; at most one (score_mod) is allowed";
  Block *block = op.getScoreModBlock();
  if (!block) {
    if (!op.getExtras().empty())
      return op.emitOpError() << "has " << op.getExtras().size()
                              << " extra operand(s) but no score_mod region "
                                 "to read them";
    return success();
  }
  Type ct = getComputeType(op.getQuery().getType().getElementType());
  unsigned rank = scores.size();
  if (block->getNumArguments() < 1 + rank ||
      block->getArgument(0).getType() != ct)
    return op.emitOpError() << "score_mod must take the score (" << ct
                            << ") and " << rank
                            << " indices (one per score dim) first";
  for (unsigned i = 1; i <= rank; ++i)
    if (!block->getArgument(i).getType().isIndex())
      return op.emitOpError() << "score_mod argument " << i
                              << " must be an index (score dim " << i - 1
                              << "), got " << block->getArgument(i).getType();
  unsigned numExtras = block->getNumArguments() - 1 - rank;
  if (op.getExtras().size() != numExtras)
    return op.emitOpError()
           << "score_mod reads " << numExtras
           << " extra operand(s), but the op has " << op.getExtras().size();
  for (auto [i, extra] : llvm::enumerate(op.getExtras())) {
    std::string what = "extra operand " + std::to_string(i);
    if (failed(verifyBroadcastsToScores(op, extra, what, scores)))
      return failure();
    Type et = cast<RankedTensorType>(extra.getType()).getElementType();
    Type argType = block->getArgument(1 + rank + i).getType();
    if (argType != et)
      return op.emitOpError() << "score_mod argument " << 1 + rank + i
                              << " has type " << argType << ", but "
                              << what << " has element type " << et;
  }
  // The op's verifier runs before its blocks are checked for terminators:
  // an empty block has no back() to read.
  auto yield = block->empty() ? YieldOp() : dyn_cast<YieldOp>(block->back());
  if (!yield || yield.getScore().getType() != ct)
    return op.emitOpError() << "score_mod must end with 'attn.yield' of the "
                            << "new score (" << ct << ")";
  for (Operation &inner : block->without_terminator()) {
    StringRef ns = inner.getDialect() ? inner.getDialect()->getNamespace() : "";
    // Values from outside cannot be read: the op is IsolatedFromAbove.
    if ((ns != "arith" && ns != "math") || inner.getNumRegions() != 0)
      return inner.emitOpError()
             << "is not allowed in an attn.sdpa score_mod (scalar arith and "
                "math ops only)";
  }
  return success();
}

/// The packed layout: both lengths, of one size (the number of sequences,
/// not a dim of the query), and none of the operands whose indices would
/// have to be those of the packed tokens.
static LogicalResult verifyPackedLengths(SdpaOp op) {
  if (!op.getQLengths() || !op.getKvLengths())
    return op.emitOpError()
           << "the packed layout ('padding_side' packed) needs both "
              "'q_lengths' and 'kv_lengths'";
  int64_t nq = op.getQLengths().getType().getDimSize(0);
  int64_t nkv = op.getKvLengths().getType().getDimSize(0);
  if (!sameStaticOrDynamic(nq, nkv))
    return op.emitOpError()
           << "'q_lengths' has " << nq << " lengths and 'kv_lengths' " << nkv
           << ": the packed layout needs one of each per sequence";
  if (op.getMask())
    return op.emitOpError()
           << "a mask is not supported with the packed layout ('padding_side' "
              "packed)";
  if (op.getScoreModBlock())
    return op.emitOpError() << "a score_mod region is not supported with the "
                               "packed layout ('padding_side' packed)";
  if (op.getDropoutP().convertToDouble() != 0.0)
    return op.emitOpError() << "'dropout_p' > 0 is not supported with the "
                               "packed layout ('padding_side' packed)";
  return success();
}

/// q_lengths and kv_lengths: [B] with B the query's first dim (a batch
/// dim), and the -inf masked value that lets padded keys take no part.
static LogicalResult verifyLengths(SdpaOp op) {
  if (op.isPacked() && failed(verifyPackedLengths(op)))
    return failure();
  if (!op.hasLengths())
    return success();
  ArrayRef<int64_t> qs = op.getQuery().getType().getShape();
  if (qs.size() < 3)
    return op.emitOpError()
           << "sequence lengths need a batch dim: 'query' must have rank >= "
              "3 ([B, ..., L, E]), got shape "
           << formatShape(qs);
  for (auto [name, lengths] :
       {std::pair<StringRef, Value>{"q_lengths", op.getQLengths()},
        std::pair<StringRef, Value>{"kv_lengths", op.getKvLengths()}}) {
    if (!lengths)
      continue;
    int64_t n = cast<RankedTensorType>(lengths.getType()).getDimSize(0);
    if (!op.isPacked() && !sameStaticOrDynamic(n, qs[0]))
      return op.emitOpError()
             << "'" << name << "' has " << n << " lengths, but the 'query' "
             << "batch dim 0 has " << qs[0]
             << " sequences (one length per sequence)";
  }
  double mv = op.getEffectiveMaskedValue();
  if (!(std::isinf(mv) && mv < 0))
    return op.emitOpError() << "'masked_value' must be -inf (absent) with "
                               "sequence lengths, got "
                            << numStr(mv);
  return success();
}

/// sinks: [H], H the query's head dim (third from the end), not with
/// dropout (the dropped-out probabilities of a softmax with a sink are not
/// a contract we keep).
static LogicalResult verifySinks(SdpaOp op) {
  Value sinks = op.getSinks();
  if (!sinks)
    return success();
  ArrayRef<int64_t> qs = op.getQuery().getType().getShape();
  if (qs.size() < 3)
    return op.emitOpError()
           << "'sinks' need a head dim: 'query' must have rank >= 3 ([..., "
              "H, L, E]), got shape "
           << formatShape(qs);
  int64_t n = cast<RankedTensorType>(sinks.getType()).getDimSize(0);
  int64_t heads = qs[qs.size() - 3];
  if (!sameStaticOrDynamic(n, heads))
    return op.emitOpError()
           << "'sinks' has " << n << " elements, but the 'query' head dim "
           << "(third from the end) has " << heads
           << " heads (one sink per query head)";
  if (op.getDropoutP().convertToDouble() != 0.0)
    return op.emitOpError() << "'sinks' and 'dropout_p' > 0 are not supported "
                               "together";
  return success();
}

LogicalResult SdpaOp::verify() {
  auto q = getQuery().getType();
  auto k = getKey().getType();
  auto v = getValue().getType();
  int64_t rank = q.getRank();
  if (rank < 2)
    return emitOpError() << "'query' must have rank >= 2 ([..., L, E]), got "
                            "shape "
                         << formatShape(q.getShape());
  if (k.getRank() != rank || v.getRank() != rank)
    return emitOpError() << "'query', 'key' and 'value' must have the same "
                            "rank, got shapes "
                         << formatShape(q.getShape()) << ", "
                         << formatShape(k.getShape()) << " and "
                         << formatShape(v.getShape());
  Type et = q.getElementType();
  if (k.getElementType() != et || v.getElementType() != et)
    return emitOpError() << "'query', 'key' and 'value' must share one "
                            "element type, got "
                         << et << ", " << k.getElementType() << " and "
                         << v.getElementType();
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  int64_t l = qs[rank - 2], e = qs[rank - 1];
  int64_t s = ks[rank - 2], ev = vs[rank - 1];
  if (!sameStaticOrDynamic(ks[rank - 1], e))
    return emitOpError() << "'key' head dim " << ks[rank - 1]
                         << " differs from the 'query' head dim " << e
                         << " (query " << formatShape(qs) << ", key "
                         << formatShape(ks) << ")";
  if (!sameStaticOrDynamic(vs[rank - 2], s))
    return emitOpError() << "'value' sequence length " << vs[rank - 2]
                         << " differs from the 'key' sequence length " << s
                         << " (key " << formatShape(ks) << ", value "
                         << formatShape(vs) << ")";
  for (int64_t i = 0; i < rank - 2; ++i) {
    if (!sameStaticOrDynamic(ks[i], vs[i]))
      return emitOpError() << "'key' and 'value' batch dims differ: "
                           << formatShape(ks) << " vs " << formatShape(vs);
    if (ShapedType::isDynamic(qs[i]) || ShapedType::isDynamic(ks[i]) ||
        ks[i] == qs[i] || ks[i] == 1)
      continue;
    bool isHeadDim = i == rank - 3;
    if (isHeadDim && ks[i] > 0 && qs[i] % ks[i] == 0)
      continue;
    return emitOpError() << "'key' batch dim " << i << " (" << ks[i]
                         << ") must equal the 'query' one (" << qs[i]
                         << ") or be 1"
                         << (isHeadDim ? ", or divide it (grouped-query "
                                         "attention)"
                                       : "");
  }
  SmallVector<int64_t> scores(qs.drop_back(2));
  scores.push_back(l);
  scores.push_back(s);
  if (failed(verifyScoreMod(*this, scores)))
    return failure();
  // The element types (i1 or float, any float for an additive mask) are
  // checked by the operand constraint.
  if (Value mask = getMask())
    if (failed(verifyBroadcastsToScores(*this, mask, "'mask'", scores)))
      return failure();
  if (maskDrops() && !hasBoolMask())
    return emitOpError() << "'mask_polarity' drop needs a boolean mask";
  if (failed(verifyLengths(*this)) || failed(verifySinks(*this)))
    return failure();
  if (std::optional<APFloat> scale = getScale())
    if (!scale->isFinite())
      return emitOpError() << "'scale' must be finite";
  double p = getDropoutP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError() << "'dropout_p' must be in [0, 1), got " << numStr(p);
  if (std::optional<APFloat> mv = getMaskedValue())
    if (mv->isNaN())
      return emitOpError() << "'masked_value' must not be NaN";
  SmallVector<int64_t> resultShape(qs.drop_back(1));
  resultShape.push_back(ev);
  return verifyResultType(*this, RankedTensorType::get(resultShape, et),
                          getType());
}
