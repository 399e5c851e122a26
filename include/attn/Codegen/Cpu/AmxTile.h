//===- AmxTile.h - bf16 GEMM blocks on AMX tiles --------------------------===//
//
// The GEMM's inner kernel for targets with AMX (amx-tile, amx-bf16):
// tdpbf16ps (amx.tile_mulf) multiplies a 16 x 32 bf16 A tile by a B tile
// of 16 pairs of k x 16 columns, packed as bf16 pairs (the pair path's
// layout, PairDotTile.h), into a 16 x 16 f32 C tile:
//
//   C[m, n] += sum_{p < 16} A[m, 2p] * B[p, 2n] + A[m, 2p + 1] * B[p, 2n + 1]
//
// Blocks are padded to whole tiles (rows and columns to 32: 2 x 2 C tiles
// per step; k to 32) with zeros, so no tile reads past a buffer.
//
// `!amx.tile` values cannot cross blocks (cf-to-llvm has no conversion for
// them): each loop body loads its C tiles (or zeroes them, for the first
// steps of a product that starts at zero), runs statically unrolled k
// steps and stores them again.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_AMXTILE_H
#define ATTN_CODEGEN_CPU_AMXTILE_H

#include "attn/Codegen/Cpu/RegisterTile.h"

#include "mlir/IR/Builders.h"

namespace mlir::attn {

/// The runtime function (lib/Runtime, `int32_t (void)`) that GEMMs lowered
/// with the `amx` option call to learn whether the process may run AMX
/// tile instructions.
inline constexpr StringLiteral kAmxAvailableFunction = "attnrt_amx_available";

/// The unit attribute on the scf.if whose then-region holds a GEMM's AMX
/// work items: attn-lower-to-cpu outlines that region into a noinline
/// function, so that no tile instruction (nor the ldtilecfg LLVM puts at
/// the entry of a function that uses tiles) runs on the fallback path.
inline constexpr StringLiteral kAmxBranchAttrName = "attn.amx_branch";

namespace cpu {

/// Rows and f32 columns of a C tile; bf16 elements of k per step.
inline constexpr int64_t kAmxTileRows = 16;
inline constexpr int64_t kAmxTileCols = 16;
inline constexpr int64_t kAmxStepK = 32;
/// Rows and columns of the 2 x 2 C tiles each step updates: what blocks
/// are padded to.
inline constexpr int64_t kAmxBlock = 32;

/// acc[i, c] += sum_{j < 32 * steps} lhs(i, j) * panel(j, c) for i <
/// `rows`, c < `cols` (both multiples of kAmxBlock). `lhs` views a bf16
/// buffer whose innermost stride is 1, holding [>= rows, >= 32 * steps]
/// (the packed lhs block, or the operand read in place); `panel` views the
/// pair-packed bf16 [>= 16 * steps, >= 2 * cols] block of a static buffer
/// (a per-call panel, or through its prefix one block of a prepacked
/// weight's [NB, KB, kc / 2, 2 * nc] panels); `acc` is the static 2-D f32
/// buffer. Steps run in unrolled groups of `group`, the rest in chunks of
/// descending powers of two (each between one load and one store of the C
/// tiles).
/// With `zeroC` the sum starts at zero instead of acc's values (acc is
/// then only written), and `steps` must be at least 1. Where `next` views a
/// panel (its `mem` set: the prepacked panel the work item reads after this
/// one), the first row pair prefetches it into L2 as it goes, the rows
/// each step reads of its own panel: a weight streamed from memory then
/// waits for memory once per panel, not once per step. Where given,
/// `afterBlock(i0, j0)` runs once the 32 x 32 block of acc at (i0, j0) is
/// stored, before the next block's steps (a GEMM's last k block writes its
/// output there, while the block is in L1 and the tiles work on the next).
void buildAmxBlockProduct(
    OpBuilder &b, Location loc, const BlockView &lhs, const BlockView &panel,
    Value acc, Value rows, Value cols, Value steps, int64_t group, bool zeroC,
    const BlockView &next = {},
    function_ref<void(Value i0, Value j0)> afterBlock = nullptr);

/// Emits the choice between a lowering's AMX code and its fallback: one
/// call of the runtime's kAmxAvailableFunction (the permission is the
/// process's) and an scf.if marked kAmxBranchAttrName, whose then-region
/// (`emit(true)`) attn-lower-to-cpu moves into a noinline function of its
/// own and whose else-region is `emit(false)`.
void buildAmxBranch(OpBuilder &b, Location loc,
                    function_ref<void(bool onTiles)> emit);

/// Zeroes element (r, c) of `view` for r in [rowLo, rowHi), c in [0, cols),
/// a view whose rows are whole vectors of `vecType` (cols a multiple of its
/// lanes; of a grouped view, a vector never crosses a group).
void zeroRows(OpBuilder &b, Location loc, const BlockView &view,
              VectorType vecType, Value rowLo, Value rowHi, Value cols);

} // namespace cpu
} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_AMXTILE_H
