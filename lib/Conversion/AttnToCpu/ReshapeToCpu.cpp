//===- ReshapeToCpu.cpp - attn.reshape to tensor reshapes -----------------===//
//
// attn.reshape keeps the row-major order of the elements, so it is a collapse
// to one dim followed by an expand to the result's shape (both static): no
// copy once bufferized.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;

/// The reassociation that groups all `rank` dims into one (none for rank 0,
/// whose single element maps to the one dim of size 1).
static SmallVector<ReassociationIndices> groupAll(int64_t rank) {
  if (rank == 0)
    return {};
  ReassociationIndices all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  return {all};
}

namespace {
struct ReshapeOpLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto input = op.getInput().getType();
    auto result = op.getType();
    auto flat =
        RankedTensorType::get({input.getNumElements()}, input.getElementType());
    Value x = op.getInput();
    if (input.getRank() > 1)
      x = tensor::CollapseShapeOp::create(rewriter, loc, flat, x,
                                          groupAll(input.getRank()));
    else if (input.getRank() == 0)
      x = tensor::ExpandShapeOp::create(rewriter, loc, flat, x, groupAll(0));
    if (result.getRank() > 1)
      x = tensor::ExpandShapeOp::create(rewriter, loc, result, x,
                                        groupAll(result.getRank()));
    else if (result.getRank() == 0)
      x = tensor::CollapseShapeOp::create(rewriter, loc, result, x,
                                          groupAll(0));
    rewriter.replaceOp(op, x);
    return success();
  }
};
} // namespace

void mlir::attn::populateAttnReshapeToCpuPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeOpLowering>(patterns.getContext());
}
