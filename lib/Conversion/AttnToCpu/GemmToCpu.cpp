//===- GemmToCpu.cpp - register-tiled matrix products for the CPU ---------===//
//
// A GEMM in the loop order of BLIS/GotoBLAS, emitted in the vector dialect
// on buffers:
//
//   mb = rows per work item: all of M up to mc, so that each packed panel
//     serves every row of its column block; fewer (whole register tiles,
//     at least minRows) where that leaves under minItems work items
//   scf.forall (batch dims x row blocks of mb x column blocks of nc)
//     acc[mb, nc] = init block (or its fill value, or 0), compute type
//     scf.for k0 in [0, K) step kc
//       pack rhs[k0 .. k0+kc, n0 .. n0+nc] into panel[kc, nc] (compute
//         type, columns zero-padded to whole vectors); a transposed rhs
//         (nn.Linear's [N, K] weight) is read along its rows, rhs[n0 ..
//         n0+nc, k0 .. k0+kc], and transposed in registers on the way
//       a narrow lhs (bf16, f16) is widened into lhsPack[mb, kc]
//       for each nv-vector column group of the panel (its kc x nv*lanes
//         sliver is read by every row group)
//         for each group of mr rows
//           register tile: mr x nv vector accumulators loaded from acc,
//           per k one broadcast of lhs[m, k] per row, nv vector loads of
//           the panel, mr * nv FMAs; stored back to acc
//     out[rows, cols] = acc rounded to the element type
//
// Sizes come from the target's vector width: 16 vector registers (AVX2)
// take 6 rows x 2 vectors (12 accumulators), 32 (AVX-512) 6 x 4. Remainder
// rows and column vectors run narrower static tiles (forGroups); the
// panel's zero padding makes partial column vectors whole. The blocks'
// buffers are no larger than a static product needs.
//
// With bf16Dot (a target whose CPU runs AVX512-BF16's vdpbf16ps faster per
// product than the FMA), bf16 x bf16 products keep their panel in bf16
// pairs of k instead of widening it, read the lhs pairs in place (no
// lhsPack), and the register tile does one x86vector.avx512.dot per
// accumulator and pair of k (PairDotTile.h).
//
//===----------------------------------------------------------------------===//

#include "GemmToCpu.h"

#include "attn/Codegen/Cpu/AmxTile.h"
#include "attn/Codegen/Cpu/GemmTiling.h"
#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/PairDotTile.h"
#include "attn/Codegen/Cpu/QuantBlocks.h"
#include "attn/Codegen/Cpu/RegisterTile.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

