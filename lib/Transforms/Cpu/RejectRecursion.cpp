//===- RejectRecursion.cpp - no recursive functions -----------------------===//
//
// attn-cpu-reject-recursion: a depth-first search over the functions'
// symbol uses; a use that reaches a function still on the search path closes
// a cycle and is reported there. The search keeps its own stack, so a long
// chain of calls cannot overflow the compiler's.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUREJECTRECURSION
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
/// A use of a function inside another function.
struct Edge {
  Operation *user;
  mutable func::FuncOp callee;
};

enum class SearchState { Unvisited, OnPath, Done };

/// The functions' uses of each other, and the search over them.
class CallGraphSearch {
public:
  explicit CallGraphSearch(ModuleOp module) {
    SymbolTable symbols(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      auto uses = SymbolTable::getSymbolUses(&func.getFunctionBody());
      if (!uses)
        continue;
      for (const SymbolTable::SymbolUse &use : *uses)
        if (auto callee = symbols.lookup<func::FuncOp>(
                use.getSymbolRef().getRootReference()))
          edges[func].push_back({use.getUser(), callee});
    }
  }

  /// Iterative depth-first search from `root` (nothing when it was reached
  /// before); fails at the first use that closes a cycle.
  LogicalResult search(func::FuncOp root) {
    if (state.lookup(root) != SearchState::Unvisited)
      return success();
    // (function, index of its next edge)
    SmallVector<std::pair<func::FuncOp, size_t>> path = {{root, 0}};
    state[root] = SearchState::OnPath;
    while (!path.empty()) {
      auto &[func, next] = path.back();
      ArrayRef<Edge> out = edges[func];
      if (next == out.size()) {
        state[func] = SearchState::Done;
        path.pop_back();
        continue;
      }
      const Edge &edge = out[next++];
      SearchState s = state.lookup(edge.callee);
      if (s == SearchState::OnPath)
        return reportCycle(edge, path);
      if (s == SearchState::Unvisited) {
        state[edge.callee] = SearchState::OnPath;
        path.push_back({edge.callee, 0});
      }
    }
    return success();
  }

private:
  static LogicalResult
  reportCycle(const Edge &edge,
              ArrayRef<std::pair<func::FuncOp, size_t>> path) {
    std::string cycle;
    bool inCycle = false;
    for (auto [func, next] : path) {
      inCycle |= func == edge.callee;
      if (inCycle)
        cycle += "@" + func.getSymName().str() + " -> ";
    }
    cycle += "@" + edge.callee.getSymName().str();
    return edge.user->emitError()
           << "recursion is not supported (compiled code has no bound on "
              "its stack depth): this use of @"
           << edge.callee.getSymName() << " closes the cycle " << cycle;
  }

  DenseMap<func::FuncOp, SmallVector<Edge>> edges;
  DenseMap<func::FuncOp, SearchState> state;
};

struct AttnCpuRejectRecursionPass
    : public attn::impl::AttnCpuRejectRecursionBase<
          AttnCpuRejectRecursionPass> {
  using Base::Base;

  void runOnOperation() override {
    CallGraphSearch graph(getOperation());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(graph.search(func)))
        return signalPassFailure();
  }
};
} // namespace
