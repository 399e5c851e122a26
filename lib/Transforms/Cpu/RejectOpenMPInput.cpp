//===- RejectOpenMPInput.cpp - no OpenMP ops in the CPU pipeline's input --===//
//
// attn-cpu-reject-openmp-input: the CPU pipeline makes its own OpenMP loops
// from scf.forall; upstream's ownership-based deallocation, which runs before
// that, cannot place its code around an omp.wsloop's nested loop and would
// leave invalid IR. Input that already holds OpenMP ops is refused, located
// at the first one.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUREJECTOPENMPINPUT
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnCpuRejectOpenMPInputPass
    : public attn::impl::AttnCpuRejectOpenMPInputBase<
          AttnCpuRejectOpenMPInputPass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation()->walk<WalkOrder::PreOrder>([](Operation *op) {
      if (!isa_and_nonnull<omp::OpenMPDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError("the CPU pipeline's input must not contain OpenMP ops: "
                    "it makes its own parallel loops (from scf.forall); "
                    "give it the loops as scf.forall or scf.parallel");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