Type elementType(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// The kernels `target` offers the product of `g`.
ProductKernels getGemmKernels(const GemmOperands &g, const Target &target) {
  return target.getProductKernels(
      elementType(g.lhs), elementType(g.rhs),
      getComputeType(g.resultType.getElementType()));
}

GemmTiling chooseGemmTiling(const GemmOperands &g, const Target &target) {
  Type ct = getComputeType(g.resultType.getElementType());
  GemmTiling t = getBaseTiling(ct, target);
  t.pairDot = getGemmKernels(g, target).vector == VectorKernel::PairDot;
  if (g.rhsPacked) {
    // The blocks are the panels' (getPackedRhsType chose them); bf16 pairs
    // hold half the rows and twice the columns.
    ArrayRef<int64_t> shape = cast<ShapedType>(g.rhs.getType()).getShape();
    bool pairs = elementType(g.rhs).isBF16();
    assert(pairs == t.pairDot && "bf16 panels need the pair path");
    t.kc = pairs ? 2 * shape[2] : shape[2];
    t.nc = pairs ? shape[3] / 2 : shape[3];
  }
  return t;
}

/// The grouped view of pair panels `mem` ([..., kc / 2, 2 * nc], dense):
/// [..., (2 * nc / kPanelGroup) * kc / 2, kPanelGroup] over the same
/// memory, each panel's column groups one after the other (read through
/// a BlockView whose groupRows is kc / 2).
Value groupPanels(OpBuilder &b, Location loc, Value mem) {
  auto type = cast<MemRefType>(mem.getType());
  int64_t rank = type.getRank();
  SmallVector<ReassociationIndices> merge;
  for (int64_t i = 0; i < rank - 2; ++i)
    merge.push_back({i});
  merge.push_back({rank - 2, rank - 1});
  Value flat = memref::CollapseShapeOp::create(b, loc, mem, merge);
  SmallVector<int64_t> shape(type.getShape());
  int64_t elements = shape[rank - 2] * shape[rank - 1];
  shape.pop_back();
  shape.back() = elements / kPanelGroup;
  shape.push_back(kPanelGroup);
  SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
      shape, [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
  auto flatType = cast<MemRefType>(flat.getType());
  MemRefType resultType = memref::ExpandShapeOp::computeExpandedType(
                              flatType, shape, merge)
                              .value();
  return memref::ExpandShapeOp::create(b, loc, resultType, flat, merge,
                                       sizes);
}

/// Whether the product runs on AMX tiles: the target offers them for its
/// element types, and a prepacked rhs is in panels of whole tiles
/// (getPackedRhsType for an AMX target).
bool isAmxProduct(const GemmOperands &g, const Target &target) {
  return getGemmKernels(g, target).amxTiles &&
         (!g.rhsPacked || isAmxPanelType(cast<ShapedType>(g.rhs.getType())));
}

class GemmLowering : Emitter {
public:
  GemmLowering(OpBuilder &b, Location loc, const GemmOperands &g,
               const GemmTiling &t)
      : Emitter(b, loc, getComputeType(g.resultType.getElementType()),
                t.lanes),
        g(g), t(t) {}

  /// With `amx`, the AMX path where attnrt_amx_available() says the process
  /// may use the tiles, the tiling's path otherwise.
  Value emit(bool amx);

private:
  /// The batch indices of an operand of `type` for the result's batch ivs.
  SmallVector<Value> operandBatch(Value operand, ValueRange batchIvs);

  /// A work item's place: batch indices, first row and column, and its
  /// numbers of rows and columns.
  struct WorkItem {
    ValueRange batchIvs;
    Value m0, n0, rows, cols;
  };
  WorkItem getWorkItem(ValueRange ivs, Value mb);
  /// The static extent of a block buffer for `size` elements: `most`, or
  /// `size` aligned up to `align` where it is a smaller constant.
  int64_t blockExtent(Value size, int64_t most, int64_t align);

  void emitForall();
  Value rowBlockSize(Value colBlocks);
  void emitWorkItem(ValueRange ivs, Value mb);
  void emitAmxWorkItem(ValueRange ivs, Value mb);
  /// An AMX work item's buffers: acc [mc, nc] f32, the per-call pair panel
  /// (null for a prepacked rhs) and the packed lhs block, both bf16.
  struct AmxWorkItem {
    WorkItem item;
    Value colBlock, paddedRows, paddedCols;
    Value acc, panel, lhsPack;
    /// The per-call panel's pair rows per column group.
    int64_t panelGroupRows = 0;
    SmallVector<Value> lhsBatch, rhsBatch;
  };
  /// With `last`, each 32 x 32 block of acc is written to the output as
  /// soon as its C tiles are stored (emitOutput on the block).
  void emitAmxKBlock(const AmxWorkItem &w, Value k0, bool first, bool last);
  /// The prepacked panel of column block `colBlock` and the k block at k0.
  BlockView prepackedPanel(Value colBlock, Value k0) {
    return BlockView{rhsBuf,
                     {colBlock, arith::DivUIOp::create(b, loc, k0, idx(t.kc))},
                     nullptr,
                     nullptr,
                     panelGroupRows};
  }
  /// The prepacked panel after `panel` in memory: the next k block's, or
  /// the next column block's first (after the last panel: the last column
  /// block's first, so that the view stays in bounds).
  BlockView nextPrepackedPanel(const BlockView &panel);
  void initAcc(Value acc, ValueRange batchIvs, Value m0, Value n0, Value rows,
               Value cols, Value paddedCols);
  using TileFn = function_ref<SmallVector<Value>(
      ArrayRef<Value> rowOf, ArrayRef<Value> colOf, ArrayRef<Value> init)>;
  void forEachTile(Value acc, Value rows, Value colVecs, TileFn tile);
  void emitPanel(const BlockView &lhs, const BlockView &panel, Value acc,
                 Value rows, Value colVecs, Value depth);
  void emitPairPanel(const BlockView &lhs, const BlockView &panel, Value acc,
                     Value rows, Value colVecs, Value depth);
  void emitOutput(ValueRange batchIvs, Value m0, Value n0, Value rows,
                  Value cols, Value acc);

  const GemmOperands &g;
  GemmTiling t;
  Value lhsBuf, rhsBuf, initBuf, outBuf, m, n, k;
  /// Writes the results (after the epilogue's consumers); set by emit().
  std::optional<ResultStore> results;
  int64_t numBatch = 0;
  /// The pair rows per column group of grouped prepacked panels, else 0.
  int64_t panelGroupRows = 0;
};

} // namespace

SmallVector<Value> GemmLowering::operandBatch(Value operand,
                                              ValueRange batchIvs) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t tb = type.getRank() - 2;
  SmallVector<Value> indices;
  for (int64_t i = 0; i < tb; ++i) {
    int64_t r = numBatch - tb + i;
    bool broadcast =
        type.getDimSize(i) == 1 && g.resultType.getDimSize(r) != 1;
    indices.push_back(broadcast ? idx(0) : batchIvs[r]);
  }
  return indices;
}

