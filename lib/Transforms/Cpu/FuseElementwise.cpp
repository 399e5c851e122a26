//===- FuseElementwise.cpp - one loop nest per elementwise chain ----------===//
//
// attn-cpu-fuse-elementwise: upstream linalg elementwise fusion on the
// lowering's generics, with the lowering's in-place inits taken apart
// before and put back after (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUFUSEELEMENTWISE
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// The init's block argument of a generic with one init.
static BlockArgument getInitArgument(linalg::GenericOp op) {
  return op.getRegion().front().getArgument(op.getNumDpsInputs());
}

static int64_t countBodyOps(linalg::GenericOp op) {
  return llvm::range_size(op.getRegion().front().getOperations());
}

/// A copy of `op` whose inputs are `inputs` (maps `inputMaps`) and whose
/// init is `init` (map `initMap`), with `op`'s body; `remap` moves the
/// body's uses of old block arguments to new ones before the body moves.
static linalg::GenericOp
rebuildGeneric(RewriterBase &rewriter, linalg::GenericOp op,
               ValueRange inputs, ArrayRef<AffineMap> inputMaps, Value init,
               AffineMap initMap) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(initMap);
  auto rebuilt = linalg::GenericOp::create(
      rewriter, op.getLoc(), op->getResultTypes(), inputs, ValueRange{init},
      maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), rebuilt.getRegion(),
                              rebuilt.getRegion().end());
  rewriter.replaceOp(op, rebuilt->getResults());
  return rebuilt;
}

/// In place -> out of place: the init becomes the last input, read through
/// the block argument that the body used; the new init is a tensor.empty.
/// Fusion then sees every producer as the producer of an input (it fuses no
/// other), and no producer reads its init.
static void moveInitToInputs(RewriterBase &rewriter, linalg::GenericOp op) {
  Value init = op.getDpsInitOperand(0)->get();
  BlockArgument initArg = getInitArgument(op);
  if (initArg.use_empty())
    return;
  AffineMap initMap = op.getIndexingMapsArray().back();
  rewriter.setInsertionPoint(op);
  Block &body = op.getRegion().front();
  BlockArgument input = body.insertArgument(
      op.getNumDpsInputs(), initArg.getType(), initArg.getLoc());
  rewriter.replaceAllUsesWith(initArg, input);
  SmallVector<Value> inputs(op.getDpsInputs());
  inputs.push_back(init);
  SmallVector<AffineMap> inputMaps(op.getIndexingMapsArray());
  Value empty = tensor::EmptyOp::create(
      rewriter, op.getLoc(), tensor::getMixedSizes(rewriter, op.getLoc(), init),
      cast<RankedTensorType>(init.getType()).getElementType());
  rebuildGeneric(rewriter, op, inputs, inputMaps, empty, initMap);
}

/// Out of place -> in place where the lowering would have written over an
/// input (cpu::findReusableInput) of the result's type and indexing map.
static void reuseInputAsInit(RewriterBase &rewriter, linalg::GenericOp op) {
  Value init = op.getDpsInitOperand(0)->get();
  if (!init.getDefiningOp<tensor::EmptyOp>() || !getInitArgument(op).use_empty())
    return;
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<Value> candidates;
  for (OpOperand *input : op.getDpsInputOperands())
    if (maps[input->getOperandNumber()] == maps.back())
      candidates.push_back(input->get());
  Value reuse = cpu::findReusableInput(op, resultType, candidates);
  if (!reuse)
    return;
  SmallVector<Value> inputs(op.getDpsInputs());
  unsigned index = llvm::find(inputs, reuse) - inputs.begin();
  Block &body = op.getRegion().front();
  rewriter.replaceAllUsesWith(body.getArgument(index), getInitArgument(op));
  body.eraseArgument(index);
  inputs.erase(inputs.begin() + index);
  maps.erase(maps.begin() + index);
  AffineMap initMap = maps.pop_back_val();
  rewriter.setInsertionPoint(op);
  rebuildGeneric(rewriter, op, inputs, maps, reuse, initMap);
}

LogicalResult
cpu::fuseElementwiseGenerics(Operation *root, int64_t maxBodyOps,
                             function_ref<bool(Operation *)> filter) {
  auto selected = [&](Operation *op) {
    return cpu::isElementwiseGeneric(op) && (!filter || filter(op));
  };
  IRRewriter rewriter(root->getContext());
  SmallVector<linalg::GenericOp> generics;
  root->walk([&](linalg::GenericOp op) {
    if (selected(op))
      generics.push_back(op);
  });
  for (linalg::GenericOp op : generics)
    moveInitToInputs(rewriter, op);

  RewritePatternSet patterns(root->getContext());
  linalg::populateElementwiseOpsFusionPatterns(patterns, [&](OpOperand *fused) {
    Operation *producer = fused->get().getDefiningOp();
    auto consumer = cast<linalg::GenericOp>(fused->getOwner());
    // Only users in the consumer: nothing is computed twice.
    return selected(producer) && selected(consumer) &&
           getInitArgument(cast<linalg::GenericOp>(producer)).use_empty() &&
           llvm::all_of(producer->getUsers(),
                        [&](Operation *u) { return u == consumer; }) &&
           countBodyOps(cast<linalg::GenericOp>(producer)) +
                   countBodyOps(consumer) <=
               maxBodyOps;
  });
  if (failed(applyPatternsGreedily(root, std::move(patterns))))
    return failure();

  // A consumer that read one tensor through several fused producers reads
  // it once (GELU's x * 0.5 * (1 + tanh(c (x + k x^3)))).
  SmallVector<Operation *> fusedOps;
  root->walk([&](linalg::GenericOp op) {
    if (selected(op))
      fusedOps.push_back(op);
  });
  RewritePatternSet canonical(root->getContext());
  linalg::GenericOp::getCanonicalizationPatterns(canonical, root->getContext());
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  (void)applyOpPatternsGreedily(fusedOps, std::move(canonical), config);

  generics.clear();
  root->walk([&](linalg::GenericOp op) {
    if (selected(op))
      generics.push_back(op);
  });
  for (linalg::GenericOp op : generics)
    reuseInputAsInit(rewriter, op);
  return success();
}

namespace {
struct AttnCpuFuseElementwisePass
    : public attn::impl::AttnCpuFuseElementwiseBase<
          AttnCpuFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(cpu::fuseElementwiseGenerics(getOperation(), maxBodyOps)))
      signalPassFailure();
  }
};
} // namespace
