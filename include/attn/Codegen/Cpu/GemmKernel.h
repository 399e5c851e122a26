//===- GemmKernel.h - the instruction families of the CPU GEMM --*- C++ -*-===//
//
// The GEMM's microkernels as classes, one per instruction family, as flash
// attention's FlashKernel is: FMA register tiles on panels widened to the
// compute type, the same tiles on panels dequantized from a quantized
// weight, integer dots (VNNI) of int8 activations and a quantized
// weight's codes, AVX512-BF16 pair dots on bf16 pair panels, and AMX
// tiles. Each
// owns the layout of the rhs panels it reads and their packing, a work
// item's scratch, and the product of one k block; the GEMM lowering
// (GemmToCpu.cpp) keeps the work items, the loop over k blocks, the start
// of the accumulators and the output. A product's kernel is chosen once,
// from Target::getProductKernels, by GemmKernel::create.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_GEMMKERNEL_H
#define ATTN_CODEGEN_CPU_GEMMKERNEL_H

#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/GemmTiling.h"

#include <memory>

namespace mlir::attn::cpu {

class QuantDotKernel;
struct QuantizedWeight;

/// A GEMM lhs quantized to int8 per row and block of 32 along K (the int8
/// activations of attn.quantized_matmul): `codes` [R, K] i8, `scales` [R,
/// K / 32] f32 and `sums` [R, K / 32] i32, each block's codes' sum (x[r, k]
/// ~ codes[r, k] * scales[r, k / 32]), and for a weight with a scale per 16
/// elements (q6_k) `halfSums` [R, K / 16] i32, each half block's (else
/// null). With it, a quantized rhs whose codes have the fixed `offset` is
/// multiplied in integers by `dot`.
struct QuantizedRows {
  Value codes, scales, sums, halfSums;
  int64_t offset = 0;
  QuantDotKernel *dot = nullptr;
};

/// A GEMM's operands as its kernels read them, set once per product by the
/// lowering.
struct GemmKernelOperands {
  /// The buffers of lhs [batch..., M, K] and rhs as stored: [batch..., K,
  /// N], its transpose, prepacked panels (grouped where
  /// `panelGroupRows` is set) or a quantized weight's bytes.
  Value lhs, rhs;
  /// M, N and K.
  Value m, n, k;
  bool rhsTransposed = false, rhsPacked = false;
  /// The pair rows per column group of grouped prepacked panels, else 0.
  int64_t panelGroupRows = 0;
  /// The format of a quantized rhs, or null.
  const QuantizedWeight *quantizedRhs = nullptr;
  /// The lhs quantized to int8 (with a quantized rhs), or null.
  const QuantizedRows *quantizedLhs = nullptr;
};

/// One work item of a GEMM: its place, set by the lowering, and its
/// buffers, set by GemmKernel::allocate.
struct GemmWorkItem {
  ValueRange batchIvs;
  /// The operands' batch indices (none for prepacked panels).
  SmallVector<Value> lhsBatch, rhsBatch;
  /// The column block's index, first row and column, numbers of rows and
  /// columns.
  Value colBlock, m0, n0, rows, cols;
  /// Rows and columns padded to what the kernel computes (whole tiles or
  /// vectors; paddedRows only where padded), and the columns in vectors.
  Value paddedRows, paddedCols, colVecs;
  /// acc [>= rows, >= paddedCols] in the compute type, the per-call rhs
  /// panel (null for prepacked panels) and the lhs copy (or null).
  Value acc, panel, lhsPack;
  /// The integer kernel's per-call panel of rhs scales (and q4_k's mins;
  /// else null).
  Value panelScales;
  /// The per-call panel's pair rows per column group, else 0.
  int64_t panelGroupRows = 0;
};

/// Writes the `size` x `size` block of acc at (i0, j0) to the output.
using GemmBlockOutputFn =
    function_ref<void(Value i0, Value j0, int64_t size)>;

/// The instruction family's part of a GEMM.
class GemmKernel : protected Emitter {
public:
  virtual ~GemmKernel();

