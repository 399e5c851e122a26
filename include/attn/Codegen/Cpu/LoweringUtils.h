//===- LoweringUtils.h - shared helpers of the attn-to-CPU lowering -------===//

#ifndef ATTN_CODEGEN_CPU_LOWERINGUTILS_H
#define ATTN_CODEGEN_CPU_LOWERINGUTILS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::attn::cpu {

// getComputeType and castFloat come from the dialect (AttnOps.h): the
// fusion's score_mod regions use the same rounding rules.
using ::mlir::attn::castFloat;
using ::mlir::attn::getComputeType;

/// True when a float value of type `from` can be converted to `to` with a
/// single rounding by the lowering (f64 -> f16/bf16 cannot).
bool isSupportedFloatCast(Type from, Type to);

/// `value` rounded (to nearest even) to `type`, as a constant of that type.
Value createFloatConstant(OpBuilder &b, Location loc, Type type, double value);

/// createFloatConstant for a float type or a vector of one (a broadcast).
Value createFloatConstantOfType(OpBuilder &b, Location loc, Type type,
                                double value);

/// `value` rounded to `type`, returned as a double (for attributes that the
/// contract says are first rounded to the element type).
double roundToType(Type type, double value);

/// The size of `dim` of `tensor` (a constant index when static).
Value getDimSize(OpBuilder &b, Location loc, Value tensor, int64_t dim);

/// tensor.expand_shape of `x` to `type` (`sizes`: the result's sizes), or
/// the same reshape as tensor.reshape where a group splits one dim into
/// several dynamic dims (rows [B * T] back to [B, T]): MLIR 22's
/// expand-strided-metadata crashes on the memref.expand_shape of such a
/// group.
Value buildExpandShape(OpBuilder &b, Location loc, RankedTensorType type,
                       Value x, ArrayRef<ReassociationIndices> groups,
                       ArrayRef<OpFoldResult> sizes);

/// The indexing map of an operand of type `operandType` into a loop nest
/// over `resultRank` dims (the operand's dims are aligned to the trailing
/// loop dims, NumPy style). Static size-1 dims that broadcast against a
/// non-1 result dim read index 0.
AffineMap getBroadcastMap(RankedTensorType operandType,
                          ArrayRef<int64_t> resultShape, unsigned numLoops,
                          unsigned firstLoop, MLIRContext *ctx);

/// The dynamic sizes of the broadcast of `operands` to `resultType`. Where
/// two operands have a dynamic size in one position, they are assumed equal
/// (a runtime size-1 broadcast of a `?` dim is not supported) and a cf.assert
/// checks it.
SmallVector<Value> getBroadcastDynamicSizes(OpBuilder &b, Location loc,
                                            RankedTensorType resultType,
                                            ValueRange operands);

/// Emits `cf.assert(a == b, message)` unless both are the same constant.
void assertEqualSizes(OpBuilder &b, Location loc, Value a, Value c,
                      StringRef message);

/// The layout of contiguous rows at any row strides and offset:
/// strided<[?, ..., ?, 1], offset: ?> of rank `rank` (at least 1).
StridedLayoutAttr getContiguousRowsLayout(MLIRContext *ctx, int64_t rank);

/// A read-only buffer view of `tensor` (bufferization.to_buffer): contiguous
/// rows at dynamic row strides and offset, so that a slice of rows needs no
/// copy (the identity layout where the rows may be strided).
Value toReadOnlyBuffer(OpBuilder &b, Location loc, Value tensor);

/// The input of `tensor`'s producer when it is a transpose (attn.transpose
/// or linalg.transpose on tensors) that keeps the last dim in place, with
/// its permutation (result dim i is input dim perm[i]); null otherwise.
Value getRowTransposeSource(Value tensor, SmallVectorImpl<int64_t> &perm);

/// toReadOnlyBuffer, read through a transpose that keeps the last dim (a
/// [B, T, H, D] projection viewed as [B, H, T, D]): the transpose's input
/// as a permuted view (memref.transpose), its rows still contiguous,
/// instead of a transposed copy.
Value toReadOnlyBufferThroughTranspose(OpBuilder &b, Location loc,
                                       Value tensor);

/// A read-only view of the vector `row` (a 1-D buffer of unit stride) as a
/// buffer of `type`'s shape whose every row is `row`: stride 0 along all
/// dims but the last. `sizes` gives each dim (used where `type`'s is
/// dynamic).
Value broadcastRows(OpBuilder &b, Location loc, Value row, ShapedType type,
                    ArrayRef<Value> sizes);

/// A 64-byte aligned buffer of `elementType` and `sizes` (freed by the
/// buffer deallocation pipeline).
Value allocAligned(OpBuilder &b, Location loc, Type elementType,
                   ArrayRef<OpFoldResult> sizes);

