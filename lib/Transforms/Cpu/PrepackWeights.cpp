//===- PrepackWeights.cpp - GEMM weights packed once ----------------------===//
//
// attn-cpu-prepack-weights: a weight argument that only feeds the CPU GEMM
// as its right operand becomes the GEMM's packed panels (what freezing
// gives torch.compile: the weight is packed once, not on every call), and
// a new entry point packs a raw weight into them. f32 weights become f32
// panels; bf16 weights, on a target whose GEMMs multiply bf16 pairs, the
// pair-interleaved panels of that path (padded to whole tiles for AMX
// targets, whose tiles read the same layout).
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/GemmTiling.h"

#include "attn/Transforms/Cpu/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUPREPACKWEIGHTS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

static constexpr StringLiteral kWeightAttrName = "attn.weight";
static constexpr StringLiteral kPackedAttrName = "attn.packed";

/// Whether `use` is the right operand of a GEMM that the CPU lowering runs
/// (a 2-D linalg.matmul on tensors with its default maps and an f32
/// result).
static bool isGemmRhs(OpOperand &use) {
  auto matmul = dyn_cast<linalg::MatmulOp>(use.getOwner());
  return matmul && use.getOperandNumber() == 1 &&
         matmul.hasPureTensorSemantics() && !matmul.hasUserDefinedMaps() &&
         cast<ShapedType>(matmul.getDpsInits()[0].getType())
             .getElementType()
             .isF32();
}

namespace {
/// How a weight argument reaches its GEMMs: the operands to replace by the
/// unpacked panels, whether through transposes (then `transposes` holds
/// them), and whether it has any other use.
struct WeightUses {
  SmallVector<OpOperand *> gemmOperands;
  SmallVector<linalg::TransposeOp> transposes;
  bool plain = false, otherUse = false;
};
} // namespace

static WeightUses classifyUses(BlockArgument arg) {
  WeightUses uses;
  for (OpOperand &use : arg.getUses()) {
    if (isGemmRhs(use)) {
      uses.plain = true;
      uses.gemmOperands.push_back(&use);
      continue;
    }
    auto transpose = dyn_cast<linalg::TransposeOp>(use.getOwner());
    if (!transpose || !transpose.hasPureTensorSemantics() ||
        transpose.getPermutation() != ArrayRef<int64_t>{1, 0} ||
        transpose->getResult(0).use_empty() ||
        !llvm::all_of(transpose->getResult(0).getUses(),
                      [](OpOperand &u) { return isGemmRhs(u); })) {
      uses.otherUse = true;
      continue;
    }
    uses.transposes.push_back(transpose);
    for (OpOperand &u : transpose->getResult(0).getUses())
      uses.gemmOperands.push_back(&u);
  }
  return uses;
}

namespace {
struct PrepackWeightsPass
    : public attn::impl::AttnCpuPrepackWeightsBase<PrepackWeightsPass> {
  using AttnCpuPrepackWeightsBase::AttnCpuPrepackWeightsBase;

  /// The target the options describe (runOnOperation parses them).
  cpu::Target target;

  void runOnOperation() override {
    target.vectorBits = vectorBits;
    target.bf16Dot = bf16Pairs;
    target.amx = amxTiles;
    if (std::string error = target.validate(); !error.empty()) {
      getOperation().emitError() << "attn-cpu-prepack-weights: " << error;
      return signalPassFailure();
    }
    SymbolTable symbols(getOperation());
    SmallVector<func::FuncOp> entries;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    for (func::FuncOp func : entries)
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (func.getArgAttr(i, kWeightAttrName) &&
            failed(prepack(func, i, symbols)))
          return signalPassFailure();
  }

private:
  LogicalResult prepack(func::FuncOp func, unsigned i, SymbolTable &symbols);
  func::FuncOp createPackEntry(func::FuncOp func, StringRef name,
                               RankedTensorType weightType,
                               RankedTensorType packedType, bool transposed);
};
} // namespace

