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

#include "attn/Transforms/Cpu/InPlaceArguments.h"
#include "attn/Transforms/Cpu/Passes.h"
#include "attn/Conversion/AttnToCuda/ScoreModToCuda.h"
#include "attn/InitAttn.h"
#include "attn/Pipelines/ToolOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
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
static attn::AttnToolOptions common(toolCategory);
static cl::opt<attn::CompileTarget>
    target(cl::cat(toolCategory), "target",
           cl::init(attn::CompileTarget::Cpu), attn::compileTargetValues(),
           cl::desc("cpu, or cuda: attn.sdpa ops the CUDA kernels support "
                    "call them (the rest runs on the CPU, with a remark; "
                    "--backend=flash makes that an error), allocations use "
                    "CUDA managed memory"),
           cl::value_desc("cpu|cuda"));
static cl::opt<bool>
    trace(cl::cat(toolCategory), "trace",
          cl::desc("Call attnrt_trace_begin/end around every lowered op; "
                   "the object carries the span names (attn_trace_names)"));
static cl::opt<bool> traceLocations(
    cl::cat(toolCategory), "trace-locations",
    cl::desc("With --trace: each span name also gives the op's source file "
             "and line (`sdpa model.py:12`)"));
static cl::opt<bool> traceLinalgOps(
    cl::cat(toolCategory), "trace-linalg-ops",
    cl::desc("With --trace: the linalg ops of function bodies (a "
             "frontend's products and elementwise generics) are spans too"));
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
static cl::opt<bool> prepackWeights(
    cl::cat(toolCategory), "prepack-weights",
    cl::desc("Arguments marked attn.weight that only feed GEMMs take the "
             "GEMM's packed panels, packed once by a new entry point "
             "<f>_pack_<i> (attn-cpu-prepack-weights); the weights manifest "
             "lists them"));
static cl::opt<std::string> weightsManifestFilename(
    cl::cat(toolCategory), "weights-manifest",
    cl::desc("With --prepack-weights: where to write the JSON list of packed "
             "arguments (default: the output with .weights.json, for obj "
             "and so)"),
    cl::value_desc("file.json"));
static cl::opt<std::string> linker(
    cl::cat(toolCategory), "cc",
    cl::desc("C compiler driver that links --emit=so (default: clang-22, "
             "else cc)"),
    cl::value_desc("path"));

static cl::opt<std::string> cudaSourceFilename(
    cl::cat(toolCategory), "cuda-source",
    cl::desc("--target=cuda: also write the CUDA source generated for the "
             "attn.sdpa score_mod regions to this file (obj and so compile "
             "it with nvcc; otherwise a temporary file is compiled)"),
    cl::value_desc("file.cu"));
static cl::opt<std::string> cudaArchs(
    cl::cat(toolCategory), "cuda-archs", cl::init(ATTN_CUDA_ARCHS),
    cl::desc("--target=cuda: the architectures nvcc compiles the generated "
             "score_mod kernels for (default: the kernel library's)"),
    cl::value_desc("80,90"));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: error: " << message << "\n";
  return 1;
}

/// `fail` for functions that return a LogicalResult.
static LogicalResult reportError(const llvm::Twine &message) {
  fail(message);
  return failure();
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

/// The C compiler driver that links (--cc, else clang-22, clang, cc), or ""
/// after an error.
static std::string findLinkerDriver() {
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
    fail("no C compiler to link (looked for clang-22, clang, cc; choose one "
         "with --cc)");
    return "";
  }
  return driver;
}

/// Runs `args` (args[0] is the program): "" on success, else why it failed
/// and the command line.
static std::string runCommand(ArrayRef<std::string> args) {
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string errorMessage;
  int rc = llvm::sys::ExecuteAndWait(args[0], argRefs, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc == 0)
    return "";
  std::string command;
  for (StringRef a : argRefs)
    command += a.str() + " ";
  return (errorMessage.empty() ? "exit status " + std::to_string(rc)
                               : errorMessage) +
         "\n  command: " + command;
}

