//===- GemvToCpu.h - products of a few rows with a [N, K] weight ----------===//

#ifndef LIB_CONVERSION_ATTNTOCPU_GEMVTOCPU_H
#define LIB_CONVERSION_ATTNTOCPU_GEMVTOCPU_H

#include "GemmToCpu.h"

namespace mlir::attn::cpu {

/// The row count up to which a product with a transposed weight runs as
/// buildTransposedGemv (a decode step's projections: M = batch x new
/// tokens) rather than as the GEMM, whose panels (packed again for each
/// block of rows) pay off only over more rows.
constexpr int64_t kGemvMaxRows = 16;

/// The weight size (elements) from which buildTransposedGemv splits the
/// weight's rows across threads: 64K elements take one thread a few tens
/// of microseconds, the order of an OpenMP fork and join on a busy host.
constexpr int64_t kGemvParallelMinElements = 1 << 16;

/// result[m, n] = init[m, n] + sum_k lhs[m, k] * rhs[n, k]: the GEMM of
/// GemmOperands with `rhs` holding the [N, K] weight itself (row-major, as
/// nn.Linear stores it) instead of its [K, N] transpose, for 2-D operands.
/// Each output is a dot product along K of contiguous rows: the weight is
/// read from memory once, in place, with no transposed copy and no
/// packing; work items are blocks of weight rows, in parallel for a
/// weight of kGemvParallelMinElements or more. Accumulates in the
/// compute type and rounds once. The steps are the kernel's (GemvKernel.h)
/// for the target and element types: FMAs on widened rows, or bf16 pair
/// dots (vdpbf16ps) on the rows as stored; a bf16 x bf16 product in f32 of
/// a static weight with N >= 32 and K a multiple of 32 reads the weight's
/// blocks of 32 rows as AMX A tiles where the target has them and
/// attnrt_amx_available() allows (the last N % 32 rows and the other case
/// on vectors). Returns the result tensor.
Value buildTransposedGemv(OpBuilder &b, Location loc,
                          const GemmOperands &operands,
                          const Target &target);

} // namespace mlir::attn::cpu

#endif // LIB_CONVERSION_ATTNTOCPU_GEMVTOCPU_H
