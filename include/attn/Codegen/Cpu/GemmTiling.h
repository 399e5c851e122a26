//===- GemmTiling.h - the blocking of CPU GEMMs and panels ------*- C++ -*-===//
//
// One description of how a GEMM is blocked (register tile, cache blocks)
// and of the layout of the panels it packs, shared by the GEMM's kernels
// (GemmKernel.h) and attn-cpu-prepack-weights (which packs weights ahead of
// time in exactly that layout).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_GEMMTILING_H
#define ATTN_CODEGEN_CPU_GEMMTILING_H

#include "attn/Codegen/Cpu/Target.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>

namespace mlir::attn::cpu {

/// The blocking of a GEMM (and of the panels packed for it).
struct GemmTiling {
  /// Compute-type elements per vector register.
  int64_t lanes = 8;
  /// Register tile: mr rows (broadcast) x nv vectors of columns.
  int64_t mr = 6, nv = 2;
  /// Cache blocks: kc of the contraction per packed panel (kc x nc: 64 KiB
  /// of f32 in L2), at most mc rows and nc columns per work item. nc is
  /// one AVX-512 register tile's columns: each tile then reads its panel
  /// sliver as one contiguous stream, and the column blocks alone make
  /// work for the threads (an 896-wide projection gets 14 items, which two
  /// threads share 7 and 7, where 128 columns gave 7 items, 4 and 3);
  /// measured with bench/ab_builds.py.
  int64_t kc = 256, mc = 256, nc = 64;
  /// Row blocks are split below mc (down to minRows) only to make at least
  /// minItems work items.
  int64_t minRows = 48, minItems = 4;
};

/// The tiling of a GEMM computing in `ct` on `target`: mr rows x the
/// vectors of columns its accumulator registers hold.
GemmTiling getBaseTiling(Type ct, const Target &target);

/// The tiling of the AMX path: whole 2 x 2 tile steps per row block, the
/// fallback's cache blocks otherwise.
GemmTiling getAmxTiling(GemmTiling t);

/// Whether bf16 pair panels of `type` ([NB, KB, kc / 2, 2 * nc]) are
/// whole AMX steps: kc and nc multiples of 32. Such panels are grouped
/// (see getPackedRhsType).
bool isAmxPanelType(ShapedType type);

/// The type of the panels that the GEMM packs for a static [K, N] right
/// operand of `element` (f32, or bf16 for the pair path) on `target`:
/// [NB, KB, kc, nc] f32 or [NB, KB, kc / 2, 2 * nc] bf16
/// pairs, where kc and nc are its k and column blocks (no larger than the
/// operand needs, nc whole f32 vectors). With AMX, bf16 kc and nc
/// are rounded up to 32 so that the AMX path reads the panels as whole
/// tiles (the pair path reads them too). bf16 panels of whole tiles (kc / 2
/// a multiple of 16, 2 * nc of 64) are grouped: each panel holds its
/// 32-wide column groups one after the other (BlockView::groupRows), so
/// that an AMX B tile is 1 KiB of consecutive rows. The GEMM and
/// attn.pack_weight use this one layout.
RankedTensorType getPackedRhsType(Type element, int64_t k, int64_t n,
                                  const Target &target);

/// `t` with the k and column blocks of prepacked panels of `type`
/// (getPackedRhsType's kc and nc: bf16 pairs hold half the rows and twice
/// the columns).
GemmTiling getPackedRhsTiling(GemmTiling t, ShapedType type);

/// Whether the GEMM on `target` can read panels of `type`: f32 with nc
/// whole vectors, or bf16 pairs with nc whole vectors where the target
/// multiplies pairs (bf16Dot).
bool isPackedRhsLowerable(RankedTensorType type, const Target &target);

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_GEMMTILING_H
