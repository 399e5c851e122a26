//===- InPlaceArguments.cpp - arguments written in place ------------------===//
//
// The contract of InPlaceArguments.h and its two passes:
// attn-mark-inplace-results (before bufferization: check, mark the state
// results) and attn-drop-inplace-results (after: the function stops
// returning the argument buffers it wrote).
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/InPlaceArguments.h"
#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNMARKINPLACERESULTS
#define GEN_PASS_DEF_ATTNDROPINPLACERESULTS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

static constexpr StringLiteral kWritableAttrName = "bufferization.writable";

/// The state results of one return: operand index -> argument index.
static SmallVector<InPlaceResult> getStateOperands(func::FuncOp func,
                                                   func::ReturnOp ret) {
  SmallVector<InPlaceResult> results;
  Block &entry = func.getBody().front();
  for (OpOperand &operand : ret->getOpOperands()) {
    auto materialize =
        operand.get()
            .getDefiningOp<bufferization::MaterializeInDestinationOp>();
    if (!materialize)
      continue;
    auto arg = dyn_cast<BlockArgument>(materialize.getDest());
    if (!arg || arg.getOwner() != &entry)
      continue;
    results.push_back({operand.getOperandNumber(), arg.getArgNumber()});
  }
  return results;
}

static SmallVector<func::ReturnOp> getReturns(func::FuncOp func) {
  SmallVector<func::ReturnOp> returns;
  for (Block &block : func.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
      returns.push_back(ret);
  return returns;
}

SmallVector<InPlaceResult> attn::getInPlaceResults(func::FuncOp func) {
  if (func.isExternal())
    return {};
  SmallVector<func::ReturnOp> returns = getReturns(func);
  if (returns.empty())
    return {};
  return getStateOperands(func, returns.front());
}

bool attn::isWrittenInPlace(func::FuncOp func, unsigned index) {
  auto writable = func.getArgAttrOfType<BoolAttr>(index, kWritableAttrName);
  return writable && writable.getValue();
}

FunctionType attn::getCInterfaceType(func::FuncOp func) {
  FunctionType type = func.getFunctionType();
  llvm::BitVector state(type.getNumResults());
  for (InPlaceResult r : getInPlaceResults(func))
    state.set(r.result);
  SmallVector<Type> results;
  for (auto [i, t] : llvm::enumerate(type.getResults()))
    if (!state.test(i))
      results.push_back(t);
  return FunctionType::get(func.getContext(), type.getInputs(), results);
}

LogicalResult attn::verifyInPlaceResults(func::FuncOp func) {
  if (func.isExternal())
    return success();
  SmallVector<func::ReturnOp> returns = getReturns(func);
  SmallVector<InPlaceResult> state =
      returns.empty() ? SmallVector<InPlaceResult>()
                      : getStateOperands(func, returns.front());
  // Every return must write the same arguments with the same results.
  for (func::ReturnOp ret : llvm::drop_begin(returns)) {
    SmallVector<InPlaceResult> other = getStateOperands(func, ret);
    bool same = other.size() == state.size() &&
                llvm::all_of(llvm::zip(other, state), [](auto pair) {
                  auto [a, b] = pair;
                  return a.result == b.result && a.argument == b.argument;
                });
    if (!same)
      return ret.emitError("returns of @")
             << func.getSymName()
             << " disagree on which results write arguments in place";
  }
  DenseMap<unsigned, unsigned> writerOf;
  for (InPlaceResult r : state) {
    if (!isWrittenInPlace(func, r.argument))
      return returns.front()->getOperand(r.result).getDefiningOp()->emitError(
                 "writes argument ")
             << r.argument << " of @" << func.getSymName()
             << " in place, which is not marked 'bufferization.writable = "
                "true'";
    auto [it, inserted] = writerOf.try_emplace(r.argument, r.result);
    if (!inserted)
      return func.emitError("argument ")
             << r.argument << " of @" << func.getSymName()
             << " is written in place by results " << it->second << " and "
             << r.result;
  }
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    if (!isWrittenInPlace(func, i) || writerOf.count(i))
      continue;
    return func.emitError("argument ")
           << i << " of @" << func.getSymName()
           << " is marked 'bufferization.writable = true' but no result "
              "writes its new value in place (return "
              "'bufferization.materialize_in_destination %new in %arg"
           << i << "')";
  }
  return success();
}

namespace {

struct AttnMarkInPlaceResultsPass
    : public attn::impl::AttnMarkInPlaceResultsBase<
          AttnMarkInPlaceResultsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(&getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      if (failed(verifyInPlaceResults(func)))
        return signalPassFailure();
      SmallVector<InPlaceResult> state = getInPlaceResults(func);
      if (state.empty())
        continue;
      // The C entry point drops these results: a call inside the module
      // would lose them.
      if (!SymbolTable::symbolKnownUseEmpty(func, module)) {
        func.emitError("@")
            << func.getSymName()
            << " writes arguments in place and is called inside the module; "
               "only an entry point may write its arguments";
        return signalPassFailure();
      }
      for (InPlaceResult r : state)
        func.setResultAttr(r.result, kInPlaceArgumentAttrName,
                           b.getI64IntegerAttr(r.argument));
    }
  }
};

} // namespace

/// `value` with memref.casts looked through.
static Value stripCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

/// Drops the marked results of one bufferized function.
static LogicalResult dropStateResults(func::FuncOp func) {
  unsigned numResults = func.getNumResults();
  llvm::BitVector drop(numResults);
  SmallVector<func::ReturnOp> returns = getReturns(func);
  for (unsigned i = 0; i < numResults; ++i) {
    auto attr = func.getResultAttrOfType<IntegerAttr>(
        i, kInPlaceArgumentAttrName);
    if (!attr)
      continue;
    int64_t arg = attr.getInt();
    if (arg < 0 || arg >= static_cast<int64_t>(func.getNumArguments()))
      return func.emitError("result ")
             << i << " of @" << func.getSymName() << " names argument "
             << arg << ", which does not exist";
    for (func::ReturnOp ret : returns)
      if (stripCasts(ret->getOperand(i)) != func.getArgument(arg))
        return ret.emitError("the new value of argument ")
               << arg << " of @" << func.getSymName()
               << " was not written in place (result " << i
               << " is not the argument's buffer)";
    drop.set(i);
  }
  if (drop.none())
    return success();
  for (func::ReturnOp ret : returns)
    ret->eraseOperands(drop);
  return func.eraseResults(drop);
}

namespace {

struct AttnDropInPlaceResultsPass
    : public attn::impl::AttnDropInPlaceResultsBase<
          AttnDropInPlaceResultsPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(dropStateResults(func)))
        return signalPassFailure();
  }
};

} // namespace