/// The AttnFuse runtime archive that --emit=so links: `../lib` beside this
/// executable (the build tree's bin/ and lib/, and an installed tree such as
/// the Python wheel's, have that layout), else where the build put it; ""
/// after an error.
static std::string findRuntimeArchive(const char *argv0) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  if (!exe.empty()) {
    SmallString<256> beside(llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(beside, "lib",
                            llvm::sys::path::filename(ATTN_RUNTIME_ARCHIVE));
    if (llvm::sys::fs::exists(beside))
      return std::string(beside);
  }
  if (llvm::sys::fs::exists(ATTN_RUNTIME_ARCHIVE))
    return ATTN_RUNTIME_ARCHIVE;
  fail(llvm::Twine("the AttnFuse runtime archive is missing (looked in ../lib "
                   "beside ") +
       (exe.empty() ? "attn-compile" : exe) + " and at " +
       ATTN_RUNTIME_ARCHIVE + "): rebuild or reinstall AttnFuse");
  return "";
}

static const char *gArgv0 = "attn-compile";

/// Links `objects` into the shared library `output` with the runtimes the
/// code calls: the AttnFuse runtime (always: it exports the trace API), the
/// MLIR C runner utils if the code calls memrefCopy, libomp if it calls
/// __kmpc_*, the CUDA kernels and their bridge for --target=cuda.
static LogicalResult linkSharedLibrary(ArrayRef<std::string> objects,
                                       StringRef output,
                                       const llvm::Module &module) {
  std::string driver = findLinkerDriver();
  if (driver.empty())
    return failure();

  bool needsRunnerUtils = false, needsOpenMP = false;
  for (const llvm::Function &f : module.functions()) {
    if (!f.isDeclaration())
      continue;
    needsRunnerUtils |= f.getName() == "memrefCopy";
    needsOpenMP |= f.getName().starts_with("__kmpc_");
  }

  std::string runtime = findRuntimeArchive(gArgv0);
  if (runtime.empty())
    return failure();

  SmallVector<std::string> args = {driver, "-shared", "-o", output.str()};
  llvm::append_range(args, objects);
  for (StringRef a : {StringRef("-Wl,--whole-archive"), StringRef(runtime),
                      StringRef("-Wl,--no-whole-archive")})
    args.push_back(a.str());
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
    // Built-in paths into the build tree: an installed attn-compile (the
    // Python wheel's) carries only the CPU path.
    for (StringRef archive :
         {ATTN_CUDA_RUNTIME_ARCHIVE, ATTN_CUDA_KERNELS_ARCHIVE})
      if (!llvm::sys::fs::exists(archive))
        return reportError(llvm::Twine("--target=cuda --emit=so links ") +
                           archive +
                           ", which is missing: use the attn-compile of the "
                           "CMake build that made the CUDA kernels");
    StringRef cudaLibDir = ATTN_CUDA_LIBRARY_DIR;
    for (StringRef a : {"-Wl,--whole-archive", ATTN_CUDA_RUNTIME_ARCHIVE,
                        "-Wl,--no-whole-archive", ATTN_CUDA_KERNELS_ARCHIVE})
      args.push_back(a.str());
    args.push_back(("-L" + cudaLibDir).str());
    args.push_back(("-Wl,-rpath," + cudaLibDir).str());
    args.push_back("-lcudart");
    args.push_back("-lstdc++");
#else
    return reportError(
        "this attn-compile was built without the CUDA kernels (CMake found "
        "no nvcc): use --emit=obj and link the object with "
        "libattn_cuda_runtime.a and libattn_cuda_kernels.a built from "
        "kernels/ (cmake -DATTN_KERNELS_ONLY=ON)");
#endif
  }
  args.push_back("-lpthread");
  args.push_back("-lm");

  std::string error = runCommand(args);
  if (!error.empty())
    return reportError("linking the shared library failed: " + error);
  return success();
}

//===----------------------------------------------------------------------===//
// Input, compile, output
//===----------------------------------------------------------------------===//

namespace {
enum class EmitKind { Mlir, Llvm, Obj, So };
} // namespace

/// --emit, else the kind the output's extension names; checks the options
/// that depend on it.
static FailureOr<EmitKind> getEmitKind() {
  std::string kind = emit;
  if (kind.empty()) {
    StringRef ext = llvm::sys::path::extension(outputFilename);
    kind = ext == ".mlir" ? "mlir"
           : ext == ".ll" ? "llvm"
           : ext == ".so" ? "so"
                          : "obj";
  }
  std::optional<EmitKind> result =
      llvm::StringSwitch<std::optional<EmitKind>>(kind)
          .Case("mlir", EmitKind::Mlir)
          .Case("llvm", EmitKind::Llvm)
          .Case("obj", EmitKind::Obj)
          .Case("so", EmitKind::So)
          .Default(std::nullopt);
  if (!result)
    return reportError("--emit=" + kind + ": expected mlir, llvm, obj or so");
  bool binary = *result == EmitKind::Obj || *result == EmitKind::So;
  if (binary && outputFilename == "-")
    return reportError("--emit=" + kind +
                       " writes a binary; give a file with -o");
  if (optLevel > 3)
    return reportError("-O" + Twine(optLevel) + ": expected 0, 1, 2 or 3");
  return *result;
}

