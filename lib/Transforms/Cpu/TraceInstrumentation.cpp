//===- TraceInstrumentation.cpp - bracket attn ops with trace calls -------===//
//
// The attn-instrument-trace pass: each attn op gets a call of
// attnrt_trace_begin(id) before it and attnrt_trace_end(id) after it, and the
// module records the op names by id in `attn.trace_names`. It runs before
// attn-lower-to-cpu, which inserts each op's lowered code where the op was,
// so the code lands between the two calls (lib/Runtime turns them into
// timed spans).
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNINSTRUMENTTRACE
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

static constexpr StringLiteral kTraceBegin = "attnrt_trace_begin";
static constexpr StringLiteral kTraceEnd = "attnrt_trace_end";

/// Declares `name : (i64) -> ()` as a private function of `module` (once).
static void declareTraceFunction(ModuleOp module, StringRef name) {
  if (module.lookupSymbol<func::FuncOp>(name))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto fnType = b.getFunctionType({b.getI64Type()}, {});
  auto fn = func::FuncOp::create(b, module.getLoc(), name, fnType);
  fn.setPrivate();
}

/// "file:line" of the first file location in `loc` (through fused,
/// call-site and name locations) that is not attn-opt's own input (`<stdin>`,
/// `-`), else "".
static std::string sourceLocation(Location loc) {
  std::string found;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file || file.getFilename() == "<stdin>" || file.getFilename() == "-")
      return WalkResult::advance();
    found = (file.getFilename().getValue() + ":" + Twine(file.getLine())).str();
    return WalkResult::interrupt();
  });
  return found;
}

namespace {
struct AttnInstrumentTracePass
    : public attn::impl::AttnInstrumentTraceBase<AttnInstrumentTracePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // attn.yield belongs to its attn.sdpa's score_mod and goes with it.
    // With linalgOps, also the linalg ops that a function runs itself (not
    // those nested in loops): a frontend's products and elementwise
    // generics, which the Python exporter writes in linalg.
    SmallVector<Operation *> attnOps;
    module.walk([&](Operation *op) {
      if ((isa_and_nonnull<AttnDialect>(op->getDialect()) &&
           !isa<YieldOp>(op)) ||
          (linalgOps && isa<linalg::LinalgOp>(op) &&
           isa_and_nonnull<func::FuncOp>(op->getParentOp())))
        attnOps.push_back(op);
    });
    if (attnOps.empty())
      return;

    declareTraceFunction(module, kTraceBegin);
    declareTraceFunction(module, kTraceEnd);
    // The calls have unknown side effects, so nothing later moves the
    // (bufferized) computation across them.
    OpBuilder b(&getContext());
    SmallVector<Attribute> names;
    for (auto [id, op] : llvm::enumerate(attnOps)) {
      // attn ops by their bare names (`sdpa`), others with their dialect.
      std::string name = isa<AttnDialect>(op->getDialect())
                             ? op->getName().stripDialect().str()
                             : op->getName().getStringRef().str();
      if (locations) {
        std::string where = sourceLocation(op->getLoc());
        if (!where.empty())
          name += " " + where;
      }
      names.push_back(b.getStringAttr(name));
      b.setInsertionPoint(op);
      Value idValue =
          arith::ConstantIntOp::create(b, op->getLoc(), b.getI64Type(), id);
      func::CallOp::create(b, op->getLoc(), kTraceBegin, TypeRange{},
                           ValueRange{idValue});
      b.setInsertionPointAfter(op);
      func::CallOp::create(b, op->getLoc(), kTraceEnd, TypeRange{},
                           ValueRange{idValue});
    }
    module->setAttr(kTraceNamesAttrName, b.getArrayAttr(names));
  }
};
} // namespace
