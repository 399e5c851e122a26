//===- GemmToCpu.cpp - register-tiled matrix products for the CPU ---------===//
//
// A GEMM in the loop order of BLIS/GotoBLAS, emitted in the vector dialect
// on buffers:
//
//   mb = rows per work item: all of M up to mc, so that each packed panel
//     serves every row of its column block; fewer (whole register tiles,
//     at least minRows) where that leaves under minItems work items
//   scf.forall (batch dims x row blocks of mb x column blocks of nc)
//     the kernel's scratch; acc[mb, nc] = init block (or its fill value,
//       or 0), compute type
//     scf.for k0 in [0, K) step kc
//       the kernel's k block: pack rhs[k0 .. k0+kc, n0 .. n0+nc] into its
//         panel, then acc += lhs[rows, k0 .. k0+kc] x panel
//     out[rows, cols] = acc rounded to the element type
//
// The kernel (GemmKernel.h) is the instruction family's part, chosen once
// per product from the target: FMA register tiles of mr rows x nv vectors
// on compute-type panels (a narrow lhs widened per k block), the same
// tiles on panels dequantized from a quantized weight, integer dots of
// int8 activations and a quantized weight's codes, AVX512-BF16 pair
// dots on bf16 pair panels, or AMX tiles behind the runtime's permission
// check (with a vector kernel as the fallback). A kernel on tiles starts
// the first k block from zero where the product does and writes the
// output block by block in the last one: its k blocks are peeled
// (emitFusedKBlocks).
//
// Sizes come from the target's vector width: 16 vector registers (AVX2)
// take 6 rows x 2 vectors (12 accumulators), 32 (AVX-512) 6 x 4. Remainder
// rows and column vectors run narrower static tiles (forGroups); the
// panel's zero padding makes partial column vectors whole. The blocks'
// buffers are no larger than a static product needs.
//
//===----------------------------------------------------------------------===//

#include "GemmToCpu.h"

#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/GemmKernel.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"

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

/// The vector kernels' tiling of `g` on `target`; a prepacked rhs's blocks
/// are its panels' (getPackedRhsType chose them).
GemmTiling chooseGemmTiling(const GemmOperands &g, const Target &target) {
  Type ct = getComputeType(g.resultType.getElementType());
  GemmTiling t = getBaseTiling(ct, target);
  if (g.rhsPacked)
    return getPackedRhsTiling(t, cast<ShapedType>(g.rhs.getType()));
  return t;
}

class GemmLowering : Emitter {
public:
  GemmLowering(OpBuilder &b, Location loc, const GemmOperands &g,
               const GemmTiling &t, ProductKernels kernels)
      : Emitter(b, loc, getComputeType(g.resultType.getElementType()),
                t.lanes),
        g(g), t(t), kernels(kernels) {}

  /// The product on the kernel that GemmKernel::create chooses (and its
  /// fallback, where that kernel needs the runtime's permission).
  Value emit();

private:
  /// The batch indices of an operand of `type` for the result's batch ivs.
  SmallVector<Value> operandBatch(Value operand, ValueRange batchIvs);

  /// A work item's place: batch indices, first row and column, and its
  /// numbers of rows and columns.
  GemmWorkItem getWorkItem(ValueRange ivs, Value mb);

  void emitForall();
  Value rowBlockSize(Value colBlocks);
  void emitWorkItem(ValueRange ivs, Value mb);
  /// Whether the product starts at zero (no init, a zero fill) over a
  /// static, non-empty K.
  bool startsAtZero();
  /// min(K - k0, kc).
  Value blockDepth(Value k0);
  /// The k blocks of a kernel that fuses the output (GemmKernel::
  /// fusesOutput): the first from zero with `zeroStart`, the last writing
  /// the output block by block.
  void emitFusedKBlocks(GemmWorkItem &w, bool zeroStart);
  void initAcc(Value acc, ValueRange batchIvs, Value m0, Value n0, Value rows,
               Value cols, Value paddedCols);
  void emitOutput(ValueRange batchIvs, Value m0, Value n0, Value rows,
                  Value cols, Value acc);
  /// emitOutput on the `size` x `size` block of acc at (i0, j0).
  void emitOutputBlock(const GemmWorkItem &w, Value i0, Value j0,
                       int64_t size);

