//===- PairDotTile.cpp - bf16 pair dot-product tiles (AVX512-BF16) --------===//

#include "attn/Codegen/Cpu/PairDotTile.h"

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;


bool cpu::isPairDotWidth(int64_t lanes) {
  return lanes == 4 || lanes == 8 || lanes == 16;
}

namespace {
/// The index arithmetic and element copies that both packings share.
struct PairPacker {
  OpBuilder &b;
  Location loc;
  const BlockView &source;
  /// The pack as a view: (p, x) is pair row p, element x = 2c + i.
  BlockView pack;
  Value rows;
  bool transposed;

  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value c(int64_t v) { return indexConstant(b, loc, v); }
  Type bf16() { return b.getBF16Type(); }
  /// Stores `v` (an element or a vector) at (p, x) of the pack.
  void store(Value v, Value p, Value x) {
    SmallVector<Value> at = viewIndices(b, loc, pack, p, x);
    if (isa<VectorType>(v.getType()))
      vector::StoreOp::create(b, loc, v, pack.mem, at);
    else
      memref::StoreOp::create(b, loc, v, pack.mem, at);
  }

  /// Element j of column col (the packing's orientation).
  Value element(Value j, Value col) {
    return transposed ? loadElement(b, loc, source, col, j, bf16())
                      : loadElement(b, loc, source, j, col, bf16());
  }
  /// Whether row 2p + 1 exists, and that row clamped to 2p when it does
  /// not (so that its load stays in bounds; the value is then replaced by
  /// zero).
  std::pair<Value, Value> secondRow(Value p) {
    Value j0 = mul(p, c(2)), j1 = add(j0, c(1));
    Value has = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j1,
                                      rows);
    return {has, arith::SelectOp::create(b, loc, has, j1, j0)};
  }
  /// pack[p, 2col .. 2col + 1] = (element(2p, col), element(2p + 1, col)
  /// or 0).
  void copyPair(Value p, Value col) {
    auto [has, j1] = secondRow(p);
    Value lo = element(mul(p, c(2)), col);
    Value zero = createFloatConstant(b, loc, bf16(), 0.0);
    Value hi = arith::SelectOp::create(b, loc, has, element(j1, col), zero);
    Value at = mul(col, c(2));
    store(lo, p, at);
    store(hi, p, add(at, c(1)));
  }
  void zeroPair(Value p, Value col) {
    Value zero = createFloatConstant(b, loc, bf16(), 0.0);
    Value at = mul(col, c(2));
    store(zero, p, at);
    store(zero, p, add(at, c(1)));
  }
};
} // namespace

/// Row-major rhs: per pair of rows, whole vectors of both rows interleaved
/// with one shuffle (an odd last row paired with zeros), then the last
/// columns one by one.
static void packRowPairs(PairPacker &pk, int64_t lanes, Value pairs,
                         Value cols) {
  OpBuilder &b = pk.b;
  Location loc = pk.loc;
  auto rowVec = VectorType::get({lanes}, pk.bf16());
  Value zeros = createFloatConstantOfType(b, loc, rowVec, 0.0);
  SmallVector<int64_t> interleave;
  for (int64_t i = 0; i < lanes; ++i)
    interleave.append({i, lanes + i});
  Value vectorCols = arith::SubIOp::create(
      b, loc, cols, arith::RemUIOp::create(b, loc, cols, pk.c(lanes)));
  buildForLoop(b, loc, pk.c(0), pairs, pk.c(1), [&](Value p) {
    auto [has, j1] = pk.secondRow(p);
    Value j0 = pk.mul(p, pk.c(2));
    buildForLoop(b, loc, pk.c(0), vectorCols, pk.c(lanes), [&](Value col) {
      Value lo = loadVector(b, loc, pk.source, rowVec, j0, col);
      Value hi = arith::SelectOp::create(
          b, loc, has, loadVector(b, loc, pk.source, rowVec, j1, col), zeros);
      Value pair = vector::ShuffleOp::create(b, loc, lo, hi, interleave);
      pk.store(pair, p, pk.mul(col, pk.c(2)));
    });
    buildForLoop(b, loc, vectorCols, cols, pk.c(1),
                 [&](Value col) { pk.copyPair(p, col); });
  });
}

