//===- OutlineKernels.cpp - one noinline function per repeated kernel -----===//
//
// attn-cpu-outline-kernels: each top-level kernel op of a public function
// (with the cheap producers the lowering matches on, and the consumers of
// a GEMM's result that it applies as it stores: the rounding to bf16/f16,
// activations, gates, residual adds) is cut out into a
// candidate private function; candidates that print alike are one kernel,
// emitted once and called from every place it was. The printed function is
// the key in the way IREE's executable deduplication compares executables:
// two ops that print alike with their operands numbered in the same order
// compute the same function of those operands.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/GemmEpilogue.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Transforms/Cpu/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUOUTLINEKERNELS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// The unit attribute that marks an outlined kernel function.
static constexpr StringLiteral kKernelAttrName = "attn.kernel";

static bool isLinalgOnTensors(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics();
}

/// Ops whose lowering is big enough that one copy per form pays for a call.
static bool isOutlinedKernelOp(Operation *op, bool linalgOps) {
  if (isa<attn::SdpaOp, attn::MatmulOp, attn::QuantizedMatmulOp>(op))
    return true;
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return isLinalgOnTensors(op);
  if (!linalgOps)
    return false;
  // attn-cpu-tile-and-fuse's loops over blocks of linalg ops.
  if (isa<scf::ForallOp>(op))
    return op->getNumResults() > 0;
  return !isa<linalg::FillOp>(op) && isLinalgOnTensors(op);
}

/// Producers the lowering looks at: a GEMM onto a fill, a generic onto a
/// tensor.empty, nn.Linear's transposed weight (the dot products and the
/// GEMM read the weight in place instead of a transposed copy), prepacked
/// panels (and a product's bias: getRowBroadcastChain). Large constants are
/// not among them.
static bool isKernelProducer(Operation *op) {
  // Prepacked panels read in place, like the transposed weight.
  if (isa<tensor::EmptyOp, attn::UnpackWeightOp>(op))
    return true;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.hasPureTensorSemantics();
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.hasPureTensorSemantics();
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    auto elements = dyn_cast<ElementsAttr>(cst.getValue());
    return !elements || elements.isSplat();
  }
  return false;
}

/// Whether `op` is the broadcast of a vector to every row, or a reshape
/// after it, that a product can start from instead of its tensor
/// (cpu::getBroadcastRow: nn.Linear's bias).
static bool isRowBroadcast(Operation *op) {
  if (!isa<linalg::GenericOp, linalg::BroadcastOp, tensor::CollapseShapeOp,
           tensor::ExpandShapeOp>(op) ||
      op->getNumResults() != 1)
    return false;
  Value result = op->getResult(0);
  return static_cast<bool>(
      attn::cpu::getBroadcastRow(result, getElementTypeOrSelf(result)));
}

/// The ops of a product's init that its lowering reads through to a
/// vector broadcast to every row (the broadcast and the reshapes after
/// it), or none: cloned into the product's kernel so that the lowering sees
/// them there.
static SmallPtrSet<Operation *, 4> getRowBroadcastChain(Operation *op) {
  SmallPtrSet<Operation *, 4> chain;
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !isLinalgOnTensors(op))
    return chain;
  Value v = cast<linalg::LinalgOp>(op).getDpsInits()[0];
  while (Operation *def = v.getDefiningOp()) {
    if (!isRowBroadcast(def))
      break;
    chain.insert(def);
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return chain;
}

/// Whether `def` is a transpose that keeps the last dim and whose one
/// user is the attention `op`: the lowering reads the transpose's input
/// through a permuted view (cpu::toReadOnlyBufferThroughTranspose), so the
/// kernel takes the input and transposes nothing.
static bool isAttentionOperandTranspose(Operation *def, Operation *op) {
  SmallVector<int64_t> perm;
  return isa<attn::SdpaOp>(op) && def->getNumResults() == 1 &&
         def->hasOneUse() && *def->user_begin() == op &&
         attn::cpu::getRowTransposeSource(def->getResult(0), perm);
}