/// Where a file that goes with the output goes: `given`, else next to a
/// binary output with `extension`; empty for none.
static std::string getSidePath(EmitKind kind, StringRef given,
                               StringRef extension) {
  if (!given.empty() || (kind != EmitKind::Obj && kind != EmitKind::So))
    return given.str();
  // A device such as /dev/null has no directory entry to put a file next
  // to (/dev/null.h would be a new regular file in /dev).
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(outputFilename, status) &&
      !llvm::sys::fs::is_regular_file(status))
    return "";
  SmallString<256> p(outputFilename.getValue());
  llvm::sys::path::replace_extension(p, extension);
  return p.str().str();
}

/// Where the C header goes: --header, else next to a binary output; empty
/// for none.
static std::string getHeaderPath(EmitKind kind) {
  return noHeader ? "" : getSidePath(kind, headerFilename, ".h");
}

/// Where the weights manifest goes: --weights-manifest, else next to a
/// binary output; empty for none (or without --prepack-weights).
static std::string getManifestPath(EmitKind kind) {
  return prepackWeights
             ? getSidePath(kind, weightsManifestFilename, ".weights.json")
             : "";
}

/// Runs attn-cpu-prepack-weights for `tm`'s vectors (before the C header
/// and the signatures are taken: the entry points' types change).
static LogicalResult prepackModuleWeights(ModuleOp module,
                                          const llvm::TargetMachine &tm) {
  PassManager pm(module.getContext());
  attn::AttnCpuPrepackWeightsOptions options;
  attn::setTargetOptions(options, attn::cpu::getTarget(tm));
  pm.addPass(attn::createAttnCpuPrepackWeights(options));
  return pm.run(module);
}

/// The weights manifest: per public function, its packed arguments with
/// their pack entry point, the weight's shape, the panels' shape and their
/// element type.
static std::string buildWeightsManifest(ModuleOp module) {
  llvm::json::Object functions;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    llvm::json::Array packed;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto info = func.getArgAttrOfType<DictionaryAttr>(i, "attn.packed");
      if (!info)
        continue;
      auto name = info.getAs<StringAttr>("entry");
      auto pack = module.lookupSymbol<func::FuncOp>(name.getValue());
      auto shape = [](Type t) {
        return llvm::json::Array(cast<ShapedType>(t).getShape());
      };
      // The weight's and the panels' element type (f32 or bf16).
      auto dtype = [](Type t) {
        std::string s;
        llvm::raw_string_ostream os(s);
        os << cast<ShapedType>(t).getElementType();
        return s;
      };
      packed.push_back(llvm::json::Object{
          {"arg", i},
          {"entry", name.getValue()},
          {"transposed", static_cast<bool>(info.get("transposed"))},
          {"weight_shape", shape(pack.getArgumentTypes()[0])},
          {"packed_shape", shape(func.getArgumentTypes()[i])},
          {"dtype", dtype(pack.getArgumentTypes()[0])}});
    }
    if (!packed.empty())
      functions[func.getSymName()] = std::move(packed);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}",
                      llvm::json::Value(llvm::json::Object{
                          {"functions", std::move(functions)}}))
     << "\n";
  return text;
}

/// The C header's text, from the tensor-level signatures of `module`.
static FailureOr<std::string> buildCHeader(ModuleOp module,
                                           StringRef headerPath) {
  std::string guard =
      "ATTN_GENERATED_" + llvm::sys::path::stem(headerPath).upper() + "_H";
  for (char &c : guard)
    if (!llvm::isAlnum(c))
      c = '_';
  std::string text;
  llvm::raw_string_ostream os(text);
  if (failed(attn::emitCHeader(module, os, target == attn::CompileTarget::Cuda,
                               guard)))
    return failure();
  return text;
}

