//===- Codegen.cpp - LLVM dialect to optimized LLVM IR and object code ----===//

#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

static std::string hostFeatureString() {
  std::string features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty())
      features += ",";
    features += (feature.second ? "+" : "-") + feature.first().str();
  }
  return features;
}

/// Refuses a --mattr list with a feature the target does not know (LLVM
/// would only warn on stderr and ignore it) and a CPU/feature combination
/// without 64-bit mode (LLVM would stop the process with "64-bit code
/// requested on a subtarget that doesn't support it").
static LogicalResult checkTargetFeatures(const llvm::Target &target,
                                         const llvm::Triple &triple,
                                         StringRef cpu, StringRef features,
                                         std::string &error) {
  std::unique_ptr<llvm::MCSubtargetInfo> known(
      target.createMCSubtargetInfo(triple, "", ""));
  if (!known)
    return success();
  llvm::StringSet<> names;
  for (const llvm::SubtargetFeatureKV &kv : known->getAllProcessorFeatures())
    names.insert(kv.Key);
  SmallVector<StringRef> list;
  features.split(list, ',', -1, /*KeepEmpty=*/false);
  for (StringRef feature : list) {
    feature = feature.trim();
    if (feature.empty())
      continue;
    if (!feature.consume_front("+") && !feature.consume_front("-")) {
      error = "target feature '" + feature.str() +
              "' must start with '+' or '-' (e.g. --mattr=+avx2,-fma)";
      return failure();
    }
    if (!names.contains(feature)) {
      error = "unknown target feature '" + feature.str() + "' for " +
              triple.str() + " (try llc-22 -mattr=help)";
      return failure();
    }
  }
  if (triple.getArch() != llvm::Triple::x86_64)
    return success();
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target.createMCSubtargetInfo(triple, cpu, features));
  if (sti && !sti->checkFeatures("+64bit")) {
    error = "CPU '" + cpu.str() + "' has no 64-bit mode; " + triple.str() +
            " code needs an x86-64 CPU (e.g. --mcpu=x86-64)";
    return failure();
  }
  return success();
}

std::unique_ptr<llvm::TargetMachine>
attn::createAttnTargetMachine(const AttnTargetOptions &options,
                              std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Inline assembly (the quantized GEMV's vpdpbusd) is assembled in
  // the object file.
  llvm::InitializeNativeTargetAsmParser();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;

  std::string cpu = options.cpu;
  std::string features = options.features;
  if (cpu.empty() || cpu == "native" || cpu == "host") {
    cpu = llvm::sys::getHostCPUName().str();
    std::string host = hostFeatureString();
    features = features.empty() ? host : host + "," + features;
  } else {
    // Reject CPU names the target does not know (LLVM would only warn on
    // stderr and fall back to a generic CPU).
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target->createMCSubtargetInfo(triple, "", ""));
    if (sti && !sti->isCPUStringValid(cpu)) {
      error = "unknown CPU '" + cpu + "' for " + triple.str() +
              " (try llc-22 -mcpu=help)";
      return nullptr;
    }
  }
  if (failed(checkTargetFeatures(*target, triple, cpu, options.features,
                                 error)))
    return nullptr;

  llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Default;
  if (options.optLevel == 0)
    level = llvm::CodeGenOptLevel::None;
  else if (options.optLevel >= 3)
    level = llvm::CodeGenOptLevel::Aggressive;
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, cpu, features, targetOptions,
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    error = "could not create a target machine for " + triple.str();
  return tm;
}

