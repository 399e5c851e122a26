//===- RegisterTile.cpp - register-blocked FMA tiles for the CPU lowering -===//

#include "attn/Codegen/Cpu/RegisterTile.h"

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

Value cpu::indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

void cpu::forGroups(OpBuilder &b, Location loc, Value lo, Value hi,
                    int64_t group, GroupFn body) {
  Value step = indexConstant(b, loc, group);
  std::optional<int64_t> cLo = getConstantIntValue(lo);
  std::optional<int64_t> cHi = getConstantIntValue(hi);
  if (cLo && cHi) {
    int64_t count = *cHi - *cLo, full = count / group * group;
    if (full > 0)
      buildForLoop(b, loc, lo, indexConstant(b, loc, *cLo + full), step,
                   [&](Value first) { body(first, group); });
    if (count > full)
      body(indexConstant(b, loc, *cLo + full), count - full);
    return;
  }
  Value count = arith::SubIOp::create(b, loc, hi, lo);
  Value rest = arith::RemUIOp::create(b, loc, count, step);
  Value first = arith::SubIOp::create(b, loc, hi, rest);
  buildForLoop(b, loc, lo, first, step,
               [&](Value iv) { body(iv, group); });
  // The rest (< group) in its binary digits, largest first: at most one
  // group each of 4, 2 and 1 for a group of 6, instead of single steps.
  for (int64_t n = (int64_t)llvm::bit_floor(static_cast<uint64_t>(group - 1)); n >= 1; n /= 2) {
    Value digit = arith::AndIOp::create(b, loc, rest, indexConstant(b, loc, n));
    Value present = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          digit, indexConstant(b, loc, 0));
    Value at = first;
    scf::IfOp::create(b, loc, present, [&](OpBuilder &, Location) {
      body(at, n);
      scf::YieldOp::create(b, loc);
    });
    first = arith::AddIOp::create(b, loc, first, digit);
  }
}

