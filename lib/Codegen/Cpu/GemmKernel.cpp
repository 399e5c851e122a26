//===- GemmKernel.cpp - the instruction families of the CPU GEMM ----------===//
//
// FmaGemmKernel: per k block the rhs block packed into a compute-type
// panel (columns zero-padded to whole vectors; a transposed rhs is
// transposed in registers on the way), a narrow lhs widened into lhsPack,
// then for each nv-vector column group and each group of mr rows an FMA
// register tile (RegisterTile.h). QuantizedGemmKernel packs its panel by
// dequantizing the weight's bytes (packQuantizedBlock). IntDotGemmKernel
// multiplies int8 activations by a quantized weight's codes in integers:
// its panel holds the codes of each k block of the weight rows in the
// VNNI layout (4 consecutive k of a column in one 32-bit lane) with their
// scales (and q4_k's mins) beside, and its tile sums each unit of 32 k
// (each half of it for q6_k's scales per 16) in i32 lanes
// (QuantDotKernel's vpdpbusd) before scaling it into f32 accumulators.
// PairGemmKernel keeps the panel in bf16 pairs of k, reads the lhs pairs
// in place and does one x86vector.avx512.dot per accumulator and pair of
// k (PairDotTile.h). AmxGemmKernel pads its blocks to whole tiles and runs
// 2 x 2 C tiles at a time (AmxTile.h), behind the run-time permission
// check, with the vector kernel as its fallback.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/GemmKernel.h"

#include "attn/Codegen/Cpu/AmxTile.h"
#include "attn/Codegen/Cpu/PairDotTile.h"
#include "attn/Codegen/Cpu/QuantBlocks.h"
#include "attn/Codegen/Cpu/QuantDotKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

GemmKernel::~GemmKernel() = default;

BlockView GemmKernel::prepackedPanel(Value colBlock, Value k0) {
  return BlockView{ops.rhs,
                   {colBlock, arith::DivUIOp::create(b, loc, k0, idx(t.kc))},
                   nullptr,
                   nullptr,
                   ops.panelGroupRows};
}

int64_t cpu::getBlockExtent(Value size, int64_t most, int64_t align) {
  std::optional<int64_t> c = getConstantIntValue(size);
  int64_t e = c ? std::min(most, (int64_t)llvm::alignTo(*c, align)) : most;
  return std::max<int64_t>(e, 1);
}

