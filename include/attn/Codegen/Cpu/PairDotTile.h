//===- PairDotTile.h - bf16 pair dot-product tiles (AVX512-BF16) ----------===//
//
// The GEMM's building blocks for targets with AVX512-BF16, whose
// vdpbf16ps (x86vector.avx512.dot) multiplies pairs of adjacent bf16
// elements and adds both products to one f32 lane:
//
//   dst[i] = src[i] + a[2i] * b[2i] + a[2i + 1] * b[2i + 1]
//
// The rhs is packed in the pair-interleaved layout, pack[p, 2c + i] =
// rhs[2p + i, c] (an odd depth padded with a zero row), so that one bf16
// vector of 2 * lanes elements holds the pairs of `lanes` columns; the lhs
// pair (a[m, 2p], a[m, 2p + 1]), adjacent in a row-major lhs, is one 32-bit
// value broadcast to every lane.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_PAIRDOTTILE_H
#define ATTN_CODEGEN_CPU_PAIRDOTTILE_H

#include "attn/Codegen/Cpu/RegisterTile.h"

namespace mlir::attn::cpu {

/// True when x86vector.avx512.dot has a form for vectors of `lanes` f32
/// (4, 8 or 16: 128, 256 or 512 bits).
bool isPairDotWidth(int64_t lanes);

/// Packs the bf16 block `source` (`rows` x `cols`) pair-interleaved into
/// the bf16 buffer `pack`: pack[p, 2c + i] = source(2p + i, c), zero where
/// 2p + i = rows (an odd row count) and for c in [cols, paddedCols). With
/// `transposed`, source(j, c) is the element (c, j) of the view (nn.Linear's
/// [N, K] weight: each pair is one 32-bit value of a weight row, so blocks
/// of `lanes` pairs x `lanes` columns are transposed in registers as i32).
/// With `groupRows`, `pack` is a grouped panel of that many pair rows per
/// group (BlockView::groupRows: [groups * groupRows, kPanelGroup]) and
/// (p, 2c + i) is placed as the grouped view places it. Returns the view
/// of the packed block.
BlockView packPairBlock(OpBuilder &b, Location loc, const BlockView &source,
                        Value pack, int64_t lanes, Value rows, Value cols,
                        Value paddedCols, bool transposed,
                        int64_t groupRows = 0);

/// Returns the pair broadcast of row `r` of the lhs for pair `p`: a bf16
/// vector of 2 * lanes elements.
using PairLoadFn = function_ref<Value(int64_t r, Value p)>;

/// The pair register tile: returns acc[r * nv + v] + sum_{p in [lo, hi)}
/// dot(a(r, p), b(v, p)) with the mr x nv f32 accumulators (`init`)
/// carried through an scf.for. Per pair: nv vector loads, mr broadcasts,
/// mr * nv x86vector.avx512.dot.
SmallVector<Value> buildPairDotTile(OpBuilder &b, Location loc, Value lo,
                                    Value hi, ArrayRef<Value> init, int64_t mr,
                                    int64_t nv, PairLoadFn loadA,
                                    VectorLoadFn loadB);

/// The broadcast lhs pair (view(j, 2p), view(j, 2p + 1)) as a bf16 vector
/// of 2 * lanes elements; with `last`, (view(j, 2p), 0) (the pair of an odd
/// depth's last element, whose neighbour may be out of bounds).
Value loadPairBroadcast(OpBuilder &b, Location loc, const BlockView &view,
                        int64_t lanes, Value j, Value p, bool last);

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_PAIRDOTTILE_H
