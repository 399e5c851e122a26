//===- GemmToCpu.h - register-tiled matrix products for the CPU -----------===//

#ifndef LIB_CONVERSION_ATTNTOCPU_GEMMTOCPU_H
#define LIB_CONVERSION_ATTNTOCPU_GEMMTOCPU_H

#include "attn/Codegen/Cpu/GemmEpilogue.h"
#include "attn/Codegen/Cpu/GemmTiling.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::attn::cpu {

struct QuantizedRows;
struct QuantizedWeight;

/// result[b..., m, n] = init[b..., m, n] + sum_k lhs[b..., m, k] *
/// rhs[b..., k, n], accumulated in the compute type of the result's element
/// type (f32, or f64 for f64) and rounded once to the element type.
struct GemmOperands {
  /// Tensors [batch..., M, K] and [batch..., K, N] of any float type. Their
  /// batch dims align to the result's trailing batch dims (NumPy style): a
  /// static 1 against a result dim other than 1 is broadcast, any other
  /// size must equal the result's (checked by the caller).
  Value lhs, rhs;
  /// A tensor of the result's shape (in its element type or the compute
  /// type) to accumulate onto, or null: then every row starts at `initRow`
  /// when that is set, else every element at `initValue` (a scalar of the
  /// result's element type), or at 0 when that is null too.
  Value init, initValue;
  RankedTensorType resultType;
  /// Every dim of the result as an index value.
  SmallVector<Value> resultSizes;
  /// `rhs` holds the transpose of the right operand, [batch..., N, K]
  /// (nn.Linear's weight as stored): the product reads it in place.
  bool rhsTransposed = false;
  /// `rhs` is the panels of a [K, N] operand packed ahead of time
  /// (attn.pack_weight, getPackedRhsType): [NB, KB, kc, nc] f32, or bf16
  /// pairs [NB, KB, kc / 2, 2 * nc] for the pair path and AMX tiles. The
  /// GEMM reads them in place with blocks of kc and nc instead of packing.
  /// 2-D only.
  bool rhsPacked = false;
  /// Consumers applied to each result before it is stored (the result's
  /// element type is then the last one's), or null.
  const GemmEpilogue *epilogue = nullptr;
  /// A vector [N] (any float type) that every row of the result starts at
  /// (nn.Linear's bias), instead of `init`, or null.
  Value initRow;
  /// `rhs` holds the bytes of a quantized [N, K] weight (a 1-D i8 tensor,
  /// attn.quantized_matmul) in this format, or null. Where a transposed
  /// rhs would be packed, each k block of the panel is dequantized from
  /// the bytes instead (packQuantizedBlock, QuantBlocks.h: the panel pack
  /// of GemmKernel's quantized FMA kernel), or, with quantizedLhs, its
  /// codes packed for the integer kernel; the rest of the GEMM is
  /// unchanged. 2-D products with an f32 compute type.
  const QuantizedWeight *quantizedRhs = nullptr;
  /// With quantizedRhs: the lhs quantized to int8 (GemmKernel.h), or null.
  /// The product is then integer dots of its codes and the weight's codes
  /// (GemmKernel's integer kernel), the lhs tensor unread.
  const QuantizedRows *quantizedLhs = nullptr;
};

/// The buffers a product reads: lhs and rhs as stored, and its start
/// values (`init`, or `initRow` broadcast to every row of the result; null
/// when it starts at a scalar).
struct GemmOperandBuffers {
  Value lhs, rhs, init;
};
GemmOperandBuffers getOperandBuffers(OpBuilder &b, Location loc,
                                     const GemmOperands &operands);

/// Packs `weight` ([K, N], or [N, K] when `transposed`, f32 or bf16,
/// static) into panels of `packedType` (getPackedRhsType), zero-padded,
/// with the GEMM's own pack code; one work item per panel. Returns the
/// packed tensor.
Value buildPackWeight(OpBuilder &b, Location loc, Value weight,
                      bool transposed, RankedTensorType packedType,
                      int64_t vectorBits);

/// Emits the product as a register-blocked GEMM in the vector dialect on
/// buffers (packed rhs panels, work items over batch x row blocks x column
/// blocks in an scf.forall) sized for vectors of the target's width, on
/// the kernel (GemmKernel.h) the target offers for the element types: FMA
/// register tiles, bf16 pair dots where the target multiplies pairs, or
/// AMX tiles where it has them, when attnrt_amx_available() returns 1
/// (checked once per product), and the vector kernel otherwise. A
/// transposed rhs is transposed while it is packed, with no copy of the
/// whole operand. Returns the result tensor.
Value buildGemm(OpBuilder &b, Location loc, const GemmOperands &operands,
                const Target &target);

} // namespace mlir::attn::cpu

#endif // LIB_CONVERSION_ATTNTOCPU_GEMMTOCPU_H
