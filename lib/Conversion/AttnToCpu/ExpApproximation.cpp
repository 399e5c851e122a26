//===- ExpApproximation.cpp - polynomial math.exp that vectorises ---------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUEXPAPPROXIMATION
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnCpuExpApproximationPass
    : public attn::impl::AttnCpuExpApproximationBase<
          AttnCpuExpApproximationPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == "exp" || name == "math.exp";
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
