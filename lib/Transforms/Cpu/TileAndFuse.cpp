//===- TileAndFuse.cpp - parallel row blocks of large linalg ops ----------===//
//
// attn-cpu-tile-and-fuse: each large linalg op on tensors becomes an
// scf.forall over blocks of its leading parallel dims, with the producers it
// alone reads fused into each block (upstream TileUsingInterface). See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUTILEANDFUSE
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// Linalg ops on tensors that this pass tiles or fuses. Matmuls are not
/// among them: the CPU lowering has turned them into its own GEMM code
/// before this pass, and one that is left keeps its own blocking.
static bool isTileableLinalgOp(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics() &&
         !linalg::isaContractionOpInterface(linalgOp) &&
         !isa<linalg::FillOp>(op);
}

/// Tile sizes for `op` (0 = not tiled) or an empty vector when it stays as
/// it is: the leading parallel loops (all but the innermost loop) are
/// split into blocks of about `tileElements` iterations made of whole inner
/// rows. Loops of static size are tiled when their product is at least
/// `minElements`. A leading loop of dynamic size (a sequence length or a
/// batch known at run time) is tiled too when the inner rows are static;
/// how many tiles it has is decided at run time, and the CPU pipeline runs
/// a loop of one tile without forking threads (attn-cpu-omp-fork-guard).
static SmallVector<int64_t> chooseTileSizes(linalg::LinalgOp op,
                                            int64_t minElements,
                                            int64_t tileElements) {
  // getStaticLoopRanges needs an invertible loops-to-shapes map, which the
  // verifier guarantees; an op another pass left without one is skipped.
  if (!op.getShapesToLoopsMap())
    return {};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.size() < 2)
    return {};
  bool dynamic = llvm::any_of(ranges, ShapedType::isDynamic);
  // A result-less op (an index check) has nothing to gather per tile.
  if (dynamic && op->getNumResults() == 0)
    return {};
  if (!dynamic) {
    int64_t total = 1;
    for (int64_t r : ranges)
      total *= r;
    if (total < minElements)
      return {};
  }
  // The leading parallel loops, never the innermost one.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  size_t lead = 0;
  while (lead + 1 < ranges.size() &&
         iterators[lead] == utils::IteratorType::parallel)
    ++lead;
  if (lead == 0)
    return {};
  // The innermost leading loop longer than 1 in blocks of whole inner
  // rows (a divisor of its size when one is near), the loops before it in
  // blocks of one, unit loops after it whole.
  size_t blocked = lead;
  while (blocked > 0 && ranges[blocked - 1] == 1)
    --blocked;
  if (blocked == 0)
    return {};
  --blocked;
  SmallVector<int64_t> sizes(ranges.size(), 0);
  for (size_t d = 0; d < blocked; ++d)
    sizes[d] = 1;
  int64_t inner = 1;
  for (size_t d = blocked + 1; d < ranges.size(); ++d) {
    if (ShapedType::isDynamic(ranges[d]))
      return {};
    inner *= ranges[d];
  }
  int64_t size = ranges[blocked];
  if (ShapedType::isDynamic(size)) {
    sizes[blocked] = std::max<int64_t>(tileElements / inner, 1);
    return sizes;
  }
  int64_t want = std::clamp<int64_t>(tileElements / inner, 1, size);
  int64_t divisor = want;
  while (size % divisor != 0)
    --divisor;
  sizes[blocked] = 2 * divisor >= want ? divisor : want;
  // Tiles of a few short rows each (per-head rows of a batch of run-time
  // size) would cost more in forks than they save.
  if (dynamic && 2 * sizes[blocked] * inner < tileElements)
    return {};
  // One tile for all: nothing to split.
  if (llvm::all_of(llvm::seq<size_t>(0, lead), [&](size_t d) {
        return sizes[d] == 0 || sizes[d] == ranges[d];
      }))
    return {};
  return sizes;
}

/// The producers that may be fused into tiles of `root`: linalg ops (not
/// matmuls) in its block whose every result is read only by `root` or by
/// other such producers, found from `root`'s operands backwards until no
/// more join.
static llvm::SmallPtrSet<Operation *, 8> collectFusable(Operation *root) {
  llvm::SmallPtrSet<Operation *, 8> fusable;
  auto readOnlyHere = [&](Operation *def) {
    return llvm::all_of(def->getUsers(), [&](Operation *user) {
      return user == root || fusable.count(user);
    });
  };
  // Until no producer joins: one read by two fused ops joins once both
  // have.
  for (bool grew = true; grew;) {
    grew = false;
    SmallVector<Operation *> readers{root};
    readers.append(fusable.begin(), fusable.end());
    for (Operation *op : readers) {
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || def->getBlock() != root->getBlock() ||
            fusable.count(def) ||
            !(isTileableLinalgOp(def) || isa<linalg::FillOp>(def)) ||
            !readOnlyHere(def))
          continue;
        fusable.insert(def);
        grew = true;
      }
    }
  }
  return fusable;
}

/// True when `slice` reads less than its whole source.
static bool isProperSlice(tensor::ExtractSliceOp slice) {
  return slice.getSourceType().getShape() !=
             slice.getResultType().getShape() ||
         !slice.hasZeroOffset();
}

