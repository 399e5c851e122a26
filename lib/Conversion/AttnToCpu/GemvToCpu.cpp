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
// Where the target's vector kernel for bf16 is pair dots, a bf16 x bf16
// product in f32 multiplies the rows as they are stored: each step loads
// 2 x lanes bf16 of a weight row and of an lhs row and adds their pair
// products with one x86vector.avx512.dot (vdpbf16ps), instead of widening
// both rows to f32 for the FMA (two instructions per vector of each, which
// make a decode step compute-bound; bench/RESULTS.md, "Decode steps").
//
// With `amx`, a bf16 product accumulated in f32 whose weight has at least
// 32 rows and whole 32-k steps runs on AMX tiles where the runtime allows
// them (buildAmxBranch): the transposed product
// out^T = W . lhs^T, the weight read in place as A tiles (16 rows x 32 k),
// the lhs rows packed once per call into pairs of k as the B tile (16
// columns, zero past M), two 16 x 16 C tiles per block of 32 weight rows;
// the last N % 32 weight rows take the vector dot products.
// One tdpbf16ps per KiB of weight: the product runs at the rate the weight
// streams from memory, for 1 to 16 rows alike.
//
//===----------------------------------------------------------------------===//

#include "GemvToCpu.h"

#include "attn/Codegen/Cpu/AmxTile.h"
#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/PairDotTile.h"
#include "attn/Codegen/Cpu/RegisterTile.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

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
        kernels(target.getProductKernels(
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

  /// Element type `from` converted to the compute type (vector or scalar).
  Value load(Value mem, Value row, Value col, bool vector);

  /// Runs `body(item)` for item in [0, items): in parallel, or in order for
  /// a small weight.
  void forItems(Value items, function_ref<void(Value)> body);
  /// init[row, col] (or the fill value, or 0) in the compute type.
  Value startValue(Value row, Value col);

  /// Whether both operands' rows are contiguous (what the tiles and the
  /// pair loads read).
  bool hasDenseRows() const;
  /// Whether the AMX path applies: the target offers tiles for the element
  /// types, a static [N, K] weight of at least 32 rows and whole 32-k
  /// steps, dense rows.
  bool isAmxProduct() const;
  /// Whether the vector dot products multiply bf16 pairs: the target's
  /// vector kernel for the element types, dense rows.
  bool isPairProduct() const;
  void emitAmx();
  void emitAmxWorkItem(Value item, Value pairs);

  void emitWorkItem(Value item);
  void emitTile(const Tile &t);
  SmallVector<Value> emitVectorPart(const Tile &t, int64_t u, Value vecEnd);

  const GemmOperands &g;
  int64_t lanes;
  /// What the target offers for the product's element types.
  ProductKernels kernels;
  /// isPairProduct(), set by emit().
  bool pairs = false;
  Value lhsBuf, rhsBuf, initBuf, outBuf, m, n, k;
  /// Writes the results (after the epilogue's consumers); set by emit().
  std::optional<ResultStore> results;
};

/// Steps (32 k each) per block of AMX code whose C tiles stay in registers
/// (tiles cannot cross blocks): their load and store are 4 KiB per 16 KiB
/// of weight.
constexpr int64_t kGemvAmxGroup = 16;

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
  pairs = isPairProduct();
  auto vectorCode = [&] {
    forItems(arith::CeilDivUIOp::create(b, loc, n, idx(nb)),
             [&](Value item) { emitWorkItem(item); });
  };
  if (isAmxProduct())
    buildAmxBranch(b, loc, [&](bool onTiles) {
      if (onTiles)
        emitAmx();
      else
        vectorCode();
    });
  else
    vectorCode();
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
    return load(initBuf, row, col, false);
  return g.initValue ? castFloat(b, loc, g.initValue, ct) : fconst(0.0);
}

bool GemvLowering::hasDenseRows() const {
  return cast<MemRefType>(lhsBuf.getType()).isLastDimUnitStride() &&
         cast<MemRefType>(rhsBuf.getType()).isLastDimUnitStride();
}

bool GemvLowering::isAmxProduct() const {
  auto weight = cast<ShapedType>(g.rhs.getType());
  return kernels.amxTiles && weight.hasStaticShape() &&
         weight.getDimSize(0) >= kAmxBlock && weight.getDimSize(1) > 0 &&
         weight.getDimSize(1) % kAmxStepK == 0 && hasDenseRows();
}

bool GemvLowering::isPairProduct() const {
  return kernels.vector == VectorKernel::PairDot && hasDenseRows();
}

