//===- AttnOps.h - attn dialect ops -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
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

} // namespace mlir::attn

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
