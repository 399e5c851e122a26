//===- EmitCInterface.cpp - mark public functions for C callers -----------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUEMITCINTERFACE
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnCpuEmitCInterfacePass
    : public attn::impl::AttnCpuEmitCInterfaceBase<AttnCpuEmitCInterfacePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isPublic() && !fn.isExternal())
      fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  UnitAttr::get(&getContext()));
  }
};
} // namespace
