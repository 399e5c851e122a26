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
//===----------------------------------------------------------------------===//

#include "GemvToCpu.h"

#include "Emitter.h"
#include "LoweringUtils.h"
#include "RegisterTile.h"

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
               int64_t vectorBits)
      : Emitter(b, loc, getComputeType(g.resultType.getElementType()),
                getVectorLanes(getComputeType(g.resultType.getElementType()),
                               vectorBits)),
        g(g), lanes(vecType.getDimSize(0)) {}

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

  /// Element type `from` converted to the compute type (vector or scalar).
  Value load(Value mem, Value row, Value col, bool vector);

  void emitWorkItem(Value item);
  void emitTile(const Tile &t);
  SmallVector<Value> emitVectorPart(const Tile &t, int64_t u, Value vecEnd);

  const GemmOperands &g;
  int64_t lanes;
  Value lhsBuf, rhsBuf, initBuf, outBuf, m, n, k;
};

} // namespace

Value GemvLowering::load(Value mem, Value row, Value col, bool vector) {
  Type et = cast<MemRefType>(mem.getType()).getElementType();
  if (!vector)
    return castFloat(
        b, loc, memref::LoadOp::create(b, loc, mem, ValueRange{row, col}), ct);
  Value v = vector::LoadOp::create(b, loc, VectorType::get({lanes}, et), mem,
                                   ValueRange{row, col});
  return castFloat(b, loc, v, vecType);
}

Value GemvLowering::emit() {
  lhsBuf = toBuffer(g.lhs);
  rhsBuf = toBuffer(g.rhs);
  if (g.init)
    initBuf = toBuffer(g.init);
  m = g.resultSizes[0];
  n = g.resultSizes[1];
  k = getDimSize(b, loc, g.lhs, 1);
  SmallVector<OpFoldResult> outSizes;
  for (auto [i, size] : llvm::enumerate(g.resultSizes))
    outSizes.push_back(g.resultType.isDynamicDim(i)
                           ? OpFoldResult(size)
                           : b.getIndexAttr(g.resultType.getDimSize(i)));
  outBuf = allocAligned(b, loc, g.resultType.getElementType(), outSizes);
  Value items = arith::CeilDivUIOp::create(b, loc, n, idx(nb));
  if (isSmallWeight()) {
    forLoop(idx(0), items, idx(1),
                 [&](Value item) { emitWorkItem(item); });
  } else {
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{items}, ValueRange{}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getBody()->getTerminator());
    emitWorkItem(forall.getInductionVars()[0]);
  }
  return bufferization::ToTensorOp::create(b, loc, g.resultType, outBuf,
                                           /*restrict=*/true,
                                           /*writable=*/true);
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
/// lhs loads feed rows x cols FMAs), reduced to one scalar each.
SmallVector<Value> GemvLowering::emitVectorPart(const Tile &t, int64_t u,
                                                Value vecEnd) {
  Value zero = createFloatConstantOfType(b, loc, vecType, 0.0);
  SmallVector<Value> init(t.rows * t.cols * u, zero);
  auto loop = scf::ForOp::create(
      b, loc, idx(0), vecEnd, idx(u * lanes), init,
      [&](OpBuilder &, Location, Value k0, ValueRange acc) {
        SmallVector<Value> w, next(acc);
        for (int64_t c = 0; c < t.cols; ++c)
          for (int64_t j = 0; j < u; ++j)
            w.push_back(load(rhsBuf, add(t.c0, idx(c)),
                             add(k0, idx(j * lanes)), true));
        for (int64_t r = 0; r < t.rows; ++r)
          for (int64_t j = 0; j < u; ++j) {
            Value x = load(lhsBuf, add(t.i0, idx(r)),
                           add(k0, idx(j * lanes)), true);
            for (int64_t c = 0; c < t.cols; ++c) {
              int64_t a = (r * t.cols + c) * u + j;
              next[a] = vector::FMAOp::create(b, loc, x, w[c * u + j], acc[a]);
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
  Value step = idx(u * lanes);
  Value vecEnd = arith::SubIOp::create(
      b, loc, k, arith::RemUIOp::create(b, loc, k, step));
  SmallVector<Value> dots = emitVectorPart(t, u, vecEnd);
  // The last K % (u * lanes) products, one by one.
  auto tail = scf::ForOp::create(
      b, loc, vecEnd, k, idx(1), dots,
      [&](OpBuilder &, Location, Value j, ValueRange acc) {
        SmallVector<Value> w, next;
        for (int64_t c = 0; c < t.cols; ++c)
          w.push_back(load(rhsBuf, add(t.c0, idx(c)), j, false));
        for (int64_t r = 0; r < t.rows; ++r) {
          Value x = load(lhsBuf, add(t.i0, idx(r)), j, false);
          for (int64_t c = 0; c < t.cols; ++c)
            next.push_back(arith::AddFOp::create(
                b, loc, acc[r * t.cols + c],
                arith::MulFOp::create(b, loc, x, w[c])));
        }
        scf::YieldOp::create(b, loc, next);
      });
  Type et = g.resultType.getElementType();
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c) {
      Value row = add(t.i0, idx(r)), col = add(t.c0, idx(c));
      Value start = initBuf ? load(initBuf, row, col, false)
                    : g.initValue
                        ? castFloat(b, loc, g.initValue, ct)
                        : createFloatConstant(b, loc, ct, 0.0);
      Value sum = arith::AddFOp::create(b, loc, start,
                                        tail.getResult(r * t.cols + c));
      memref::StoreOp::create(b, loc, castFloat(b, loc, sum, et), outBuf,
                              ValueRange{row, col});
    }
}

Value cpu::buildTransposedGemv(OpBuilder &b, Location loc,
                               const GemmOperands &operands,
                               int64_t vectorBits) {
  return GemvLowering(b, loc, operands, vectorBits).emit();
}
