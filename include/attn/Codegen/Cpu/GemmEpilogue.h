//===- GemmEpilogue.h - the elementwise code a product applies as it stores ==//
//
// A projection's result is rarely the model's value: the exporter rounds
// it to bf16/f16, then an activation (GELU, SiLU), a gate (SiLU(gate) x
// up) or a residual add reads it once, each in a loop of its own over an
// activation of megabytes. The GEMM and the GEMV apply those consumers to
// each result while it is still in registers and store only the last
// one's value: the intermediate tensors are never written or read back.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_GEMMEPILOGUE_H
#define ATTN_CODEGEN_CPU_GEMMEPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn::cpu {

/// The ops through which the f32 result of a linalg.matmul or
/// linalg.batch_matmul reaches its last consumer that the product applies
/// itself:
/// - `reshapes`: single-use tensor.expand_shape/collapse_shape ops and
///   tensor.reshape ops of the value as their source (the exporter's
///   reshapes, of run-time sizes in a dynamic prefill step), before the
///   rounding or after it;
/// - `rounding`: an elementwise linalg.generic whose body is `arith.truncf`
///   (default rounding) of its one input to bf16/f16 (identity maps), what
///   the exporter emits after every bf16 projection; or null;
/// - `elementwise`: then, elementwise ops that each read the previous value
///   once and nothing else of its shape but tensors of the same shape at
///   the same index (isEpilogueGeneric; before the elementwise attn ops
///   are lowered, also those of them whose operands all have the result's
///   shape).
/// Each value on the way has one use, the next op, in the product's block.
/// Empty when neither a rounding nor an elementwise op follows.
struct ProductConsumers {
  SmallVector<Operation *> reshapes;
  linalg::GenericOp rounding;
  SmallVector<Operation *> elementwise;
  /// The value the first elementwise op reads.
  Value epilogueInput;

  bool empty() const { return !rounding && elementwise.empty(); }
  /// Every op above, in program order.
  ArrayRef<Operation *> getOps() const { return ops; }
  /// Forgets the elementwise ops and the reshapes after the rounding (the
  /// product then ends at the rounding); empty if there is no rounding.
  void dropElementwise();

private:
  friend ProductConsumers getProductConsumers(Operation *matmul);
  SmallVector<Operation *> ops;
};
ProductConsumers getProductConsumers(Operation *matmul);

/// The vector [N] that every row of `init` ([..., N]) holds, or null: a
/// linalg.broadcast of it along all dims but the last, or a linalg.generic
/// that reads it at the last dim only and yields it (extended to `accType`
/// or as it is), through reshapes that keep the last dim as a group of its
/// own. nn.Linear's bias, as the exporter writes it (x . W^T + b as a
/// product onto the broadcast bias). The product starts at the vector
/// instead of reading the broadcast tensor.
Value getBroadcastRow(Value init, Type accType);

/// Whether `op` is a generic that only rounds its one input, `input`, to a
/// narrower float: `arith.truncf` (default rounding) of f32 to bf16/f16,
/// identity maps.
bool isRoundingGeneric(Operation *op, Value input);

/// An all-parallel linalg.generic on tensors of one result that reads
/// `value` through exactly one operand (an input or its init), every
/// operand with the identity map and every operand it reads of a float
/// type, whose body is scalar ops that apply to vectors lane by lane
/// (ElementwiseMappable, constants) and yields a float: the form a product
/// can apply to each of its results.
bool isEpilogueGeneric(Operation *op, Value value);

/// The consumers a product applies as it stores (ProductConsumers::
/// elementwise, all generics), with the tensors they read besides the
/// product reshaped to the product's result shape.
struct GemmEpilogue {
  /// The type the accumulators are converted to before the first generic
  /// reads them (the rounding's, else the product's).
  Type inputType;
  SmallVector<linalg::GenericOp> generics;
  /// For each generic, for each operand (inputs, then the init): the
  /// tensor it reads at the result's index, or null for the previous value
  /// and for an init the body does not read.
  SmallVector<SmallVector<Value>> reads;
};

/// The epilogue of a linalg product of `productSizes` for its `consumers`
/// (elementwise ones present, all generics): each other tensor read is
/// reshaped back through `consumers.reshapes` at `b`'s insertion point,
/// which must be dominated by every value the generics read.
GemmEpilogue buildGemmEpilogue(OpBuilder &b, Location loc,
                               const ProductConsumers &consumers,
                               ArrayRef<Value> productSizes, Type inputType);

/// Stores a product's results: the accumulators converted to the result's
/// element type, or to the epilogue's input type and through its generics.
class ResultStore {
public:
  /// Reads the epilogue's tensors as buffers at `b`'s insertion point (null
  /// `epilogue`: plain conversions).
  ResultStore(OpBuilder &b, Location loc, const GemmEpilogue *epilogue);

  /// Stores `acc` (a compute-type scalar, or a vector of them) into `out`
  /// at `indices` (a vector: at the first of its consecutive elements
  /// along the last dim).
  void store(OpBuilder &b, Location loc, Value acc, Value out,
             ValueRange indices) const;

private:
  const GemmEpilogue *epilogue;
  /// The buffers of epilogue->reads, in the same places.
  SmallVector<SmallVector<Value>> buffers;
};

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_GEMMEPILOGUE_H