Value GemmLowering::emit(bool amx) {
  numBatch = g.resultType.getRank() - 2;
  GemmOperandBuffers buffers = getOperandBuffers(b, loc, g);
  lhsBuf = buffers.lhs;
  rhsBuf = buffers.rhs;
  initBuf = buffers.init;
  if (g.rhsPacked && isAmxPanelType(cast<ShapedType>(g.rhs.getType()))) {
    panelGroupRows = cast<ShapedType>(g.rhs.getType()).getDimSize(2);
    rhsBuf = groupPanels(b, loc, rhsBuf);
  }
  results.emplace(b, loc, g.epilogue);
  m = g.resultSizes[numBatch];
  n = g.resultSizes[numBatch + 1];
  k = getDimSize(b, loc, g.lhs,
                 cast<RankedTensorType>(g.lhs.getType()).getRank() - 1);
  SmallVector<Value> outDyn;
  for (auto [i, size] : llvm::enumerate(g.resultSizes))
    if (g.resultType.isDynamicDim(i))
      outDyn.push_back(size);
  outBuf = memref::AllocOp::create(
      b, loc,
      MemRefType::get(g.resultType.getShape(), g.resultType.getElementType()),
      outDyn, b.getI64IntegerAttr(64));
  if (amx) {
    // One check per product.
    GemmTiling fallback = t;
    buildAmxBranch(b, loc, [&](bool onTiles) {
      t = onTiles ? getAmxTiling(fallback) : fallback;
      emitForall();
    });
  } else {
    emitForall();
  }
  return bufferization::ToTensorOp::create(b, loc, g.resultType, outBuf,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// The work items over batch dims x row blocks x column blocks.
void GemmLowering::emitForall() {
  SmallVector<OpFoldResult> ubs;
  for (Value size : ArrayRef<Value>(g.resultSizes).take_front(numBatch))
    ubs.push_back(getAsOpFoldResult(size));
  Value colBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, n, idx(t.nc));
  Value mb = rowBlockSize(colBlocks);
  ubs.push_back(getAsOpFoldResult(
      b.createOrFold<arith::CeilDivUIOp>(loc, m, mb)));
  ubs.push_back(getAsOpFoldResult(colBlocks));
  auto forall = scf::ForallOp::create(b, loc, ubs, ValueRange{}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getBody()->getTerminator());
    if (t.amx)
      emitAmxWorkItem(forall.getInductionVars(), mb);
    else
      emitWorkItem(forall.getInductionVars(), mb);
  }
}

/// Rows per work item: all the rows of a column block (up to mc), so that
/// each packed panel serves every row of the block; fewer (whole register
/// tiles, at least minRows) when there would be fewer than minItems work
/// items per batch, so that the threads share small products evenly.
Value GemmLowering::rowBlockSize(Value colBlocks) {
  // Folded: constants for static sizes.
  auto ceilDivU = [&](Value x, Value y) {
    return b.createOrFold<arith::CeilDivUIOp>(loc, x, y);
  };
  auto maxU = [&](Value x, Value y) {
    return b.createOrFold<arith::MaxUIOp>(loc, x, y);
  };
  Value one = idx(1);
  Value wanted = ceilDivU(idx(t.minItems), maxU(colBlocks, one));
  Value most = ceilDivU(m, idx(t.minRows));
  Value needed = ceilDivU(m, idx(t.mc));
  Value blocks = maxU(
      needed, maxU(one, b.createOrFold<arith::MinUIOp>(loc, wanted, most)));
  Value tiles = ceilDivU(ceilDivU(m, blocks), idx(t.mr));
  return maxU(b.createOrFold<arith::MulIOp>(loc, tiles, idx(t.mr)), one);
}

GemmLowering::WorkItem GemmLowering::getWorkItem(ValueRange ivs, Value mb) {
  Value m0 = mul(ivs[numBatch], mb);
  Value n0 = mul(ivs[numBatch + 1], idx(t.nc));
  return {ivs.take_front(numBatch), m0, n0,
          minu(arith::SubIOp::create(b, loc, m, m0), mb),
          minu(arith::SubIOp::create(b, loc, n, n0), idx(t.nc))};
}

int64_t GemmLowering::blockExtent(Value size, int64_t most, int64_t align) {
  std::optional<int64_t> c = getConstantIntValue(size);
  int64_t e = c ? std::min(most, (int64_t)llvm::alignTo(*c, align)) : most;
  return std::max<int64_t>(e, 1);
}

