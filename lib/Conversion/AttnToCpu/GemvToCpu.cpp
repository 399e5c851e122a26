//===- GemvToCpu.cpp - products of a few rows with a [N, K] weight --------===//
//
// A decode step multiplies a few activation rows by every projection
// weight: the product is bound by reading the weight, once. The GEMM would
// read each weight and write it again into packed panels, two passes over
// the model's weights per step instead of one, for too few rows to reuse
// the panels. Here each output element is a dot product of two contiguous
// rows:
//
//   scf.forall (blocks of nb weight rows; an scf.for for a small weight)
//     for each group of nr weight rows of the block
//       for each group of mr lhs rows (static remainder groups)
//         mr x nr vector accumulators over K (two chains each for a tile
//         of fewer than 4 products), then the last elements one by one
//         out[m, n] = init[m, n] + sum of the accumulators, rounded once
//
// The weight rows stream from memory once and stay in L1 for the other
// groups of lhs rows; each vector load feeds nr or mr FMAs.
//
// The instruction family of the steps is the kernel's (GemvKernel.h):
// FMAs on rows widened to the compute type, or bf16 pair dots on the rows
// as stored. A kernel on tiles (AMX) multiplies blocks of weight rows by
// all the lhs rows at once, behind the runtime's permission check:
//
//   lhs rows packed once for the tiles
//   scf.forall (blocks of weight rows; an scf.for for a small weight)
//     acc = the block's products on tiles
//     out[m, n0 + j] = init[m, n0 + j] + acc[j, m], rounded once
//   the last N % block weight rows as the vector code's last work item
//
//===----------------------------------------------------------------------===//

#include "GemvToCpu.h"

#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/GemvKernel.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/RegisterTile.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

class GemvLowering : Emitter {
public:
  GemvLowering(OpBuilder &b, Location loc, const GemmOperands &g,
               const Target &target)
      : Emitter(b, loc, getComputeType(g.resultType.getElementType()),
                target.getLanes(getComputeType(g.resultType.getElementType()))),
        g(g), lanes(vecType.getDimSize(0)),
        productKernels(target.getProductKernels(
            cast<ShapedType>(g.lhs.getType()).getElementType(),
            cast<ShapedType>(g.rhs.getType()).getElementType(), ct)) {}

  Value emit();

private:
  /// A tile: lhs rows i0 .. i0 + rows times weight rows c0 .. c0 + cols.
  struct Tile {
    Value i0, c0;
    int64_t rows, cols;
  };
  /// Tile sizes: mr lhs rows x nr weight rows (each weight load feeds mr
  /// FMAs, each lhs load nr; 8 accumulators fit AVX2's 16 registers);
  /// weight rows per work item.
  static constexpr int64_t mr = 4, nr = 2, nb = 32;

  /// A weight of static size under kGemvParallelMinElements: one thread
  /// reads it in about the time of waking a second one (a decode step has
  /// a few such products per layer), so the work items run in order, with
  /// no parallel region.
  bool isSmallWeight() const {
    auto type = cast<RankedTensorType>(g.rhs.getType());
    return type.hasStaticShape() &&
           type.getNumElements() < kGemvParallelMinElements;
  }

  /// mem[row, col] converted to the compute type.
  Value load(Value mem, Value row, Value col);

  /// Runs `body(item)` for item in [0, items): in parallel, or in order for
  /// a small weight.
  void forItems(Value items, function_ref<void(Value)> body);
  /// init[row, col] (or the fill value, or 0) in the compute type.
  Value startValue(Value row, Value col);

  /// The product on `kernel`: blocks of weight rows on its tiles, if it
  /// has them, else the vector work items.
  void emitProduct();
  /// Out[m, n0 + j] = start + acc[j, m] for the tile block at n0.
  void emitTileItem(Value item, Value packedRows);

  void emitWorkItem(Value item);
  void emitTile(const Tile &t);
  SmallVector<Value> emitVectorPart(const Tile &t, int64_t u, Value vecEnd);

  const GemmOperands &g;
  int64_t lanes;
  /// What the target offers for the product's element types.
  ProductKernels productKernels;
  /// The operands as the kernels read them; set by emit().
  GemvKernelOperands ops;
  /// The kernel whose code is being emitted.
  GemvKernel *kernel = nullptr;
  Value lhsBuf, rhsBuf, initBuf, outBuf, m, n, k;
  /// Writes the results (after the epilogue's consumers); set by emit().
  std::optional<ResultStore> results;
};

} // namespace