  const GemmOperands &g;
  /// The tiling of `kernel`.
  GemmTiling t;
  ProductKernels kernels;
  /// The operands as the kernels read them; set by emit().
  GemmKernelOperands ops;
  /// The kernel whose work items are being emitted.
  GemmKernel *kernel = nullptr;
  Value initBuf, outBuf;
  /// Writes the results (after the epilogue's consumers); set by emit().
  std::optional<ResultStore> results;
  int64_t numBatch = 0;
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

Value GemmLowering::emit() {
  numBatch = g.resultType.getRank() - 2;
  GemmOperandBuffers buffers = getOperandBuffers(b, loc, g);
  ops.lhs = buffers.lhs;
  ops.rhs = buffers.rhs;
  initBuf = buffers.init;
  if (g.rhsPacked)
    ops.rhs = viewPackedPanels(b, loc, ops.rhs,
                               cast<ShapedType>(g.rhs.getType()),
                               ops.panelGroupRows);
  ops.rhsTransposed = g.rhsTransposed;
  ops.rhsPacked = g.rhsPacked;
  ops.quantizedRhs = g.quantizedRhs;
  ops.quantizedLhs = g.quantizedLhs;
  results.emplace(b, loc, g.epilogue);
  ops.m = g.resultSizes[numBatch];
  ops.n = g.resultSizes[numBatch + 1];
  ops.k = getDimSize(b, loc, g.lhs,
                     cast<RankedTensorType>(g.lhs.getType()).getRank() - 1);
  SmallVector<Value> outDyn;
  for (auto [i, size] : llvm::enumerate(g.resultSizes))
    if (g.resultType.isDynamicDim(i))
      outDyn.push_back(size);
  outBuf = memref::AllocOp::create(
      b, loc,
      MemRefType::get(g.resultType.getShape(), g.resultType.getElementType()),
      outDyn, b.getI64IntegerAttr(64));
  std::unique_ptr<GemmKernel> chosen =
      GemmKernel::create(b, loc, ct, ops, t, kernels);
  chosen->emitVersions([&](GemmKernel &version) {
    kernel = &version;
    t = version.getTiling();
    emitForall();
  });
  return bufferization::ToTensorOp::create(b, loc, g.resultType, outBuf,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// The work items over batch dims x row blocks x column blocks.
void GemmLowering::emitForall() {
  SmallVector<OpFoldResult> ubs;
  for (Value size : ArrayRef<Value>(g.resultSizes).take_front(numBatch))
    ubs.push_back(getAsOpFoldResult(size));
  Value colBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, ops.n, idx(t.nc));
  Value mb = rowBlockSize(colBlocks);
  ubs.push_back(getAsOpFoldResult(
      b.createOrFold<arith::CeilDivUIOp>(loc, ops.m, mb)));
  ubs.push_back(getAsOpFoldResult(colBlocks));
  auto forall = scf::ForallOp::create(b, loc, ubs, ValueRange{}, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getBody()->getTerminator());
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
  Value most = ceilDivU(ops.m, idx(t.minRows));
  Value needed = ceilDivU(ops.m, idx(t.mc));
  Value blocks = maxU(
      needed, maxU(one, b.createOrFold<arith::MinUIOp>(loc, wanted, most)));
  Value tiles = ceilDivU(ceilDivU(ops.m, blocks), idx(t.mr));
  return maxU(b.createOrFold<arith::MulIOp>(loc, tiles, idx(t.mr)), one);
}

GemmWorkItem GemmLowering::getWorkItem(ValueRange ivs, Value mb) {
  GemmWorkItem w;
  w.batchIvs = ivs.take_front(numBatch);
  w.colBlock = ivs[numBatch + 1];
  w.m0 = mul(ivs[numBatch], mb);
  w.n0 = mul(ivs[numBatch + 1], idx(t.nc));
  w.rows = minu(arith::SubIOp::create(b, loc, ops.m, w.m0), mb);
  w.cols = minu(arith::SubIOp::create(b, loc, ops.n, w.n0), idx(t.nc));
  return w;
}

/// A work item: the kernel's buffers, acc at its start, then acc += the
/// product of each k block, then the output.
void GemmLowering::emitWorkItem(ValueRange ivs, Value mb) {
  GemmWorkItem w = getWorkItem(ivs, mb);
  kernel->allocate(w);
  // A kernel that fuses the output starts the first k block's tiles from
  // zero where it can; acc is then only written by it, not zero-filled
  // first.
  bool zeroStart = kernel->fusesOutput() && startsAtZero();
  if (!zeroStart)
    initAcc(w.acc, w.batchIvs, w.m0, w.n0, w.rows, w.cols, w.paddedCols);
  w.lhsBatch = operandBatch(g.lhs, w.batchIvs);
  if (!g.rhsPacked)
    w.rhsBatch = operandBatch(g.rhs, w.batchIvs);
  if (kernel->fusesOutput()) {
    emitFusedKBlocks(w, zeroStart);
    return;
  }
  forLoop(idx(0), ops.k, idx(t.kc), [&](Value k0) {
    kernel->emitKBlock(w, k0, blockDepth(k0), /*first=*/false, nullptr);
  });
  emitOutput(w.batchIvs, w.m0, w.n0, w.rows, w.cols, w.acc);
}

bool GemmLowering::startsAtZero() {
  std::optional<int64_t> staticK = getConstantIntValue(ops.k);
  return !initBuf &&
         (!g.initValue || matchPattern(g.initValue, m_AnyZeroFloat())) &&
         staticK && *staticK > 0;
}

Value GemmLowering::blockDepth(Value k0) {
  return minu(arith::SubIOp::create(b, loc, ops.k, k0), idx(t.kc));
}

/// The last k block writes the output block by block as its tiles are
/// done: the vector code of the output then runs beside the tiles' work on
/// the next block, on acc rows in L1, instead of after all of it, on the
/// whole of acc.
void GemmLowering::emitFusedKBlocks(GemmWorkItem &w, bool zeroStart) {
  std::optional<int64_t> staticK = getConstantIntValue(ops.k);
  Value k = ops.k;
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
  auto output = [&](Value i0, Value j0, int64_t size) {
    emitOutputBlock(w, i0, j0, size);
  };
  auto kBlock = [&](Value k0, bool first, bool last) {
    kernel->emitKBlock(w, k0, blockDepth(k0), first,
                       last ? GemmBlockOutputFn(output) : nullptr);
  };
  if (zeroStart) {
    if (*staticK <= t.kc) {
      kBlock(idx(0), /*first=*/true, /*last=*/true);
      return;
    }
    kBlock(idx(0), /*first=*/true, /*last=*/false);
    if (*staticK > 2 * t.kc)
      forLoop(idx(t.kc), lastK0, idx(t.kc),
              [&](Value k0) { kBlock(k0, false, false); });
    kBlock(lastK0, false, /*last=*/true);
    return;
  }
  if (!staticK || *staticK > t.kc)
    forLoop(idx(0), lastK0, idx(t.kc),
            [&](Value k0) { kBlock(k0, false, false); });
  if (staticK && *staticK > 0) {
    kBlock(lastK0, false, /*last=*/true);
    return;
  }
  // K = 0: acc holds the init.
  auto branch = scf::IfOp::create(
      b, loc, TypeRange{},
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, k, idx(0)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  kBlock(lastK0, false, /*last=*/true);
  b.setInsertionPointToStart(branch.elseBlock());
  emitOutput(w.batchIvs, w.m0, w.n0, w.rows, w.cols, w.acc);
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

void GemmLowering::emitOutputBlock(const GemmWorkItem &w, Value i0, Value j0,
                                   int64_t size) {
  auto accType = cast<MemRefType>(w.acc.getType());
  auto viewType = MemRefType::get(
      {size, size}, accType.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                             {accType.getDimSize(1), 1}));
  Value view = memref::SubViewOp::create(
      b, loc, viewType, w.acc, ArrayRef<OpFoldResult>{i0, j0},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size), b.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  emitOutput(w.batchIvs, add(w.m0, i0), add(w.n0, j0),
             minu(arith::SubIOp::create(b, loc, w.rows, i0), idx(size)),
             minu(arith::SubIOp::create(b, loc, w.cols, j0), idx(size)),
             view);
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
  ProductKernels kernels = target.getProductKernels(
      elementType(operands.lhs), elementType(operands.rhs),
      getComputeType(operands.resultType.getElementType()));
  return GemmLowering(b, loc, operands, chooseGemmTiling(operands, target),
                      kernels)
      .emit();
}

namespace {
/// attn.pack_weight's loops: one work item per panel, each packed by the
/// pack code of the GEMM kernel that reads it (packRhsPanel) into its
/// slice of the result.
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
    // Panels of whole AMX tiles are grouped (getPackedRhsType).
    int64_t groupRows = 0;
    Value panels = viewPackedPanels(b, loc, out, packedType, groupRows);
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
    // The panel's rows and columns as stored (kc / 2 pairs x 2 * nc for
    // bf16 pairs) and its blocks.
    int64_t rows = shape[2], width = shape[3];
    GemmTiling blocks = getPackedRhsTiling(GemmTiling(), outType);
    int64_t kc = blocks.kc, nc = blocks.nc;
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
    PackedPanel packed{panel, rows, width, groupRows};
    packRhsPanel(b, loc, packed, lanes, source, n0, k0, transposed, depth,
                 cols);
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