void GemmLowering::emitWorkItem(ValueRange ivs, Value mb) {
  WorkItem item = getWorkItem(ivs, mb);
  ValueRange batchIvs = item.batchIvs;
  Value m0 = item.m0, n0 = item.n0, rows = item.rows, cols = item.cols;
  Value lanes = idx(t.lanes);
  Value colVecs = arith::CeilDivUIOp::create(b, loc, cols, lanes);
  Value paddedCols = mul(colVecs, lanes);
  // The blocks' buffers, no larger than a static product needs.
  auto extent = [&](Value size, int64_t most, int64_t align) {
    return b.getIndexAttr(blockExtent(size, most, align));
  };
  OpFoldResult mcRows = extent(m, llvm::alignTo(t.mc, t.mr), t.mr);
  OpFoldResult kcRows = extent(k, t.kc, 1);
  OpFoldResult ncCols = extent(n, t.nc, t.lanes);
  Value acc = alloc({mcRows, ncCols});
  // A pair-packed panel holds bf16 pairs: half the rows, twice the columns.
  auto constant = [](OpFoldResult size) {
    return *getConstantIntValue(size);
  };
  // Prepacked panels need no buffer of their own.
  Value panel =
      g.rhsPacked ? Value()
      : t.pairDot
          ? allocAligned(b, loc, b.getBF16Type(),
                         {b.getIndexAttr(llvm::divideCeil(constant(kcRows), 2)),
                          b.getIndexAttr(2 * constant(ncCols))})
          : alloc({kcRows, ncCols});
  // A narrow lhs (bf16, f16) is widened once per k block into lhsPack: the
  // register tile then broadcasts compute-type scalars straight from
  // memory instead of converting each one in a general register and
  // moving it to a vector (a shuffle-port uop per broadcast, on the port
  // that AVX-512 FMAs share).
  bool widenLhs =
      !t.pairDot && cast<ShapedType>(g.lhs.getType()).getElementType() != ct;
  Value lhsPack =
      widenLhs ? alloc({mcRows, kcRows}) : Value();
  initAcc(acc, batchIvs, m0, n0, rows, cols, paddedCols);
  SmallVector<Value> lhsBatch = operandBatch(g.lhs, batchIvs);
  SmallVector<Value> rhsBatch =
      g.rhsPacked ? SmallVector<Value>() : operandBatch(g.rhs, batchIvs);
  Value colBlock = ivs[numBatch + 1];
  forLoop(idx(0), k, idx(t.kc), [&](Value k0) {
    Value depth = minu(arith::SubIOp::create(b, loc, k, k0), idx(t.kc));
    BlockView lhs{lhsBuf, lhsBatch, m0, k0};
    if (t.pairDot) {
      BlockView rhs = g.rhsTransposed ? BlockView{rhsBuf, rhsBatch, n0, k0}
                                      : BlockView{rhsBuf, rhsBatch, k0, n0};
      BlockView packed =
          g.rhsPacked ? prepackedPanel(colBlock, k0)
                      : packPairBlock(b, loc, rhs, panel, t.lanes, depth, cols,
                                      paddedCols, g.rhsTransposed);
      emitPairPanel(lhs, packed, acc, rows, colVecs, depth);
      return;
    }
    BlockView packed =
        g.rhsPacked ? prepackedPanel(colBlock, k0)
        : g.quantizedRhs
            ? packQuantizedBlock(b, loc, *g.quantizedRhs, rhsBuf, panel,
                                 vecType, n0, k0, depth, cols, paddedCols)
        : g.rhsTransposed
            ? packTransposedBlock(b, loc, BlockView{rhsBuf, rhsBatch, n0, k0},
                                  panel, vecType, depth, cols, paddedCols)
            : packBlock(b, loc, BlockView{rhsBuf, rhsBatch, k0, n0}, panel,
                        vecType, depth, cols, paddedCols);
    if (widenLhs)
      lhs = packBlock(b, loc, lhs, lhsPack, vecType, rows, depth, depth);
    emitPanel(lhs, packed, acc, rows, colVecs, depth);
  });
  emitOutput(batchIvs, m0, n0, rows, cols, acc);
}

/// acc[i, c] = the init block, its fill value or 0 for the work item's rows
/// and padded columns.
void GemmLowering::initAcc(Value acc, ValueRange batchIvs, Value m0, Value n0,
                           Value rows, Value cols, Value paddedCols) {
  if (initBuf) {
    BlockView init{initBuf, SmallVector<Value>(batchIvs), m0, n0};
    packBlock(b, loc, init, acc, vecType, rows, cols, paddedCols);
    return;
  }
  Value start =
      g.initValue
          ? vector::BroadcastOp::create(b, loc, vecType,
                                        castFloat(b, loc, g.initValue, ct))
                .getResult()
          : createFloatConstantOfType(b, loc, vecType, 0.0);
  forLoop(idx(0), rows, idx(1), [&](Value i) {
    forLoop(idx(0), paddedCols, idx(t.lanes), [&](Value c) {
      vector::StoreOp::create(b, loc, start, acc, ValueRange{i, c});
    });
  });
}

