//===- RegisterTile.h - register-blocked FMA tiles for the CPU lowering ---===//
//
// The building blocks that the flash attention and GEMM lowerings share: a
// loop over groups of a static size with a peeled static remainder, the
// register tile (mr broadcast scalars x nv vectors of FMA accumulators,
// carried through an scf.for so that they stay in registers), and the
// packing of a row-major block, or of its transpose, into a contiguous
// compute-type buffer.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_REGISTERTILE_H
#define ATTN_CODEGEN_CPU_REGISTERTILE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::attn::cpu {

/// An index constant.
Value indexConstant(OpBuilder &b, Location loc, int64_t v);

using GroupFn = function_ref<void(Value first, int64_t n)>;
using ScalarLoadFn = function_ref<Value(int64_t r, Value k)>;
using VectorLoadFn = function_ref<Value(int64_t v, Value k)>;

/// Calls `body(first, n)` for consecutive groups covering [lo, hi): groups
/// of `group` in a loop, then the rest: one static group when the bounds
/// are static, else one guarded group per binary digit of the rest (for a
/// group of 6: 4, 2 and 1).
void forGroups(OpBuilder &b, Location loc, Value lo, Value hi, int64_t group,
               GroupFn body);

/// The register tile: returns acc[r * nv + v] + sum_{k < count} a(r, k) *
/// b(v, k), with the mr x nv accumulators (`init`, vectors of one type)
/// carried through an scf.for. Per step: nv vector loads, mr broadcasts,
/// mr * nv FMAs.
SmallVector<Value> buildRegisterTile(OpBuilder &b, Location loc, Value count,
                                     ArrayRef<Value> init, int64_t mr,
                                     int64_t nv, ScalarLoadFn loadA,
                                     VectorLoadFn loadB);

/// A row-major 2-D view of a block of a buffer: element (j, c) is
/// `mem[prefix..., rowOffset + j, colOffset + c]` (a null offset is 0).
/// With `groupRows` (a grouped panel, see kPanelGroup), element (j, c) is
/// `mem[prefix..., (c / kPanelGroup) * groupRows + j, c % kPanelGroup]`
/// (offsets added to j and c first): the buffer holds the view's
/// kPanelGroup-wide column groups one after the other, each of its
/// `groupRows` rows.
struct BlockView {
  Value mem;
  SmallVector<Value> prefix;
  Value rowOffset, colOffset;
  int64_t groupRows = 0;
};

/// The column group of a grouped panel: 32 bf16, the 64 bytes of one row of
/// an AMX B tile (16 columns of pairs of k). A tile of one group is then 16
/// consecutive rows of 64 bytes, 1 KiB that the tile load and the hardware
/// prefetchers read as one stream, and the next 32 k follow it.
constexpr int64_t kPanelGroup = 32;

/// The indices of element (j, c) of `view` in its buffer.
SmallVector<Value> viewIndices(OpBuilder &b, Location loc,
                               const BlockView &view, Value j, Value c);

/// Element (j, c) of `view`, converted to `type`.
Value loadElement(OpBuilder &b, Location loc, const BlockView &view, Value j,
                  Value c, Type type);

/// The vector of `vecType` at (j, c .. c + lanes) of `view` (whose elements
/// must be of the vector's element type).
Value loadVector(OpBuilder &b, Location loc, const BlockView &view,
                 VectorType vecType, Value j, Value c);

/// The transpose of the square block whose rows are `rows` (n vectors of n
/// lanes, n a power of 2), by log2(n) rounds of interleaving.
SmallVector<Value> transposeInRegisters(OpBuilder &b, Location loc,
                                        ArrayRef<Value> rows);

/// Copies `rows` x `cols` elements of `source` into `pack[j, c]`, converted
/// to the element type of `vecType` (whole vectors converted on load, then
/// the rest one by one), and zeroes pack[j, cols .. paddedCols). Returns
/// the view of the packed block.
BlockView packBlock(OpBuilder &b, Location loc, const BlockView &source,
                    Value pack, VectorType vecType, Value rows, Value cols,
                    Value paddedCols);

/// Copies the transpose of `source`'s first `cols` rows x `rows` columns:
/// pack[j, c] = source(c, j) for j < rows, c < cols, converted to the
/// element type of `vecType`, and zeroes pack[j, cols .. paddedCols). Square
/// blocks of one vector per source row are transposed in registers (both
/// sides read and written with whole vectors), the rest one by one.
/// Returns the view of the packed block.
BlockView packTransposedBlock(OpBuilder &b, Location loc,
                              const BlockView &source, Value pack,
                              VectorType vecType, Value rows, Value cols,
                              Value paddedCols);

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_REGISTERTILE_H