/// The grouped view of pair panels `mem` ([..., kc / 2, 2 * nc], dense):
/// [..., (2 * nc / kPanelGroup) * kc / 2, kPanelGroup] over the same
/// memory, each panel's column groups one after the other (read through
/// a BlockView whose groupRows is kc / 2).
static Value groupPanels(OpBuilder &b, Location loc, Value mem) {
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

Value cpu::viewPackedPanels(OpBuilder &b, Location loc, Value mem,
                            ShapedType type, int64_t &groupRows) {
  groupRows = 0;
  if (!isAmxPanelType(type))
    return mem;
  groupRows = type.getDimSize(2);
  return groupPanels(b, loc, mem);
}

/// The FMA kernels' pack step: the block at (k0, n0) of `mem` (its
/// transpose with `transposed`; `batch` its batch indices) into the
/// compute-type panel `panel`, columns zero-padded to `paddedCols`.
static BlockView packWidenedRhs(OpBuilder &b, Location loc, Value mem,
                                ArrayRef<Value> batch, Value n0, Value k0,
                                bool transposed, Value panel,
                                VectorType vecType, Value depth, Value cols,
                                Value paddedCols) {
  SmallVector<Value> prefix(batch);
  if (transposed)
    return packTransposedBlock(b, loc, BlockView{mem, prefix, n0, k0}, panel,
                               vecType, depth, cols, paddedCols);
  return packBlock(b, loc, BlockView{mem, prefix, k0, n0}, panel, vecType,
                   depth, cols, paddedCols);
}

/// The pair and AMX kernels' pack step: the same block into the bf16 pair
/// panel `panel` (grouped where `groupRows` is set).
static BlockView packPairRhs(OpBuilder &b, Location loc, Value mem,
                             ArrayRef<Value> batch, Value n0, Value k0,
                             bool transposed, Value panel, int64_t lanes,
                             Value depth, Value cols, Value paddedCols,
                             int64_t groupRows) {
  SmallVector<Value> prefix(batch);
  BlockView rhs = transposed ? BlockView{mem, prefix, n0, k0}
                             : BlockView{mem, prefix, k0, n0};
  return packPairBlock(b, loc, rhs, panel, lanes, depth, cols, paddedCols,
                       transposed, groupRows);
}

void cpu::packRhsPanel(OpBuilder &b, Location loc, const PackedPanel &panel,
                       int64_t lanes, Value source, Value n0, Value k0,
                       bool transposed, Value depth, Value cols) {
  Type element = cast<MemRefType>(panel.view.getType()).getElementType();
  bool pairs = element.isBF16();
  int64_t nc = pairs ? panel.width / 2 : panel.width;
  auto idx = [&](int64_t v) { return indexConstant(b, loc, v); };
  Value filled = depth;
  if (pairs) {
    packPairRhs(b, loc, source, {}, n0, k0, transposed, panel.view, lanes,
                depth, cols, idx(nc), panel.groupRows);
    filled = arith::CeilDivUIOp::create(b, loc, depth, idx(2));
  } else {
    packWidenedRhs(b, loc, source, {}, n0, k0, transposed, panel.view,
                   VectorType::get({lanes}, element), depth, cols, idx(nc));
  }
  // The rows (pairs) past K in the last k block, which the GEMM never
  // reads, zeroed so that the packed tensor is fully defined.
  auto rowType = VectorType::get({pairs ? 2 * lanes : lanes}, element);
  zeroRows(b, loc, BlockView{panel.view, {}, nullptr, nullptr, panel.groupRows},
           rowType, filled, idx(panel.rows), idx(panel.width));
}

namespace {

/// FMA register tiles (mr rows x nv vectors) on compute-type panels: the
/// rhs block packed (or transposed) into the panel, a narrow lhs widened
/// into lhsPack once per k block.
class FmaGemmKernel : public GemmKernel {
public:
  using GemmKernel::GemmKernel;
  void allocate(GemmWorkItem &w) override;
  void emitKBlock(const GemmWorkItem &w, Value k0, Value depth, bool first,
                  GemmBlockOutputFn output) override;

protected:
  /// The per-call panel of kcRows x ncCols elements.
  virtual Value allocatePanel(int64_t kcRows, int64_t ncCols) {
    return alloc({b.getIndexAttr(kcRows), b.getIndexAttr(ncCols)});
  }
  /// Whether the lhs is widened into lhsPack: a narrow lhs (bf16, f16).
  /// The register tile then broadcasts compute-type scalars straight from
  /// memory instead of converting each one in a general register and
  /// moving it to a vector (a shuffle-port uop per broadcast, on the port
  /// that AVX-512 FMAs share).
  virtual bool widensLhs() const {
    return cast<MemRefType>(ops.lhs.getType()).getElementType() != ct;
  }
  /// The rhs block at k0 as a panel: packed into w.panel, or prepacked.
  virtual BlockView packPanel(const GemmWorkItem &w, Value k0, Value depth);
  /// acc[i, c] += sum_{j < depth} lhs[i, j] * panel[j, c] for the work
  /// item's rows and column vectors.
  virtual void emitPanel(const GemmWorkItem &w, const BlockView &lhs,
                         const BlockView &panel, Value depth);

  using TileFn = function_ref<SmallVector<Value>(
      ArrayRef<Value> rowOf, ArrayRef<Value> colOf, ArrayRef<Value> init)>;
  /// For each register tile of the work item's rows and column vectors:
  /// loads its accumulators from acc, lets `tile` update them and stores
  /// them back.
  void forEachTile(const GemmWorkItem &w, TileFn tile);
  /// In row tile `tile` at step j (row j of a panel of `rows` rows of
  /// `rowElems` elements of `elemBytes` bytes): its share of the
  /// prefetches of the prepacked panel `next` (see kPrefetchSteps).
  void prefetchNextPanel(const BlockView &next, Value tile, Value j,
                         int64_t rows, int64_t rowElems, int64_t elemBytes);
};

/// FMA tiles on panels dequantized from a quantized weight's bytes.
class QuantizedGemmKernel : public FmaGemmKernel {
public:
  using FmaGemmKernel::FmaGemmKernel;

protected:
  BlockView packPanel(const GemmWorkItem &w, Value k0, Value depth) override {
    return packQuantizedBlock(b, loc, *ops.quantizedRhs, ops.rhs, w.panel,
                              vecType, w.n0, k0, depth, w.cols, w.paddedCols);
  }
};

/// Integer dots of an lhs quantized to int8 (QuantizedRows) and a
/// quantized weight whose codes have a fixed offset: one scale per unit of
/// 32 codes (q8_0, q4_0, int8_sym, int4_sym), a k-quant's groups (q6_k:
/// a scale per 16 elements, offset 32; q4_k: a scale and a min per 32, no
/// offset), or an asymmetric scheme's units (int8_asym, int4_asym: no
/// offset, and scale * zero point as the unit's min). Per k block the weight's codes are packed into an i32 panel
/// [kc / 4, nc], panel[q, c] the 4 unsigned codes of k = 4q .. 4q + 3 of
/// column c, and per unit its scales (and min) into rows of an f32 panel
/// [kc / 32 * getScaleRows(), nc]; padding columns get zero codes, scales
/// and mins. A tile of mr rows x nv vectors of `lanes` columns, per unit
/// of 32 k and per group of its k of one scale (the unit, or q6_k's two
/// halves): i32 accumulators started at -offset * the row group's code
/// sum, the group's dots (QuantDotKernel::accumulate: one vector of the
/// panel's quads times the row's 4 codes broadcast), then acc += f32(dot) *
/// (weight scales * row scale); with mins, acc -= mins * (row scale * f32(
/// row block's code sum)) once per unit: the GEMV's arithmetic per unit.
class IntDotGemmKernel : public FmaGemmKernel {
public:
  using FmaGemmKernel::FmaGemmKernel;
  void allocate(GemmWorkItem &w) override;
  void emitKBlock(const GemmWorkItem &w, Value k0, Value depth, bool first,
                  GemmBlockOutputFn output) override;

protected:
  /// The codes' panel holds 4 k per i32 lane: a quarter of the rows.
  Value allocatePanel(int64_t kcRows, int64_t ncCols) override {
    return allocAligned(b, loc, b.getI32Type(),
                        {b.getIndexAttr(kcRows / 4), b.getIndexAttr(ncCols)});
  }
  /// The tile reads the rows' int8 codes, never the float lhs.
  bool widensLhs() const override { return false; }

private:
  /// One unit of 32 k of a weight row as the panels hold it: its codes
  /// (vector<32xi8>, unsigned, with the rows' offset), its scales (one per
  /// group of 32 / getGroups() k) and its min (q4_k, else null).
  struct Unit {
    Value codes;
    SmallVector<Value, 2> scales;
    Value min;
  };

  QuantScheme getScheme() const { return ops.quantizedRhs->format.getScheme(); }
  /// The groups of k of one scale in a unit: 2 for q6_k, else 1.
  int64_t getGroups() const { return getScheme() == QuantScheme::q6_k ? 2 : 1; }
  /// Whether a unit has a min (W = scale * code - min): q4_k's, and the
  /// asymmetric schemes' scale * zero point.
  bool hasMins() const {
    return getScheme() == QuantScheme::q4_k ||
           ops.quantizedRhs->format.hasZeroPoints();
  }
  /// The rows of the scale panel per unit: its scales, then its min.
  int64_t getScaleRows() const { return getGroups() + hasMins(); }
  /// The units the pack decodes per step of its loop: a k-quant
  /// super-block's 8 (its decoders take a static group), else 1.
  int64_t getUnitsPerStep() const {
    QuantScheme s = getScheme();
    return s == QuantScheme::q4_k || s == QuantScheme::q6_k
               ? kMaxQuantUnit / QuantDotKernel::kStepBytes
               : 1;
  }
  /// Unit `i` (< getUnitsPerStep()) of step `step` of weight row `row`;
  /// a q4_k weight's scales and mins are `q4kScales`, the row's
  /// decodeQ4KScales of the step (ignored for other schemes).
  Unit decodeUnit(QuantDecoder &decoder, Value row, Value step, int64_t i,
                  std::pair<Value, Value> q4kScales);
  /// Codes and scales of the k block at k0 into w.panel and
  /// w.panelScales.
  void packCodes(const GemmWorkItem &w, Value k0, Value depth);

  /// One step of a tile's loop over the units of a k block: the lhs rows
  /// of the tile, the panel column of each of its vectors, the unit's
  /// index in the block (u) and in the row (block), and its first k.
  struct UnitTile {
    SmallVector<Value> rows;
    ArrayRef<Value> colOf;
    Value u, block, k;
  };
  /// The scale of the row group of tile row `r`.
  Value loadRowScale(const UnitTile &tile, int64_t r);
  /// The scale panel's row `p` of the unit (group p's scales; after the
  /// groups, the min), one vector per tile vector.
  SmallVector<Value> loadParams(const GemmWorkItem &w, const UnitTile &tile,
                                int64_t p);
  /// The i32 dots of group `g` of the unit, per tile row and vector: from
  /// -offset * the row group's code sum, plus codes x row codes.
  SmallVector<Value> emitGroupDots(const GemmWorkItem &w, const UnitTile &tile,
                                   int64_t g);
  /// acc += f32(dots) * (group g's scales * row scale).
  void emitGroupScale(const GemmWorkItem &w, const UnitTile &tile, int64_t g,
                      ArrayRef<Value> dots, MutableArrayRef<Value> acc);
  /// acc -= mins * (row scale * f32(the row block's code sum)).
  void emitMins(const GemmWorkItem &w, const UnitTile &tile,
                MutableArrayRef<Value> acc);
};

/// AVX512-BF16 pair dots on bf16 panels in pairs of k; the lhs pairs are
/// read in place.
class PairGemmKernel : public FmaGemmKernel {
public:
  using FmaGemmKernel::FmaGemmKernel;

protected:
  /// A pair-packed panel holds bf16 pairs: half the rows, twice the
  /// columns.
  Value allocatePanel(int64_t kcRows, int64_t ncCols) override {
    return allocAligned(b, loc, b.getBF16Type(),
                        {b.getIndexAttr(llvm::divideCeil(kcRows, 2)),
                         b.getIndexAttr(2 * ncCols)});
  }
  bool widensLhs() const override { return false; }
  BlockView packPanel(const GemmWorkItem &w, Value k0, Value depth) override;
  void emitPanel(const GemmWorkItem &w, const BlockView &lhs,
                 const BlockView &panel, Value depth) override;
};

/// AMX tiles on bf16 pair panels grouped into 32-wide column groups, the
/// lhs read in place where its block is whole tiles, else packed; blocks
/// padded to whole tiles (32 rows, 32 columns, 32 k). The vector kernel
/// runs where the process may not use the tiles.
class AmxGemmKernel : public GemmKernel {
public:
  AmxGemmKernel(OpBuilder &b, Location loc, Type ct,
                const GemmKernelOperands &operands, const GemmTiling &t,
                std::unique_ptr<GemmKernel> fallback)
      : GemmKernel(b, loc, ct, operands, t), fallback(std::move(fallback)) {}

  void emitVersions(function_ref<void(GemmKernel &)> emit) override {
    // One check per product.
    buildAmxBranch(b, loc, [&](bool onTiles) {
      emit(onTiles ? *this : *fallback);
    });
  }
  bool fusesOutput() const override { return true; }
  void allocate(GemmWorkItem &w) override;
  void emitKBlock(const GemmWorkItem &w, Value k0, Value depth, bool first,
                  GemmBlockOutputFn output) override;

private:
  std::unique_ptr<GemmKernel> fallback;
};

} // namespace

void FmaGemmKernel::allocate(GemmWorkItem &w) {
  Value lanes = idx(t.lanes);
  w.colVecs = arith::CeilDivUIOp::create(b, loc, w.cols, lanes);
  w.paddedCols = mul(w.colVecs, lanes);
  // The blocks' buffers, no larger than a static product needs.
  int64_t mcRows = getBlockExtent(ops.m, llvm::alignTo(t.mc, t.mr), t.mr);
  int64_t kcRows = getBlockExtent(ops.k, t.kc, 1);
  int64_t ncCols = getBlockExtent(ops.n, t.nc, t.lanes);
  w.acc = alloc({b.getIndexAttr(mcRows), b.getIndexAttr(ncCols)});
  // Prepacked panels need no buffer of their own.
  if (!ops.rhsPacked)
    w.panel = allocatePanel(kcRows, ncCols);
  if (widensLhs())
    w.lhsPack = alloc({b.getIndexAttr(mcRows), b.getIndexAttr(kcRows)});
}

void FmaGemmKernel::emitKBlock(const GemmWorkItem &w, Value k0, Value depth,
                               bool first, GemmBlockOutputFn output) {
  BlockView lhs{ops.lhs, w.lhsBatch, w.m0, k0};
  BlockView panel = packPanel(w, k0, depth);
  if (w.lhsPack)
    lhs = packBlock(b, loc, lhs, w.lhsPack, vecType, w.rows, depth, depth);
  emitPanel(w, lhs, panel, depth);
}

BlockView FmaGemmKernel::packPanel(const GemmWorkItem &w, Value k0,
                                   Value depth) {
  if (ops.rhsPacked)
    return prepackedPanel(w.colBlock, k0);
  return packWidenedRhs(b, loc, ops.rhs, w.rhsBatch, w.n0, k0,
                        ops.rhsTransposed, w.panel, vecType, depth, w.cols,
                        w.paddedCols);
}

void FmaGemmKernel::forEachTile(const GemmWorkItem &w, TileFn tile) {
  forGroups(idx(0), w.colVecs, t.nv, [&](Value v0, int64_t nv) {
    SmallVector<Value> colOf;
    for (int64_t v = 0; v < nv; ++v)
      colOf.push_back(mul(add(v0, idx(v)), idx(t.lanes)));
    forGroups(idx(0), w.rows, t.mr, [&](Value i0, int64_t mr) {
      SmallVector<Value> rowOf, init;
      for (int64_t r = 0; r < mr; ++r)
        rowOf.push_back(add(i0, idx(r)));
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t v = 0; v < nv; ++v)
          init.push_back(vector::LoadOp::create(
              b, loc, vecType, w.acc, ValueRange{rowOf[r], colOf[v]}));
      SmallVector<Value> next = tile(rowOf, colOf, init);
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t v = 0; v < nv; ++v)
          vector::StoreOp::create(b, loc, next[r * nv + v], w.acc,
                                  ValueRange{rowOf[r], colOf[v]});
    });
  });
}