SmallVector<Value> cpu::buildRegisterTile(OpBuilder &b, Location loc,
                                          Value count, ArrayRef<Value> init,
                                          int64_t mr, int64_t nv,
                                          ScalarLoadFn loadA,
                                          VectorLoadFn loadB) {
  auto vecType = cast<VectorType>(init.front().getType());
  auto loop = scf::ForOp::create(
      b, loc, indexConstant(b, loc, 0), count, indexConstant(b, loc, 1), init,
      [&](OpBuilder &, Location, Value k, ValueRange acc) {
        SmallVector<Value> bv, next(acc.begin(), acc.end());
        for (int64_t v = 0; v < nv; ++v)
          bv.push_back(loadB(v, k));
        for (int64_t r = 0; r < mr; ++r) {
          Value a = vector::BroadcastOp::create(b, loc, vecType, loadA(r, k));
          for (int64_t v = 0; v < nv; ++v)
            next[r * nv + v] =
                vector::FMAOp::create(b, loc, a, bv[v], next[r * nv + v]);
        }
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> cpu::viewIndices(OpBuilder &b, Location loc,
                                    const BlockView &view, Value j, Value c) {
  auto offset = [&](Value base, Value i) -> Value {
    return base ? arith::AddIOp::create(b, loc, base, i).getResult() : i;
  };
  SmallVector<Value> indices(view.prefix);
  Value row = offset(view.rowOffset, j), col = offset(view.colOffset, c);
  if (view.groupRows) {
    Value group = indexConstant(b, loc, kPanelGroup);
    row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc,
                              arith::DivUIOp::create(b, loc, col, group),
                              indexConstant(b, loc, view.groupRows)),
        row);
    col = arith::RemUIOp::create(b, loc, col, group);
  }
  indices.append({row, col});
  return indices;
}

Value cpu::loadElement(OpBuilder &b, Location loc, const BlockView &view,
                       Value j, Value c, Type type) {
  Value x = memref::LoadOp::create(b, loc, view.mem,
                                   viewIndices(b, loc, view, j, c));
  return castFloat(b, loc, x, type);
}

Value cpu::loadVector(OpBuilder &b, Location loc, const BlockView &view,
                      VectorType vecType, Value j, Value c) {
  return vector::LoadOp::create(b, loc, vecType, view.mem,
                                viewIndices(b, loc, view, j, c));
}

BlockView cpu::packBlock(OpBuilder &b, Location loc, const BlockView &source,
                         Value pack, VectorType vecType, Value rows,
                         Value cols, Value paddedCols) {
  Value c0 = indexConstant(b, loc, 0), c1 = indexConstant(b, loc, 1);
  int64_t lanes = vecType.getNumElements();
  Type ct = vecType.getElementType();
  Type et = cast<MemRefType>(source.mem.getType()).getElementType();
  auto sourceVecType = VectorType::get({lanes}, et);
  Value vectorCols = arith::SubIOp::create(
      b, loc, cols,
      arith::RemUIOp::create(b, loc, cols, indexConstant(b, loc, lanes)));
  buildForLoop(b, loc, c0, rows, c1, [&](Value j) {
    // Whole vectors converted on load (F16C's vcvtph2ps, shifts for bf16),
    // then the rest one by one.
    buildForLoop(b, loc, c0, vectorCols, indexConstant(b, loc, lanes), [&](Value c) {
      Value x = loadVector(b, loc, source, sourceVecType, j, c);
      vector::StoreOp::create(b, loc, castFloat(b, loc, x, vecType), pack,
                              ValueRange{j, c});
    });
    buildForLoop(b, loc, vectorCols, cols, c1, [&](Value c) {
      memref::StoreOp::create(b, loc, loadElement(b, loc, source, j, c, ct),
                              pack, ValueRange{j, c});
    });
    if (cols == paddedCols)
      return;
    Value zero = createFloatConstant(b, loc, ct, 0.0);
    buildForLoop(b, loc, cols, paddedCols, c1, [&](Value c) {
      memref::StoreOp::create(b, loc, zero, pack, ValueRange{j, c});
    });
  });
  return BlockView{pack, {}, c0, nullptr};
}

/// The transpose of the square block whose rows are `rows` (n vectors of n
/// lanes, n a power of 2): log2(n) rounds of interleaving row i with row
/// i + n/2. Element (a, b) moves to (a', b') where the bits of a'b' are
/// those of ab rotated left by one, so after log2(n) rounds it is at
/// (b, a). Each interleave is one vector.shuffle of two rows (unpack and
/// lane permutes on x86).
SmallVector<Value> cpu::transposeInRegisters(OpBuilder &b, Location loc,
                                             ArrayRef<Value> rows) {
  int64_t n = rows.size(), half = n / 2;
  SmallVector<int64_t> lo, hi;
  for (int64_t i = 0; i < half; ++i) {
    lo.append({i, n + i});
    hi.append({half + i, n + half + i});
  }
  SmallVector<Value> cur(rows);
  for (int64_t done = 1; done < n; done *= 2) {
    SmallVector<Value> next;
    for (int64_t i = 0; i < half; ++i) {
      next.push_back(
          vector::ShuffleOp::create(b, loc, cur[i], cur[i + half], lo));
      next.push_back(
          vector::ShuffleOp::create(b, loc, cur[i], cur[i + half], hi));
    }
    cur = std::move(next);
  }
  return cur;
}

BlockView cpu::packTransposedBlock(OpBuilder &b, Location loc,
                                   const BlockView &source, Value pack,
                                   VectorType vecType, Value rows, Value cols,
                                   Value paddedCols) {
  Value c0 = indexConstant(b, loc, 0), c1 = indexConstant(b, loc, 1);
  int64_t lanes = vecType.getNumElements();
  Type ct = vecType.getElementType();
  Type et = cast<MemRefType>(source.mem.getType()).getElementType();
  auto sourceVecType = VectorType::get({lanes}, et);
  auto copyElement = [&](Value j, Value c) {
    memref::StoreOp::create(b, loc, loadElement(b, loc, source, c, j, ct),
                            pack, ValueRange{j, c});
  };
  // The whole lanes x lanes blocks (none for a lane count that the
  // interleaving cannot transpose).
  Value step = indexConstant(b, loc, lanes);
  auto wholeBlocks = [&](Value size) -> Value {
    if (!llvm::isPowerOf2_64(lanes) || lanes < 2)
      return c0;
    return arith::SubIOp::create(b, loc, size,
                                 arith::RemUIOp::create(b, loc, size, step));
  };
  Value vectorRows = wholeBlocks(rows), vectorCols = wholeBlocks(cols);
  buildForLoop(b, loc, c0, vectorCols, step, [&](Value c) {
    buildForLoop(b, loc, c0, vectorRows, step, [&](Value j) {
      SmallVector<Value> block;
      for (int64_t r = 0; r < lanes; ++r) {
        Value cr = arith::AddIOp::create(b, loc, c, indexConstant(b, loc, r));
        Value x = loadVector(b, loc, source, sourceVecType, cr, j);
        block.push_back(castFloat(b, loc, x, vecType));
      }
      block = transposeInRegisters(b, loc, block);
      for (int64_t r = 0; r < lanes; ++r) {
        Value jr = arith::AddIOp::create(b, loc, j, indexConstant(b, loc, r));
        vector::StoreOp::create(b, loc, block[r], pack, ValueRange{jr, c});
      }
    });
    // The last rows % lanes rows of these columns.
    buildForLoop(b, loc, vectorRows, rows, c1, [&](Value j) {
      buildForLoop(b, loc, c, arith::AddIOp::create(b, loc, c, step), c1,
                   [&](Value cr) { copyElement(j, cr); });
    });
  });
  // The last cols % lanes columns, then the zero padding.
  buildForLoop(b, loc, vectorCols, cols, c1, [&](Value c) {
    buildForLoop(b, loc, c0, rows, c1, [&](Value j) { copyElement(j, c); });
  });
  Value zero = createFloatConstant(b, loc, ct, 0.0);
  buildForLoop(b, loc, cols, paddedCols, c1, [&](Value c) {
    buildForLoop(b, loc, c0, rows, c1, [&](Value j) {
      memref::StoreOp::create(b, loc, zero, pack, ValueRange{j, c});
    });
  });
  return BlockView{pack, {}, c0, nullptr};
}