/// The target machine of --mcpu/--mattr/-O (the host's by default).
static std::unique_ptr<llvm::TargetMachine> createTargetMachine() {
  std::string errorMessage;
  std::unique_ptr<llvm::TargetMachine> tm =
      common.createTargetMachine(optLevel, errorMessage);
  if (!tm)
    (void)reportError(errorMessage);
  return tm;
}

/// The whole pipeline to the LLVM dialect, tiled for `tm`.
static LogicalResult lowerModule(ModuleOp module,
                                 const llvm::TargetMachine &tm) {
  attn::AttnPipelineOptions options;
  common.applyTo(options);
  options.trace = trace;
  options.traceLocations = traceLocations;
  options.traceLinalgOps = traceLinalgOps;
  options.target = target;
  return attn::lowerForTarget(module, options, tm);
}

/// Writes `path` with `write`, keeping it only when `write` succeeds.
static LogicalResult
writeFile(StringRef path,
          llvm::function_ref<LogicalResult(llvm::raw_fd_ostream &)> write) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> out =
      openOutputFile(path, &errorMessage);
  if (!out)
    return reportError(errorMessage);
  if (failed(write(out->os())))
    return failure();
  // A write error (/dev/full, a full disk) shows when the stream is flushed;
  // left in the stream it would abort the tool ("IO failure on output
  // stream") when the stream is destroyed.
  out->os().close();
  if (std::error_code ec = out->os().error()) {
    out->os().clear_error();
    return reportError("cannot write '" + path + "': " + ec.message());
  }
  out->keep();
  return success();
}

//===----------------------------------------------------------------------===//
// Generated CUDA kernels (score_mod regions, --target=cuda)
//===----------------------------------------------------------------------===//

namespace {
/// The CUDA source attn-lower-sdpa-to-cuda generated for the module's
/// score_mod regions, and where the first of them was (for diagnostics).
struct GeneratedCuda {
  std::string source;
  std::optional<Location> loc;
};
} // namespace

/// Takes the generated sources out of the lowered `module` (the attribute
/// must not reach the LLVM IR translation).
static GeneratedCuda takeGeneratedCuda(ModuleOp module) {
  GeneratedCuda cuda;
  auto sources =
      module->getAttrOfType<DictionaryAttr>(attn::kCudaSourcesAttrName);
  if (!sources)
    return cuda;
  module->removeAttr(attn::kCudaSourcesAttrName);
  for (NamedAttribute entry : sources) {
    cuda.source += cast<StringAttr>(entry.getValue()).getValue();
    cuda.source += "\n";
    if (cuda.loc)
      continue;
    module.walk([&](LLVM::CallOp call) {
      if (call.getCallee() == entry.getName().getValue() && !cuda.loc)
        cuda.loc = call.getLoc();
    });
  }
  return cuda;
}

/// A temporary file name, removed with `remover`.
static LogicalResult createTemporary(StringRef suffix,
                                     SmallString<128> &path,
                                     llvm::FileRemover &remover) {
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("attn-compile", suffix, path))
    return reportError("cannot create a temporary file: " + ec.message());
  remover.setFile(path);
  return success();
}