/// The tiles of a prepacked panel read it from memory the first time: the
/// weights are streamed once per call. While they work on one panel they
/// prefetch the next one into L2, spread thin: each row tile takes its
/// own share of the next panel's cache lines, one line every
/// kPrefetchSteps steps (a step reads one row of the panel: one k of an f32
/// panel, one pair of k of a bf16 pair panel; tile i takes the lines from
/// i * rows / kPrefetchSteps on), so that the loads of a panel overlap the
/// FMAs or dots of the one before instead of stalling its first tile
/// (bench/RESULTS.md, "Xeon-AMX, f32 against OpenVINO").
static constexpr int64_t kPrefetchSteps = 4;

void FmaGemmKernel::prefetchNextPanel(const BlockView &next, Value tile,
                                      Value j, int64_t rows, int64_t rowElems,
                                      int64_t elemBytes) {
  int64_t lineLanes = std::max<int64_t>(1, 64 / elemBytes);
  int64_t rowLines = llvm::divideCeil(rowElems, lineLanes);
  int64_t lines = rows * rowLines;
  // One op per statement: the order of the ops does not depend on the
  // compiler's order of evaluating arguments.
  Value first = mul(tile, idx(rows / kPrefetchSteps));
  Value step = arith::DivUIOp::create(b, loc, j, idx(kPrefetchSteps));
  Value line = add(first, step);
  Value inPanel = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, line,
                                        idx(lines));
  Value phase = arith::RemUIOp::create(b, loc, j, idx(kPrefetchSteps));
  Value stepStart =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, phase, idx(0));
  Value due = arith::AndIOp::create(b, loc, stepStart, inPanel);
  scf::IfOp::create(b, loc, due, [&](OpBuilder &, Location) {
    Value row = arith::DivUIOp::create(b, loc, line, idx(rowLines));
    Value lineInRow = arith::RemUIOp::create(b, loc, line, idx(rowLines));
    Value col = mul(lineInRow, idx(lineLanes));
    memref::PrefetchOp::create(b, loc, next.mem,
                               viewIndices(b, loc, next, row, col),
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
    scf::YieldOp::create(b, loc);
  });
}