Value GemvLowering::load(Value mem, Value row, Value col) {
  return castFloat(
      b, loc, memref::LoadOp::create(b, loc, mem, ValueRange{row, col}), ct);
}

Value GemvLowering::emit() {
  GemmOperandBuffers buffers = getOperandBuffers(b, loc, g);
  lhsBuf = buffers.lhs;
  rhsBuf = buffers.rhs;
  initBuf = buffers.init;
  results.emplace(b, loc, g.epilogue);
  m = g.resultSizes[0];
  n = g.resultSizes[1];
  k = getDimSize(b, loc, g.lhs, 1);
  SmallVector<OpFoldResult> outSizes;
  for (auto [i, size] : llvm::enumerate(g.resultSizes))
    outSizes.push_back(g.resultType.isDynamicDim(i)
                           ? OpFoldResult(size)
                           : b.getIndexAttr(g.resultType.getDimSize(i)));
  outBuf = allocAligned(b, loc, g.resultType.getElementType(), outSizes);
  ops = GemvKernelOperands{lhsBuf, rhsBuf, m};
  std::unique_ptr<GemvKernel> chosen =
      GemvKernel::create(b, loc, ct, lanes, ops, productKernels);
  chosen->emitVersions([&](GemvKernel &version) {
    kernel = &version;
    emitProduct();
  });
  return bufferization::ToTensorOp::create(b, loc, g.resultType, outBuf,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

void GemvLowering::forItems(Value items, function_ref<void(Value)> body) {
  if (isSmallWeight()) {
    forLoop(idx(0), items, idx(1), body);
    return;
  }
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{items}, ValueRange{}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getBody()->getTerminator());
  body(forall.getInductionVars()[0]);
}

Value GemvLowering::startValue(Value row, Value col) {
  if (initBuf)
    return load(initBuf, row, col);
  return g.initValue ? castFloat(b, loc, g.initValue, ct) : fconst(0.0);
}

void GemvLowering::emitProduct() {
  int64_t blockRows = kernel->getTileBlockRows();
  if (!blockRows) {
    forItems(arith::CeilDivUIOp::create(b, loc, n, idx(nb)),
             [&](Value item) { emitWorkItem(item); });
    return;
  }
  static_assert(kGemvMaxRows <= kGemvTileMaxRows,
                "the callers' rows fit the tile kernels'");
  Value packedRows = kernel->packTileRows();
  // The blocks of weight rows on tiles; the last N % blockRows rows (a
  // vocabulary of 50257) as the vector code's last work item.
  assert(blockRows == nb && "one vector work item per tile block");
  int64_t rows = cast<ShapedType>(g.rhs.getType()).getDimSize(0);
  int64_t blocks = rows / blockRows;
  forItems(idx(blocks),
           [&](Value item) { emitTileItem(item, packedRows); });
  if (rows % blockRows)
    emitWorkItem(idx(blocks));
}

void GemvLowering::emitTileItem(Value item, Value packedRows) {
  int64_t blockRows = kernel->getTileBlockRows();
  Value n0 = mul(item, idx(blockRows));
  Value acc = kernel->emitTileBlock(n0, packedRows);
  forLoop(idx(0), m, idx(1), [&](Value r) {
    forLoop(idx(0), idx(blockRows), idx(1), [&](Value j) {
      // One statement each: the order of the ops is the order written.
      Value col = add(n0, j);
      Value start = startValue(r, col);
      Value product = memref::LoadOp::create(b, loc, acc, ValueRange{j, r});
      Value sum = arith::AddFOp::create(b, loc, start, product);
      results->store(b, loc, sum, outBuf, ValueRange{r, col});
    });
  });
}

void GemvLowering::emitWorkItem(Value item) {
  Value n0 = arith::MulIOp::create(b, loc, item, idx(nb));
  Value n1 = arith::MinUIOp::create(b, loc, add(n0, idx(nb)), n);
  forGroups(n0, n1, nr, [&](Value c0, int64_t cols) {
    forGroups(idx(0), m, mr, [&](Value i0, int64_t rows) {
      emitTile(Tile{i0, c0, rows, cols});
    });
  });
}

/// The tile's dot products over the whole vectors of K: rows x cols x u
/// accumulators through one scf.for (per step cols weight loads and rows
/// lhs loads feed rows x cols FMAs, or pair dots of 2 x lanes bf16 each),
/// reduced to one scalar each.
SmallVector<Value> GemvLowering::emitVectorPart(const Tile &t, int64_t u,
                                                Value vecEnd) {
  Value zero = createFloatConstantOfType(b, loc, vecType, 0.0);
  SmallVector<Value> init(t.rows * t.cols * u, zero);
  int64_t width = kernel->getStepElements();
  auto loadStep = [&](Value mem, Value row, Value col) {
    return kernel->loadStep(mem, row, col);
  };
  // The weight rows of the next tile (the rows after this tile's, in
  // memory order) are prefetched into L2 beside this tile's loads, so that
  // each tile's rows come from L2: the hardware prefetchers alone kept a
  // core's decode step at half the triad's rate (Zen 4, bench/RESULTS.md).
  // The last tile's prefetches point past the weight's last row (at most
  // nr rows): a prefetch never faults and has no effect on the program's
  // behaviour (LLVM's llvm.prefetch), and clamping the row to the last one
  // cost a third of the gain (LLVM then kept a base register per
  // prefetch).
  SmallVector<Value> ahead;
  for (int64_t c = 0; c < t.cols; ++c)
    ahead.push_back(add(t.c0, idx(t.cols + c)));
  auto loop = scf::ForOp::create(
      b, loc, idx(0), vecEnd, idx(u * width), init,
      [&](OpBuilder &, Location, Value k0, ValueRange acc) {
        SmallVector<Value> w, next(acc);
        for (int64_t c = 0; c < t.cols; ++c)
          for (int64_t j = 0; j < u; ++j)
            w.push_back(loadStep(rhsBuf, add(t.c0, idx(c)),
                                 add(k0, idx(j * width))));
        for (Value row : ahead)
          for (int64_t j = 0; j < u; ++j)
            memref::PrefetchOp::create(b, loc, rhsBuf,
                                       ValueRange{row, add(k0, idx(j * width))},
                                       /*isWrite=*/false, /*localityHint=*/2,
                                       /*isDataCache=*/true);
        for (int64_t r = 0; r < t.rows; ++r)
          for (int64_t j = 0; j < u; ++j) {
            Value x = loadStep(lhsBuf, add(t.i0, idx(r)),
                               add(k0, idx(j * width)));
            for (int64_t c = 0; c < t.cols; ++c) {
              int64_t a = (r * t.cols + c) * u + j;
              next[a] = kernel->accumulate(acc[a], x, w[c * u + j]);
            }
          }
        scf::YieldOp::create(b, loc, next);
      });
  SmallVector<Value> dots;
  for (int64_t p = 0; p < t.rows * t.cols; ++p) {
    Value sum = loop.getResult(p * u);
    for (int64_t j = 1; j < u; ++j)
      sum = arith::AddFOp::create(b, loc, sum, loop.getResult(p * u + j));
    dots.push_back(vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD, sum,
        arith::FastMathFlags::reassoc));
  }
  return dots;
}

