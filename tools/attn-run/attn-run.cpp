//===- attn-run.cpp - compile and run one attn function -------------------===//
//
// attn-run FILE.mlir --entry NAME [options]
//
// Compiles FILE with the AttnFuse CPU pipeline (JIT through MLIR's
// ExecutionEngine, or loads a library built by attn-compile with --so), feeds
// the function seeded random inputs or .npy files, and prints a checksum line
// per result. --check compares against the unfused chain lowered with the
// math backend; --repeat times the function; --trace writes a Chrome trace of
// the spans the lowered code reports.
//
//===----------------------------------------------------------------------===//

#include "HostTensor.h"
#include "Jit.h"
#include "RunInputs.h"

#include "attn/Transforms/Cpu/InPlaceArguments.h"
#include "attn/InitAttn.h"
#include "attn/Pipelines/ToolOptions.h"
#include "attn/Runtime/AttnRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <limits>

using namespace mlir;
using namespace attnrun;
namespace cl = llvm::cl;

static const char *const kOverview =
    R"(attn-run: compile and run one function of an attn module

Inputs
  Without --input, argument I gets seeded random data (--seed, default 1):
    floats: uniform in [-1, 1] (--dist=normal: standard normal);
    i1 masks: rows are the slices along the last dim, counted over all
      leading dims; row r is all false if r % 7 == 0, all true if r % 7 == 1,
      otherwise each position is true with probability 1/2. Whichever
      polarity the function gives its mask (masked_fill: true = masked out;
      where / sdpa: true = kept), some rows are fully masked;
    other integers: uniform in [0, 8).
  Arguments with dynamic (?) dims need --shape I=AxBx...; static dims given
  there must agree with the type.

Outputs
  One line per result: "result I: <shape>x<dtype> sum=.. abs_sum=.. nan=..".

--check
  Also compiles the module unfused with the math backend (the reference), runs
  both on the same inputs and prints
    check: max_abs_err=.. max_rel_err=.. tol=<atol>+<rtol>*|ref| ok|FAIL
  An element passes if |out - ref| <= atol + rtol * |ref|; NaN in both is
  equal, NaN against a number fails; infinities must match exactly.
  max_rel_err is over elements with |ref| >= atol. The default tolerance is
  that of the least precise float type among the arguments and results
  (override with --atol/--rtol):
    f64: 1e-10 + 1e-10*|ref|   f32: 1e-4 + 1e-4*|ref|
    f16: 2e-2 + 2e-2*|ref|     bf16: 5e-2 + 5e-2*|ref|
  Exit status 1 on FAIL.
)";

static cl::OptionCategory toolCategory("attn-run options");

static cl::opt<std::string> inputFilename(cl::cat(toolCategory), cl::Positional,
                                          cl::Required,
                                          cl::desc("<input .mlir>"));
static cl::opt<std::string> entryName(cl::cat(toolCategory), "entry",
                                      cl::Required, cl::desc("Function to run"),
                                      cl::value_desc("name"));
static cl::opt<uint64_t> seed(cl::cat(toolCategory), "seed", cl::init(1),
                              cl::desc("Seed of the random inputs"));
static cl::opt<std::string> dist(cl::cat(toolCategory), "dist",
                                 cl::init("uniform"),
                                 cl::desc("Random floats: uniform in [-1,1] "
                                          "or normal"),
                                 cl::value_desc("uniform|normal"));
static cl::list<std::string>
    inputFiles(cl::cat(toolCategory), "input",
               cl::desc("Read argument I from a .npy file"),
               cl::value_desc("I=path.npy"));
static cl::list<std::string>
    outputFiles(cl::cat(toolCategory), "output",
                cl::desc("Write result I to a .npy file"),
                cl::value_desc("I=path.npy"));
static cl::list<std::string>
    shapes(cl::cat(toolCategory), "shape",
           cl::desc("Shape of argument I (needed for dynamic dims)"),
           cl::value_desc("I=AxBx..."));
static cl::opt<bool> check(cl::cat(toolCategory), "check",
                           cl::desc("Compare with the unfused math lowering"));
static cl::opt<double> atolOpt(cl::cat(toolCategory), "atol",
                               cl::desc("Absolute tolerance of --check "
                                        "(default: by dtype)"));
static cl::opt<double> rtolOpt(cl::cat(toolCategory), "rtol",
                               cl::desc("Relative tolerance of --check "
                                        "(default: by dtype)"));
static attn::AttnToolOptions common(toolCategory);
static cl::opt<unsigned>
    repeat(cl::cat(toolCategory), "repeat", cl::init(0),
           cl::desc("Time N more runs after the first (warm-up) run"),
           cl::value_desc("N"));