void FmaGemmKernel::emitPanel(const GemmWorkItem &w, const BlockView &lhs,
                              const BlockView &panel, Value depth) {
  std::optional<BlockView> next;
  if (ops.rhsPacked)
    next = nextPrepackedPanel(panel);
  forEachTile(w, [&](ArrayRef<Value> rowOf, ArrayRef<Value> colOf,
                     ArrayRef<Value> init) {
    Value tile = arith::DivUIOp::create(b, loc, rowOf.front(), idx(t.mr));
    return buildRegisterTile(
        b, loc, depth, init, rowOf.size(), colOf.size(),
        [&](int64_t r, Value j) {
          return loadElement(b, loc, lhs, rowOf[r], j, ct);
        },
        [&](int64_t v, Value j) {
          if (next && v == 0)
            prefetchNextPanel(*next, tile, j, t.kc, t.nc,
                              ct.getIntOrFloatBitWidth() / 8);
          return loadVector(b, loc, panel, vecType, j, colOf[v]);
        });
  });
}

void IntDotGemmKernel::allocate(GemmWorkItem &w) {
  // K and kc are whole units of 32 (the formats' and create's rule), so
  // the f32 GEMM's k block extent is whole units too.
  FmaGemmKernel::allocate(w);
  int64_t kcRows = getBlockExtent(ops.k, t.kc, 1);
  int64_t ncCols = getBlockExtent(ops.n, t.nc, t.lanes);
  w.panelScales = allocAligned(
      b, loc, b.getF32Type(),
      {b.getIndexAttr(kcRows / QuantDotKernel::kStepBytes * getScaleRows()),
       b.getIndexAttr(ncCols)});
}