/// The work item on AMX tiles: per k block, the rhs block pair-packed into
/// the panel (or read in place from prepacked panels, zero-padded by the
/// pack) and the lhs rows read in place where the block is whole tiles, else
/// copied into a bf16 block, both zero-padded to whole tiles (32 rows, 32
/// columns, 32 k), then 2 x 2 C tiles at a time updated in acc (AmxTile.h).
/// Padding rows of acc are computed and never stored.
void GemmLowering::emitAmxWorkItem(ValueRange ivs, Value mb) {
  WorkItem item = getWorkItem(ivs, mb);
  auto padded = [&](Value size, int64_t to) {
    return mul(arith::CeilDivUIOp::create(b, loc, size, idx(to)), idx(to));
  };
  AmxWorkItem w{item, ivs[numBatch + 1], padded(item.rows, kAmxBlock),
                padded(item.cols, kAmxBlock)};
  // Static buffers (amx.tile_load reads their row stride), no larger than
  // a static product needs, whole tiles.
  auto extent = [&](Value size, int64_t most) {
    return std::max(blockExtent(size, most, kAmxBlock), kAmxBlock);
  };
  int64_t mcRows = extent(m, t.mc), kcCols = extent(k, t.kc),
          ncCols = extent(n, t.nc);
  Type bf16 = b.getBF16Type();
  w.acc = alloc({b.getIndexAttr(mcRows), b.getIndexAttr(ncCols)});
  // The per-call panel is grouped as prepacked ones are.
  w.panelGroupRows = kcCols / 2;
  if (!g.rhsPacked)
    w.panel = allocAligned(
        b, loc, bf16,
        {b.getIndexAttr(kcCols / 2 * (2 * ncCols / kPanelGroup)),
         b.getIndexAttr(kPanelGroup)});
  w.lhsPack = allocAligned(
      b, loc, bf16, {b.getIndexAttr(mcRows), b.getIndexAttr(kcCols)});
  // A product that starts at zero (no init, a zero fill) over a static,
  // non-empty K: the first k block's C tiles start from tile_zero and acc
  // is only written by it, not zero-filled first.
  std::optional<int64_t> staticK = getConstantIntValue(k);
  bool zeroStart =
      !initBuf &&
      (!g.initValue || matchPattern(g.initValue, m_AnyZeroFloat())) &&
      staticK && *staticK > 0;
  if (!zeroStart)
    initAcc(w.acc, item.batchIvs, item.m0, item.n0, item.rows, item.cols,
            w.paddedCols);
  w.lhsBatch = operandBatch(g.lhs, item.batchIvs);
  if (!g.rhsPacked)
    w.rhsBatch = operandBatch(g.rhs, item.batchIvs);
  // The last k block writes the output block by block as its C tiles are
  // done (emitAmxKBlock with `last`): the vector code of the output then
  // runs beside the tiles' work on the next block, on acc rows in L1,
  // instead of after all of it, on the whole of acc.
  // The last k block's start, (max(K, 1) - 1) / kc * kc.
  Value lastK0 =
      staticK ? idx(std::max<int64_t>(*staticK - 1, 0) / t.kc * t.kc)
              : mul(arith::DivUIOp::create(
                        b, loc,
                        arith::SubIOp::create(
                            b, loc, arith::MaxUIOp::create(b, loc, k, idx(1)),
                            idx(1)),
                        idx(t.kc)),
                    idx(t.kc));
  if (zeroStart) {
    if (*staticK <= t.kc) {
      emitAmxKBlock(w, idx(0), /*first=*/true, /*last=*/true);
      return;
    }
    emitAmxKBlock(w, idx(0), /*first=*/true, /*last=*/false);
    if (*staticK > 2 * t.kc)
      forLoop(idx(t.kc), lastK0, idx(t.kc),
              [&](Value k0) { emitAmxKBlock(w, k0, false, false); });
    emitAmxKBlock(w, lastK0, false, /*last=*/true);
    return;
  }
  if (!staticK || *staticK > t.kc)
    forLoop(idx(0), lastK0, idx(t.kc),
            [&](Value k0) { emitAmxKBlock(w, k0, false, false); });
  if (staticK && *staticK > 0) {
    emitAmxKBlock(w, lastK0, false, /*last=*/true);
    return;
  }
  // K = 0: acc holds the init.
  auto branch = scf::IfOp::create(
      b, loc, TypeRange{},
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, k, idx(0)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  emitAmxKBlock(w, lastK0, false, /*last=*/true);
  b.setInsertionPointToStart(branch.elseBlock());
  emitOutput(item.batchIvs, item.m0, item.n0, item.rows, item.cols, w.acc);
}

BlockView GemmLowering::nextPrepackedPanel(const BlockView &panel) {
  auto type = cast<MemRefType>(rhsBuf.getType());
  Value colBlock = panel.prefix[0], kb = add(panel.prefix[1], idx(1));
  Value sameCol = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kb,
                                        idx(type.getDimSize(1)));
  Value nextCol = minu(add(colBlock, idx(1)), idx(type.getDimSize(0) - 1));
  return BlockView{
      rhsBuf,
      {arith::SelectOp::create(b, loc, sameCol, colBlock, nextCol),
       arith::SelectOp::create(b, loc, sameCol, kb, idx(0))},
      nullptr,
      nullptr,
      panelGroupRows};
}

