//===- SplitLargeFunctions.cpp - functions of at most N calls ------------===//
//
// attn-cpu-split-large-functions: a whole model's entry point is one block
// of thousands of calls (an outlined kernel per product and attention, a
// parallel loop per elementwise chain). The values every call takes (the
// weights' and the caches' descriptors) are live across all of them, and
// LLVM's greedy register allocator splits such live ranges at each call, in
// time quadratic in the number of calls (1600 attention blocks: 12 s of
// register allocation for one function). This pass moves each run of
// `max-calls` calls of such a block, with the ops between them, into a
// private noinline function of its own: its live-in values become its
// arguments, the values used after it its results. No function is then
// longer than `max-calls` calls, and the work is linear in the block.
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUSPLITLARGEFUNCTIONS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// Whether `op` counts as a call: a call, or an op with regions (a loop
/// becomes a call of the OpenMP runtime or holds calls).
static bool isCallLike(Operation &op) {
  return isa<CallOpInterface>(op) || op.getNumRegions() > 0;
}

namespace {
struct AttnCpuSplitLargeFunctionsPass
    : public mlir::attn::impl::AttnCpuSplitLargeFunctionsBase<
          AttnCpuSplitLargeFunctionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxCalls < 1) {
      module.emitError("attn-cpu-split-large-functions: max-calls must be "
                       "at least 1");
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions)
      split(function, symbols);
  }

  /// The runs of at most maxCalls calls of `function`'s block, each moved
  /// into a function of its own, where the block has more.
  void split(func::FuncOp function, SymbolTable &symbols) {
    if (function.isExternal() || !function.getBody().hasOneBlock())
      return;
    Block &block = function.getBody().front();
    // A buffer on the function's stack must not outlive a part.
    if (llvm::any_of(block, [](Operation &op) {
          return isa<memref::AllocaOp, memref::AllocaScopeOp>(op);
        }))
      return;
    int64_t calls = llvm::count_if(block, isCallLike);
    if (calls <= maxCalls)
      return;
    SmallVector<SmallVector<Operation *>> runs(1);
    int64_t inRun = 0;
    for (Operation &op : block.without_terminator()) {
      // Constants stay; each part that uses one gets a copy.
      if (op.hasTrait<OpTrait::ConstantLike>())
        continue;
      if (isCallLike(op) && inRun == maxCalls) {
        runs.emplace_back();
        inRun = 0;
      }
      inRun += isCallLike(op);
      runs.back().push_back(&op);
    }
    Operation *previous = function;
    for (auto [i, run] : llvm::enumerate(runs))
      previous = outline(function, run, i, previous, symbols);
  }

  /// Moves `run` (ops of one block in order, constants left out) into a
  /// new private function placed after `previous` and calls it where the
  /// run ended; returns the new function.
  func::FuncOp outline(func::FuncOp function, ArrayRef<Operation *> run,
                       size_t index, Operation *previous,
                       SymbolTable &symbols) {
    llvm::SmallPtrSet<Operation *, 32> inRun(run.begin(), run.end());
    Block *block = run.front()->getBlock();
    auto definedInRun = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && inRun.contains(block->findAncestorOpInBlock(*def));
    };
    // Live-ins: values the run uses (in its ops or their regions) that are
    // defined before it, or arguments of the block; constants apart.
    llvm::SetVector<Value> liveIns, constants;
    auto addLiveIn = [&](Value v) {
      if (definedInRun(v))
        return;
      Operation *def = v.getDefiningOp();
      (def && def->hasTrait<OpTrait::ConstantLike>() ? constants : liveIns)
          .insert(v);
    };
    for (Operation *op : run) {
      for (Value operand : op->getOperands())
        addLiveIn(operand);
      for (Region &region : op->getRegions()) {
        llvm::SetVector<Value> above;
        getUsedValuesDefinedAbove(region, above);
        for (Value v : above)
          addLiveIn(v);
      }
    }
    // Live-outs: values of the run used after it.
    SmallVector<Value> liveOuts;
    for (Operation *op : run)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !inRun.contains(block->findAncestorOpInBlock(*user));
            }))
          liveOuts.push_back(result);

    Operation *after = run.back()->getNextNode();
    OpBuilder b(function);
    b.setInsertionPointAfter(previous);
    Location loc = run.front()->getLoc();
    auto type = FunctionType::get(
        function.getContext(), ValueRange(liveIns.getArrayRef()).getTypes(),
        ValueRange(liveOuts).getTypes());
    std::string name =
        (function.getSymName() + "_part" + Twine(index)).str();
    auto part = func::FuncOp::create(b, loc, name, type);
    part.setPrivate();
    part->setAttr("passthrough",
                  b.getArrayAttr({b.getStringAttr("noinline")}));
    symbols.insert(part);
    Block *body = part.addEntryBlock();
    b.setInsertionPointToStart(body);
    for (Value constant : constants) {
      Value copy = b.clone(*constant.getDefiningOp())->getResult(0);
      constant.replaceUsesWithIf(copy, [&](OpOperand &use) {
        return inRun.contains(block->findAncestorOpInBlock(*use.getOwner()));
      });
    }
    for (Operation *op : run)
      op->moveBefore(body, body->end());
    for (auto [liveIn, arg] : llvm::zip(liveIns, body->getArguments()))
      Value(liveIn).replaceUsesWithIf(arg, [&](OpOperand &use) {
        return part->isProperAncestor(use.getOwner());
      });
    b.setInsertionPointToEnd(body);
    func::ReturnOp::create(b, loc, liveOuts);

    // The call where the run was.
    b.setInsertionPoint(after);
    auto call = func::CallOp::create(b, loc, part, liveIns.getArrayRef());
    for (auto [value, result] : llvm::zip(liveOuts, call.getResults()))
      value.replaceUsesWithIf(result, [&](OpOperand &use) {
        return !part->isProperAncestor(use.getOwner());
      });
    return part;
  }
};
} // namespace