/// Tiles `root` and fuses its fusable producers; `root` and the fused
/// producers are replaced and erased (added to `erased`).
static LogicalResult tileAndFuse(RewriterBase &rewriter,
                                 linalg::LinalgOp root,
                                 ArrayRef<int64_t> tileSizes,
                                 llvm::SmallPtrSetImpl<Operation *> &erased) {
  llvm::SmallPtrSet<Operation *, 8> fusable = collectFusable(root);
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), tileSizes));
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp slice, OpResult producer, bool)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (!fusable.count(producer.getOwner()) || !isProperSlice(slice))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root.getOperation()), options);
  if (failed(result))
    return failure();
  for (OpResult r : root->getResults())
    rewriter.replaceAllUsesWith(r, result->replacements.lookup(r));
  rewriter.eraseOp(root);
  erased.insert(root);
  // A producer that two fused ops read (a layer norm's mean: the variance
  // and the normalised rows) was fused once per read: CSE in the loop
  // leaves one copy per tile. (Only here: outside the loops, CSE would merge
  // the lowering's to_buffer reads, see the CPU pipeline.) The slices that
  // fusion read the producers through are left unused in the loop.
  DominanceInfo dominance;
  for (LoopLikeOpInterface loop : result->loops) {
    eliminateCommonSubExpressions(rewriter, dominance, loop);
    loop->walk([&](tensor::ExtractSliceOp slice) {
      if (slice->use_empty())
        rewriter.eraseOp(slice);
    });
  }
  // Without those slices the fused producers are dead (their only users
  // were fused with them): latest first, so each is unused when it goes.
  SmallVector<Operation *> fused(result->fusedProducers.begin(),
                                 result->fusedProducers.end());
  llvm::sort(fused, [](Operation *a, Operation *b) {
    return b->isBeforeInBlock(a);
  });
  for (Operation *op : fused) {
    // Tiling dynamic sizes leaves unused `tensor.dim`s of the producers.
    for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
      if (isa<tensor::DimOp>(user) && user->use_empty())
        rewriter.eraseOp(user);
    if (!op->use_empty())
      continue;
    rewriter.eraseOp(op);
    erased.insert(op);
  }
  return success();
}

/// True when `expand` only inserts dims of size 1 (PyTorch's keepdim: a
/// row statistic [B, T] read as [B, T, 1]).
static bool insertsOnlyUnitDims(tensor::ExpandShapeOp expand) {
  for (ReassociationIndices group : expand.getReassociationIndices()) {
    int64_t nonUnit = llvm::count_if(group, [&](int64_t d) {
      return expand.getResultType().getDimSize(d) != 1;
    });
    if (nonUnit > 1)
      return false;
  }
  return true;
}

namespace {
/// A generic that reads a tensor through an expand_shape that only inserts
/// unit dims (PyTorch's keepdim: a row statistic [B, T] read as
/// [B, T, 1]) reads the tensor itself: the results of its indexing map
/// for the inserted dims are dropped (a size-1 dim is only ever read at 0).
/// The reshape then no longer stands between a norm's statistics and the
/// rows they normalise, and tiles of the rows can take the statistics in.
struct ReadThroughUnitDimExpand : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto expand = input->get().getDefiningOp<tensor::ExpandShapeOp>();
      if (!expand || !insertsOnlyUnitDims(expand))
        continue;
      AffineMap map = op.getMatchingIndexingMap(input);
      SmallVector<AffineExpr> kept;
      for (ReassociationIndices group : expand.getReassociationIndices()) {
        // The group's one dim of the source: its non-unit dim, else its
        // last (a unit source dim).
        int64_t keep = group.back();
        for (int64_t d : group)
          if (expand.getResultType().getDimSize(d) != 1)
            keep = d;
        kept.push_back(map.getResult(keep));
      }
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[input->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, kept, op.getContext());
      // The unit dims may be the only ones that bound a loop (a generic
      // without results, such as an index check).
      if (!inversePermutation(concatAffineMaps(maps, op.getContext())))
        continue;
      rewriter.modifyOpInPlace(op, [&] {
        input->set(expand.getSrc());
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};
} // namespace

static LogicalResult readThroughUnitDimExpands(Operation *root) {
  RewritePatternSet patterns(root->getContext());
  patterns.add<ReadThroughUnitDimExpand>(root->getContext());
  return applyPatternsGreedily(
      root, std::move(patterns),
      GreedyRewriteConfig().enableFolding(false).enableConstantCSE(false));
}

namespace {
struct AttnCpuTileAndFusePass
    : public attn::impl::AttnCpuTileAndFuseBase<AttnCpuTileAndFusePass> {
  using Base::Base;

  void runOnOperation() override {
    if (minElements < 0 || tileElements < 1) {
      getOperation().emitError()
          << "attn-cpu-tile-and-fuse: min-elements must be >= 0 and "
             "tile-elements >= 1";
      return signalPassFailure();
    }
    if (failed(readThroughUnitDimExpands(getOperation())))
      return signalPassFailure();
    // Top-level ops, last first: a consumer is tiled before the producers
    // it may take into its tiles.
    SmallVector<linalg::LinalgOp> roots;
    for (Operation &op : getOperation().getBody().getOps())
      if (isTileableLinalgOp(&op))
        roots.push_back(cast<linalg::LinalgOp>(&op));
    IRRewriter rewriter(&getContext());
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (linalg::LinalgOp root : llvm::reverse(roots)) {
      // A producer fused into an earlier root is gone.
      if (erased.count(root))
        continue;
      SmallVector<int64_t> sizes =
          chooseTileSizes(root, minElements, tileElements);
      if (sizes.empty())
        continue;
      if (failed(tileAndFuse(rewriter, root, sizes, erased))) {
        root.emitError("attn-cpu-tile-and-fuse: could not tile this op");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
