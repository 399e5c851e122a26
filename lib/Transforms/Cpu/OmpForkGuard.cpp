//===- OmpForkGuard.cpp - fork threads only for loops of several iterations ===//
//
// attn-cpu-omp-fork-guard: an omp.parallel around a worksharing loop whose
// trip count is known only at run time gets `if(trips > 1)`, so that a loop
// of one iteration (a batch of one, a short sequence) runs on the calling
// thread instead of forking and joining the team. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUOMPFORKGUARD
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// The loop nest that `parallel` shares out: the only op of the only
/// omp.wsloop directly in its body, or null for any other form (a region of
/// several loops, or code besides the loop that every thread runs).
static omp::LoopNestOp getSharedLoop(omp::ParallelOp parallel) {
  omp::WsloopOp wsloop;
  for (Operation &op : parallel.getRegion().front()) {
    if (isa<omp::TerminatorOp>(op) || isMemoryEffectFree(&op))
      continue;
    auto loop = dyn_cast<omp::WsloopOp>(op);
    if (!loop || wsloop)
      return {};
    wsloop = loop;
  }
  if (!wsloop)
    return {};
  return dyn_cast<omp::LoopNestOp>(wsloop.getWrappedLoop());
}

/// `trips > 1` for `loop`, built before `parallel`, or null when the trip
/// count is a constant or a bound is computed inside `parallel`.
static Value buildSeveralTrips(OpBuilder &b, omp::ParallelOp parallel,
                               omp::LoopNestOp loop) {
  if (loop.getLoopInclusive())
    return {};
  auto outside = [&](Value v) {
    return !parallel->isAncestor(v.getParentRegion()->getParentOp());
  };
  bool allConstant = true;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLoopLowerBounds(), loop.getLoopUpperBounds(),
                 loop.getLoopSteps())) {
    if (!outside(lb) || !outside(ub) || !outside(step))
      return {};
    allConstant &= matchPattern(lb, m_Constant()) &&
                   matchPattern(ub, m_Constant()) &&
                   matchPattern(step, m_Constant());
  }
  if (allConstant)
    return {};
  Location loc = loop.getLoc();
  Type type = loop.getLoopLowerBounds().front().getType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  Value one = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 1));
  Value trips = one;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLoopLowerBounds(), loop.getLoopUpperBounds(),
                 loop.getLoopSteps())) {
    // Steps are positive (what convert-scf-to-openmp emits); an empty
    // range counts 0.
    Value span = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, ub, lb), zero);
    trips = arith::MulIOp::create(
        b, loc, trips, arith::CeilDivSIOp::create(b, loc, span, step));
  }
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, trips, one);
}

namespace {
struct AttnCpuOmpForkGuardPass
    : public attn::impl::AttnCpuOmpForkGuardBase<AttnCpuOmpForkGuardPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([](omp::ParallelOp parallel) {
      if (parallel.getIfExpr())
        return;
      omp::LoopNestOp loop = getSharedLoop(parallel);
      if (!loop)
        return;
      OpBuilder b(parallel);
      if (Value several = buildSeveralTrips(b, parallel, loop))
        parallel.getIfExprMutable().assign(several);
    });
  }
};
} // namespace