void GemvLowering::emitTile(const Tile &t) {
  // Enough independent FMA chains to cover the FMA latency.
  int64_t u = t.rows * t.cols >= 4 ? 1 : 2;
  Value step = idx(u * kernel->getStepElements());
  Value vecEnd = arith::SubIOp::create(
      b, loc, k, arith::RemUIOp::create(b, loc, k, step));
  SmallVector<Value> dots = emitVectorPart(t, u, vecEnd);
  // The last K % step products, one by one.
  auto tail = scf::ForOp::create(
      b, loc, vecEnd, k, idx(1), dots,
      [&](OpBuilder &, Location, Value j, ValueRange acc) {
        SmallVector<Value> w, next;
        for (int64_t c = 0; c < t.cols; ++c)
          w.push_back(load(rhsBuf, add(t.c0, idx(c)), j));
        for (int64_t r = 0; r < t.rows; ++r) {
          Value x = load(lhsBuf, add(t.i0, idx(r)), j);
          for (int64_t c = 0; c < t.cols; ++c)
            next.push_back(arith::AddFOp::create(
                b, loc, acc[r * t.cols + c],
                arith::MulFOp::create(b, loc, x, w[c])));
        }
        scf::YieldOp::create(b, loc, next);
      });
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      Value row = add(t.i0, idx(r)), col = add(t.c0, idx(c));
      Value sum = arith::AddFOp::create(b, loc, startValue(row, col),
                                        tail.getResult(r * t.cols + c));
      results->store(b, loc, sum, outBuf, ValueRange{row, col});
    }
}

Value cpu::buildTransposedGemv(OpBuilder &b, Location loc,
                               const GemmOperands &operands,
                               const Target &target) {
  return GemvLowering(b, loc, operands, target).emit();
}