/// acc += the work item's rows x the k block at k0 x its columns.
void GemmLowering::emitAmxKBlock(const AmxWorkItem &w, Value k0, bool first,
                                 bool last) {
  const WorkItem &item = w.item;
  Type bf16 = b.getBF16Type();
  // 64-byte rows of bf16 zeros for the padding.
  auto zeroVec = VectorType::get({kAmxBlock}, bf16);
  Value depth = minu(arith::SubIOp::create(b, loc, k, k0), idx(t.kc));
  Value steps = arith::CeilDivUIOp::create(b, loc, depth, idx(kAmxStepK));
  Value paddedDepth = mul(steps, idx(kAmxStepK));
  BlockView rhsPanel, next;
  if (g.rhsPacked) {
    rhsPanel = prepackedPanel(w.colBlock, k0);
    next = nextPrepackedPanel(rhsPanel);
  } else {
    BlockView rhs = g.rhsTransposed
                        ? BlockView{rhsBuf, w.rhsBatch, item.n0, k0}
                        : BlockView{rhsBuf, w.rhsBatch, k0, item.n0};
    rhsPanel = packPairBlock(b, loc, rhs, w.panel, t.lanes, depth, item.cols,
                             w.paddedCols, g.rhsTransposed, w.panelGroupRows);
    // Pairs past the depth: zero in both operands (0 * garbage may be NaN).
    zeroRows(b, loc, rhsPanel, zeroVec,
             arith::CeilDivUIOp::create(b, loc, depth, idx(2)),
             mul(steps, idx(kAmxStepK / 2)), mul(w.paddedCols, idx(2)));
  }
  BlockView lhs{lhsBuf, w.lhsBatch, item.m0, k0};
  // The output of the block of acc at (i0, j0): its rows and columns of
  // the work item's.
  auto output = [&](Value i0, Value j0) {
    int64_t block = kAmxBlock;
    auto accType = cast<MemRefType>(w.acc.getType());
    auto viewType = MemRefType::get(
        {block, block}, accType.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                               {accType.getDimSize(1), 1}));
    Value view = memref::SubViewOp::create(
        b, loc, viewType, w.acc, ArrayRef<OpFoldResult>{i0, j0},
        ArrayRef<OpFoldResult>{b.getIndexAttr(block), b.getIndexAttr(block)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    emitOutput(item.batchIvs, add(item.m0, i0), add(item.n0, j0),
               minu(arith::SubIOp::create(b, loc, item.rows, i0), idx(block)),
               minu(arith::SubIOp::create(b, loc, item.cols, j0), idx(block)),
               view);
  };
  auto product = [&](const BlockView &a) {
    buildAmxBlockProduct(
        b, loc, a, rhsPanel, w.acc, w.paddedRows, w.paddedCols, steps,
        t.kc / kAmxStepK, first, next,
        last ? function_ref<void(Value, Value)>(output) : nullptr);
  };
  auto packed = [&] {
    packBlock(b, loc, lhs, w.lhsPack, VectorType::get({t.lanes}, bf16),
              item.rows, depth, paddedDepth);
    zeroRows(b, loc, BlockView{w.lhsPack}, zeroVec, item.rows, w.paddedRows,
             paddedDepth);
    product(BlockView{w.lhsPack, {}, nullptr, nullptr});
  };
  // The lhs can be read in place where its rows are contiguous bf16.
  if (!cast<MemRefType>(lhsBuf.getType()).isLastDimUnitStride()) {
    packed();
    return;
  }
  // Whole tiles of the lhs (32-row blocks, 32-k steps) are read in place as
  // A tiles; a block with padding is packed.
  Value whole = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, item.rows,
                            w.paddedRows),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, depth,
                            paddedDepth));
  auto branch = scf::IfOp::create(b, loc, TypeRange{}, whole,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  product(lhs);
  b.setInsertionPointToStart(branch.elseBlock());
  packed();
}

/// For each register tile of the work item's rows and column vectors:
/// loads its accumulators from acc, lets `tile` update them and stores them
/// back.
void GemmLowering::forEachTile(Value acc, Value rows, Value colVecs,
                               TileFn tile) {
  forGroups(idx(0), colVecs, t.nv, [&](Value v0, int64_t nv) {
    SmallVector<Value> colOf;
    for (int64_t v = 0; v < nv; ++v)
      colOf.push_back(mul(add(v0, idx(v)), idx(t.lanes)));
    forGroups(idx(0), rows, t.mr, [&](Value i0, int64_t mr) {
      SmallVector<Value> rowOf, init;
      for (int64_t r = 0; r < mr; ++r)
        rowOf.push_back(add(i0, idx(r)));
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t v = 0; v < nv; ++v)
          init.push_back(vector::LoadOp::create(b, loc, vecType, acc,
                                                ValueRange{rowOf[r], colOf[v]}));
      SmallVector<Value> next = tile(rowOf, colOf, init);
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t v = 0; v < nv; ++v)
          vector::StoreOp::create(b, loc, next[r * nv + v], acc,
                                  ValueRange{rowOf[r], colOf[v]});
    });
  });
}