/// Whether the attention kernel reads `arg` only as its query, key or
/// value, in place or through a transpose that keeps the last dim.
static bool isReadAsAttentionRows(BlockArgument arg) {
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || type.getRank() < 2)
    return false;
  SmallVector<int64_t> perm;
  for (OpOperand &use : arg.getUses()) {
    Operation *user = use.getOwner();
    Value read = arg;
    if (user->getNumResults() == 1 && user->hasOneUse() &&
        attn::cpu::getRowTransposeSource(user->getResult(0), perm) == arg) {
      read = user->getResult(0);
      user = *user->user_begin();
    }
    auto sdpa = dyn_cast<attn::SdpaOp>(user);
    if (!sdpa || !llvm::is_contained({sdpa.getQuery(), sdpa.getKey(),
                                      sdpa.getValue()},
                                     read))
      return false;
  }
  return !arg.use_empty();
}

/// A slice of dynamic size: bufferized, a view that bufferization cannot
/// prove dense, which a call would copy (attn-cpu-dense-call-arguments)
/// where the op in place reads it (the attention over a KV cache's filled
/// prefix).
static bool isDynamicSlice(Value v) {
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  return slice && !slice.getType().hasStaticShape();
}

namespace {
/// One kernel op cut out into a function that is not (yet) in the module.
struct KernelCandidate {
  /// The kernel op, then the consumers the lowering folds into it
  /// (cpu::getProductConsumers); the last one's results are the
  /// function's.
  SmallVector<Operation *> ops;
  /// The values the function takes, in its argument order.
  SmallVector<Value> args;
  /// The detached function; owned here until it is inserted or dropped.
  func::FuncOp func;
  std::string key;
};
} // namespace

/// The values `ops` read from outside themselves (operands, and values
/// their regions use from above), split into producers to clone (returned,
/// in block order) and arguments.
static SmallVector<Operation *> collectKernelInputs(ArrayRef<Operation *> ops,
                                                   SetVector<Value> &args) {
  Operation *op = ops.front();
  SetVector<Value> used;
  for (Operation *o : ops) {
    for (Value v : o->getOperands())
      if (!llvm::is_contained(ops, v.getDefiningOp()))
        used.insert(v);
    getUsedValuesDefinedAbove(o->getRegions(), used);
  }
  SetVector<Operation *> cloned;
  SmallPtrSet<Operation *, 4> rowBroadcast = getRowBroadcastChain(op);
  SmallVector<Value> worklist(used.begin(), used.end());
  // Visit in operand order so that arguments are numbered the same way for
  // ops of the same form.
  std::reverse(worklist.begin(), worklist.end());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *def = v.getDefiningOp();
    // Producers are cloned into the kernel instead of passed to it: the
    // cheap ones always, a transpose only when the kernel is its one user.
    if (def && def->getBlock() == op->getBlock() &&
        ((isKernelProducer(def) &&
          (!isa<linalg::TransposeOp>(def) || def->hasOneUse())) ||
         rowBroadcast.contains(def) || isAttentionOperandTranspose(def, op))) {
      if (cloned.insert(def))
        for (Value operand : llvm::reverse(def->getOperands()))
          worklist.push_back(operand);
      continue;
    }
    args.insert(v);
  }
  SmallVector<Operation *> order = cloned.takeVector();
  llvm::sort(order, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return order;
}

/// Cuts `op` (with the consumers its lowering applies, up to one that an
/// earlier candidate in `taken` holds: two products' gate reads both) out
/// into a detached function and prints it as its key.
static KernelCandidate
buildKernelCandidate(Operation *op,
                     const llvm::SmallPtrSetImpl<Operation *> &taken) {
  SmallVector<Operation *> ops = {op};
  attn::cpu::ProductConsumers consumers = attn::cpu::getProductConsumers(op);
  for (Operation *consumer : consumers.getOps()) {
    if (taken.contains(consumer))
      break;
    ops.push_back(consumer);
  }
  SetVector<Value> args;
  SmallVector<Operation *> producers = collectKernelInputs(ops, args);
  MLIRContext *ctx = op->getContext();
  auto type = FunctionType::get(ctx, ValueRange(args.getArrayRef()).getTypes(),
                                ops.back()->getResultTypes());
  std::string name = ("attn_kernel_" + op->getName().getStringRef()).str();
  std::replace(name.begin(), name.end(), '.', '_');
  auto func = func::FuncOp::create(op->getLoc(), name, type);
  Block *body = func.addEntryBlock();
  IRMapping map;
  map.map(args.getArrayRef(), body->getArguments());
  OpBuilder b = OpBuilder::atBlockEnd(body);
  for (Operation *producer : producers)
    b.clone(*producer, map);
  Operation *clone = nullptr;
  for (Operation *o : ops)
    clone = b.clone(*o, map);
  func::ReturnOp::create(b, op->getLoc(), clone->getResults());
  // Rows that attention reads in place at any row stride: the kernel takes
  // them as such a view (a head's slice of a fused QKV projection), where
  // the identity layout of a function boundary would have the caller copy
  // every view that is not dense.
  for (BlockArgument arg : body->getArguments()) {
    if (!isReadAsAttentionRows(arg))
      continue;
    func.setArgAttr(arg.getArgNumber(),
                    bufferization::BufferizationDialect::kBufferLayoutAttrName,
                    attn::cpu::getContiguousRowsLayout(
                        ctx, cast<RankedTensorType>(arg.getType()).getRank()));
  }

  KernelCandidate c{ops, SmallVector<Value>(args.getArrayRef()), func, ""};
  llvm::raw_string_ostream os(c.key);
  func->print(os, OpPrintingFlags().printGenericOpForm().assumeVerified());
  return c;
}