/// The lhs rows (at most 16) in pairs of k, the B tiles of every step:
/// pairs[p, 2 r + e] = lhs[r, 2 p + e], zero for r >= M; then the blocks
/// of 32 weight rows.
void GemvLowering::emitAmx() {
  static_assert(kGemvMaxRows <= kAmxTileCols,
                "the callers' rows fit one B tile's columns");
  auto weight = cast<ShapedType>(g.rhs.getType());
  int64_t pairRows = weight.getDimSize(1) / 2;
  Type bf16 = b.getBF16Type();
  Value pairs = allocAligned(
      b, loc, bf16,
      {b.getIndexAttr(pairRows), b.getIndexAttr(2 * kAmxTileCols)});
  auto rowType = VectorType::get({2 * kAmxTileCols}, bf16);
  Value zero = createFloatConstantOfType(b, loc, rowType, 0.0);
  forLoop(idx(0), idx(pairRows), idx(1), [&](Value p) {
    vector::StoreOp::create(b, loc, zero, pairs, ValueRange{p, idx(0)});
  });
  auto pairType = VectorType::get({2}, bf16);
  forLoop(idx(0), m, idx(1), [&](Value r) {
    Value col = mul(r, idx(2));
    forLoop(idx(0), idx(pairRows), idx(1), [&](Value p) {
      Value v = vector::LoadOp::create(b, loc, pairType, lhsBuf,
                                       ValueRange{r, mul(p, idx(2))});
      vector::StoreOp::create(b, loc, v, pairs, ValueRange{p, col});
    });
  });
  // The blocks of 32 weight rows on tiles; the last N % 32 rows (a
  // vocabulary of 50257) as the vector code's last work item (nb = 32).
  static_assert(nb == kAmxBlock, "one vector work item per tile block");
  int64_t blocks = weight.getDimSize(0) / kAmxBlock;
  forItems(idx(blocks), [&](Value item) { emitAmxWorkItem(item, pairs); });
  if (weight.getDimSize(0) % kAmxBlock)
    emitWorkItem(idx(blocks));
}

/// Weight rows n0 .. n0 + 32 times the packed lhs: two C tiles (16 weight
/// rows x 16 lhs rows each) over every step, stored into acc [32, 16]
/// between blocks of kGemvAmxGroup steps, then written transposed:
/// out[r, n0 + j] = init + acc[j, r].
void GemvLowering::emitAmxWorkItem(Value item, Value pairs) {
  int64_t steps = cast<ShapedType>(g.rhs.getType()).getDimSize(1) / kAmxStepK;
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
  auto cType = amx::TileType::get({kAmxTileRows, kAmxTileCols}, f32);
  auto abType = amx::TileType::get({kAmxTileRows, kAmxStepK}, bf16);
  Value n0 = mul(item, idx(kAmxBlock));
  Value acc = allocAligned(
      b, loc, f32, {b.getIndexAttr(kAmxBlock), b.getIndexAttr(kAmxTileCols)});
  auto block = [&](Value s0, int64_t count, bool zeroC) {
    Value c[2];
    for (int64_t t = 0; t < 2; ++t)
      c[t] = zeroC ? amx::TileZeroOp::create(b, loc, cType).getResult()
                   : amx::TileLoadOp::create(
                         b, loc, cType, acc,
                         ValueRange{idx(t * kAmxTileRows), idx(0)})
                         .getResult();
    for (int64_t u = 0; u < count; ++u) {
      Value s = add(s0, idx(u));
      Value x = amx::TileLoadOp::create(
          b, loc, abType, pairs,
          ValueRange{mul(s, idx(kAmxStepK / 2)), idx(0)});
      for (int64_t t = 0; t < 2; ++t) {
        Value w = amx::TileLoadOp::create(
            b, loc, abType, rhsBuf,
            ValueRange{add(n0, idx(t * kAmxTileRows)),
                       mul(s, idx(kAmxStepK))});
        c[t] = amx::TileMulFOp::create(b, loc, cType, w, x, c[t]);
      }
    }
    for (int64_t t = 0; t < 2; ++t)
      amx::TileStoreOp::create(b, loc, acc,
                               ValueRange{idx(t * kAmxTileRows), idx(0)},
                               c[t]);
  };
  // Steps are static: a first block from zero tiles, whole blocks, the
  // rest.
  int64_t group = std::min(steps, kGemvAmxGroup);
  int64_t whole = steps / group * group;
  block(idx(0), group, /*zeroC=*/true);
  if (whole > group)
    forLoop(idx(group), idx(whole), idx(group),
            [&](Value s0) { block(s0, group, false); });
  if (whole < steps)
    block(idx(whole), steps - whole, false);
  forLoop(idx(0), m, idx(1), [&](Value r) {
    forLoop(idx(0), idx(kAmxBlock), idx(1), [&](Value j) {
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
  int64_t width = pairs ? 2 * lanes : lanes;
  auto pairType = VectorType::get({width}, b.getBF16Type());
  auto loadStep = [&](Value mem, Value row, Value col) -> Value {
    if (pairs)
      return vector::LoadOp::create(b, loc, pairType, mem,
                                    ValueRange{row, col});
    return load(mem, row, col, true);
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
              next[a] =
                  pairs ? Value(x86vector::DotBF16Op::create(
                              b, loc, vecType, acc[a], x, w[c * u + j]))
                        : Value(vector::FMAOp::create(b, loc, x, w[c * u + j],
                                                      acc[a]));
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
  Value step = idx(u * (pairs ? 2 * lanes : lanes));
  Value vecEnd = arith::SubIOp::create(
      b, loc, k, arith::RemUIOp::create(b, loc, k, step));
  SmallVector<Value> dots = emitVectorPart(t, u, vecEnd);
  // The last K % step products, one by one.
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
