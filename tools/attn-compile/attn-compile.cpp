//===- attn-compile.cpp - ahead-of-time compiler for attn modules ---------===//
//
// attn-compile in.mlir -o out.{o,so,ll,mlir} [--emit=mlir|llvm|obj|so]
//
// Runs the whole AttnFuse CPU pipeline (attn-fuse-sdpa unless --no-fuse, the
// CPU lowering with --backend, LLVM IR, LLVM -O3, object code for the host
// CPU or --mcpu/--mattr) and writes a C header declaring the C ABI of every
// public function (`_mlir_ciface_<name>` taking memref descriptors).
//
//===----------------------------------------------------------------------===//

#include "attn/InitAttn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory toolCategory("attn-compile options");

static cl::opt<std::string> inputFilename(cl::cat(toolCategory), cl::Positional,
                                          cl::Required,
                                          cl::desc("<input .mlir>"));
static cl::opt<std::string> outputFilename(cl::cat(toolCategory), "o",
                                           cl::Required,
                                           cl::desc("Output file ('-': stdout, "
                                                    "text emits only)"),
                                           cl::value_desc("file"));
static cl::opt<std::string> emit(
    cl::cat(toolCategory), "emit",
    cl::desc("What to write: mlir (LLVM dialect), llvm (LLVM IR), obj, so "
             "(default: from the output extension .mlir/.ll/.o/.so, else obj)"),
    cl::value_desc("mlir|llvm|obj|so"));
static cl::opt<bool> noFuse(cl::cat(toolCategory), "no-fuse",
                            cl::desc("Do not run attn-fuse-sdpa"));
static cl::opt<attn::SdpaCpuBackend>
    backend(cl::cat(toolCategory), "backend",
            cl::init(attn::SdpaCpuBackend::Auto),
            cl::desc("CPU lowering of attn.sdpa"),
            attn::sdpaCpuBackendValues());
static cl::opt<attn::CompileTarget>
    target(cl::cat(toolCategory), "target",
           cl::init(attn::CompileTarget::Cpu), attn::compileTargetValues(),
           cl::desc("cpu, or cuda: attn.sdpa ops the CUDA kernels support "
                    "call them (the rest runs on the CPU, with a remark; "
                    "--backend=flash makes that an error), allocations use "
                    "CUDA managed memory"),
           cl::value_desc("cpu|cuda"));
static cl::opt<unsigned> threads(
    cl::cat(toolCategory), "num-threads", cl::init(0),
    cl::desc("Threads of the generated code: 0 = OpenMP default "
             "(OMP_NUM_THREADS, else all cores), 1 = sequential (no OpenMP), "
             "N = N"),
    cl::value_desc("N"));
static cl::opt<bool>
    trace(cl::cat(toolCategory), "trace",
          cl::desc("Call attnrt_trace_begin/end around every lowered op; "
                   "the object carries the span names (attn_trace_names)"));
static cl::opt<std::string> mcpu(cl::cat(toolCategory), "mcpu",
                                 cl::desc("Target CPU (default: the host's)"));
static cl::opt<std::string>
    mattr(cl::cat(toolCategory), "mattr",
          cl::desc("Target features, e.g. +avx2,-fma (default: the host's "
                   "when --mcpu is not given)"));
static cl::opt<unsigned> optLevel(cl::cat(toolCategory), "O", cl::init(3),
                                  cl::Prefix,
                                  cl::desc("LLVM optimization level (0-3)"));
static cl::opt<std::string> headerFilename(
    cl::cat(toolCategory), "header",
    cl::desc("Where to write the C header (default: the output with .h, for "
             "obj and so)"),
    cl::value_desc("file.h"));
static cl::opt<bool> noHeader(cl::cat(toolCategory), "no-header",
                              cl::desc("Do not write a C header"));
static cl::opt<std::string> linker(
    cl::cat(toolCategory), "cc",
    cl::desc("C compiler driver that links --emit=so (default: clang-22, "
             "else cc)"),
    cl::value_desc("path"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: error: " << message << "\n";
  return 1;
}

/// Lets `attn-run --so --trace` name the spans of a library: a global array
/// of C strings `attn_trace_names` and its length `attn_trace_num_names`.
static void embedTraceNames(llvm::Module &module, ArrayRef<std::string> names) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrType = llvm::PointerType::getUnqual(ctx);
  SmallVector<llvm::Constant *> strings;
  for (const std::string &name : names) {
    auto *data = llvm::ConstantDataArray::getString(ctx, name);
    auto *global = new llvm::GlobalVariable(
        module, data->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, data, "attn_trace_name");
    strings.push_back(global);
  }
  auto *arrayType = llvm::ArrayType::get(ptrType, strings.size());
  new llvm::GlobalVariable(module, arrayType, /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(arrayType, strings),
                           "attn_trace_names");
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  new llvm::GlobalVariable(
      module, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantInt::get(i64, names.size()), "attn_trace_num_names");
}