static cl::opt<std::string>
    tracePath(cl::cat(toolCategory), "trace",
              cl::desc("Write a Chrome trace (JSON) of one run"),
              cl::value_desc("out.json"));
static cl::opt<std::string>
    soPath(cl::cat(toolCategory), "so",
           cl::desc("Run a shared library built by attn-compile --emit=so "
                    "instead of compiling FILE (FILE still gives the "
                    "signature)"),
           cl::value_desc("lib.so"));
static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-run: error: " << message << "\n";
  return 1;
}

/// `fail` for functions that return a LogicalResult.
static LogicalResult reportError(const llvm::Twine &message) {
  fail(message);
  return failure();
}

/// A failed run-time check of the compiled code: a tool error, not an abort.
/// It may run on an OpenMP worker thread deep in compiled frames, so it
/// flushes and leaves at once rather than unwinding.
static void onCheckFailure(const char *message) {
  llvm::outs().flush();
  llvm::errs() << "attn-run: error: run-time check failed: " << message << "\n";
  llvm::errs().flush();
  std::_Exit(ATTNRT_CHECK_FAILURE_EXIT_STATUS);
}

//===----------------------------------------------------------------------===//
// Signature and inputs
//===----------------------------------------------------------------------===//

namespace {
struct ArgSpec {
  DType dtype;
  SmallVector<int64_t> shape; // resolved
};

struct ResultSpec {
  DType dtype;
  int64_t rank;
  std::string type; // for messages
};
} // namespace

//===----------------------------------------------------------------------===//
// Compiled code: JIT or AOT library
//===----------------------------------------------------------------------===//

namespace {
/// One way of calling `_mlir_ciface_<entry>`.
class Executable {
public:
  virtual ~Executable() = default;
  /// `args`: the C arguments (descriptor pointers), the result struct pointer
  /// first when the results are packed.
  virtual LogicalResult call(ArrayRef<void *> args) = 0;
  virtual void traceEnable(bool on) = 0;
  virtual void traceReset() = 0;
  virtual LogicalResult traceWrite(StringRef path) = 0;
};

class JitExecutable : public Executable {
public:
  JitExecutable(std::unique_ptr<ExecutionEngine> engine, std::string wrapper,
                SmallVector<std::string> traceNames)
      : engine(std::move(engine)), wrapper(std::move(wrapper)),
        traceNames(std::move(traceNames)) {}

  LogicalResult call(ArrayRef<void *> args) override {
    // The packed wrapper takes one pointer per C argument, pointing at it.
    SmallVector<void *> values(args.begin(), args.end());
    SmallVector<void *> packed;
    for (void *&v : values)
      packed.push_back(&v);
    if (llvm::Error err = engine->invokePacked(wrapper, packed)) {
      llvm::errs() << "attn-run: error: " << llvm::toString(std::move(err))
                   << "\n";
      return failure();
    }
    return success();
  }
  void traceEnable(bool on) override { attnrt_trace_enable(on); }
  void traceReset() override { attnrt_trace_reset(); }
  LogicalResult traceWrite(StringRef path) override {
    SmallVector<const char *> names;
    for (const std::string &n : traceNames)
      names.push_back(n.c_str());
    return success(attnrt_trace_write_json(path.str().c_str(), names.data(),
                                           names.size()) == 0);
  }

private:
  std::unique_ptr<ExecutionEngine> engine;
  std::string wrapper;
  SmallVector<std::string> traceNames;
};

/// A library from `attn-compile --emit=so`: it carries its own copy of the
/// runtime (attnrt_*) and, when built with --trace, the span names.
class SoExecutable : public Executable {
public:
  SoExecutable(void *handle, void *fn) : handle(handle), fn(fn) {}
  ~SoExecutable() override { dlclose(handle); }