/// The decoders of the GEMV's integer path: decodeIntUnit, or a k-quant's
/// group `i` of super-block `step` (q6_k's first 16 elements' scale in
/// lanes 0-3 of its scales, the second's in 4-7; q4_k's scale and min
/// lane i of `q4kScales`, the super-block's decodeQ4KScales).
IntDotGemmKernel::Unit
IntDotGemmKernel::decodeUnit(QuantDecoder &decoder, Value row, Value step,
                             int64_t i, std::pair<Value, Value> q4kScales) {
  auto lane = [&](Value v, int64_t l) {
    return vector::ExtractOp::create(b, loc, v, l).getResult();
  };
  switch (getScheme()) {
  case QuantScheme::q6_k: {
    QuantDecoder::IntPair group = decoder.decodeQ6Groups(row, step, i, 1);
    return {
        group.codes, {lane(group.scales, 0), lane(group.scales, 4)}, nullptr};
  }
  case QuantScheme::q4_k:
    return {decoder.decodeQ4KCodes(row, step, i, 1),
            {lane(q4kScales.first, i)},
            lane(q4kScales.second, i)};
  default: {
    QuantDecoder::IntUnit unit = decoder.decodeIntUnit(row, step);
    if (!hasMins())
      return {unit.codes, {unit.scale}, nullptr};
    // Unsigned codes and the unit's zero point: min = scale * zero point.
    Value zeroPoint =
        arith::UIToFPOp::create(b, loc, b.getF32Type(), unit.offset);
    Value min = arith::MulFOp::create(b, loc, unit.scale, zeroPoint);
    return {unit.codes, {unit.scale}, min};
  }
  }
}

/// Per group of 8 columns and unit: the 8 columns' codes as 8 vectors of
/// 8 quads, transposed in registers into 8 panel rows of 8 columns. A
/// padding column decodes the last weight row (in bounds) and is replaced
/// by zeros.
void IntDotGemmKernel::packCodes(const GemmWorkItem &w, Value k0, Value depth) {
  const QuantizedWeight &weight = *ops.quantizedRhs;
  QuantDecoder decoder(b, loc, weight, ops.rhs, t.lanes);
  int64_t quads = QuantDotKernel::kStepBytes / 4;
  int64_t perStep = getUnitsPerStep(), scaleRows = getScaleRows();
  int64_t stepElements = perStep * QuantDotKernel::kStepBytes;
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto quadType = VectorType::get({quads}, i32);
  Value zeroQuads = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(quadType, b.getI32IntegerAttr(0)));
  Value zeroScale = createFloatConstant(b, loc, f32, 0.0);
  Value steps = arith::DivUIOp::create(b, loc, depth, idx(stepElements));
  Value firstStep = arith::DivUIOp::create(b, loc, k0, idx(stepElements));
  Value lastRow = idx(weight.n - 1);
  forLoop(idx(0), w.paddedCols, idx(quads), [&](Value c0) {
    forLoop(idx(0), steps, idx(1), [&](Value s) {
      // q4_k: each column's 8 scales and mins, decoded once per super-block.
      SmallVector<std::pair<Value, Value>> q4kScales(quads);
      if (getScheme() == QuantScheme::q4_k)
        for (int64_t j = 0; j < quads; ++j)
          q4kScales[j] = decoder.decodeQ4KScales(
              minu(add(w.n0, add(c0, idx(j))), lastRow), add(firstStep, s));
      for (int64_t i = 0; i < perStep; ++i) {
        Value u = add(mul(s, idx(perStep)), idx(i));
        SmallVector<Value> columns;
        for (int64_t j = 0; j < quads; ++j) {
          Value col = add(c0, idx(j));
          Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              col, w.cols);
          Unit unit = decodeUnit(decoder, minu(add(w.n0, col), lastRow),
                                 add(firstStep, s), i, q4kScales[j]);
          Value asQuads =
              vector::BitCastOp::create(b, loc, quadType, unit.codes);
          columns.push_back(
              arith::SelectOp::create(b, loc, valid, asQuads, zeroQuads));
          SmallVector<Value, 3> params(unit.scales.begin(), unit.scales.end());
          if (unit.min)
            params.push_back(unit.min);
          for (auto [r, param] : llvm::enumerate(params))
            memref::StoreOp::create(
                b, loc,
                arith::SelectOp::create(b, loc, valid, param, zeroScale),
                w.panelScales,
                ValueRange{add(mul(u, idx(scaleRows)), idx(r)), col});
        }
        SmallVector<Value> rows = transposeInRegisters(b, loc, columns);
        for (int64_t q = 0; q < quads; ++q)
          vector::StoreOp::create(
              b, loc, rows[q], w.panel,
              ValueRange{add(mul(u, idx(quads)), idx(q)), c0});
      }
    });
  });
}