/// Links `object` into the shared library `output` with the runtimes the
/// code calls: the AttnFuse runtime (always: it exports the trace API), the
/// MLIR C runner utils if the code calls memrefCopy, libomp if it calls
/// __kmpc_*.
static LogicalResult linkSharedLibrary(StringRef object, StringRef output,
                                       const llvm::Module &module) {
  std::string driver = linker;
  if (driver.empty()) {
    for (StringRef candidate : {"clang-22", "clang", "cc"}) {
      if (auto found = llvm::sys::findProgramByName(candidate)) {
        driver = *found;
        break;
      }
    }
  } else if (!llvm::sys::fs::exists(driver)) {
    if (auto found = llvm::sys::findProgramByName(driver))
      driver = *found;
  }
  if (driver.empty() || !llvm::sys::fs::exists(driver)) {
    fail("no C compiler to link the shared library (looked for clang-22, "
         "clang, cc; choose one with --cc)");
    return failure();
  }

  bool needsRunnerUtils = false, needsOpenMP = false;
  for (const llvm::Function &f : module.functions()) {
    if (!f.isDeclaration())
      continue;
    needsRunnerUtils |= f.getName() == "memrefCopy";
    needsOpenMP |= f.getName().starts_with("__kmpc_");
  }

  SmallVector<std::string> args = {driver,
                                   "-shared",
                                   "-o",
                                   output.str(),
                                   object.str(),
                                   "-Wl,--whole-archive",
                                   ATTN_RUNTIME_ARCHIVE,
                                   "-Wl,--no-whole-archive"};
  if (needsRunnerUtils) {
    StringRef lib = ATTN_MLIR_C_RUNNER_UTILS;
    args.push_back(lib.str());
    args.push_back(("-Wl,-rpath," + llvm::sys::path::parent_path(lib)).str());
  }
  if (needsOpenMP) {
    StringRef omp = attn::getOpenMPRuntimePath();
    if (omp.empty()) {
      fail("the code calls the OpenMP runtime, which the build did not find; "
           "use --num-threads=1");
      return failure();
    }
    args.push_back(omp.str());
    args.push_back(("-Wl,-rpath," + llvm::sys::path::parent_path(omp)).str());
  }
  if (target == attn::CompileTarget::Cuda) {
#ifdef ATTN_CUDA_RUNTIME_ARCHIVE
    StringRef cudaLibDir = ATTN_CUDA_LIBRARY_DIR;
    for (StringRef a : {"-Wl,--whole-archive", ATTN_CUDA_RUNTIME_ARCHIVE,
                        "-Wl,--no-whole-archive", ATTN_CUDA_KERNELS_ARCHIVE})
      args.push_back(a.str());
    args.push_back(("-L" + cudaLibDir).str());
    args.push_back(("-Wl,-rpath," + cudaLibDir).str());
    args.push_back("-lcudart");
    args.push_back("-lstdc++");
#else
    fail("this attn-compile was built without the CUDA kernels (CMake found "
         "no nvcc): use --emit=obj and link the object with "
         "libattn_cuda_runtime.a and libattn_cuda_kernels.a built from "
         "kernels/ (cmake -DATTN_KERNELS_ONLY=ON)");
    return failure();
#endif
  }
  args.push_back("-lpthread");
  args.push_back("-lm");

  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(driver, argRefs, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc != 0) {
    std::string command;
    for (StringRef a : argRefs)
      command += a.str() + " ";
    fail("linking the shared library failed" +
         (errorMessage.empty() ? "" : ": " + errorMessage) +
         "\n  command: " + command);
    return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  attn::registerAllAttnPasses();
  cl::HideUnrelatedOptions(toolCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "attn-compile: ahead-of-time compiler for attn "
                              "modules (see docs/attn-compile.md)\n");

  // What to emit.
  std::string kind = emit;
  if (kind.empty()) {
    StringRef ext = llvm::sys::path::extension(outputFilename);
    kind = ext == ".mlir" ? "mlir"
           : ext == ".ll" ? "llvm"
           : ext == ".so" ? "so"
                          : "obj";
  }
  if (kind != "mlir" && kind != "llvm" && kind != "obj" && kind != "so")
    return fail("--emit=" + kind + ": expected mlir, llvm, obj or so");
  bool binary = kind == "obj" || kind == "so";
  if (binary && outputFilename == "-")
    return fail("--emit=" + kind + " writes a binary; give a file with -o");
  if (optLevel > 3)
    return fail("-O" + Twine(optLevel) + ": expected 0, 1, 2 or 3");

  std::string readError;
  std::unique_ptr<attn::AttnInputModule> input =
      attn::parseInputModule(inputFilename, readError);
  if (!input)
    return fail(readError);
  if (!input->module)
    return 1;
  OwningOpRef<ModuleOp> &module = input->module;

  // The C header comes from the tensor-level signatures.
  std::string headerPath = headerFilename;
  if (headerPath.empty() && binary && !noHeader) {
    SmallString<256> p(outputFilename.getValue());
    llvm::sys::path::replace_extension(p, ".h");
    headerPath = p.str().str();
  }
  std::string headerText;
  if (!headerPath.empty() && !noHeader) {
    std::string guard =
        "ATTN_GENERATED_" + llvm::sys::path::stem(headerPath).upper() + "_H";
    for (char &c : guard)
      if (!llvm::isAlnum(c))
        c = '_';
    llvm::raw_string_ostream os(headerText);
    if (failed(attn::emitCHeader(*module, os, target == attn::CompileTarget::Cuda, guard)))
      return 1;
  }

  // Signatures before lowering, to check the C entry points afterwards.
  SmallVector<std::tuple<std::string, FunctionType, Location>> publicFuncs;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      publicFuncs.emplace_back(func.getSymName().str(), func.getFunctionType(),
                               func.getLoc());

  attn::AttnPipelineOptions options;
  options.fuse = !noFuse;
  options.backend = backend;
  options.trace = trace;
  options.numThreads = threads;
  options.target = target;
  if (failed(attn::lowerToLLVMDialect(*module, options)))
    return 1;
  for (auto &[name, type, loc] : publicFuncs)
    if (failed(attn::verifyLoweredCInterface(*module, name, type, loc)))
      return 1;
  SmallVector<std::string> traceNames = attn::getTraceNames(*module);

  std::string errorMessage;
  auto writeHeader = [&]() -> LogicalResult {
    if (headerPath.empty() || noHeader)
      return success();
    std::unique_ptr<llvm::ToolOutputFile> header =
        openOutputFile(headerPath, &errorMessage);
    if (!header) {
      fail(errorMessage);
      return failure();
    }
    header->os() << headerText;
    header->keep();
    return success();
  };

  if (kind == "mlir") {
    std::unique_ptr<llvm::ToolOutputFile> out =
        openOutputFile(outputFilename, &errorMessage);
    if (!out)
      return fail(errorMessage);
    module->print(out->os());
    out->os() << "\n";
    out->keep();
    return failed(writeHeader()) ? 1 : 0;
  }

  attn::AttnTargetOptions targetOptions;
  targetOptions.cpu = mcpu;
  targetOptions.features = mattr;
  targetOptions.optLevel = optLevel;
  std::unique_ptr<llvm::TargetMachine> tm =
      attn::createAttnTargetMachine(targetOptions, errorMessage);
  if (!tm)
    return fail(errorMessage);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      attn::translateAndOptimize(*module, llvmContext, *tm, optLevel);
  if (!llvmModule)
    return 1;
  if (trace)
    embedTraceNames(*llvmModule, traceNames);

  if (kind == "llvm") {
    std::unique_ptr<llvm::ToolOutputFile> out =
        openOutputFile(outputFilename, &errorMessage);
    if (!out)
      return fail(errorMessage);
    llvmModule->print(out->os(), nullptr);
    out->keep();
    return failed(writeHeader()) ? 1 : 0;
  }

  if (kind == "obj") {
    std::unique_ptr<llvm::ToolOutputFile> out =
        openOutputFile(outputFilename, &errorMessage);
    if (!out)
      return fail(errorMessage);
    if (failed(attn::emitObjectFile(*llvmModule, *tm, out->os(), errorMessage)))
      return fail(errorMessage);
    out->keep();
    return failed(writeHeader()) ? 1 : 0;
  }

  // so: an object in a temporary file, linked by the C compiler driver.
  SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attn-compile", "o", objectPath))
    return fail("cannot create a temporary object file: " + ec.message());
  llvm::FileRemover removeObject(objectPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return fail("cannot write '" + objectPath + "': " + ec.message());
    if (failed(attn::emitObjectFile(*llvmModule, *tm, os, errorMessage)))
      return fail(errorMessage);
  }
  if (failed(linkSharedLibrary(objectPath, outputFilename, *llvmModule)))
    return 1;
  return failed(writeHeader()) ? 1 : 0;
}