  LogicalResult call(ArrayRef<void *> a) override {
    using P = void *;
    switch (a.size()) {
#define ATTN_CALL(N, ...)                                                      \
  case N:                                                                      \
    reinterpret_cast<void (*)(ATTN_PARAMS_##N)>(fn)(__VA_ARGS__);              \
    return success();
#define ATTN_PARAMS_1 P
#define ATTN_PARAMS_2 P, P
#define ATTN_PARAMS_3 P, P, P
#define ATTN_PARAMS_4 P, P, P, P
#define ATTN_PARAMS_5 P, P, P, P, P
#define ATTN_PARAMS_6 P, P, P, P, P, P
#define ATTN_PARAMS_7 P, P, P, P, P, P, P
#define ATTN_PARAMS_8 P, P, P, P, P, P, P, P
#define ATTN_PARAMS_9 P, P, P, P, P, P, P, P, P
#define ATTN_PARAMS_10 P, P, P, P, P, P, P, P, P, P
      ATTN_CALL(1, a[0])
      ATTN_CALL(2, a[0], a[1])
      ATTN_CALL(3, a[0], a[1], a[2])
      ATTN_CALL(4, a[0], a[1], a[2], a[3])
      ATTN_CALL(5, a[0], a[1], a[2], a[3], a[4])
      ATTN_CALL(6, a[0], a[1], a[2], a[3], a[4], a[5])
      ATTN_CALL(7, a[0], a[1], a[2], a[3], a[4], a[5], a[6])
      ATTN_CALL(8, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
      ATTN_CALL(9, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])
      ATTN_CALL(10, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9])
#undef ATTN_CALL
    default:
      llvm::errs() << "attn-run: error: --so supports at most 10 C arguments "
                      "(arguments plus the result pointer), got "
                   << a.size() << "\n";
      return failure();
    }
  }
  void traceEnable(bool on) override {
    if (auto *f = reinterpret_cast<void (*)(int)>(
            dlsym(handle, "attnrt_trace_enable")))
      f(on);
  }
  void traceReset() override {
    if (auto *f =
            reinterpret_cast<void (*)()>(dlsym(handle, "attnrt_trace_reset")))
      f();
  }
  LogicalResult traceWrite(StringRef path) override {
    auto *write =
        reinterpret_cast<int (*)(const char *, const char *const *, int64_t)>(
            dlsym(handle, "attnrt_trace_write_json"));
    auto *names = reinterpret_cast<const char *const *>(
        dlsym(handle, "attn_trace_names"));
    auto *count = reinterpret_cast<const int64_t *>(
        dlsym(handle, "attn_trace_num_names"));
    if (!write || !names || !count) {
      llvm::errs() << "attn-run: error: --trace: '" << soPath
                   << "' was not built with attn-compile --trace\n";
      return failure();
    }
    return success(write(path.str().c_str(), names, *count) == 0);
  }

private:
  void *handle;
  void *fn;
};
} // namespace

/// True when `name` is a function of the C math library this process has
/// loaded (the JIT resolves libm calls in the process).
static bool isLibmFunction(StringRef name) {
  void *address = dlsym(RTLD_DEFAULT, name.str().c_str());
  Dl_info info;
  if (!address || !dladdr(address, &info) || !info.dli_fname)
    return false;
  StringRef file = llvm::sys::path::filename(info.dli_fname);
  return file.starts_with("libm.so") || file.starts_with("libm-");
}

/// The functions the JIT resolves for the lowered code: the AttnFuse
/// runtime (registered below), the allocator and memory builtins the
/// lowering calls, the MLIR runner utils' memrefCopy, OpenMP for parallel
/// code, and libm. Anything else a module declares (exit, system, ...) is
/// refused, so that running a module cannot call arbitrary host code.
static bool isAllowedJitSymbol(StringRef name, bool openmp) {
  static const llvm::StringSet<> exact = {
      "attnrt_trace_begin", "attnrt_trace_end", "attnrt_check_failed",
      "attnrt_check_failed_deferred", "attnrt_check_argument",
      "attnrt_amx_available", "malloc", "free", "aligned_alloc", "memcpy", "memmove", "memset", "memrefCopy"};
  if (exact.contains(name))
    return true;
  if (openmp && (name.starts_with("__kmpc_") || name.starts_with("omp_")))
    return true;
  return isLibmFunction(name);
}

static LogicalResult checkJitSymbols(ModuleOp lowered, bool openmp) {
  for (auto fn : lowered.getOps<LLVM::LLVMFuncOp>())
    if (fn.isExternal() && !SymbolTable::symbolKnownUseEmpty(fn, lowered) &&
        !isAllowedJitSymbol(fn.getSymName(), openmp))
      return fn.emitError("the module calls the external function '")
             << fn.getSymName()
             << "', which attn-run does not provide: its JIT resolves only "
                "the AttnFuse runtime (attnrt_*), libm and OpenMP";
  return success();
}