std::unique_ptr<llvm::Module>
attn::translateAndOptimize(ModuleOp module, llvm::LLVMContext &ctx,
                           llvm::TargetMachine &tm, unsigned optLevel) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, ctx);
  if (!llvmModule) {
    module.emitError("failed to translate the lowered module to LLVM IR");
    return nullptr;
  }
  llvmModule->setTargetTriple(tm.getTargetTriple());
  llvmModule->setDataLayout(tm.createDataLayout());
  // The lowering's own vector code uses the target's widest registers
  // (cpu::Target::vectorBits); the loops LLVM vectorizes itself (elementwise
  // chains, norms) use them too, where LLVM's tuning of Intel's AVX-512
  // CPUs would prefer 256 bits (GPT-2's GELU ran on 8 lanes on a
  // Sapphire-Rapids-class machine).
  std::string width = std::to_string(cpu::getTarget(tm).vectorBits);
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration())
      f.addFnAttr("prefer-vector-width", width);
  auto transformer = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, &tm);
  if (llvm::Error err = transformer(llvmModule.get())) {
    module.emitError("LLVM optimization failed: ")
        << llvm::toString(std::move(err));
    return nullptr;
  }
  return llvmModule;
}

LogicalResult attn::emitObjectFile(llvm::Module &llvmModule,
                                   llvm::TargetMachine &tm,
                                   llvm::raw_pwrite_stream &os,
                                   std::string &error) {
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  pm.run(llvmModule);
  return success();
}

void attn::applyTargetMachine(AttnPipelineOptions &options,
                              const llvm::TargetMachine &tm) {
  options.setTarget(cpu::getTarget(tm));
}

std::string attn::getFeaturesMissingOnHost(const llvm::TargetMachine &tm) {
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  llvm::StringSet<> known;
  for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
    known.insert(kv.Key);
  // The host's answer covers the instruction set extensions the CPU and the
  // OS support; tuning flags of a CPU name are not among them.
  SmallVector<std::string> missing;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (!feature.second && known.contains(feature.first()) &&
        sti->checkFeatures("+" + feature.first().str()))
      missing.push_back(feature.first().str());
  llvm::sort(missing);
  return llvm::join(missing, ", ");
}

std::string attn::getSignatureText(FunctionType type) {
  std::string text = "attn-signature 1: ";
  llvm::raw_string_ostream(text) << type;
  return text;
}

/// An exported constant C string `name` holding `text`.
static void addExportedString(llvm::Module &module, StringRef name,
                              StringRef text) {
  llvm::Constant *data =
      llvm::ConstantDataArray::getString(module.getContext(), text);
  new llvm::GlobalVariable(module, data->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, data, name);
}

/// Adds `attn_packed_<name>(void **args)`, which calls `entry` with the
/// values args[i] points to and stores its return value, if any, through
/// args[n]: one C type for every function, so that a caller that cannot
/// spell each signature (ctypes through attnrt_call_packed) can call it.
static void addPackedWrapper(llvm::Module &module, StringRef name,
                             llvm::Function &entry) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::getUnqual(ctx);
  auto *wrapperType =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrType}, false);
  auto *wrapper =
      llvm::Function::Create(wrapperType, llvm::GlobalValue::ExternalLinkage,
                             (attn::kPackedSymbolPrefix + name).str(), module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::Value *args = wrapper->getArg(0);
  auto argPointer = [&](unsigned i) -> llvm::Value * {
    llvm::Value *slot = b.CreateConstGEP1_64(ptrType, args, i);
    return b.CreateLoad(ptrType, slot);
  };
  SmallVector<llvm::Value *> values;
  for (llvm::Argument &arg : entry.args())
    values.push_back(b.CreateLoad(arg.getType(), argPointer(arg.getArgNo())));
  llvm::CallInst *call = b.CreateCall(&entry, values);
  if (!entry.getReturnType()->isVoidTy())
    b.CreateStore(call, argPointer(entry.arg_size()));
  b.CreateRetVoid();
}

void attn::embedLibraryInfo(
    llvm::Module &llvmModule,
    ArrayRef<std::pair<std::string, FunctionType>> signatures,
    const llvm::TargetMachine &tm) {
  for (const auto &[name, type] : signatures) {
    addExportedString(llvmModule, (kSignatureSymbolPrefix + name).str(),
                      getSignatureText(type));
    if (llvm::Function *entry =
            llvmModule.getFunction("_mlir_ciface_" + name))
      addPackedWrapper(llvmModule, name, *entry);
  }
  addExportedString(llvmModule, kTargetSymbol,
                    (tm.getTargetCPU() + "\n" + tm.getTargetFeatureString())
                        .str());
}
