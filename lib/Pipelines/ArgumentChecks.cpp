//===- ArgumentChecks.cpp - check C descriptors at the entry points -------===//
//
// Bufferization with identity-layout function boundaries compiles code that
// reads a tensor argument as a dense row-major array from the descriptor's
// aligned pointer, with the sizes of its type where they are static. A C
// caller's descriptor may say otherwise (a strided or offset view, smaller
// sizes, a negative dynamic size); each `_mlir_ciface_` entry point therefore
// first hands every tensor descriptor to the runtime's attnrt_check_argument,
// which reports a mismatch through the check-failure handler.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

static constexpr StringLiteral kCheckArgument = "attnrt_check_argument";

/// Bytes per element in memory (i1 takes a byte, as LLVM stores it).
static int64_t getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// True for the arguments the compiled code reads as dense row-major arrays.
static bool isDenseArgument(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.getLayout().isIdentity();
  return isa<RankedTensorType>(type);
}

/// A private constant global `name` holding `value`.
static LLVM::GlobalOp createConstantGlobal(ModuleOp module, StringRef name,
                                           Type type, Attribute value) {
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                LLVM::Linkage::Private, name, value);
}

/// Inserts `attnrt_check_argument(descriptor, rank, elementBytes,
/// staticSizes, what)` at the builder's insertion point.
static void emitArgumentCheck(OpBuilder &b, ModuleOp module,
                              LLVM::LLVMFuncOp checkFn, Value descriptor,
                              ShapedType type, StringRef what, int64_t id) {
  MLIRContext *ctx = module.getContext();
  Location loc = descriptor.getLoc();
  auto i64 = IntegerType::get(ctx, 64);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  std::string suffix = std::to_string(id);

  std::string text = what.str();
  text.push_back('\0');
  LLVM::GlobalOp whatGlobal = createConstantGlobal(
      module, "attn_argument_" + suffix,
      LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size()),
      b.getStringAttr(text));
  Value sizes;
  if (type.getRank() == 0) {
    sizes = LLVM::ZeroOp::create(b, loc, ptr);
  } else {
    // ShapedType::kDynamic is negative: "any size >= 0" to the runtime.
    LLVM::GlobalOp sizesGlobal = createConstantGlobal(
        module, "attn_argument_sizes_" + suffix,
        LLVM::LLVMArrayType::get(i64, type.getRank()),
        DenseIntElementsAttr::get(RankedTensorType::get({type.getRank()}, i64),
                                  type.getShape()));
    sizes = LLVM::AddressOfOp::create(b, loc, sizesGlobal);
  }
  Value rank = LLVM::ConstantOp::create(b, loc, i64, type.getRank());
  Value bytes = LLVM::ConstantOp::create(
      b, loc, i64, getElementBytes(type.getElementType()));
  Value whatPtr = LLVM::AddressOfOp::create(b, loc, whatGlobal);
  LLVM::CallOp::create(b, loc, checkFn,
                       ValueRange{descriptor, rank, bytes, sizes, whatPtr});
}

LogicalResult attn::insertArgumentChecks(
    ModuleOp lowered,
    ArrayRef<std::pair<std::string, FunctionType>> signatures) {
  MLIRContext *ctx = lowered.getContext();
  OpBuilder b(ctx);
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  int64_t id = 0;
  for (const auto &[name, type] : signatures) {
    auto wrapper =
        lowered.lookupSymbol<LLVM::LLVMFuncOp>("_mlir_ciface_" + name);
    // verifyLoweredCInterface reports a missing or different entry point.
    int64_t firstArg =
        static_cast<int64_t>(wrapper ? wrapper.getNumArguments() : 0) -
        static_cast<int64_t>(type.getNumInputs());
    if (!wrapper || wrapper.isExternal() || firstArg < 0 || firstArg > 1)
      continue;
    FailureOr<LLVM::LLVMFuncOp> checkFn = LLVM::lookupOrCreateFn(
        b, lowered, kCheckArgument, {ptr, i64, i64, ptr, ptr},
        LLVM::LLVMVoidType::get(ctx));
    if (failed(checkFn))
      return lowered.emitError()
             << "'" << kCheckArgument << "' is declared with another type";
    b.setInsertionPointToStart(&wrapper.getBody().front());
    for (auto [i, argType] : llvm::enumerate(type.getInputs())) {
      if (!isDenseArgument(argType))
        continue;
      std::string what;
      llvm::raw_string_ostream(what)
          << "argument " << i << " of @" << name << " (" << argType << ")";
      emitArgumentCheck(b, lowered, *checkFn, wrapper.getArgument(firstArg + i),
                        cast<ShapedType>(argType), what, id++);
    }
  }
  return success();
}