Value IntDotGemmKernel::loadRowScale(const UnitTile &tile, int64_t r) {
  return memref::LoadOp::create(b, loc, ops.quantizedLhs->scales,
                                ValueRange{tile.rows[r], tile.block});
}

SmallVector<Value> IntDotGemmKernel::loadParams(const GemmWorkItem &w,
                                                const UnitTile &tile,
                                                int64_t p) {
  SmallVector<Value> params;
  for (Value col : tile.colOf)
    params.push_back(vector::LoadOp::create(
        b, loc, vecType, w.panelScales,
        ValueRange{add(mul(tile.u, idx(getScaleRows())), idx(p)), col}));
  return params;
}

SmallVector<Value> IntDotGemmKernel::emitGroupDots(const GemmWorkItem &w,
                                                   const UnitTile &tile,
                                                   int64_t g) {
  const QuantizedRows &lhs = *ops.quantizedLhs;
  int64_t mr = tile.rows.size(), nv = tile.colOf.size();
  int64_t groups = getGroups(), quads = QuantDotKernel::kStepBytes / 4;
  int64_t groupQuads = quads / groups;
  Type i32 = b.getI32Type(), i8 = b.getIntegerType(8);
  auto quadType = VectorType::get({t.lanes}, i32);
  auto byteType = VectorType::get({4 * t.lanes}, i8);
  // Start at -offset * the row group's code sum (0 without an offset).
  SmallVector<Value> dots;
  if (!lhs.offset)
    dots.append(
        mr * nv,
        arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(quadType, b.getI32IntegerAttr(0))));
  for (int64_t r = 0; r < mr && lhs.offset; ++r) {
    Value sum =
        groups == 1
            ? memref::LoadOp::create(b, loc, lhs.sums,
                                     ValueRange{tile.rows[r], tile.block})
            : memref::LoadOp::create(
                  b, loc, lhs.halfSums,
                  ValueRange{tile.rows[r],
                             add(mul(tile.block, idx(groups)), idx(g))});
    Value minusOffset = arith::ConstantIntOp::create(b, loc, i32, -lhs.offset);
    dots.append(nv, vector::BroadcastOp::create(
                        b, loc, quadType,
                        arith::MulIOp::create(b, loc, sum, minusOffset)));
  }
  for (int64_t q = g * groupQuads; q < (g + 1) * groupQuads; ++q) {
    SmallVector<Value> codes;
    for (Value col : tile.colOf)
      codes.push_back(vector::BitCastOp::create(
          b, loc, byteType,
          vector::LoadOp::create(
              b, loc, quadType, w.panel,
              ValueRange{add(mul(tile.u, idx(quads)), idx(q)), col})));
    for (int64_t r = 0; r < mr; ++r) {
      // The row's 4 codes of k .. k + 3 in every i32 lane.
      Value four = vector::LoadOp::create(
          b, loc, VectorType::get({4}, i8), lhs.codes,
          ValueRange{tile.rows[r], add(tile.k, idx(4 * q))});
      Value word =
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), four);
      Value act = vector::BitCastOp::create(
          b, loc, byteType,
          vector::BroadcastOp::create(b, loc, quadType, word));
      for (int64_t v = 0; v < nv; ++v)
        dots[r * nv + v] = lhs.dot->accumulate(dots[r * nv + v], codes[v], act);
    }
  }
  return dots;
}

void IntDotGemmKernel::emitGroupScale(const GemmWorkItem &w,
                                      const UnitTile &tile, int64_t g,
                                      ArrayRef<Value> dots,
                                      MutableArrayRef<Value> acc) {
  int64_t mr = tile.rows.size(), nv = tile.colOf.size();
  SmallVector<Value> scales = loadParams(w, tile, g);
  for (int64_t r = 0; r < mr; ++r) {
    Value d =
        vector::BroadcastOp::create(b, loc, vecType, loadRowScale(tile, r));
    for (int64_t v = 0; v < nv; ++v) {
      Value dot = arith::SIToFPOp::create(b, loc, vecType, dots[r * nv + v]);
      Value scale = arith::MulFOp::create(b, loc, scales[v], d);
      acc[r * nv + v] =
          vector::FMAOp::create(b, loc, dot, scale, acc[r * nv + v]);
    }
  }
}

void IntDotGemmKernel::emitMins(const GemmWorkItem &w, const UnitTile &tile,
                                MutableArrayRef<Value> acc) {
  int64_t mr = tile.rows.size(), nv = tile.colOf.size();
  SmallVector<Value> mins = loadParams(w, tile, getGroups());
  for (Value &min : mins)
    min = arith::NegFOp::create(b, loc, min);
  for (int64_t r = 0; r < mr; ++r) {
    Value sum = memref::LoadOp::create(b, loc, ops.quantizedLhs->sums,
                                       ValueRange{tile.rows[r], tile.block});
    Value terms = vector::BroadcastOp::create(
        b, loc, vecType,
        arith::MulFOp::create(
            b, loc, loadRowScale(tile, r),
            arith::SIToFPOp::create(b, loc, b.getF32Type(), sum)));
    for (int64_t v = 0; v < nv; ++v)
      acc[r * nv + v] =
          vector::FMAOp::create(b, loc, mins[v], terms, acc[r * nv + v]);
  }
}