/// [N, K] rhs: a pair is one 32-bit value of a source row, so blocks of
/// `lanes` columns x `lanes` whole pairs are i32 transposes in registers;
/// the remaining pairs (the last ones, an odd depth's last element) and
/// columns are copied one pair at a time.
static void packTransposedPairs(PairPacker &pk, int64_t lanes, Value pairs,
                                Value cols) {
  OpBuilder &b = pk.b;
  Location loc = pk.loc;
  auto pairVec = VectorType::get({2 * lanes}, pk.bf16());
  auto wordVec = VectorType::get({lanes}, b.getI32Type());
  Value step = pk.c(lanes);
  auto wholeBlocks = [&](Value size) -> Value {
    if (!llvm::isPowerOf2_64(lanes) || lanes < 2)
      return pk.c(0);
    return arith::SubIOp::create(b, loc, size,
                                 arith::RemUIOp::create(b, loc, size, step));
  };
  Value fullPairs = arith::DivUIOp::create(b, loc, pk.rows, pk.c(2));
  Value vectorPairs = wholeBlocks(fullPairs), vectorCols = wholeBlocks(cols);
  buildForLoop(b, loc, pk.c(0), vectorCols, step, [&](Value col) {
    buildForLoop(b, loc, pk.c(0), vectorPairs, step, [&](Value p) {
      SmallVector<Value> block;
      for (int64_t r = 0; r < lanes; ++r) {
        Value x = loadVector(b, loc, pk.source, pairVec,
                             pk.add(col, pk.c(r)), pk.mul(p, pk.c(2)));
        block.push_back(vector::BitCastOp::create(b, loc, wordVec, x));
      }
      block = transposeInRegisters(b, loc, block);
      for (int64_t r = 0; r < lanes; ++r) {
        Value x = vector::BitCastOp::create(b, loc, pairVec, block[r]);
        pk.store(x, pk.add(p, pk.c(r)), pk.mul(col, pk.c(2)));
      }
    });
    buildForLoop(b, loc, vectorPairs, pairs, pk.c(1), [&](Value p) {
      buildForLoop(b, loc, col, pk.add(col, step), pk.c(1),
                   [&](Value cr) { pk.copyPair(p, cr); });
    });
  });
  buildForLoop(b, loc, vectorCols, cols, pk.c(1), [&](Value col) {
    buildForLoop(b, loc, pk.c(0), pairs, pk.c(1),
                 [&](Value p) { pk.copyPair(p, col); });
  });
}

BlockView cpu::packPairBlock(OpBuilder &b, Location loc,
                             const BlockView &source, Value pack,
                             int64_t lanes, Value rows, Value cols,
                             Value paddedCols, bool transposed,
                             int64_t groupRows) {
  BlockView packView{pack, {}, nullptr, nullptr, groupRows};
  PairPacker pk{b, loc, source, packView, rows, transposed};
  Value pairs = arith::CeilDivUIOp::create(b, loc, rows, pk.c(2));
  if (transposed)
    packTransposedPairs(pk, lanes, pairs, cols);
  else
    packRowPairs(pk, lanes, pairs, cols);
  // Padding columns (to whole vectors) multiply by zero.
  if (cols != paddedCols)
    buildForLoop(b, loc, cols, paddedCols, pk.c(1), [&](Value col) {
      buildForLoop(b, loc, pk.c(0), pairs, pk.c(1),
                   [&](Value p) { pk.zeroPair(p, col); });
    });
  return BlockView{pack, {}, pk.c(0), nullptr, groupRows};
}

SmallVector<Value> cpu::buildPairDotTile(OpBuilder &b, Location loc, Value lo,
                                         Value hi, ArrayRef<Value> init,
                                         int64_t mr, int64_t nv,
                                         PairLoadFn loadA, VectorLoadFn loadB) {
  auto accType = cast<VectorType>(init.front().getType());
  auto loop = scf::ForOp::create(
      b, loc, lo, hi, indexConstant(b, loc, 1), init,
      [&](OpBuilder &, Location, Value p, ValueRange acc) {
        SmallVector<Value> bv, next(acc.begin(), acc.end());
        for (int64_t v = 0; v < nv; ++v)
          bv.push_back(loadB(v, p));
        for (int64_t r = 0; r < mr; ++r) {
          Value a = loadA(r, p);
          for (int64_t v = 0; v < nv; ++v)
            next[r * nv + v] = x86vector::DotBF16Op::create(
                b, loc, accType, next[r * nv + v], a, bv[v]);
        }
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

Value cpu::loadPairBroadcast(OpBuilder &b, Location loc,
                             const BlockView &view, int64_t lanes, Value j,
                             Value p, bool last) {
  Type bf16 = b.getBF16Type();
  auto pairType = VectorType::get({2}, bf16);
  Value k = arith::MulIOp::create(b, loc, p, indexConstant(b, loc, 2));
  Value pair;
  if (last) {
    Value x = loadElement(b, loc, view, j, k, bf16);
    pair = vector::FromElementsOp::create(
        b, loc, pairType,
        ValueRange{x, createFloatConstant(b, loc, bf16, 0.0)});
  } else {
    pair = loadVector(b, loc, view, pairType, j, k);
  }
  Type i32 = b.getI32Type();
  Value word = vector::BitCastOp::create(b, loc, VectorType::get({1}, i32),
                                         pair);
  Value words = vector::BroadcastOp::create(
      b, loc, VectorType::get({lanes}, i32), word);
  return vector::BitCastOp::create(b, loc,
                                   VectorType::get({2 * lanes}, bf16), words);
}
