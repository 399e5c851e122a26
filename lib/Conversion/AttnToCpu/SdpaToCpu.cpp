//===- SdpaToCpu.cpp - attn.sdpa to CPU code: backend choice -------------===//
//
// Two implementations of attn.sdpa's contract (see AttnOps.td), sharing one
// SdpaPlan per op (SdpaPlan.{h,cpp}):
//
// - math (SdpaMathToCpu.cpp): the reference; materialises the scores
//   `[..., L, S]` in f32 (f64 for f64) with linalg on tensors.
// - flash (SdpaFlashToCpu.cpp): register-tiled online softmax in the vector
//   dialect on buffers, parallel over (query batch dims x query blocks);
//   only block-sized scratch. With a static L of at most half the vector
//   lanes (decode against a KV cache) the flash backend runs
//   SdpaDecodeToCpu.cpp instead: head dim along the lanes, keys split
//   across work items.
//
//===----------------------------------------------------------------------===//

#include "SdpaPlan.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

//===----------------------------------------------------------------------===//
// Pattern
//===----------------------------------------------------------------------===//

namespace {

struct SdpaOpLowering : OpRewritePattern<SdpaOp> {
  SdpaOpLowering(MLIRContext *ctx, const AttnCpuLoweringOptions &options)
      : OpRewritePattern(ctx), options(options) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    bool hasDropout = op.getDropoutP().convertToDouble() > 0.0;
    SdpaCpuBackend backend = getSdpaCpuBackend(op, options.backend);
    bool useFlash = backend == SdpaCpuBackend::Flash ||
                    (backend == SdpaCpuBackend::Auto && !hasDropout);
    if (useFlash && hasDropout)
      return rewriter.notifyMatchFailure(op, "flash has no dropout");
    // A static head dim of 0 leaves nothing to tile (and no valid slice of
    // it), and a static query length of 0 no rows to split the keys among:
    // the math path computes the same empty sums, or the empty result.
    ArrayRef<int64_t> queryShape = op.getQuery().getType().getShape();
    if (queryShape.back() == 0 || queryShape.end()[-2] == 0 ||
        op.getValue().getType().getShape().back() == 0)
      useFlash = false;
    Location loc = op.getLoc();
    SdpaPlan plan = buildSdpaPlan(rewriter, loc, op);
    Value result;
    if (!useFlash)
      result = lowerSdpaMath(rewriter, loc, op, plan);
    else if (prefersDecode(plan, options))
      result = lowerSdpaDecode(rewriter, loc, op, plan, options);
    else
      result = lowerSdpaFlash(rewriter, loc, op, plan, options);
    rewriter.replaceOp(op, result);
    return success();
  }

  AttnCpuLoweringOptions options;
};

} // namespace

void mlir::attn::populateAttnSdpaToCpuPatterns(
    RewritePatternSet &patterns, const AttnCpuLoweringOptions &options) {
  patterns.add<SdpaOpLowering>(patterns.getContext(), options);
}