/// acc[i, c] += sum_{j < depth} lhs[i, j] * panel[j, c] for the work item's
/// rows and column vectors, one FMA register tile at a time.
void GemmLowering::emitPanel(const BlockView &lhs, const BlockView &panel,
                             Value acc, Value rows, Value colVecs,
                             Value depth) {
  forEachTile(acc, rows, colVecs,
              [&](ArrayRef<Value> rowOf, ArrayRef<Value> colOf,
                  ArrayRef<Value> init) {
                return buildRegisterTile(
                    b, loc, depth, init, rowOf.size(), colOf.size(),
                    [&](int64_t r, Value j) {
                      return loadElement(b, loc, lhs, rowOf[r], j, ct);
                    },
                    [&](int64_t v, Value j) {
                      return loadVector(b, loc, panel, vecType, j, colOf[v]);
                    });
              });
}

/// The same product on a pair-packed bf16 panel (PairDotTile.h): one
/// x86vector.avx512.dot per accumulator and pair of k; an odd depth's last
/// k pairs the lhs element with zero (its neighbour may be out of bounds).
void GemmLowering::emitPairPanel(const BlockView &lhs, const BlockView &panel,
                                 Value acc, Value rows, Value colVecs,
                                 Value depth) {
  Value fullPairs = arith::DivUIOp::create(b, loc, depth, idx(2));
  Value pairs = arith::CeilDivUIOp::create(b, loc, depth, idx(2));
  auto pairVec = VectorType::get({2 * t.lanes}, b.getBF16Type());
  forEachTile(
      acc, rows, colVecs,
      [&](ArrayRef<Value> rowOf, ArrayRef<Value> colOf, ArrayRef<Value> init) {
        auto loadB = [&](int64_t v, Value p) {
          return loadVector(b, loc, panel, pairVec, p, mul(colOf[v], idx(2)));
        };
        auto pairsFrom = [&](Value lo, Value hi, ArrayRef<Value> start,
                             bool last) {
          return buildPairDotTile(
              b, loc, lo, hi, start, rowOf.size(), colOf.size(),
              [&](int64_t r, Value p) {
                return loadPairBroadcast(b, loc, lhs, t.lanes, rowOf[r], p,
                                         last);
              },
              loadB);
        };
        SmallVector<Value> tile = pairsFrom(idx(0), fullPairs, init, false);
        return pairsFrom(fullPairs, pairs, tile, true);
      });
}

/// out[batch, m0 + i, n0 + c] = acc[i, c] in the element type (through
/// the epilogue): whole vectors, then the last columns one by one.
void GemmLowering::emitOutput(ValueRange batchIvs, Value m0, Value n0,
                              Value rows, Value cols, Value acc) {
  Value lanes = idx(t.lanes);
  Value vectorCols = arith::SubIOp::create(
      b, loc, cols, arith::RemUIOp::create(b, loc, cols, lanes));
  auto outIndices = [&](Value i, Value c) {
    SmallVector<Value> indices(batchIvs);
    indices.append({add(m0, i), add(n0, c)});
    return indices;
  };
  forLoop(idx(0), rows, idx(1), [&](Value i) {
    forLoop(idx(0), vectorCols, lanes, [&](Value c) {
      Value x = vector::LoadOp::create(b, loc, vecType, acc, ValueRange{i, c});
      results->store(b, loc, x, outBuf, outIndices(i, c));
    });
    forLoop(vectorCols, cols, idx(1), [&](Value c) {
      Value x = memref::LoadOp::create(b, loc, acc, ValueRange{i, c});
      results->store(b, loc, x, outBuf, outIndices(i, c));
    });
  });
}

GemmOperandBuffers cpu::getOperandBuffers(OpBuilder &b, Location loc,
                                          const GemmOperands &g) {
  GemmOperandBuffers buffers;
  buffers.lhs = toReadOnlyBuffer(b, loc, g.lhs);
  buffers.rhs = toReadOnlyBuffer(b, loc, g.rhs);
  if (g.init)
    buffers.init = toReadOnlyBuffer(b, loc, g.init);
  else if (g.initRow)
    buffers.init = broadcastRows(b, loc, toReadOnlyBuffer(b, loc, g.initRow),
                                 g.resultType, g.resultSizes);
  return buffers;
}

Value cpu::buildGemm(OpBuilder &b, Location loc, const GemmOperands &operands,
                     const Target &target) {
  GemmTiling tiling = chooseGemmTiling(operands, target);
  assert((!operands.quantizedRhs ||
          (!tiling.pairDot && !isAmxProduct(operands, target) &&
           tiling.kc % kMaxQuantUnit == 0)) &&
         "a quantized rhs is dequantized into f32 panels of whole units");
  return GemmLowering(b, loc, operands, tiling)
      .emit(isAmxProduct(operands, target));
}

