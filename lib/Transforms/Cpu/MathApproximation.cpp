//===- MathApproximation.cpp - polynomial math ops that vectorise ---------===//
//
// attn-cpu-math-approximation: upstream's polynomial approximations for the
// transcendental math ops measured accurate enough (docs/cpu-math.md), so
// that loops holding them vectorise instead of calling libm per element.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUMATHAPPROXIMATION
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// The ops whose approximation stays within PyTorch's f32 tolerances over
/// the whole f32 range (measured in docs/cpu-math.md). Not sin/cos: their
/// range reduction subtracts k * pi/2 in f32, so the error grows with |x|
/// (rotary angles reach thousands) and is unbounded near FLT_MAX. Not
/// log/log2: they read a denormal input's exponent field as is (log(1e-45)
/// gives -87.3, not -103.3).
static constexpr StringLiteral kAccurateOps[] = {
    "math.exp", "math.expm1", "math.tanh", "math.erf", "math.log1p"};

/// What `ops=` may name: the f32 approximations upstream offers without
/// target intrinsics (its rsqrt needs AVX2, so is left out).
static constexpr StringLiteral kApproximableOps[] = {
    "math.acos", "math.asin", "math.atan",  "math.atan2", "math.cbrt",
    "math.cos",  "math.erf",  "math.erfc",  "math.exp",   "math.expm1",
    "math.log",  "math.log1p", "math.log2", "math.sin",   "math.tanh"};

namespace {
struct AttnCpuMathApproximationPass
    : public attn::impl::AttnCpuMathApproximationBase<
          AttnCpuMathApproximationPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    selected.clear();
    if (ops.empty()) {
      for (StringRef name : kAccurateOps)
        selected.insert(name);
      return success();
    }
    for (const std::string &name : ops) {
      // A misspelt name would otherwise silently approximate nothing.
      if (!llvm::is_contained(kApproximableOps, name))
        return emitError(UnknownLoc::get(context))
               << "attn-cpu-math-approximation: no polynomial approximation "
                  "of '"
               << name << "' (one of "
               << llvm::join(ArrayRef<StringLiteral>(kApproximableOps), ", ")
               << ")";
      selected.insert(name);
    }
    return success();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto isSelected = [&](StringRef name) { return selected.contains(name); };
    // f16/bf16: extend to f32, approximate, round back once.
    populateMathF32ExpansionPatterns(patterns, isSelected);
    populateMathPolynomialApproximationPatterns(patterns, isSelected);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }

private:
  llvm::StringSet<> selected;
};
} // namespace
