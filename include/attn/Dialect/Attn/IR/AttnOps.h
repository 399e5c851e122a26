//===- AttnOps.h - attn dialect ops -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

/// The type elementwise arithmetic on `elementType` computes in: f32 for
/// f16/bf16 (and f32), f64 for f64. Results round to the element type once.
Type getComputeType(Type elementType);

/// Converts a float scalar (or vector) to `to`: widening is exact, narrowing
/// rounds to nearest even, f16 <-> bf16 goes through f32 (one rounding).
Value castFloat(OpBuilder &b, Location loc, Value v, Type to);

/// How a constant boolean mask over scores [..., L, S] relates to causality.
enum class ConstantMaskKind {
  Other,
  /// Every position takes part.
  KeepsAll,
  /// Exactly the top-left causal pattern (position j of row i takes part iff
  /// j <= i), spanning the full L x S in every batch slice.
  Causal
};

/// Classifies a constant i1 mask that broadcasts to scores [..., l, s].
/// `keepValue` is the element value that means "takes part": true for
/// attn.sdpa and attn.where, false for attn.masked_fill.
ConstantMaskKind classifyConstantBoolMask(DenseElementsAttr attr, int64_t l,
                                          int64_t s, bool keepValue);

} // namespace mlir::attn

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"
#include "attn/Dialect/Attn/IR/AttnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
