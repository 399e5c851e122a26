//===- DeallocAfterLastUse.cpp - free each buffer after its last use ------===//
//
// attn-cpu-dealloc-after-last-use: upstream's ownership-based deallocation
// frees every buffer a block owns in one `bufferization.dealloc` before the
// block's terminator. In a whole model's entry point that keeps every
// activation of every layer alive until the function returns (a peak many
// times eager PyTorch's, which frees each tensor after its last use), and
// each call faults all of them in again. This pass runs right after the
// ownership-based deallocation (before its simplification, which then
// sees only the memrefs left here) and `lower-deallocations`: each memref of
// such a dealloc whose aliases it can enumerate is freed by a dealloc of
// its own right after the last op of the block that uses one of them.
//
// The aliases of a buffer are the values reachable from its allocation
// through its users: views (ViewLikeOpInterface, the base buffer of
// memref.extract_strided_metadata) and, conservatively, every memref result
// of any other op that takes an alias as an operand. A call to a function
// of the module is the exception: under the deallocation's function
// boundary ABI a callee returns buffers the caller owns (fresh allocations
// or clones), never one of its arguments. A memref stays where it was when
// its allocation is not one this pass can see whole (a memref.alloc, or the
// result of a call to a function with a body), when an alias leaves the
// block through a terminator, is used outside the block, or is also an
// operand of the same dealloc (another memref, a retained value): those
// need the dealloc's run-time alias checks.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUDEALLOCAFTERLASTUSE
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Decides, for each memref of one `bufferization.dealloc`, whether it can
/// be freed earlier and where.
class DeallocPlacement {
public:
  DeallocPlacement(bufferization::DeallocOp dealloc,
                   SymbolTableCollection &symbols)
      : dealloc(dealloc), block(dealloc->getBlock()), symbols(symbols) {}

  /// The op after which `memref` (with `condition`) can be freed, or null
  /// when it must stay in the dealloc.
  Operation *findLastUse(Value memref, Value condition);

private:
  Value getAllocation(Value memref);
  bool isCallToDefinedFunction(Operation *op);
  LogicalResult collectAliases(Value allocation,
                               llvm::SetVector<Value> &aliases);
  bool includeInBlock(Operation *op, Operation *&last);

  bufferization::DeallocOp dealloc;
  Block *block;
  SymbolTableCollection &symbols;
};

} // namespace

bool DeallocPlacement::isCallToDefinedFunction(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  return callee && !callee.isExternal();
}

/// The value that holds the whole allocation `memref` frees: the
/// memref.alloc, or the call result whose base buffer `memref` is. Null for
/// anything else (a function argument, a view, an op this pass does not
/// know).
Value DeallocPlacement::getAllocation(Value memref) {
  Value source = memref;
  if (auto metadata =
          memref.getDefiningOp<memref::ExtractStridedMetadataOp>())
    if (memref == metadata.getBaseBuffer())
      source = metadata.getSource();
  Operation *def = source.getDefiningOp();
  if (!def)
    return {};
  if (isa<memref::AllocOp>(def) || isCallToDefinedFunction(def))
    return source;
  return {};
}

LogicalResult
DeallocPlacement::collectAliases(Value allocation,
                                 llvm::SetVector<Value> &aliases) {
  SmallVector<Value> worklist{allocation};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!aliases.insert(value))
      continue;
    for (Operation *user : value.getUsers()) {
      if (user == dealloc)
        continue;
      // Returned, yielded to a parent op or passed to a successor block.
      if (user->hasTrait<OpTrait::IsTerminator>())
        return failure();
      if (isCallToDefinedFunction(user))
        continue;
      // Views, extract_strided_metadata's base buffer, and any result of
      // an op this pass does not know: all may alias the operand.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          worklist.push_back(result);
    }
  }
  return success();
}