/// nvcc on PATH, else in $CUDA_HOME/bin; "" when neither has one.
static std::string findNvcc() {
  if (auto found = llvm::sys::findProgramByName("nvcc"))
    return *found;
  if (const char *home = std::getenv("CUDA_HOME")) {
    SmallString<256> path(home);
    llvm::sys::path::append(path, "bin", "nvcc");
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  return "";
}

/// nvcc's code generation flags for --cuda-archs ("80,90a": sm_80, sm_90a;
/// other words such as "native" go to -arch).
static void appendArchFlags(SmallVectorImpl<std::string> &args) {
  SmallVector<StringRef> archs;
  llvm::SplitString(cudaArchs, archs, ",; ");
  for (StringRef arch : archs) {
    arch = arch.trim();
    StringRef number = arch.take_while(llvm::isDigit);
    if (number.empty()) {
      args.push_back(("-arch=" + arch).str());
      continue;
    }
    StringRef name = arch.take_while(llvm::isAlnum);
    args.push_back("-gencode");
    args.push_back(("arch=compute_" + name + ",code=sm_" + name).str());
  }
}

/// Compiles the generated kernels into `objectPath` with nvcc. Errors are
/// located at the first score_mod attn.sdpa.
static LogicalResult compileGeneratedCuda(const GeneratedCuda &cuda,
                                          StringRef objectPath) {
  std::string nvcc = findNvcc();
  if (nvcc.empty())
    return emitError(*cuda.loc)
           << "this attn.sdpa's score_mod region needs nvcc to compile its "
              "CUDA kernel, but nvcc is neither on PATH nor in $CUDA_HOME/bin "
              "(--cuda-source with --emit=mlir or llvm writes the source "
              "without compiling it)";
  SmallString<128> sourcePath(cudaSourceFilename.getValue());
  llvm::FileRemover removeSource;
  if (sourcePath.empty()) {
    if (failed(createTemporary("cu", sourcePath, removeSource)) ||
        failed(writeFile(sourcePath, [&](llvm::raw_fd_ostream &os) {
          os << cuda.source;
          return success();
        })))
      return failure();
  }
  SmallVector<std::string> args = {
      nvcc, "-c", "-std=c++17", "-O3", "-Xcompiler", "-fPIC",
      "--expt-relaxed-constexpr", "-I" ATTN_KERNELS_SOURCE_DIR "/src",
      "-I" ATTN_KERNELS_SOURCE_DIR "/include",
      "-I" ATTN_KERNELS_SOURCE_DIR "/runtime"};
  appendArchFlags(args);
  llvm::append_range(args, SmallVector<std::string>{
                               "-o", objectPath.str(), sourcePath.str().str()});
  std::string error = runCommand(args);
  if (!error.empty())
    return emitError(*cuda.loc)
           << "nvcc failed on the CUDA kernel generated for this attn.sdpa's "
              "score_mod region: "
           << error;
  return success();
}

/// Writes `llvmModule` as an object file to `path`.
static LogicalResult writeObjectFile(llvm::Module &llvmModule,
                                     llvm::TargetMachine &tm, StringRef path) {
  return writeFile(path, [&](llvm::raw_fd_ostream &os) {
    std::string errorMessage;
    if (failed(attn::emitObjectFile(llvmModule, tm, os, errorMessage)))
      return reportError(errorMessage);
    return success();
  });
}

/// The module's object and, when there are generated kernels, theirs, in
/// temporary files that are removed with this.
struct TemporaryObjects {
  SmallString<128> modulePath, cudaPath;
  llvm::FileRemover removeModule, removeCuda;

  SmallVector<std::string> paths() const {
    SmallVector<std::string> objects = {modulePath.str().str()};
    if (!cudaPath.empty())
      objects.push_back(cudaPath.str().str());
    return objects;
  }
};

static LogicalResult writeTemporaryObjects(llvm::Module &llvmModule,
                                           llvm::TargetMachine &tm,
                                           const GeneratedCuda &cuda,
                                           TemporaryObjects &objects) {
  if (failed(createTemporary("o", objects.modulePath, objects.removeModule)) ||
      failed(writeObjectFile(llvmModule, tm, objects.modulePath)))
    return failure();
  if (cuda.source.empty())
    return success();
  if (failed(createTemporary("o", objects.cudaPath, objects.removeCuda)))
    return failure();
  return compileGeneratedCuda(cuda, objects.cudaPath);
}

/// --emit=obj with generated kernels: the module's object and the kernels'
/// merged into one relocatable object by the C compiler driver (`-r`).
static LogicalResult writeMergedObject(llvm::Module &llvmModule,
                                       llvm::TargetMachine &tm,
                                       const GeneratedCuda &cuda) {
  TemporaryObjects objects;
  if (failed(writeTemporaryObjects(llvmModule, tm, cuda, objects)))
    return failure();
  std::string driver = findLinkerDriver();
  if (driver.empty())
    return failure();
  SmallVector<std::string> command = {driver, "-r", "-nostdlib", "-o",
                                      outputFilename};
  command.append(objects.paths());
  std::string error = runCommand(command);
  if (!error.empty())
    return reportError("merging the generated CUDA kernels into the object "
                       "failed: " +
                       error);
  return success();
}

/// --emit=so: the module's object (and the generated kernels', if any) in
/// temporary files, linked by the C compiler driver.
static LogicalResult writeSharedLibrary(llvm::Module &llvmModule,
                                        llvm::TargetMachine &tm,
                                        const GeneratedCuda &cuda) {
  TemporaryObjects objects;
  if (failed(writeTemporaryObjects(llvmModule, tm, cuda, objects)))
    return failure();
  return linkSharedLibrary(objects.paths(), outputFilename, llvmModule);
}

/// The name and tensor-level type of every public function, which the
/// library records (attn::embedLibraryInfo).
using Signatures = SmallVector<std::pair<std::string, FunctionType>>;

static Signatures getSignatures(ModuleOp module) {
  Signatures signatures;
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      signatures.emplace_back(func.getSymName().str(), func.getFunctionType());
  return signatures;
}

/// LLVM IR, an object or a shared library from the lowered `module`.
static LogicalResult emitMachineCode(ModuleOp module, EmitKind kind,
                                     llvm::TargetMachine &tm,
                                     const GeneratedCuda &cuda,
                                     const Signatures &signatures) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      attn::translateAndOptimize(module, llvmContext, tm, optLevel);
  if (!llvmModule)
    return failure();
  if (trace)
    embedTraceNames(*llvmModule, attn::getTraceNames(module));
  attn::embedLibraryInfo(*llvmModule, signatures, tm);

  switch (kind) {
  case EmitKind::Llvm:
    return writeFile(outputFilename, [&](llvm::raw_fd_ostream &os) {
      llvmModule->print(os, nullptr);
      return success();
    });
  case EmitKind::Obj:
    if (!cuda.source.empty())
      return writeMergedObject(*llvmModule, tm, cuda);
    return writeObjectFile(*llvmModule, tm, outputFilename);
  case EmitKind::So:
    return writeSharedLibrary(*llvmModule, tm, cuda);
  case EmitKind::Mlir:
    break;
  }
  llvm_unreachable("the LLVM dialect is written by main");
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  gArgv0 = argv[0];
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Inline assembly (the quantized GEMV's vpdpbusd) is assembled in
  // the object file.
  llvm::InitializeNativeTargetAsmParser();
  attn::registerAllAttnPasses();
  cl::HideUnrelatedOptions(toolCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "attn-compile: ahead-of-time compiler for attn "
                              "modules (see docs/attn-compile.md)\n");
  FailureOr<EmitKind> kind = getEmitKind();
  if (failed(kind))
    return 1;
  std::string threads;
  if (failed(common.checkThreads(threads))) {
    (void)reportError(threads);
    return 1;
  }
  if (traceLocations && !trace)
    return fail("--trace-locations names the spans of --trace: give both");
  if (traceLinalgOps && !trace)
    return fail("--trace-linalg-ops adds spans to --trace: give both");

  // Input, and the C header from its tensor-level signatures.
  std::unique_ptr<attn::AttnInputModule> input =
      attn::parseInputModule(inputFilename, "attn-compile");
  if (!input)
    return 1;
  ModuleOp module = *input->module;
  if (failed(attn::verifyCFunctionNames(module)))
    return 1;
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine();
  if (!tm || (prepackWeights && failed(prepackModuleWeights(module, *tm))))
    return 1;
  std::string manifestPath = getManifestPath(*kind);
  std::string manifest =
      manifestPath.empty() ? "" : buildWeightsManifest(module);
  Signatures signatures = getSignatures(module);
  std::string headerPath = getHeaderPath(*kind);
  FailureOr<std::string> header = std::string();
  if (!headerPath.empty())
    header = buildCHeader(module, headerPath);
  if (failed(header))
    return 1;

  // Compile and write; the CUDA source generated for score_mod regions
  // first, when asked for.
  if (failed(lowerModule(module, *tm)))
    return 1;
  GeneratedCuda cuda = takeGeneratedCuda(module);
  if (!cudaSourceFilename.empty() &&
      failed(writeFile(cudaSourceFilename, [&](llvm::raw_fd_ostream &os) {
        os << cuda.source;
        return success();
      })))
    return 1;
  LogicalResult written = *kind == EmitKind::Mlir
                              ? writeFile(outputFilename,
                                          [&](llvm::raw_fd_ostream &os) {
                                            module.print(os);
                                            os << "\n";
                                            return success();
                                          })
                              : emitMachineCode(module, *kind, *tm, cuda,
                                                signatures);
  if (failed(written))
    return 1;
  if (!manifestPath.empty() &&
      failed(writeFile(manifestPath, [&](llvm::raw_fd_ostream &os) {
        os << manifest;
        return success();
      })))
    return 1;
  if (headerPath.empty())
    return 0;
  return failed(writeFile(headerPath,
                          [&](llvm::raw_fd_ostream &os) {
                            os << *header;
                            return success();
                          }))
             ? 1
             : 0;
}