/// Replaces argument `i` of `func` by its packed panels when it is a static
/// f32 weight (or bf16, with bf16Pairs) whose only uses are GEMM right
/// operands in one form; else leaves it with a remark (none for an argument
/// no GEMM reads).
LogicalResult PrepackWeightsPass::prepack(func::FuncOp func, unsigned i,
                                          SymbolTable &symbols) {
  BlockArgument arg = func.getArgument(i);
  WeightUses uses = classifyUses(arg);
  if (uses.gemmOperands.empty())
    return success();
  auto remark = [&](StringRef why) {
    emitRemark(arg.getLoc())
        << "weight argument #" << i << " of @" << func.getSymName()
        << " is not prepacked: " << why;
    return success();
  };
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  Type element = type ? type.getElementType() : Type();
  if (!type || type.getRank() != 2 ||
      !(element.isF32() || element.isBF16()))
    return remark("only f32 and bf16 matrices are prepacked");
  if (element.isBF16() && !target.bf16Dot)
    return remark("bf16 weights are prepacked only for targets whose bf16 "
                  "GEMMs multiply pairs with vdpbf16ps (Cooper Lake, Zen 4, "
                  "AMX targets), not for targets that widen bf16 to f32");
  if (!type.hasStaticShape())
    return remark("its shape is dynamic");
  if (uses.otherUse)
    return remark("it has uses other than as a GEMM's right operand");
  if (element.isBF16() &&
      !llvm::all_of(uses.gemmOperands, [](OpOperand *use) {
        return cast<ShapedType>(
                   use->getOwner()->getOperand(0).getType())
            .getElementType()
            .isBF16();
      }))
    return remark("a GEMM multiplies it by a left operand that is not bf16");
  bool transposed = !uses.transposes.empty();
  if (transposed && uses.plain)
    return remark("GEMMs read it both as stored and transposed");

  std::string name = (func.getSymName() + "_pack_" + Twine(i)).str();
  if (symbols.lookup(name))
    return func.emitError() << "attn-cpu-prepack-weights: the pack entry "
                               "point @"
                            << name << " exists already";
  int64_t k = type.getDimSize(transposed ? 1 : 0);
  int64_t n = type.getDimSize(transposed ? 0 : 1);
  MLIRContext *ctx = &getContext();
  RankedTensorType packedType =
      cpu::getPackedRhsType(element, k, n, target);
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  arg.setType(packedType);
  auto operand = RankedTensorType::get({k, n}, element);
  Value unpacked =
      UnpackWeightOp::create(b, arg.getLoc(), operand, arg).getResult();
  for (OpOperand *use : uses.gemmOperands)
    use->set(unpacked);
  for (linalg::TransposeOp transpose : uses.transposes)
    transpose->erase();
  SmallVector<Type> inputs(func.getArgumentTypes());
  inputs[i] = packedType;
  func.setType(FunctionType::get(ctx, inputs, func.getResultTypes()));
  SmallVector<NamedAttribute> packed = {
      b.getNamedAttr("entry", b.getStringAttr(name))};
  if (transposed)
    packed.push_back(b.getNamedAttr("transposed", b.getUnitAttr()));
  func.setArgAttr(i, kPackedAttrName, b.getDictionaryAttr(packed));
  symbols.insert(createPackEntry(func, name, type, packedType, transposed));
  return success();
}

/// `func.func @name(%w: weightType) -> packedType`, at the module's end.
func::FuncOp PrepackWeightsPass::createPackEntry(func::FuncOp func,
                                                 StringRef name,
                                                 RankedTensorType weightType,
                                                 RankedTensorType packedType,
                                                 bool transposed) {
  // At the end of the module: the entries in the order of their arguments.
  OpBuilder b = OpBuilder::atBlockEnd(getOperation().getBody());
  Location loc = func.getLoc();
  auto entry = func::FuncOp::create(
      b, loc, name, b.getFunctionType({weightType}, {packedType}));
  Block *body = entry.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value packed = PackWeightOp::create(b, loc, packedType,
                                      body->getArgument(0), transposed);
  func::ReturnOp::create(b, loc, packed);
  return entry;
}

void mlir::attn::setTargetOptions(AttnCpuPrepackWeightsOptions &options,
                                  const cpu::Target &target) {
  options.vectorBits = target.vectorBits;
  options.bf16Pairs = target.bf16Dot;
  options.amxTiles = target.amx;
}
