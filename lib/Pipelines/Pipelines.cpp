//===- Pipelines.cpp - attn on tensors to the LLVM dialect ----------------===//
//
// Fusion followed by the CPU lowering pipeline that
// include/attn/Pipelines/CpuPipeline.h provides.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Pipelines/CpuPipeline.h"
#include "attn/Transforms/Cpu/InPlaceArguments.h"
#include "attn/Conversion/AttnToCuda/Passes.h"
#include "attn/Transforms/Cpu/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/InitAttn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

llvm::cl::ValuesClass attn::compileTargetValues() {
  return llvm::cl::values(
      clEnumValN(CompileTarget::Cpu, "cpu", "everything on the CPU"),
      clEnumValN(CompileTarget::Cuda, "cuda",
                 "attn.sdpa on the CUDA kernels where they support it"));
}

std::unique_ptr<attn::AttnInputModule>
attn::parseInputModule(StringRef filename, StringRef toolName) {
  auto readError = [&](const Twine &message) {
    llvm::errs() << toolName << ": error: " << message << "\n";
    return nullptr;
  };
  // A device such as /dev/zero would be read until memory runs out.
  llvm::sys::fs::file_status status;
  if (filename != "-" && !llvm::sys::fs::status(filename, status) &&
      !llvm::sys::fs::is_regular_file(status) &&
      status.type() != llvm::sys::fs::file_type::fifo_file &&
      !llvm::sys::fs::is_directory(status))
    return readError("'" + filename + "' is not a regular file");
  auto file = llvm::MemoryBuffer::getFileOrSTDIN(filename);
  if (!file)
    return readError("cannot open '" + filename +
                     "': " + file.getError().message());
  DialectRegistry registry;
  registerAllAttnDialects(registry);
  registerAttnPipelineTranslations(registry);
  auto input = std::make_unique<AttnInputModule>();
  input->context = std::make_unique<MLIRContext>(registry);
  input->context->printOpOnDiagnostic(false);
  input->sourceMgr = std::make_shared<llvm::SourceMgr>();
  unsigned bufferId =
      input->sourceMgr->AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  if (failed(checkInputLimits(*input->sourceMgr, bufferId)))
    return nullptr;
  input->diagnostics = std::make_unique<SourceMgrDiagnosticHandler>(
      *input->sourceMgr, input->context.get());
  input->module = parseSourceFile<ModuleOp>(input->sourceMgr,
                                            ParserConfig(input->context.get()));
  if (!input->module)
    return nullptr;
  return input;
}

void attn::registerAttnPipelineTranslations(DialectRegistry &registry) {
  registerAllToLLVMIRTranslations(registry);
}

void attn::buildAttnToLLVMPipeline(OpPassManager &pm,
                                   const AttnPipelineOptions &options) {
  if (options.fuse)
    pm.addPass(createAttnFuseSdpa());
  bool cuda = options.target == CompileTarget::Cuda;
  if (cuda) {
    AttnLowerSdpaToCudaOptions cudaOptions;
    cudaOptions.requireGpu = options.backend == SdpaCpuBackend::Flash;
    pm.addPass(createAttnLowerSdpaToCuda(cudaOptions));
  }
  if (!cuda) {
    buildAttnCpuLoweringPipeline(pm, options);
    return;
  }
  // Managed memory, so that the kernels and the CPU code share buffers.
  AttnPipelineOptions managed;
  managed.copyOptionValuesFrom(options);
  managed.useGenericAllocFunctions = true;
  buildAttnCpuLoweringPipeline(pm, managed);
}

attn::AttnPipelineOptions::AttnPipelineOptions() {
  checkAllocations = true;
  checkFailureCalls = true;
}

void attn::registerAttnPipelines() {
  PassPipelineRegistration<AttnPipelineOptions>(
      "attn-to-llvm",
      "attn on tensors to the LLVM dialect as attn-compile and attn-run "
      "lower it: attn-fuse-sdpa, attn-lower-sdpa-to-cuda (target=cuda), "
      "attn-cpu-lowering-pipeline",
      buildAttnToLLVMPipeline);
}

void attn::prepareCInterface(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  auto readOnly = BoolAttr::get(ctx, false);
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  UnitAttr::get(ctx));
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      if (isa<TensorType>(type) && !isWrittenInPlace(func, i))
        func.setArgAttr(i, "bufferization.writable", readOnly);
      // What attn-cpu-prepack-weights reads and writes; LLVM has no use for
      // it.
      func.removeArgAttr(i, "attn.weight");
      func.removeArgAttr(i, "attn.packed");
    }
  }
}

LogicalResult attn::lowerToLLVMDialect(ModuleOp module,
                                       const AttnPipelineOptions &options) {
  prepareCInterface(module);
  SmallVector<std::pair<std::string, FunctionType>> signatures;
  SmallVector<Location> locs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    signatures.emplace_back(func.getSymName().str(), getCInterfaceType(func));
    locs.push_back(func.getLoc());
  }
  PassManager pm(module.getContext());
  buildAttnToLLVMPipeline(pm, options);
  if (failed(pm.run(module)) ||
      failed(insertArgumentChecks(module, signatures)))
    return failure();
  for (auto [signature, loc] : llvm::zip_equal(signatures, locs))
    if (failed(verifyLoweredCInterface(module, signature.first,
                                       signature.second, loc)))
      return failure();
  return success();
}

LogicalResult attn::lowerForTarget(ModuleOp module,
                                   AttnPipelineOptions &options,
                                   const llvm::TargetMachine &tm) {
  applyTargetMachine(options, tm);
  return lowerToLLVMDialect(module, options);
}

SmallVector<std::string> attn::getTraceNames(ModuleOp module) {
  SmallVector<std::string> names;
  auto array = module->getAttrOfType<ArrayAttr>(attn::kTraceNamesAttrName);
  if (!array)
    return names;
  for (Attribute a : array) {
    auto s = dyn_cast<StringAttr>(a);
    names.push_back(s ? s.str() : std::string("?"));
  }
  return names;
}

/// The number of C arguments `_mlir_ciface_<f>` takes for a tensor-level
/// signature: one pointer per ranked tensor/memref argument, one value per
/// scalar, plus a leading result pointer when the results pack into a struct
/// (any memref result, or more than one result).
static int64_t expectedCArity(FunctionType type) {
  int64_t n = type.getNumInputs();
  bool packed =
      type.getNumResults() > 1 ||
      (type.getNumResults() == 1 && isa<ShapedType>(type.getResult(0)));
  return n + (packed ? 1 : 0);
}

LogicalResult attn::verifyLoweredCInterface(ModuleOp lowered, StringRef name,
                                            FunctionType funcType,
                                            Location loc) {
  std::string wrapper = ("_mlir_ciface_" + name).str();
  auto fn = lowered.lookupSymbol<LLVM::LLVMFuncOp>(wrapper);
  if (!fn)
    return emitError(loc) << "lowering produced no C entry point '" << wrapper
                          << "'";
  int64_t expected = expectedCArity(funcType);
  if (static_cast<int64_t>(fn.getNumArguments()) != expected)
    return emitError(loc) << "C entry point '" << wrapper << "' takes "
                          << fn.getNumArguments() << " arguments, expected "
                          << expected << " (one descriptor pointer per tensor)";
  return success();
}

StringRef attn::getOpenMPRuntimePath() { return ATTN_LIBOMP; }
