//===- AttnScalar.cpp - the scalar function of each elementwise attn op ---===//
//
// ScalarElementwiseOpInterface: one definition per op of what it computes at
// one position. The CPU lowering emits it as its loop body and the fusion
// raises chains into attn.sdpa score_mod regions with it.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnInterfaces.cpp.inc"

Type mlir::attn::getComputeType(Type elementType) {
  if (elementType.isF64())
    return elementType;
  return Float32Type::get(elementType.getContext());
}

Value mlir::attn::castFloat(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = cast<FloatType>(getElementTypeOrSelf(from));
  auto toF = cast<FloatType>(getElementTypeOrSelf(to));
  if (fromF.getWidth() < toF.getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  if (fromF.getWidth() > toF.getWidth())
    return arith::TruncFOp::create(b, loc, to, v);
  // f16 <-> bf16: widen exactly to f32, then round once.
  Type wide = b.getF32Type();
  if (auto vec = dyn_cast<VectorType>(to))
    wide = vec.clone(wide);
  Value w = arith::ExtFOp::create(b, loc, wide, v);
  return arith::TruncFOp::create(b, loc, to, w);
}

/// The result element type of an elementwise op.
static Type resultElementType(Operation *op) {
  return getElementTypeOrSelf(op->getResult(0).getType());
}

/// `f(operands...)` in the compute type of the result, rounded once to the
/// result element type. For + - * / on f16/bf16 this is the exactly rounded
/// half-precision result; a rank-0 operand of another float type (a scalar)
/// takes part at compute precision, as PyTorch's CPU scalar path does.
template <typename ArithOp>
static Value computeAndRound(OpBuilder &b, Location loc, Operation *op,
                             ValueRange operands) {
  Type et = resultElementType(op);
  Type ct = getComputeType(et);
  SmallVector<Value> wide;
  for (Value v : operands)
    wide.push_back(castFloat(b, loc, v, ct));
  Value r = ArithOp::create(b, loc, wide);
  return castFloat(b, loc, r, et);
}

#define ATTN_SCALAR_VIA(OpTy, ArithOp)                                         \
  Value OpTy::buildScalar(OpBuilder &b, Location loc, ValueRange operands) {   \
    return computeAndRound<ArithOp>(b, loc, getOperation(), operands);         \
  }
ATTN_SCALAR_VIA(MulOp, arith::MulFOp)
ATTN_SCALAR_VIA(DivOp, arith::DivFOp)
ATTN_SCALAR_VIA(AddOp, arith::AddFOp)
ATTN_SCALAR_VIA(SubOp, arith::SubFOp)
ATTN_SCALAR_VIA(MaximumOp, arith::MaximumFOp)
ATTN_SCALAR_VIA(MinimumOp, arith::MinimumFOp)
ATTN_SCALAR_VIA(TanhOp, math::TanhOp)
ATTN_SCALAR_VIA(ExpOp, math::ExpOp)
ATTN_SCALAR_VIA(NegOp, arith::NegFOp)
ATTN_SCALAR_VIA(AbsOp, math::AbsFOp)
#undef ATTN_SCALAR_VIA

static arith::CmpFPredicate toArith(CmpPredicate predicate) {
  switch (predicate) {
  case CmpPredicate::eq:
    return arith::CmpFPredicate::OEQ;
  case CmpPredicate::ne:
    return arith::CmpFPredicate::UNE;
  case CmpPredicate::lt:
    return arith::CmpFPredicate::OLT;
  case CmpPredicate::le:
    return arith::CmpFPredicate::OLE;
  case CmpPredicate::gt:
    return arith::CmpFPredicate::OGT;
  case CmpPredicate::ge:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("covered switch");
}

Value CmpOp::buildScalar(OpBuilder &b, Location loc, ValueRange operands) {
  // Both sides at the precision of the wider operand (a rank-0 scalar of
  // another type compares at compute precision).
  Type ct = getComputeType(getLhs().getType().getElementType());
  Value lhs = castFloat(b, loc, operands[0], ct);
  Value rhs = castFloat(b, loc, operands[1], ct);
  return arith::CmpFOp::create(b, loc, toArith(getPredicate()), lhs, rhs);
}

Value MaskedFillOp::buildScalar(OpBuilder &b, Location loc,
                                ValueRange operands) {
  // The fill value is rounded to the element type (as PyTorch does).
  Type et = getType().getElementType();
  Value fill = arith::ConstantOp::create(
      b, loc, et, b.getFloatAttr(et, getValue().convertToDouble()));
  return arith::SelectOp::create(b, loc, operands[1], fill, operands[0]);
}

Value WhereOp::buildScalar(OpBuilder &b, Location loc, ValueRange operands) {
  Type et = getType().getElementType();
  Value a = castFloat(b, loc, operands[1], et);
  Value c = castFloat(b, loc, operands[2], et);
  return arith::SelectOp::create(b, loc, operands[0], a, c);
}

Value CastOp::buildScalar(OpBuilder &b, Location loc, ValueRange operands) {
  return castFloat(b, loc, operands[0], getType().getElementType());
}