namespace {
/// attn.pack_weight's loops: one work item per panel, each packed by the
/// GEMM's own pack code (packBlock, packTransposedBlock, or packPairBlock
/// for bf16 pairs) into its slice of the result.
class PackWeightLowering : Emitter {
public:
  PackWeightLowering(OpBuilder &b, Location loc, int64_t lanes)
      : Emitter(b, loc, b.getF32Type(), lanes) {}

  Value emit(Value weight, bool transposed, RankedTensorType packedType) {
    ArrayRef<int64_t> shape = packedType.getShape();
    auto weightShape = cast<RankedTensorType>(weight.getType()).getShape();
    Value source = toBuffer(weight);
    auto outType = MemRefType::get(shape, packedType.getElementType());
    Value out = memref::AllocOp::create(b, loc, outType, ValueRange{},
                                        b.getI64IntegerAttr(64));
    // AMX panels are grouped (getPackedRhsType).
    int64_t groupRows = 0;
    Value panels = out;
    if (isAmxPanelType(packedType)) {
      groupRows = shape[2];
      panels = groupPanels(b, loc, out);
    }
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(shape[0]),
                                       b.getIndexAttr(shape[1])},
        ValueRange{}, std::nullopt);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forall.getBody()->getTerminator());
      emitPanel(source, panels, forall.getInductionVars(), outType,
                weightShape[transposed ? 0 : 1],
                weightShape[transposed ? 1 : 0], transposed, groupRows);
    }
    return bufferization::ToTensorOp::create(b, loc, packedType, out,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

private:
  /// Packs panel (j, kb) = `ivs` of the [k, n] operand in `source` into
  /// out[j, kb] (of `outType`; `out` is its grouped view where
  /// `groupRows` is not 0).
  void emitPanel(Value source, Value out, ValueRange ivs, MemRefType outType,
                 int64_t n, int64_t k, bool transposed, int64_t groupRows) {
    ArrayRef<int64_t> shape = outType.getShape();
    int64_t lanes = vecType.getNumElements();
    bool pairs = outType.getElementType().isBF16();
    // The panel's rows and columns as stored: kc / 2 pairs x 2 * nc for
    // bf16 pairs.
    int64_t rows = shape[2], width = shape[3];
    int64_t kc = pairs ? 2 * rows : rows, nc = pairs ? width / 2 : width;
    Value j = ivs[0], kb = ivs[1];
    Value n0 = mul(j, idx(nc)), k0 = mul(kb, idx(kc));
    Value depth = minu(arith::SubIOp::create(b, loc, idx(k), k0), idx(kc));
    Value cols = minu(arith::SubIOp::create(b, loc, idx(n), n0), idx(nc));
    // The panel (j, kb) as a 2-D view (of its grouped rows where grouped).
    int64_t viewRows = groupRows ? rows * width / kPanelGroup : rows;
    int64_t viewWidth = groupRows ? kPanelGroup : width;
    auto panelType = MemRefType::get(
        {viewRows, viewWidth}, outType.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                               {viewWidth, 1}));
    Value panel = memref::SubViewOp::create(
        b, loc, panelType, out,
        ArrayRef<OpFoldResult>{j, kb, b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(viewRows),
                               b.getIndexAttr(viewWidth)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                               b.getIndexAttr(1), b.getIndexAttr(1)});
    BlockView panelView{panel, {}, nullptr, nullptr, groupRows};
    Value filled = depth;
    if (pairs) {
      BlockView view = transposed ? BlockView{source, {}, n0, k0}
                                  : BlockView{source, {}, k0, n0};
      packPairBlock(b, loc, view, panel, lanes, depth, cols, idx(nc),
                    transposed, groupRows);
      filled = arith::CeilDivUIOp::create(b, loc, depth, idx(2));
    } else if (transposed) {
      packTransposedBlock(b, loc, BlockView{source, {}, n0, k0}, panel,
                          vecType, depth, cols, idx(nc));
    } else {
      packBlock(b, loc, BlockView{source, {}, k0, n0}, panel, vecType, depth,
                cols, idx(nc));
    }
    // The rows (pairs) past K in the last k block, which the GEMM never
    // reads, zeroed so that the packed tensor is fully defined.
    auto rowType = VectorType::get({pairs ? 2 * lanes : lanes},
                                   outType.getElementType());
    zeroRows(b, loc, panelView, rowType, filled, idx(rows), idx(width));
  }
};
} // namespace

Value cpu::buildPackWeight(OpBuilder &b, Location loc, Value weight,
                           bool transposed, RankedTensorType packedType,
                           int64_t vectorBits) {
  int64_t lanes = getVectorLanes(b.getF32Type(), vectorBits);
  return PackWeightLowering(b, loc, lanes)
      .emit(weight, transposed, packedType);
}
