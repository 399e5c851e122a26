//===- DenseCallArguments.cpp - copy views passed as dense arguments ------===//
//
// attn-cpu-dense-call-arguments: after one-shot bufferization with
// identity-layout function boundaries, a call operand that is a view cast to
// a dense (identity-layout) parameter of dynamic size is copied into a fresh
// dense buffer, and copied back when the callee may write it. Bufferization
// copies such a view only when the sizes are static; with a dynamic size it
// emits a bare `memref.cast` (llvm/llvm-project#83276), and the callee would
// address the view's elements with the strides of a dense array.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUDENSECALLARGUMENTS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// Whether the strides of `type` are those of a dense row-major array for
/// every value of its dynamic sizes (`?x100xf32, strided<[100, 1]>` is).
static bool isProvablyDense(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || offset != 0)
    return false;
  int64_t dense = 1;
  for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
    if (strides[dim] != dense)
      return false;
    int64_t size = type.getDimSize(dim);
    if (ShapedType::isDynamic(size))
      return dim == 0;
    dense *= size;
  }
  return true;
}

/// The cast behind `operand` when it claims that a view is dense: a cast of
/// a layout that is not provably dense to the identity layout.
static memref::CastOp getViewCastToDense(Value operand) {
  auto cast = operand.getDefiningOp<memref::CastOp>();
  if (!cast)
    return nullptr;
  auto source = dyn_cast<MemRefType>(cast.getSource().getType());
  auto result = dyn_cast<MemRefType>(cast.getType());
  if (!source || !result || !result.getLayout().isIdentity() ||
      source.getLayout().isIdentity() || isProvablyDense(source))
    return nullptr;
  return cast;
}

/// Whether `func` may write the memory of its argument `index`: a use
/// through views that has a write effect on it, or that is not known to
/// read only (a call, an op without memory effects it declares).
static bool mayWriteArgument(func::FuncOp func, unsigned index) {
  if (func.isExternal())
    return true;
  SmallVector<Value> worklist{func.getArgument(index)};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<func::ReturnOp>(user))
        continue;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == value) {
          llvm::append_range(worklist, user->getResults());
          continue;
        }
      }
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects || effects.getEffectOnValue<MemoryEffects::Write>(value))
        return true;
    }
  }
  return false;
}

/// Replaces the cast operand `index` of `call` by a dense copy of the view.
static void copyViewArgument(func::CallOp call, unsigned index,
                             memref::CastOp viewCast, bool writtenBack) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  Value view = viewCast.getSource();
  auto denseType = cast<MemRefType>(viewCast.getType());
  SmallVector<Value> sizes;
  for (auto [dim, size] : llvm::enumerate(denseType.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(memref::DimOp::create(b, loc, view, dim));
  auto dense = memref::AllocOp::create(b, loc, denseType, sizes,
                                       b.getI64IntegerAttr(64));
  memref::CopyOp::create(b, loc, view, dense);
  call->setOperand(index, dense);
  if (writtenBack) {
    b.setInsertionPointAfter(call);
    memref::CopyOp::create(b, loc, dense, view);
  }
  if (viewCast->use_empty())
    viewCast->erase();
}

namespace {
struct AttnCpuDenseCallArgumentsPass
    : public attn::impl::AttnCpuDenseCallArgumentsBase<
          AttnCpuDenseCallArgumentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      for (unsigned i = 0, e = call.getNumOperands(); i < e; ++i) {
        memref::CastOp cast = getViewCastToDense(call.getOperand(i));
        if (!cast)
          continue;
        bool written = !callee || mayWriteArgument(callee, i);
        copyViewArgument(call, i, cast, written);
      }
    }
  }
};
} // namespace
