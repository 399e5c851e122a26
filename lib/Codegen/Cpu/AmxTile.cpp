//===- AmxTile.cpp - bf16 GEMM blocks on AMX tiles ------------------------===//

#include "attn/Codegen/Cpu/AmxTile.h"

#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/RegisterTile.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {
/// The 2 x 2 C tiles at (i0, j0) of acc, updated by k steps [s0, s0 + n):
/// all tiles of one call live in one block.
struct AmxStep {
  OpBuilder &b;
  Location loc;
  /// The lhs block, the pair-packed panel (a prepacked panel's prefix
  /// selects its column block and k block) and acc.
  BlockView lhs, panel;
  Value acc;
  /// The panel whose B rows each step prefetches (see
  /// buildAmxBlockProduct), or a null `mem`.
  BlockView next;

  Value c(int64_t v) { return indexConstant(b, loc, v); }
  Value add(Value x, int64_t y) {
    return y == 0 ? x : arith::AddIOp::create(b, loc, x, c(y)).getResult();
  }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, c(y));
  }

  /// `then()` where `cond` holds, else `otherwise()` (if given): only the
  /// one that runs where `cond` is a constant, else an scf.if.
  void ifElse(Value cond, function_ref<void()> then,
              function_ref<void()> otherwise = nullptr) {
    if (std::optional<int64_t> known = getConstantIntValue(cond)) {
      if (*known)
        then();
      else if (otherwise)
        otherwise();
      return;
    }
    auto branch = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                    /*withElseRegion=*/bool(otherwise));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    then();
    if (otherwise) {
      b.setInsertionPointToStart(branch.elseBlock());
      otherwise();
    }
  }

  /// Prefetches into L2 the rows of `next` that step s reads of its own
  /// panel: 16 pair rows of 2 x 16 columns, two cache lines each.
  void prefetchNext(Value s, Value j0) {
    Value pair0 = mul(s, kAmxStepK / 2), col = mul(j0, 2);
    for (int64_t p = 0; p < kAmxStepK / 2; ++p)
      for (int64_t half = 0; half < 2; ++half)
        memref::PrefetchOp::create(
            b, loc, next.mem,
            viewIndices(b, loc, next, add(pair0, p), add(col, half * 32)),
            /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
  }

  /// With `zeroC` the C tiles start at zero (tile_zero) instead of acc's
  /// values; with `prefetch` each step also prefetches `next`.
  void emit(Value i0, Value j0, Value s0, int64_t n, bool zeroC,
            bool prefetch) {
    Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
    auto cType = amx::TileType::get({kAmxTileRows, kAmxTileCols}, f32);
    auto abType = amx::TileType::get({kAmxTileRows, kAmxStepK}, bf16);
    Value rowOf[2] = {i0, add(i0, kAmxTileRows)};
    Value colOf[2] = {j0, add(j0, kAmxTileCols)};
    Value tiles[2][2];
    for (int r = 0; r < 2; ++r)
      for (int v = 0; v < 2; ++v)
        tiles[r][v] =
            zeroC ? amx::TileZeroOp::create(b, loc, cType).getResult()
                  : amx::TileLoadOp::create(b, loc, cType, acc,
                                            ValueRange{rowOf[r], colOf[v]})
                        .getResult();
    for (int64_t u = 0; u < n; ++u) {
      Value s = add(s0, u);
      Value k = mul(s, kAmxStepK), pair = mul(s, kAmxStepK / 2);
      Value a[2], bt[2];
      for (int r = 0; r < 2; ++r)
        a[r] = amx::TileLoadOp::create(
            b, loc, abType, lhs.mem, viewIndices(b, loc, lhs, rowOf[r], k));
      for (int v = 0; v < 2; ++v)
        bt[v] = amx::TileLoadOp::create(
            b, loc, abType, panel.mem,
            viewIndices(b, loc, panel, pair, mul(colOf[v], 2)));
      for (int r = 0; r < 2; ++r)
        for (int v = 0; v < 2; ++v)
          tiles[r][v] = amx::TileMulFOp::create(b, loc, cType, a[r], bt[v],
                                                tiles[r][v]);
      if (prefetch)
        prefetchNext(s, j0);
    }
    for (int r = 0; r < 2; ++r)
      for (int v = 0; v < 2; ++v)
        amx::TileStoreOp::create(b, loc, acc, ValueRange{rowOf[r], colOf[v]},
                                 tiles[r][v]);
  }

  /// Steps [s0, end) where end - s0 < group, in chunks of descending
  /// powers of two (the bits of end - s0), each chunk between one load and
  /// one store of the C tiles: at most log2(group) + 1 round trips of the
  /// C tiles instead of one per step. With `zeroC` the first chunk starts
  /// from zero tiles (then end > s0).
  void emitRemainder(Value i0, Value j0, Value s0, Value end, int64_t group,
                     bool zeroC, bool prefetch) {
    // Folded: constants where the steps are static.
    Value count = b.createOrFold<arith::SubIOp>(loc, end, s0);
    int64_t chunk = group > 1 ? llvm::bit_floor(uint64_t(group - 1)) : 0;
    for (; chunk >= 1; chunk /= 2) {
      auto bitsAbove = [&](int64_t bit) {
        return b.createOrFold<arith::AndIOp>(loc, count, c(~(bit - 1)));
      };
      Value has = b.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::ne,
          b.createOrFold<arith::AndIOp>(loc, count, c(chunk)), c(0));
      ifElse(has, [&] {
        // The chunk starts after the larger chunks that run.
        Value start =
            b.createOrFold<arith::AddIOp>(loc, s0, bitsAbove(2 * chunk));
        if (!zeroC) {
          emit(i0, j0, start, chunk, false, prefetch);
          return;
        }
        // The first chunk that runs: no larger bit of count is set.
        Value first = b.createOrFold<arith::CmpIOp>(
            loc, arith::CmpIPredicate::eq, bitsAbove(2 * chunk), c(0));
        ifElse(
            first, [&] { emit(i0, j0, start, chunk, true, prefetch); },
            [&] { emit(i0, j0, start, chunk, false, prefetch); });
      });
    }
  }
};
} // namespace