/// An scf.for over [lo, hi) by `step` with no loop-carried values.
void buildForLoop(OpBuilder &b, Location loc, Value lo, Value hi, Value step,
                  function_ref<void(Value)> body);

/// A value built by `few` when a row count is at most `maxRows`, by `many`
/// otherwise: chosen here for a static count (`staticRows`), by an scf.if
/// on `rows` at run time for a dynamic one. What a product lowering uses to
/// pick its few-rows kernel (a GEMV) over its GEMM.
using RowsBuilderFn = function_ref<Value(OpBuilder &, Location)>;
Value buildRowCountChoice(OpBuilder &b, Location loc, int64_t staticRows,
                          Value rows, int64_t maxRows, RowsBuilderFn few,
                          RowsBuilderFn many);

/// tensor.empty of `type` with the given dynamic sizes.
Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamicSizes);

/// linalg.fill of `value` into a new tensor of `type`.
Value createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                   ValueRange dynamicSizes, double value);

/// An elementwise linalg.generic producing `resultType` from `inputs`
/// (broadcast NumPy style). `body` gets the scalar inputs and returns the
/// result element. With `replacing` (the op the result replaces), an input
/// that findReusableInput accepts is the generic's init instead of a new
/// tensor, so that bufferization writes the result over it in place.
using ElementwiseBodyFn =
    function_ref<Value(OpBuilder &, Location, ValueRange)>;
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ElementwiseBodyFn body,
                       Operation *replacing = nullptr);

/// An input of `user` (an op being lowered to an elementwise result of
/// `resultType`) whose buffer the result may overwrite, or null: one of the
/// same type, that occurs once among `inputs`, whose buffer this lowering
/// allocated (a restrict, writable bufferization.to_tensor or a
/// tensor.empty, possibly through destination-passing ops that write into
/// it; never a function argument, which bufferization would also write in
/// place), and that has no use after `user` in its block. Such an init lets
/// one-shot bufferization reuse the buffer instead of allocating one (the
/// buffers of a function are freed at its end, so every [L, S] temporary of
/// an unfused chain would otherwise stay allocated).
Value findReusableInput(Operation *user, RankedTensorType resultType,
                        ValueRange inputs);

/// An all-parallel linalg.generic on tensors with one init and one result:
/// the form of every elementwise op the lowering emits. False for null.
bool isElementwiseGeneric(Operation *op);

/// Upstream linalg elementwise fusion on the all-parallel generics of one
/// result in `root` that `filter` accepts (all without one): a producer
/// goes into its consumer when the consumer is its only user and the fused
/// body has at most `maxBodyOps` ops; in-place generics are taken out of
/// place first and put back where findReusableInput allows after
/// (attn-cpu-fuse-elementwise).
LogicalResult
fuseElementwiseGenerics(Operation *root, int64_t maxBodyOps,
                        function_ref<bool(Operation *)> filter = nullptr);

/// The counter-based dropout RNG shared by attn.dropout and attn.sdpa's math
/// path: element `flatIndex` (row-major index in the dropped-out tensor) is
/// kept iff `u >= p`, where `u` is the top 24 bits of
/// fmix64(flatIndex * 0x9E3779B97F4A7C15 + seed * 0xD1B54A32D192ED03) (the
/// MurmurHash3 finaliser) divided by 2^24. Returns `x / (1 - p)` or 0.
/// `x` is in the compute type; `flatIndex` is an index value.
Value buildDropoutElement(OpBuilder &b, Location loc, Value x, Value flatIndex,
                          double p, int64_t seed);

/// The row-major flat index of the current linalg.generic iteration over
/// `sizes` (index values), from linalg.index ops.
Value buildFlatIndex(OpBuilder &b, Location loc, ArrayRef<Value> sizes);

/// The seed of a dropout: the op's `seed` integer attribute, else 0.
int64_t getDropoutSeed(Operation *op);

/// Elements of `elementType` per vector of `vectorBits`, at least 1.
int64_t getVectorLanes(Type elementType, int64_t vectorBits);

/// The safe softmax's rule for a probability `p` (scalar or vector) of a
/// slice with max `max`: 0 where `max` is -inf (maximumf propagates NaN and
/// +inf, so every entry of the slice is -inf there), else `p`.
Value buildZeroWhereAllMasked(OpBuilder &b, Location loc, Value max, Value p);

/// Fast-math flags that let LLVM vectorise float reductions.
arith::FastMathFlagsAttr getReassocFlags(MLIRContext *ctx);

/// Runs the checks of every attn op's lowering that need a diagnostic
/// (unsupported element type combinations); emits a located error and
/// fails on the first unsupported op.
LogicalResult checkLowerableToCpu(Operation *op);

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_LOWERINGUTILS_H