void IntDotGemmKernel::emitKBlock(const GemmWorkItem &w, Value k0, Value depth,
                                  bool first, GemmBlockOutputFn output) {
  packCodes(w, k0, depth);
  int64_t unit = QuantDotKernel::kStepBytes;
  Value units = arith::DivUIOp::create(b, loc, depth, idx(unit));
  Value firstUnit = arith::DivUIOp::create(b, loc, k0, idx(unit));
  forEachTile(w, [&](ArrayRef<Value> rowOf, ArrayRef<Value> colOf,
                     ArrayRef<Value> init) {
    UnitTile tile;
    tile.colOf = colOf;
    for (Value row : rowOf)
      tile.rows.push_back(add(w.m0, row));
    auto loop = scf::ForOp::create(
        b, loc, idx(0), units, idx(1), init,
        [&](OpBuilder &, Location, Value u, ValueRange acc) {
          tile.u = u;
          tile.block = add(firstUnit, u);
          tile.k = mul(tile.block, idx(unit));
          SmallVector<Value> next(acc);
          for (int64_t g = 0; g < getGroups(); ++g)
            emitGroupScale(w, tile, g, emitGroupDots(w, tile, g), next);
          if (hasMins())
            emitMins(w, tile, next);
          scf::YieldOp::create(b, loc, next);
        });
    return SmallVector<Value>(loop.getResults());
  });
}

BlockView PairGemmKernel::packPanel(const GemmWorkItem &w, Value k0,
                                    Value depth) {
  if (ops.rhsPacked)
    return prepackedPanel(w.colBlock, k0);
  return packPairRhs(b, loc, ops.rhs, w.rhsBatch, w.n0, k0, ops.rhsTransposed,
                     w.panel, t.lanes, depth, w.cols, w.paddedCols,
                     /*groupRows=*/0);
}

/// One x86vector.avx512.dot per accumulator and pair of k; an odd depth's
/// last k pairs the lhs element with zero (its neighbour may be out of
/// bounds).
void PairGemmKernel::emitPanel(const GemmWorkItem &w, const BlockView &lhs,
                               const BlockView &panel, Value depth) {
  Value fullPairs = arith::DivUIOp::create(b, loc, depth, idx(2));
  Value pairs = arith::CeilDivUIOp::create(b, loc, depth, idx(2));
  auto pairVec = VectorType::get({2 * t.lanes}, b.getBF16Type());
  std::optional<BlockView> next;
  if (ops.rhsPacked)
    next = nextPrepackedPanel(panel);
  forEachTile(w, [&](ArrayRef<Value> rowOf, ArrayRef<Value> colOf,
                     ArrayRef<Value> init) {
    Value rowTile = arith::DivUIOp::create(b, loc, rowOf.front(), idx(t.mr));
    auto loadB = [&](int64_t v, Value p) {
      // A panel row is a pair of k: kc / 2 rows of 2 nc bf16.
      if (next && v == 0)
        prefetchNextPanel(*next, rowTile, p, llvm::divideCeil(t.kc, 2),
                          2 * t.nc, 2);
      return loadVector(b, loc, panel, pairVec, p, mul(colOf[v], idx(2)));
    };
    auto pairsFrom = [&](Value lo, Value hi, ArrayRef<Value> start,
                         bool last) {
      return buildPairDotTile(
          b, loc, lo, hi, start, rowOf.size(), colOf.size(),
          [&](int64_t r, Value p) {
            return loadPairBroadcast(b, loc, lhs, t.lanes, rowOf[r], p, last);
          },
          loadB);
    };
    SmallVector<Value> tile = pairsFrom(idx(0), fullPairs, init, false);
    return pairsFrom(fullPairs, pairs, tile, true);
  });
}

/// Static buffers (amx.tile_load reads their row stride), no larger than a
/// static product needs, whole tiles; the per-call panel grouped as
/// prepacked ones are. Padding rows of acc are computed and never stored.
void AmxGemmKernel::allocate(GemmWorkItem &w) {
  auto padded = [&](Value size, int64_t to) {
    return mul(arith::CeilDivUIOp::create(b, loc, size, idx(to)), idx(to));
  };
  w.paddedRows = padded(w.rows, kAmxBlock);
  w.paddedCols = padded(w.cols, kAmxBlock);
  auto extent = [&](Value size, int64_t most) {
    return std::max(getBlockExtent(size, most, kAmxBlock), kAmxBlock);
  };
  int64_t mcRows = extent(ops.m, t.mc), kcCols = extent(ops.k, t.kc),
          ncCols = extent(ops.n, t.nc);
  Type bf16 = b.getBF16Type();
  w.acc = alloc({b.getIndexAttr(mcRows), b.getIndexAttr(ncCols)});
  w.panelGroupRows = kcCols / 2;
  if (!ops.rhsPacked)
    w.panel = allocAligned(
        b, loc, bf16,
        {b.getIndexAttr(kcCols / 2 * (2 * ncCols / kPanelGroup)),
         b.getIndexAttr(kPanelGroup)});
  w.lhsPack = allocAligned(
      b, loc, bf16, {b.getIndexAttr(mcRows), b.getIndexAttr(kcCols)});
}