/// Moves `last` to the ancestor of `op` in the block when it comes later;
/// false when `op` is not in the block.
bool DeallocPlacement::includeInBlock(Operation *op, Operation *&last) {
  Operation *ancestor = block->findAncestorOpInBlock(*op);
  if (!ancestor)
    return false;
  if (!last || last->isBeforeInBlock(ancestor))
    last = ancestor;
  return true;
}

Operation *DeallocPlacement::findLastUse(Value memref, Value condition) {
  Value allocation = getAllocation(memref);
  if (!allocation)
    return nullptr;
  llvm::SetVector<Value> aliases;
  if (failed(collectAliases(allocation, aliases)))
    return nullptr;
  // The dealloc's own alias checks are needed when another of its operands
  // may be the same buffer.
  for (Value other : llvm::concat<Value>(dealloc.getMemrefs(),
                                        dealloc.getRetained()))
    if (other != memref && aliases.contains(other))
      return nullptr;

  // A base buffer the deallocation extracted for its dealloc is extracted
  // again where the buffer is freed: that extraction is not a use.
  Operation *extraction = memref != allocation ? memref.getDefiningOp() : nullptr;
  Operation *last = nullptr;
  auto include = [&](Operation *op) {
    return op == dealloc || op == extraction || includeInBlock(op, last);
  };
  for (Value alias : aliases) {
    Operation *def = alias.getDefiningOp();
    if (def && !include(def))
      return nullptr;
    if (!llvm::all_of(alias.getUsers(), include))
      return nullptr;
  }
  // The condition must be computed before the new dealloc.
  if (Operation *def = condition.getDefiningOp())
    if (def->getBlock() == block && last->isBeforeInBlock(def))
      last = def;
  if (dealloc->isBeforeInBlock(last))
    return nullptr;
  return last;
}

/// Gives each memref of `dealloc` that can be freed earlier a dealloc of its
/// own after its last use, and leaves the others (and the retained values)
/// in `dealloc`.
static void placeDeallocs(bufferization::DeallocOp dealloc,
                          SymbolTableCollection &symbols) {
  DeallocPlacement placement(dealloc, symbols);
  SmallVector<Value> keptMemrefs, keptConditions;
  SmallVector<std::pair<Operation *, unsigned>> moved;
  for (auto [i, memref] : llvm::enumerate(dealloc.getMemrefs())) {
    Value condition = dealloc.getConditions()[i];
    if (Operation *last = placement.findLastUse(memref, condition)) {
      moved.push_back({last, i});
      continue;
    }
    keptMemrefs.push_back(memref);
    keptConditions.push_back(condition);
  }
  if (moved.empty())
    return;

  OpBuilder builder(dealloc);
  for (auto [last, i] : moved) {
    builder.setInsertionPointAfter(last);
    Value memref = dealloc.getMemrefs()[i];
    if (auto metadata =
            memref.getDefiningOp<memref::ExtractStridedMetadataOp>())
      memref = memref::ExtractStridedMetadataOp::create(
                   builder, metadata.getLoc(), metadata.getSource())
                   .getBaseBuffer();
    bufferization::DeallocOp::create(builder, dealloc.getLoc(),
                                     ValueRange{memref},
                                     ValueRange{dealloc.getConditions()[i]},
                                     ValueRange{});
  }
  builder.setInsertionPoint(dealloc);
  auto rest = bufferization::DeallocOp::create(
      builder, dealloc.getLoc(), keptMemrefs, keptConditions,
      dealloc.getRetained());
  dealloc->replaceAllUsesWith(rest);
  dealloc->erase();
}

namespace {

struct AttnCpuDeallocAfterLastUsePass
    : attn::impl::AttnCpuDeallocAfterLastUseBase<
          AttnCpuDeallocAfterLastUsePass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation()->walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    SymbolTableCollection symbols;
    for (bufferization::DeallocOp dealloc : deallocs)
      placeDeallocs(dealloc, symbols);
  }
};

} // namespace
