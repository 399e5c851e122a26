//===- AmxTile.cpp - bf16 GEMM blocks on AMX tiles ------------------------===//

#include "AmxTile.h"

#include "LoweringUtils.h"
#include "RegisterTile.h"

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
};
} // namespace

void cpu::buildAmxBlockProduct(OpBuilder &b, Location loc, const BlockView &lhs,
                               const BlockView &panel, Value acc, Value rows,
                               Value cols, Value steps, int64_t group,
                               bool zeroC, const BlockView &next) {
  AmxStep step{b, loc, lhs, panel, acc, next};
  Value grouped = arith::SubIOp::create(
      b, loc, steps, arith::RemUIOp::create(b, loc, steps, step.c(group)));
  auto rowPair = [&](Value i0, bool prefetch) {
    buildForLoop(b, loc, step.c(0), cols, step.c(kAmxBlock), [&](Value j0) {
      // Steps [0, first) run from zero tiles: a whole group where there is
      // one, else a single step (steps >= 1: the k block is not empty).
      Value first = step.c(0), groupedEnd = grouped;
      if (zeroC) {
        Value full = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           steps, step.c(group));
        auto branch = scf::IfOp::create(b, loc, TypeRange{}, full,
                                        /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(branch.thenBlock());
          step.emit(i0, j0, first, group, /*zeroC=*/true, prefetch);
          b.setInsertionPointToStart(branch.elseBlock());
          step.emit(i0, j0, first, 1, /*zeroC=*/true, prefetch);
        }
        first = arith::SelectOp::create(b, loc, full, step.c(group), step.c(1));
        groupedEnd = arith::SelectOp::create(b, loc, full, grouped, first);
      }
      if (group > 1)
        buildForLoop(b, loc, first, groupedEnd, step.c(group), [&](Value s0) {
          step.emit(i0, j0, s0, group, false, prefetch);
        });
      else
        groupedEnd = first;
      buildForLoop(b, loc, groupedEnd, steps, step.c(1),
                   [&](Value s) { step.emit(i0, j0, s, 1, false, prefetch); });
    });
  };
  // Rows outer: a row pair's A tiles (32 rows x the k block) stay in L1
  // across the column pairs, whose B tiles stream from L2 (5-8% faster
  // than columns outer on nn.Linear shapes, one thread, Sapphire-Rapids-
  // class VM). The first row pair reads the panel from memory; it
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
