//===- CheckFailureCalls.cpp - cf.assert to attnrt_check_failed calls -----===//
//
// LLVM's lowering of cf.assert prints the message with puts and aborts: the
// process dies with a stack dump, and a program that calls compiled code
// cannot recover. This pass branches to a call of the runtime's
// attnrt_check_failed(message) instead (lib/Runtime/Checks.c), which calls a
// handler the program can set.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

static constexpr StringLiteral kCheckFailed = "attnrt_check_failed";

/// A private constant global holding `message` and a NUL, one per distinct
/// message.
static LLVM::GlobalOp getMessageGlobal(ModuleOp module, StringRef message,
                                       llvm::StringMap<LLVM::GlobalOp> &cache) {
  LLVM::GlobalOp &global = cache[message];
  if (global)
    return global;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  std::string text = message.str();
  text.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(module.getContext(), 8),
                                       text.size());
  std::string name = "attn_check_message_" + std::to_string(cache.size() - 1);
  global = LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                  LLVM::Linkage::Private, name,
                                  b.getStringAttr(text));
  return global;
}

namespace {
struct AttnCheckFailureCallsPass
    : public PassWrapper<AttnCheckFailureCallsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AttnCheckFailureCallsPass)

  StringRef getArgument() const override { return "attn-check-failure-calls"; }
  StringRef getDescription() const override {
    return "Lower cf.assert to calls of attnrt_check_failed(message)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<LLVM::LLVMDialect, cf::ControlFlowDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return;
    OpBuilder b(module.getContext());
    auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
    FailureOr<LLVM::LLVMFuncOp> checkFailed =
        LLVM::lookupOrCreateFn(b, module, kCheckFailed, {ptrType},
                               LLVM::LLVMVoidType::get(module.getContext()));
    if (failed(checkFailed)) {
      module.emitError() << "'" << kCheckFailed
                         << "' is declared with another type";
      return signalPassFailure();
    }
    llvm::StringMap<LLVM::GlobalOp> messages;
    for (cf::AssertOp op : asserts) {
      LLVM::GlobalOp message = getMessageGlobal(module, op.getMsg(), messages);
      // before: ...; cf.assert; rest   ->   before: ...; cond_br ok, rest, fail
      Block *before = op->getBlock();
      Block *rest = before->splitBlock(std::next(op->getIterator()));
      Block *fail = b.createBlock(rest);
      Location loc = op.getLoc();
      Value address = LLVM::AddressOfOp::create(b, loc, message);
      LLVM::CallOp::create(b, loc, *checkFailed, ValueRange{address});
      LLVM::UnreachableOp::create(b, loc);
      b.setInsertionPoint(op);
      cf::CondBranchOp::create(b, loc, op.getArg(), rest, fail);
      op.erase();
    }
  }
};
} // namespace

std::unique_ptr<Pass> mlir::attn::createAttnCheckFailureCallsPass() {
  return std::make_unique<AttnCheckFailureCallsPass>();
}