/// Makes `func` the module's kernel for its form: private, internal to the
/// object file and never inlined by LLVM.
static void insertKernelFunc(SymbolTable &symbols, func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  func.setPrivate();
  func->setAttr(kKernelAttrName, UnitAttr::get(ctx));
  func->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  func->setAttr("passthrough",
                ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
  symbols.insert(func);
}

/// Replaces `c.ops` by a call of `kernel` (its arguments seen through
/// `replaced`, the results of kernels outlined before), placed where the
/// last of them was (the others' operands may be defined up to there);
/// producers left without users go.
static void replaceByKernelCall(KernelCandidate &c, func::FuncOp kernel,
                                IRMapping &replaced) {
  Operation *last = c.ops.back();
  OpBuilder b(last);
  SmallVector<Value> args = llvm::map_to_vector(
      c.args, [&](Value v) { return replaced.lookupOrDefault(v); });
  auto call = func::CallOp::create(b, c.ops.front()->getLoc(), kernel, args);
  replaced.map(last->getResults(), call.getResults());
  SetVector<Operation *> producers;
  for (Operation *op : c.ops)
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && !llvm::is_contained(c.ops, def))
        producers.insert(def);
  last->replaceAllUsesWith(call.getResults());
  for (Operation *op : llvm::reverse(c.ops))
    op->erase();
  // A dead producer's own producers (a fill's tensor.empty) may die too.
  // An erased producer is not named again: no live op uses it.
  for (size_t i = 0; i < producers.size(); ++i) {
    Operation *def = producers[i];
    if (!(isKernelProducer(def) || isRowBroadcast(def) ||
          isa<attn::TransposeOp>(def)) ||
        !isOpTriviallyDead(def))
      continue;
    for (Value v : def->getOperands())
      if (Operation *operandDef = v.getDefiningOp())
        producers.insert(operandDef);
    def->erase();
  }
}

namespace {
struct AttnCpuOutlineKernelsPass
    : public attn::impl::AttnCpuOutlineKernelsBase<AttnCpuOutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelCandidate> candidates;
    // The consumers that a candidate took with it.
    llvm::SmallPtrSet<Operation *, 16> taken;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      for (Operation &op : func.getBody().getOps()) {
        if (!isOutlinedKernelOp(&op, linalgOps) || taken.contains(&op))
          continue;
        KernelCandidate c = buildKernelCandidate(&op, taken);
        taken.insert(c.ops.begin() + 1, c.ops.end());
        if (llvm::any_of(c.args, isDynamicSlice))
          c.func.erase();
        else
          candidates.push_back(std::move(c));
      }
    }
    llvm::MapVector<StringRef, SmallVector<KernelCandidate *>> forms;
    for (KernelCandidate &c : candidates)
      forms[c.key].push_back(&c);

    SymbolTable symbols(module);
    IRMapping replaced;
    for (auto &[key, uses] : forms) {
      if (static_cast<int64_t>(uses.size()) < minUses)
        continue;
      func::FuncOp kernel = uses.front()->func;
      uses.front()->func = nullptr;
      insertKernelFunc(symbols, kernel);
      for (KernelCandidate *c : uses)
        replaceByKernelCall(*c, kernel, replaced);
    }
    for (KernelCandidate &c : candidates)
      if (c.func)
        c.func.erase();
  }
};
} // namespace