  /// The kernel of a product computing in `ct` on `operands`, given the
  /// target's kernels for its element types and the vector kernels'
  /// tiling `base` (with a prepacked rhs's blocks): AMX tiles where the
  /// target offers them (and prepacked panels are whole tiles), else pair
  /// dots or FMAs; a quantized rhs takes FMAs on dequantized panels, or
  /// integer dots where the lhs is quantized too (quantizedLhs).
  /// `operands` is read when the kernel emits code.
  static std::unique_ptr<GemmKernel>
  create(OpBuilder &b, Location loc, Type ct,
         const GemmKernelOperands &operands, const GemmTiling &base,
         ProductKernels kernels);

  const GemmTiling &getTiling() const { return t; }

  /// Emits `emit(kernel)` with this kernel where it may run anywhere;
  /// else (AMX tiles) the run-time choice between it and its fallback.
  virtual void emitVersions(function_ref<void(GemmKernel &)> emit) {
    emit(*this);
  }
  /// Whether emitKBlock's `first` block may start from zero instead of
  /// acc's values (acc is then only written) and its last block writes the
  /// output block by block: the lowering then peels the first and last k
  /// blocks.
  virtual bool fusesOutput() const { return false; }
  /// Allocates `w`'s accumulators and the kernel's scratch and sets its
  /// padded sizes.
  virtual void allocate(GemmWorkItem &w) = 0;
  /// acc += the work item's rows x the k block at k0 (`depth` of K) x its
  /// columns. With `output` (the last k block of a kernel that fuses the
  /// output), each block of acc is written through it once done.
  virtual void emitKBlock(const GemmWorkItem &w, Value k0, Value depth,
                          bool first, GemmBlockOutputFn output) = 0;

protected:
  GemmKernel(OpBuilder &b, Location loc, Type ct,
             const GemmKernelOperands &operands, const GemmTiling &t)
      : Emitter(b, loc, ct, t.lanes), ops(operands), t(t) {}

  /// The prepacked panel of column block `colBlock` and the k block at k0.
  BlockView prepackedPanel(Value colBlock, Value k0);
  /// The prepacked panel after `panel` in memory: the next k block's, or
  /// the next column block's first (after the last panel: the last column
  /// block's first, so that the view stays in bounds).
  BlockView nextPrepackedPanel(const BlockView &panel);

  const GemmKernelOperands &ops;
  GemmTiling t;
};

/// The static extent of a block buffer for `size` elements: `most`, or
/// `size` aligned up to `align` where it is a smaller constant; at least 1.
int64_t getBlockExtent(Value size, int64_t most, int64_t align);

/// The view of prepacked panels `mem` of `type` (getPackedRhsType) that
/// the kernels read: grouped ([..., (2 * nc / kPanelGroup) * kc / 2,
/// kPanelGroup], each panel's column groups one after the other) where
/// they are whole AMX tiles, with `groupRows` set to kc / 2; `mem` with
/// `groupRows` 0 otherwise.
Value viewPackedPanels(OpBuilder &b, Location loc, Value mem,
                       ShapedType type, int64_t &groupRows);

/// A prepacked panel (getPackedRhsType) as attn.pack_weight fills it: a
/// 2-D view of its `rows` x `width` elements as stored (of its grouped rows
/// where `groupRows` is set).
struct PackedPanel {
  Value view;
  int64_t rows = 0, width = 0;
  int64_t groupRows = 0;
};

/// attn.pack_weight's step: packs the block at (k0, n0) of the [k, n]
/// operand `source` (of its [n, k] transpose with `transposed`), `depth` x
/// `cols` elements, into `panel` with the pack code of the kernel that
/// reads such panels (bf16 pairs: the pair and AMX kernels'; f32: the FMA
/// kernel's, in vectors of `lanes`), columns zero-padded to the panel's,
/// and zeroes its rows past the depth.
void packRhsPanel(OpBuilder &b, Location loc, const PackedPanel &panel,
                  int64_t lanes, Value source, Value n0, Value k0,
                  bool transposed, Value depth, Value cols);

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_GEMMKERNEL_H
