//===- AttnOps.h - attn dialect ops -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <string>

namespace mlir::attn {

/// NumPy broadcast of two shapes (dynamic dims broadcast with anything but a
/// mismatching static size). Fails when a pair of static sizes differ and
/// neither is 1.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

/// The result type of an elementwise op over `operands` with NumPy
/// broadcasting and PyTorch's scalar rule (a rank-0 operand takes the other
/// operands' element type). Null when the shapes do not broadcast.
RankedTensorType inferElementwiseType(ArrayRef<Value> operands);

/// True for f16, bf16, f32 and f64.
bool isAttnFloatType(Type type);

/// A shape as `2x8x?x64` (`scalar` for rank 0), for diagnostics.
std::string formatShape(ArrayRef<int64_t> shape);

/// The type elementwise arithmetic on `elementType` computes in: f32 for
/// f16/bf16 (and f32), f64 for f64. Results round to the element type once.
Type getComputeType(Type elementType);

/// Converts a float scalar (or vector) to `to`: widening is exact, narrowing
/// rounds to nearest even, f16 <-> bf16 goes through f32 (one rounding).
Value castFloat(OpBuilder &b, Location loc, Value v, Type to);

/// A band of key columns per query row: key j of row i takes part iff
/// i - left <= j <= i + right (top-left aligned indices); nullopt is
/// unbounded on that side. Both unbounded keeps every position; `right ==
/// 0` alone is causality.
struct MaskBand {
  std::optional<int64_t> left, right;

  bool keepsAll() const { return !left && !right; }
  /// The intersection with `other`.
  MaskBand intersect(const MaskBand &other) const;
  /// True when key j of row i takes part.
  bool keeps(int64_t i, int64_t j) const {
    return (!left || j >= i - *left) && (!right || j <= i + *right);
  }
};

/// `x` when `v` is `arith.xori %x, true` (a splat true on either side): the
/// inversion of a boolean tensor; null otherwise.
Value getInvertedOperand(Value v);

/// The band a constant i1 mask over scores [..., l, s] keeps, or nullopt
/// when it is no band (or spans less than the full l x s while not keeping
/// everything, or masks every row). `keepValue` is the element value that
/// means "takes part": true for attn.sdpa and attn.where, false for
/// attn.masked_fill.
std::optional<MaskBand> classifyConstantBoolMask(DenseElementsAttr attr,
                                                 int64_t l, int64_t s,
                                                 bool keepValue);

} // namespace mlir::attn

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

namespace mlir::attn {

/// What SdpaOp::cloneWith changes in the op it copies; every field left
/// unset keeps the op's.
struct SdpaChanges {
  /// The mask operand; a null Value removes it.
  std::optional<Value> mask;
  /// The boolean mask's polarity. A copy without a boolean mask has the
  /// default (keep).
  std::optional<MaskPolarity> maskPolarity;
  /// The extra operands of the score_mod region.
  std::optional<SmallVector<Value>> extras;
  /// The score_mod region: a copy of the op's, none, or one empty region
  /// whose block the caller builds.
  enum class Region { Copy, None, Empty };
  Region scoreMod = Region::Copy;
};

namespace detail {
LogicalResult inferSdpaOperandSegments(Operation *op);
} // namespace detail

/// attn.sdpa in generic form without `operandSegmentSizes` (other tools
/// write `"attn.sdpa"(%q, %k, %v[, %mask][, extras...])`): the segments are
/// inferred from the operand count and the score_mod region's arguments
/// before AttrSizedOperandSegments checks them. Ops built in C++ or parsed
/// from the custom form always have them.
template <typename ConcreteType>
class InferSdpaOperandSegments
    : public OpTrait::TraitBase<ConcreteType, InferSdpaOperandSegments> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::inferSdpaOperandSegments(op);
  }
};

} // namespace mlir::attn

#include "attn/Dialect/Attn/IR/AttnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

namespace mlir::attn {
/// Sets `band` on `op` in its canonical spelling: `right == 0` is
/// is_causal, other bounds are window attributes.
void setBand(SdpaOp op, const MaskBand &band);
} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