BlockView GemmKernel::nextPrepackedPanel(const BlockView &panel) {
  auto type = cast<MemRefType>(ops.rhs.getType());
  Value colBlock = panel.prefix[0], kb = add(panel.prefix[1], idx(1));
  Value sameCol = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kb,
                                        idx(type.getDimSize(1)));
  Value nextCol = minu(add(colBlock, idx(1)), idx(type.getDimSize(0) - 1));
  return BlockView{
      ops.rhs,
      {arith::SelectOp::create(b, loc, sameCol, colBlock, nextCol),
       arith::SelectOp::create(b, loc, sameCol, kb, idx(0))},
      nullptr,
      nullptr,
      ops.panelGroupRows};
}

/// Per k block, the rhs block pair-packed into the panel (or read in place
/// from prepacked panels, zero-padded by the pack) and the lhs rows read in
/// place where the block is whole tiles, else copied into a bf16 block,
/// both zero-padded to whole tiles, then 2 x 2 C tiles at a time updated in
/// acc.
void AmxGemmKernel::emitKBlock(const GemmWorkItem &w, Value k0, Value depth,
                               bool first, GemmBlockOutputFn output) {
  Type bf16 = b.getBF16Type();
  // 64-byte rows of bf16 zeros for the padding.
  auto zeroVec = VectorType::get({kAmxBlock}, bf16);
  Value steps = arith::CeilDivUIOp::create(b, loc, depth, idx(kAmxStepK));
  Value paddedDepth = mul(steps, idx(kAmxStepK));
  BlockView rhsPanel, next;
  if (ops.rhsPacked) {
    rhsPanel = prepackedPanel(w.colBlock, k0);
    next = nextPrepackedPanel(rhsPanel);
  } else {
    rhsPanel = packPairRhs(b, loc, ops.rhs, w.rhsBatch, w.n0, k0,
                           ops.rhsTransposed, w.panel, t.lanes, depth,
                           w.cols, w.paddedCols, w.panelGroupRows);
    // Pairs past the depth: zero in both operands (0 * garbage may be NaN).
    zeroRows(b, loc, rhsPanel, zeroVec,
             arith::CeilDivUIOp::create(b, loc, depth, idx(2)),
             mul(steps, idx(kAmxStepK / 2)), mul(w.paddedCols, idx(2)));
  }
  BlockView lhs{ops.lhs, w.lhsBatch, w.m0, k0};
  auto afterBlock = [&](Value i0, Value j0) { output(i0, j0, kAmxBlock); };
  auto product = [&](const BlockView &a) {
    buildAmxBlockProduct(
        b, loc, a, rhsPanel, w.acc, w.paddedRows, w.paddedCols, steps,
        t.kc / kAmxStepK, first, next,
        output ? function_ref<void(Value, Value)>(afterBlock) : nullptr);
  };
  auto packed = [&] {
    packBlock(b, loc, lhs, w.lhsPack, VectorType::get({t.lanes}, bf16),
              w.rows, depth, paddedDepth);
    zeroRows(b, loc, BlockView{w.lhsPack}, zeroVec, w.rows, w.paddedRows,
             paddedDepth);
    product(BlockView{w.lhsPack, {}, nullptr, nullptr});
  };
  // The lhs can be read in place where its rows are contiguous bf16.
  if (!cast<MemRefType>(ops.lhs.getType()).isLastDimUnitStride()) {
    packed();
    return;
  }
  // Whole tiles of the lhs (32-row blocks, 32-k steps) are read in place as
  // A tiles; a block with padding is packed.
  Value whole = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w.rows,
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

std::unique_ptr<GemmKernel>
GemmKernel::create(OpBuilder &b, Location loc, Type ct,
                   const GemmKernelOperands &operands, const GemmTiling &base,
                   ProductKernels kernels) {
  if (operands.quantizedRhs && operands.quantizedLhs) {
    // Integer dots on vectors of the dot's i32 lanes: nv = 2, and mr the
    // rows for which the f32 and i32 accumulators, the codes and a
    // broadcast fit in the registers of the base tile's 4-vector-wide
    // tiles (6 x 2 with 32 registers, 3 x 2 with 16).
    GemmTiling tiling = base;
    tiling.lanes = operands.quantizedLhs->dot->isWide()
                       ? QuantDotKernel::kWideAccLanes
                       : QuantDotKernel::kAccLanes;
    tiling.nv = 2;
    tiling.mr = std::max<int64_t>(1, base.mr * base.nv / 4);
    assert(base.kc % kMaxQuantUnit == 0 && tiling.nc % tiling.lanes == 0 &&
           "k blocks of whole units (k-quant super-blocks)");
    return std::unique_ptr<GemmKernel>(
        new IntDotGemmKernel(b, loc, ct, operands, tiling));
  }
  if (operands.quantizedRhs) {
    assert(kernels.vector == VectorKernel::Fma && !kernels.amxTiles &&
           base.kc % kMaxQuantUnit == 0 &&
           "a quantized rhs is dequantized into f32 panels of whole units");
    return std::unique_ptr<GemmKernel>(
        new QuantizedGemmKernel(b, loc, ct, operands, base));
  }
  std::unique_ptr<GemmKernel> vector;
  if (kernels.vector == VectorKernel::PairDot)
    vector.reset(new PairGemmKernel(b, loc, ct, operands, base));
  else
    vector.reset(new FmaGemmKernel(b, loc, ct, operands, base));
  // Prepacked panels are on tiles only where they are whole tiles
  // (getPackedRhsType for an AMX target).
  if (!kernels.amxTiles ||
      (operands.rhsPacked && !operands.panelGroupRows))
    return vector;
  return std::make_unique<AmxGemmKernel>(b, loc, ct, operands,
                                         getAmxTiling(base), std::move(vector));
}