void cpu::buildAmxBlockProduct(OpBuilder &b, Location loc, const BlockView &lhs,
                               const BlockView &panel, Value acc, Value rows,
                               Value cols, Value steps, int64_t group,
                               bool zeroC, const BlockView &next,
                               function_ref<void(Value, Value)> afterBlock) {
  AmxStep step{b, loc, lhs, panel, acc, next};
  Value grouped = b.createOrFold<arith::SubIOp>(
      loc, steps,
      b.createOrFold<arith::RemUIOp>(loc, steps, step.c(group)));
  auto rowPair = [&](Value i0, bool prefetch) {
    buildForLoop(b, loc, step.c(0), cols, step.c(kAmxBlock), [&](Value j0) {
      // Whole groups of steps; with group == 1 (a k block of one step,
      // K <= 32 in a prepacked panel) these are all the steps, the
      // remainder being empty.
      auto groups = [&](Value from) {
        buildForLoop(b, loc, from, grouped, step.c(group), [&](Value s0) {
          step.emit(i0, j0, s0, group, false, prefetch);
        });
      };
      if (!zeroC) {
        groups(step.c(0));
        step.emitRemainder(i0, j0, grouped, steps, group, false, prefetch);
      } else {
        // From zero tiles: the first whole group where there is one, else
        // the first chunk of the remainder.
        step.ifElse(
            b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge,
                                          steps, step.c(group)),
            [&] {
              step.emit(i0, j0, step.c(0), group, /*zeroC=*/true, prefetch);
              groups(step.c(group));
              step.emitRemainder(i0, j0, grouped, steps, group, false,
                                 prefetch);
            },
            [&] {
              step.emitRemainder(i0, j0, step.c(0), steps, group, true,
                                 prefetch);
            });
      }
      if (afterBlock)
        afterBlock(i0, j0);
    });
  };
  // Rows outer: a row pair's A tiles (32 rows x the k block) stay in L1
  // across the column pairs, whose B tiles stream from L2 (faster than
  // columns outer on nn.Linear shapes: bench/RESULTS.md, "Matrix
  // products"). The first row pair reads the panel from memory; it
  // prefetches `next` meanwhile, so that the next block's first row pair
  // finds it in L2.
  Value rest = step.c(0);
  if (next.mem) {
    rest = arith::MinUIOp::create(b, loc, rows, step.c(kAmxBlock));
    buildForLoop(b, loc, step.c(0), rest, step.c(kAmxBlock),
                 [&](Value i0) { rowPair(i0, /*prefetch=*/true); });
  }
  buildForLoop(b, loc, rest, rows, step.c(kAmxBlock),
               [&](Value i0) { rowPair(i0, /*prefetch=*/false); });
}

void cpu::buildAmxBranch(OpBuilder &b, Location loc,
                         function_ref<void(bool onTiles)> emit) {
  auto check = func::CallOp::create(b, loc, kAmxAvailableFunction,
                                    b.getI32Type(), ValueRange{});
  Value granted = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, check.getResult(0),
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
  auto branch = scf::IfOp::create(
      b, loc, granted,
      [&](OpBuilder &, Location) {
        emit(/*onTiles=*/true);
        scf::YieldOp::create(b, loc);
      },
      [&](OpBuilder &, Location) {
        emit(/*onTiles=*/false);
        scf::YieldOp::create(b, loc);
      });
  branch->setAttr(kAmxBranchAttrName, b.getUnitAttr());
}

void cpu::zeroRows(OpBuilder &b, Location loc, const BlockView &view,
                   VectorType vecType, Value rowLo, Value rowHi, Value cols) {
  Value zero = createFloatConstantOfType(b, loc, vecType, 0.0);
  Value lanes = indexConstant(b, loc, vecType.getNumElements());
  buildForLoop(b, loc, rowLo, rowHi, indexConstant(b, loc, 1), [&](Value r) {
    buildForLoop(b, loc, indexConstant(b, loc, 0), cols, lanes, [&](Value c) {
      vector::StoreOp::create(b, loc, zero, view.mem,
                              viewIndices(b, loc, view, r, c));
    });
  });
}