/// attn-run executes the code it compiles: an op of the LLVM dialect in the
/// input could reach any host code (inline assembly, calls through
/// pointers made from integers).
static LogicalResult rejectLLVMDialect(ModuleOp module) {
  WalkResult walk = module.walk([](Operation *op) {
    if (!isa<LLVM::LLVMDialect>(op->getDialect()))
      return WalkResult::advance();
    op->emitError("attn-run does not run modules with LLVM dialect ops ('")
        << op->getName()
        << "'): they could call any host code; write the module in the "
           "attn, func, arith, math, tensor, linalg and scf dialects";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

static std::unique_ptr<Executable>
compileJit(ModuleOp source, func::FuncOp entry,
           attn::AttnPipelineOptions &options) {
  OwningOpRef<ModuleOp> module = source.clone();
  // Compile only what the entry needs: other public functions go unless
  // something calls them.
  for (auto func : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (func.getSymName() != entry.getSymName() &&
        SymbolTable::symbolKnownUseEmpty(func, *module))
      func.erase();
  // The target first: the lowering tiles for its vector registers.
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm =
      common.createTargetMachine(/*optLevel=*/3, error);
  if (!tm) {
    fail(error);
    return nullptr;
  }
  // attn-run executes what it compiles: code for another CPU would die of
  // SIGILL on the first instruction this host lacks.
  std::string missing = attn::getFeaturesMissingOnHost(*tm);
  if (!missing.empty()) {
    fail("--mcpu/--mattr: this host cannot run code for '" +
         tm->getTargetCPU() + "'" +
         (common.mattr.empty() ? "" : " with '" + common.mattr + "'") +
         ": it lacks " + missing + " (attn-compile cross-compiles)");
    return nullptr;
  }
  if (failed(attn::lowerForTarget(*module, options, *tm)) ||
      failed(checkJitSymbols(*module, options.numThreads != 1)))
    return nullptr;
  SmallVector<std::string> traceNames = attn::getTraceNames(*module);

  auto transformer = makeOptimizingTransformer(3, 0, tm.get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // memrefCopy and friends, should the lowering need them; the OpenMP
  // runtime for parallel code.
  SmallVector<StringRef> libs = {ATTN_MLIR_C_RUNNER_UTILS};
  if (options.numThreads != 1) {
    if (attn::getOpenMPRuntimePath().empty()) {
      fail("parallel code needs libomp, which the build did not find; use "
           "--num-threads=1");
      return nullptr;
    }
    libs.push_back(attn::getOpenMPRuntimePath());
  }
  engineOptions.sharedLibPaths = libs;
  engineOptions.sectionMemoryMapper = &attnrun::getJitMemoryMapper();
  auto engineOr =
      ExecutionEngine::create(*module, engineOptions, std::move(tm));
  if (!engineOr) {
    fail("JIT compilation failed: " + llvm::toString(engineOr.takeError()));
    return nullptr;
  }
  std::unique_ptr<ExecutionEngine> engine = std::move(*engineOr);
  attnrun::registerRuntimeSymbols(*engine);
  return std::make_unique<JitExecutable>(
      std::move(engine), ("_mlir_ciface_" + entry.getSymName()).str(),
      std::move(traceNames));
}

/// The library's record of the code's target ("<cpu>\n<features>"): the
/// host must be able to run it.
static LogicalResult checkLibraryTarget(void *handle, StringRef path) {
  auto *target = reinterpret_cast<const char *>(
      dlsym(handle, attn::kTargetSymbol.data()));
  if (!target)
    return success(); // checkLibrarySignature has reported an old library.
  auto [cpu, features] = StringRef(target).split('\n');
  attn::AttnTargetOptions options;
  options.cpu = cpu.str();
  options.features = features.str();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm =
      attn::createAttnTargetMachine(options, error);
  if (!tm)
    return reportError("'" + path + "' was compiled for CPU '" + cpu +
                       "', which this attn-run does not know: " + error);
  std::string missing = attn::getFeaturesMissingOnHost(*tm);
  if (!missing.empty())
    return reportError("'" + path + "' was compiled for CPU '" + cpu +
                       "' and this host cannot run it: it lacks " + missing);
  return success();
}

/// The library's record of @entry's signature must be the module's.
static LogicalResult checkLibrarySignature(void *handle, StringRef path,
                                           func::FuncOp entry) {
  std::string symbol =
      (attn::kSignatureSymbolPrefix + entry.getSymName()).str();
  auto *recorded =
      reinterpret_cast<const char *>(dlsym(handle, symbol.c_str()));
  if (!recorded)
    return reportError("'" + path + "' records no signature of @" +
                       entry.getSymName() + " (no symbol '" + symbol +
                       "'): build it with this attn-compile from '" +
                       inputFilename + "'");
  std::string expected = attn::getSignatureText(entry.getFunctionType());
  if (expected != recorded)
    return reportError(
        "'" + path + "' was built for another @" + entry.getSymName() +
        ": the library has " + StringRef(recorded).split(": ").second +
        ", '" + inputFilename + "' has " +
        StringRef(expected).split(": ").second +
        " (rebuild the library from this module)");
  return success();
}

/// Checks that `path` is a whole x86-64 ELF shared library before dlopen
/// maps it: the loader maps each segment of a file cut short and the first
/// touch of a page past its end is SIGBUS, inside dlopen.
static LogicalResult checkSharedLibraryFile(StringRef path) {
  auto fail = [&](const Twine &why) {
    return reportError("cannot load '" + path + "': " + why +
                       " (rebuild it with attn-compile --emit=so)");
  };
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile(path);
  if (!file)
    return fail("not a valid object file: " +
                llvm::toString(file.takeError()));
  auto *elf =
      dyn_cast<llvm::object::ELF64LEObjectFile>(file->getBinary());
  if (!elf || elf->getELFFile().getHeader().e_machine != llvm::ELF::EM_X86_64)
    return fail("not an x86-64 ELF file");
  if (elf->getELFFile().getHeader().e_type != llvm::ELF::ET_DYN)
    return fail("not a shared library");
  auto segments = elf->getELFFile().program_headers();
  if (!segments)
    return fail(llvm::toString(segments.takeError()));
  uint64_t size = elf->getData().size();
  for (const auto &segment : *segments)
    if (segment.p_type == llvm::ELF::PT_LOAD &&
        (segment.p_offset > size || segment.p_filesz > size - segment.p_offset))
      return fail("the file is " + Twine(size) +
                  " bytes, shorter than its segments say (truncated?)");
  return success();
}

static std::unique_ptr<Executable> loadSo(StringRef path, func::FuncOp entry) {
  if (failed(checkSharedLibraryFile(path)))
    return nullptr;
  // dlopen searches the library path for names without a slash.
  SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  void *handle = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    fail("cannot load '" + path + "': " + dlerror());
    return nullptr;
  }
  std::string symbol = ("_mlir_ciface_" + entry.getSymName()).str();
  void *fn = dlsym(handle, symbol.c_str());
  if (!fn) {
    dlclose(handle);
    fail("'" + path + "' has no symbol '" + symbol +
         "' (was it built from this file by attn-compile?)");
    return nullptr;
  }
  if (failed(checkLibrarySignature(handle, path, entry)) ||
      failed(checkLibraryTarget(handle, path))) {
    dlclose(handle);
    return nullptr;
  }
  // The library has its own copy of the runtime.
  if (auto *setHandler =
          reinterpret_cast<decltype(&attnrt_set_check_failure_handler)>(
              dlsym(handle, "attnrt_set_check_failure_handler")))
    setHandler(onCheckFailure);
  return std::make_unique<SoExecutable>(handle, fn);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// One call: builds descriptors, calls, copies the results out and frees the
/// buffers the callee allocated.
static LogicalResult runOnce(Executable &exe, ArrayRef<HostTensor> inputs,
                             ArrayRef<ResultSpec> results,
                             SmallVectorImpl<HostTensor> *outputs,
                             double *seconds) {
  auto getRank = [](const HostTensor &t) -> int64_t {
    return t.getShape().size();
  };
  MemRefDescriptors argDescs(llvm::map_to_vector(inputs, getRank));
  for (auto [i, t] : llvm::enumerate(inputs))
    t.writeDescriptor(argDescs.get(i));
  MemRefDescriptors resultDescs(
      llvm::map_to_vector(results, [](const ResultSpec &r) { return r.rank; }));

  // The results come back in one struct, passed first.
  SmallVector<void *> args;
  if (!results.empty())
    args.push_back(resultDescs.data());
  for (unsigned i = 0; i < inputs.size(); ++i)
    args.push_back(argDescs.get(i));

  auto start = std::chrono::steady_clock::now();
  if (failed(exe.call(args)))
    return failure();
  auto end = std::chrono::steady_clock::now();
  if (seconds)
    *seconds = std::chrono::duration<double>(end - start).count();

  // Copy every result before freeing any: results may share a buffer
  // (`return %x, %x`), and each buffer is freed once.
  llvm::DenseSet<intptr_t> notOwned;
  for (const HostTensor &t : inputs)
    notOwned.insert(reinterpret_cast<intptr_t>(t.getData()));
  notOwned.insert(0xdeadbeef); // memref.global constants: not heap memory
  notOwned.insert(0);
  SmallVector<intptr_t> owned;
  std::string error;
  for (auto [i, r] : llvm::enumerate(results)) {
    DynamicMemRefType<char> memref = resultDescs.read(i);
    if (outputs && error.empty()) {
      std::optional<HostTensor> out = copyFromMemRef(memref, r.dtype, error);
      if (out)
        outputs->push_back(std::move(*out));
      else
        error = "result " + std::to_string(i) + ": " + error;
    }
    auto allocated = reinterpret_cast<intptr_t>(memref.basePtr);
    if (notOwned.insert(allocated).second)
      owned.push_back(allocated);
  }
  for (intptr_t p : owned)
    std::free(reinterpret_cast<void *>(p));
  if (!error.empty()) {
    return reportError(error);
  }
  return success();
}

namespace {
struct Tolerance {
  double atol, rtol;
};
} // namespace

static Tolerance defaultTolerance(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return {1e-10, 1e-10};
  case DType::F16:
    return {2e-2, 2e-2};
  case DType::BF16:
    return {5e-2, 5e-2};
  default:
    return {1e-4, 1e-4};
  }
}

//===----------------------------------------------------------------------===//
// Input: the command line, the entry function and its arguments
//===----------------------------------------------------------------------===//

/// The options that must agree with each other, before anything is read.
static LogicalResult checkOptions() {
  for (cl::opt<double> *tol : {&atolOpt, &rtolOpt}) {
    if (!tol->getNumOccurrences() || (std::isfinite(*tol) && *tol >= 0))
      continue;
    std::string value;
    llvm::raw_string_ostream(value) << llvm::format("%g", tol->getValue());
    return reportError("--" + tol->ArgStr + "=" + value +
                       ": expected a finite number >= 0");
  }
  if (dist != "uniform" && dist != "normal")
    return reportError("--dist=" + dist + ": expected uniform or normal");
  std::string threads;
  if (failed(common.checkThreads(threads)))
    return reportError(threads);
  // libomp reads OMP_NUM_THREADS when the parallel code (JIT-compiled, or a
  // --so library's) first runs.
  if ((common.numThreads != 1 || !soPath.empty()) &&
      failed(attn::checkOmpNumThreadsEnvironment(threads)))
    return reportError(threads);
  if (!soPath.empty() &&
      (common.noFuse || common.noOutlineKernels || common.noTileAndFuse ||
       common.backend.getNumOccurrences() ||
       common.numThreads.getNumOccurrences()))
    return reportError("--no-fuse, --no-outline-kernels, --no-tile-and-fuse, "
                       "--backend and --num-threads choose how "
                       "attn-compile builds the library; they have no effect "
                       "with --so");
  return success();
}

/// The public function --entry names, or an error listing the functions.
static FailureOr<func::FuncOp> findEntry(ModuleOp module) {
  auto entry = module.lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isExternal()) {
    std::string names;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal())
        names += (names.empty() ? "" : ", ") + f.getSymName().str();
    return reportError("no function '" + entryName + "' in '" + inputFilename +
                       "' (functions: " + (names.empty() ? "none" : names) +
                       ")");
  }
  if (!entry.isPublic())
    return reportError(
        "function '" + entryName +
        "' is private; only public functions get a C entry point");
  // Its C entry point would return fewer results than its type has, and a
  // check run would feed the written inputs to the second run.
  for (unsigned i = 0, e = entry.getNumArguments(); i < e; ++i)
    if (attn::isWrittenInPlace(entry, i))
      return reportError("function '" + entryName + "' writes argument " +
                         Twine(i) +
                         " in place (bufferization.writable = true); "
                         "attn-run runs functions that write no argument");
  return entry;
}

/// The options that say what the entry's inputs are.
static InputOptions getInputOptions() {
  InputOptions options;
  options.entryName = entryName;
  options.seed = seed;
  options.normalDist = dist == "normal";
  options.shapes.assign(shapes.begin(), shapes.end());
  options.inputs.assign(inputFiles.begin(), inputFiles.end());
  options.outputs.assign(outputFiles.begin(), outputFiles.end());
  return options;
}

/// What the caller reads back from each result descriptor.
static FailureOr<SmallVector<ResultSpec>> getResultSpecs(func::FuncOp entry) {
  SmallVector<ResultSpec> results;
  for (auto [i, resultType] : llvm::enumerate(entry.getResultTypes())) {
    std::optional<DType> dtype = getTensorDType(resultType);
    if (!dtype)
      return entry.emitError()
             << "result " << i << " of @" << entryName << " has type "
             << resultType
             << ", which attn-run cannot read back (supported: ranked "
                "tensors)";
    results.push_back({*dtype, cast<RankedTensorType>(resultType).getRank(),
                       typeString(resultType)});
  }
  return results;
}

//===----------------------------------------------------------------------===//
// Compare: --check against the unfused math lowering
//===----------------------------------------------------------------------===//

/// The reference: `entry` compiled unfused with the math backend, run on
/// copies of the inputs. Compiled code never writes its inputs (the pipeline
/// marks them read-only), but should that break, the reference would still
/// see the true inputs; the measured runs use the inputs themselves, so
/// --repeat measures no extra copies in RSS.
static LogicalResult runReference(ModuleOp module, func::FuncOp entry,
                                  ArrayRef<HostTensor> inputs,
                                  ArrayRef<ResultSpec> results,
                                  SmallVectorImpl<HostTensor> &expected) {
  attn::AttnPipelineOptions refOptions;
  refOptions.fuse = false;
  refOptions.backend = attn::SdpaCpuBackend::Math;
  refOptions.numThreads = common.numThreads.getValue();
  // Every op lowered where it is, whole: --check also compares outlined
  // kernels and tiled, fused row blocks.
  refOptions.outlineKernels = false;
  refOptions.tileAndFuse = false;
  std::unique_ptr<Executable> ref = compileJit(module, entry, refOptions);
  if (!ref)
    return failure();
  SmallVector<HostTensor> refInputs;
  for (const HostTensor &t : inputs) {
    std::string error;
    std::optional<HostTensor> copy = t.clone(error);
    if (!copy)
      return reportError("--check: " + error);
    refInputs.push_back(std::move(*copy));
  }
  return runOnce(*ref, refInputs, results, &expected, nullptr);
}

/// The tolerance of --check: that of the least precise float type anywhere
/// in the signature (an f32 result computed from bf16 inputs carries bf16
/// error), unless --atol/--rtol say otherwise.
static Tolerance getCheckTolerance(ArrayRef<HostTensor> inputs,
                                   ArrayRef<ResultSpec> results) {
  Tolerance tolerance = {0, 0};
  auto loosen = [&](DType dtype) {
    if (!isFloat(dtype))
      return;
    Tolerance t = defaultTolerance(dtype);
    tolerance.atol = std::max(tolerance.atol, t.atol);
    tolerance.rtol = std::max(tolerance.rtol, t.rtol);
  };
  for (const HostTensor &t : inputs)
    loosen(t.getDType());
  for (const ResultSpec &r : results)
    loosen(r.dtype);
  if (atolOpt.getNumOccurrences())
    tolerance.atol = atolOpt;
  if (rtolOpt.getNumOccurrences())
    tolerance.rtol = rtolOpt;
  return tolerance;
}

/// Prints the check line and whether every element passes: |out - ref| <=
/// atol + rtol * |ref|, NaN only against NaN, infinities equal. Fails when
/// a result's shape differs from the reference's.
static FailureOr<bool> compareWithReference(ArrayRef<HostTensor> outputs,
                                            ArrayRef<HostTensor> expected,
                                            Tolerance tol) {
  double maxAbs = 0, maxRel = 0;
  int64_t bad = 0, total = 0;
  for (auto [i, out] : llvm::enumerate(outputs)) {
    const HostTensor &want = expected[i];
    if (out.getShape() != want.getShape()) {
      llvm::outs() << "check: result " << i << " has shape " << out.describe()
                   << ", the reference " << want.describe() << " FAIL\n";
      return failure();
    }
    for (int64_t e = 0, n = out.getNumElements(); e < n; ++e, ++total) {
      double a = out.get(e), b = want.get(e);
      // NaN against a number, or an infinity against anything else, is an
      // infinite error: the figures must not look better than the count.
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
        bool same = std::isnan(a) ? std::isnan(b) : a == b;
        if (!same) {
          ++bad;
          maxAbs = maxRel = std::numeric_limits<double>::infinity();
        }
        continue;
      }
      double err = std::fabs(a - b);
      maxAbs = std::max(maxAbs, err);
      if (std::fabs(b) >= tol.atol)
        maxRel = std::max(maxRel, err / std::fabs(b));
      bad += err > tol.atol + tol.rtol * std::fabs(b);
    }
  }
  llvm::outs() << llvm::format("check: max_abs_err=%.3e max_rel_err=%.3e ",
                               maxAbs, maxRel)
               << "tol="
               << llvm::formatv("{0:e1}+{1:e1}*|ref|", tol.atol, tol.rtol);
  if (bad)
    llvm::outs() << " mismatches=" << bad << "/" << total << " FAIL\n";
  else
    llvm::outs() << " ok\n";
  return bad == 0;
}

//===----------------------------------------------------------------------===//
// Run: the results, the trace and the timing
//===----------------------------------------------------------------------===//

/// The first run: its results (with --trace, a trace of it).
static LogicalResult runFirst(Executable &exe, ArrayRef<HostTensor> inputs,
                              ArrayRef<ResultSpec> results,
                              SmallVectorImpl<HostTensor> &outputs) {
  if (!tracePath.empty()) {
    exe.traceReset();
    exe.traceEnable(true);
  }
  if (failed(runOnce(exe, inputs, results, &outputs, nullptr)))
    return failure();
  if (tracePath.empty())
    return success();
  exe.traceEnable(false);
  if (failed(exe.traceWrite(tracePath)))
    return reportError("cannot write the trace to '" + tracePath + "'");
  return success();
}

/// One checksum line per result; the results --output names go to .npy.
static LogicalResult
printResults(ArrayRef<HostTensor> outputs,
             const DenseMap<unsigned, std::string> &paths) {
  for (auto [i, out] : llvm::enumerate(outputs)) {
    double sum = 0, absSum = 0;
    int64_t nans = 0;
    for (int64_t e = 0, n = out.getNumElements(); e < n; ++e) {
      double v = out.get(e);
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      sum += v;
      absSum += std::fabs(v);
    }
    llvm::outs() << llvm::format(
        "result %u: %s sum=%.6e abs_sum=%.6e nan=%lld\n",
        static_cast<unsigned>(i), out.describe().c_str(), sum, absSum,
        static_cast<long long>(nans));
    auto path = paths.find(i);
    std::string error;
    if (path != paths.end() && !writeNpy(path->second, out, error))
      return reportError("--output " + Twine(i) + ": " + error);
  }
  llvm::outs().flush();
  return success();
}

/// --repeat more runs after the first (the warm-up); prints their median and
/// minimum.
static LogicalResult timeRuns(Executable &exe, ArrayRef<HostTensor> inputs,
                              ArrayRef<ResultSpec> results) {
  SmallVector<double> times;
  for (unsigned r = 0; r < repeat; ++r) {
    double seconds;
    if (failed(runOnce(exe, inputs, results, nullptr, &seconds)))
      return failure();
    times.push_back(seconds * 1e3);
  }
  llvm::sort(times);
  size_t mid = times.size() / 2;
  double median =
      times.size() % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
  llvm::outs() << llvm::format("time: median=%.3f ms min=%.3f ms\n", median,
                               times.front());
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  attnrt_set_check_failure_handler(onCheckFailure);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Inline assembly (the quantized GEMV's vpdpbusd) is assembled in
  // the object file.
  llvm::InitializeNativeTargetAsmParser();
  attn::registerAllAttnPasses();
  cl::HideUnrelatedOptions(toolCategory);
  cl::ParseCommandLineOptions(argc, argv, kOverview);
  if (failed(checkOptions()))
    return 1;

  // Input.
  std::unique_ptr<attn::AttnInputModule> input =
      attn::parseInputModule(inputFilename, "attn-run");
  if (!input)
    return 1;
  ModuleOp module = *input->module;
  FailureOr<func::FuncOp> entry = findEntry(module);
  if (failed(entry))
    return 1;
  InputOptions inputOptions = getInputOptions();
  FailureOr<IndexedOptions> indexed =
      parseIndexedOptions(inputOptions, entry->getFunctionType());
  if (failed(indexed))
    return 1;
  if ((soPath.empty() || check) && failed(rejectLLVMDialect(module)))
    return 1;
  FailureOr<SmallVector<HostTensor>> inputs =
      makeInputs(*entry, inputOptions, *indexed);
  if (failed(inputs))
    return 1;
  FailureOr<SmallVector<ResultSpec>> results = getResultSpecs(*entry);
  if (failed(results))
    return 1;

  // Compile.
  attn::AttnPipelineOptions options;
  common.applyTo(options);
  options.trace = !tracePath.empty();
  std::unique_ptr<Executable> exe = soPath.empty()
                                        ? compileJit(module, *entry, options)
                                        : loadSo(soPath, *entry);
  if (!exe)
    return 1;

  // Run (the reference first) and compare.
  SmallVector<HostTensor> expected, outputs;
  if (check &&
      failed(runReference(module, *entry, *inputs, *results, expected)))
    return 1;
  if (failed(runFirst(*exe, *inputs, *results, outputs)) ||
      failed(printResults(outputs, indexed->outputPaths)))
    return 1;
  FailureOr<bool> checked = true;
  if (check)
    checked = compareWithReference(outputs, expected,
                                   getCheckTolerance(*inputs, *results));
  if (failed(checked))
    return 1;
  if (repeat > 0 && failed(timeRuns(*exe, *inputs, *results)))
    return 1;
  llvm::outs().flush();
  return *checked ? 0 : 1;
}
