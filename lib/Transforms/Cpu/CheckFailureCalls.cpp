//===- CheckFailureCalls.cpp - cf.assert to attnrt_check_failed calls -----===//
//
// LLVM's lowering of cf.assert prints the message with puts and aborts: the
// process dies with a stack dump, and a program that calls compiled code
// cannot recover. This pass branches to a call of the runtime's
// attnrt_check_failed(message) instead (lib/Runtime/Checks.c), which calls a
// handler the program can set.
//
// A check inside an OpenMP parallel region cannot jump out of it: its thread
// may be a worker, which has no caller to return to, and a master that left
// the region would leave its team waiting. There the failure is recorded in a
// slot of the function (attnrt_check_failed_deferred, the first message
// wins), the rest of the failing loop iteration is skipped (its omp.yield),
// and after the outermost region has joined, the calling thread fails with
// the recorded message as usual.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCHECKFAILURECALLS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

static constexpr StringLiteral kCheckFailed = "attnrt_check_failed";
static constexpr StringLiteral kCheckFailedDeferred =
    "attnrt_check_failed_deferred";

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

/// The outermost omp.parallel around `op` and the innermost omp.loop_nest
/// inside it around `op`, or nulls where `op` is not in a parallel region.
static std::pair<omp::ParallelOp, omp::LoopNestOp>
getParallelContext(Operation *op) {
  omp::ParallelOp outermost;
  omp::LoopNestOp innermostLoop;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
    if (auto loop = dyn_cast<omp::LoopNestOp>(p); loop && !innermostLoop)
      innermostLoop = loop;
    if (auto parallel = dyn_cast<omp::ParallelOp>(p))
      outermost = parallel;
  }
  if (!outermost)
    return {};
  // A loop nest outside the outermost region is not one of its iterations.
  if (innermostLoop && !outermost->isProperAncestor(innermostLoop))
    innermostLoop = {};
  return {outermost, innermostLoop};
}

namespace {
struct AttnCheckFailureCallsPass
    : public mlir::attn::impl::AttnCheckFailureCallsBase<
          AttnCheckFailureCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    if (asserts.empty())
      return;
    OpBuilder b(module.getContext());
    auto ptrType = LLVM::LLVMPointerType::get(module.getContext());
    LLVM::LLVMFuncOp checkFailed = declare(b, module, kCheckFailed, 1);
    if (!checkFailed)
      return signalPassFailure();
    // Declared with the first check inside a parallel loop.
    LLVM::LLVMFuncOp deferred;
    llvm::StringMap<LLVM::GlobalOp> messages;
    // Per outermost parallel region with checks inside: the slot its
    // iterations record a failure in.
    llvm::MapVector<Operation *, Value> slots;
    for (cf::AssertOp op : asserts) {
      LLVM::GlobalOp message = getMessageGlobal(module, op.getMsg(), messages);
      auto [parallel, loop] = getParallelContext(op);
      // before: ...; cf.assert; rest   ->   before: ...; cond_br ok, rest, fail
      Block *before = op->getBlock();
      Block *rest = before->splitBlock(std::next(op->getIterator()));
      Block *fail = b.createBlock(rest);
      Location loc = op.getLoc();
      Value address = LLVM::AddressOfOp::create(b, loc, message);
      if (loop) {
        // fail: record the message; end this iteration.
        Value &slot = slots[parallel];
        if (!slot)
          slot = createSlot(b, parallel, ptrType);
        if (!deferred &&
            !(deferred = declare(b, module, kCheckFailedDeferred, 2)))
          return signalPassFailure();
        LLVM::CallOp::create(b, loc, deferred, ValueRange{slot, address});
        omp::YieldOp::create(b, loc);
      } else {
        LLVM::CallOp::create(b, loc, checkFailed, ValueRange{address});
        LLVM::UnreachableOp::create(b, loc);
      }
      b.setInsertionPoint(op);
      cf::CondBranchOp::create(b, loc, op.getArg(), rest, fail);
      op.erase();
    }
    for (auto [parallel, slot] : slots)
      failAfter(b, parallel, slot, checkFailed, ptrType);
  }

  /// The runtime function `name`, void(ptr x numPointers), declared in
  /// `module` where it is not; null, with an error, where `module` declares
  /// it with another type.
  static LLVM::LLVMFuncOp declare(OpBuilder &b, ModuleOp module,
                                  StringRef name, unsigned numPointers) {
    MLIRContext *context = module.getContext();
    SmallVector<Type> args(numPointers, LLVM::LLVMPointerType::get(context));
    FailureOr<LLVM::LLVMFuncOp> fn = LLVM::lookupOrCreateFn(
        b, module, name, args, LLVM::LLVMVoidType::get(context));
    if (succeeded(fn))
      return *fn;
    module.emitError() << "'" << name << "' is declared with another type";
    return {};
  }

  /// A pointer-sized slot in the entry block of the function around
  /// `parallel`, set to null just before the region.
  static Value createSlot(OpBuilder &b, Operation *parallel, Type ptrType) {
    OpBuilder::InsertionGuard guard(b);
    Location loc = parallel->getLoc();
    Region *body = &parallel->getParentOfType<FunctionOpInterface>()
                        .getFunctionBody();
    b.setInsertionPointToStart(&body->front());
    Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                         b.getI64IntegerAttr(1));
    Value slot = LLVM::AllocaOp::create(b, loc, ptrType, ptrType, one,
                                        /*alignment=*/8);
    b.setInsertionPoint(parallel);
    Value null = LLVM::ZeroOp::create(b, loc, ptrType);
    LLVM::StoreOp::create(b, loc, null, slot);
    return slot;
  }

  /// After `parallel`: where its slot holds a message, fail with it.
  static void failAfter(OpBuilder &b, Operation *parallel, Value slot,
                        LLVM::LLVMFuncOp checkFailed, Type ptrType) {
    OpBuilder::InsertionGuard guard(b);
    Location loc = parallel->getLoc();
    Block *before = parallel->getBlock();
    Block *rest = before->splitBlock(std::next(parallel->getIterator()));
    Block *fail = b.createBlock(rest);
    b.setInsertionPointToEnd(before);
    Value message = LLVM::LoadOp::create(b, loc, ptrType, slot);
    Value null = LLVM::ZeroOp::create(b, loc, ptrType);
    Value ok = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, message,
                                    null);
    cf::CondBranchOp::create(b, loc, ok, rest, fail);
    b.setInsertionPointToStart(fail);
    LLVM::CallOp::create(b, loc, checkFailed, ValueRange{message});
    LLVM::UnreachableOp::create(b, loc);
  }
};
} // namespace
