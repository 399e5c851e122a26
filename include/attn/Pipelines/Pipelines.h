//===- Pipelines.h - attn on tensors to LLVM IR and object code -*- C++ -*-===//
//
// The whole AttnFuse CPU pipeline as attn-compile and attn-run use it:
//   [attn-fuse-sdpa] -> CPU lowering (backend auto|flash|math) -> LLVM dialect
//   -> LLVM IR -> optimized LLVM IR -> object code for a TargetMachine,
// plus the C header that declares the compiled functions' C ABI.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "attn/Pipelines/CpuPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class SourceMgr;
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::attn {

/// Where attn.sdpa runs: the CPU lowering, or the CUDA kernels for the
/// configurations they support (the rest stays on the CPU).
enum class CompileTarget { Cpu, Cuda };

/// The values of a typed `--target` option: "cpu" or "cuda".
llvm::cl::ValuesClass compileTargetValues();

/// An input module parsed for a tool, in its own context (every AttnFuse
/// dialect and the LLVM IR translations registered), with the diagnostic
/// handler that points diagnostics at its source lines.
struct AttnInputModule {
  std::unique_ptr<MLIRContext> context;
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagnostics;
  OwningOpRef<ModuleOp> module;
};

/// Bounds on the input that MLIR's parser, which recurses per level, can take
/// on any stack: nested brackets ((), [], {}, <> of regions, attributes and
/// types) and operators in one affine map.
inline constexpr int64_t kMaxNestingDepth = 256;
inline constexpr int64_t kMaxAffineOperators = 1024;

/// Where and how an input text exceeds one of the bounds.
struct InputLimitViolation {
  size_t offset;
  std::string message;
};

/// Scans MLIR text (skipping strings and comments) for the first place that
/// exceeds kMaxNestingDepth or kMaxAffineOperators.
std::optional<InputLimitViolation> findInputLimitViolation(StringRef text);

/// findInputLimitViolation on buffer `bufferId` of `sourceMgr`; a violation
/// is printed as a located error and fails.
LogicalResult checkInputLimits(llvm::SourceMgr &sourceMgr, unsigned bufferId);

/// Reads `filename` ('-': stdin) and parses it. The context prints located
/// messages, not dumps of lowered ops. Returns null when the file cannot be
/// read or is a device (/dev/zero has no end), reported on stderr as
/// "<toolName>: error: ...", exceeds the input limits (checkInputLimits) or
/// does not parse (a located diagnostic).
std::unique_ptr<AttnInputModule> parseInputModule(StringRef filename,
                                                  StringRef toolName);

/// The options of the whole pipeline (buildAttnToLLVMPipeline): the CPU
/// lowering's, plus fusion and the target. One struct serves attn-compile,
/// attn-run (through lowerForTarget, ToolOptions.h) and the pipeline
/// `attn-to-llvm` that attn-opt registers (registerAttnPipelines). The
/// run-time checks (check-allocations, check-failure-calls) are on.
struct AttnPipelineOptions : public AttnCpuPipelineOptions {
  AttnPipelineOptions();

  /// Run attn-fuse-sdpa before lowering.
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("run attn-fuse-sdpa first"),
                    llvm::cl::init(true)};
  /// "cpu", or "cuda": attn.sdpa ops the CUDA kernels support become calls
  /// into the kernels' runtime bridge (attn-lower-sdpa-to-cuda; with backend
  /// "flash" every attn.sdpa must be supported), everything else is lowered
  /// for the CPU, and allocations use CUDA managed memory.
  Option<CompileTarget> target{*this, "target",
                               llvm::cl::desc("where attn.sdpa runs"),
                               llvm::cl::init(CompileTarget::Cpu),
                               compileTargetValues()};
};

/// The OpenMP runtime the lowered code calls when numThreads != 1 (the
/// libomp that the build found), for the JIT and for linking libraries.
StringRef getOpenMPRuntimePath();

/// Registers what the pipelines need beyond registerAllAttnDialects: the
/// translations from MLIR's LLVM dialect (and friends) to LLVM IR.
void registerAttnPipelineTranslations(DialectRegistry &registry);

/// Adds the passes that take a module of attn (and upstream) ops on tensors
/// to the LLVM dialect.
void buildAttnToLLVMPipeline(OpPassManager &pm,
                             const AttnPipelineOptions &options);

/// Registers `attn-to-llvm` (buildAttnToLLVMPipeline, AttnPipelineOptions)
/// for attn-opt: the passes of attn-compile and attn-run, without what they
/// do around the pass pipeline (C entry points, argument checks).
void registerAttnPipelines();

/// Prepares the public functions of `module` for being called from C: marks
/// them `llvm.emit_c_interface` (entry point `_mlir_ciface_<name>` taking
/// memref descriptors) and their tensor arguments
/// `bufferization.writable = false` (compiled code never writes its inputs),
/// except those already marked `true`: arguments the function writes in
/// place (attn/Transforms/Cpu/InPlaceArguments.h).
void prepareCInterface(ModuleOp module);

/// Makes every `_mlir_ciface_<name>` of `signatures` (the tensor-level
/// types of the public functions) first pass each tensor argument's
/// descriptor to the runtime's attnrt_check_argument: wrong static sizes,
/// negative sizes, non-zero offsets and strided views are reported through
/// the check-failure handler (include/attn/Runtime/AttnRuntime.h) instead of
/// being read wrongly. Entry points that are missing or have another arity
/// are left for verifyLoweredCInterface to report.
LogicalResult
insertArgumentChecks(ModuleOp lowered,
                     ArrayRef<std::pair<std::string, FunctionType>> signatures);

/// prepareCInterface, then the pipeline (failed run-time checks call the
/// runtime's attnrt_check_failed), then insertArgumentChecks, then
/// verifyLoweredCInterface for every public function. Errors are reported
/// as diagnostics on the module's context.
LogicalResult lowerToLLVMDialect(ModuleOp module,
                                 const AttnPipelineOptions &options);

/// Span names from the `attn.trace_names` module attribute (index = id);
/// empty if the lowering added none.
SmallVector<std::string> getTraceNames(ModuleOp module);

/// Checks that the lowered module has `_mlir_ciface_<name>` with the arity
/// the C header promises for the tensor-level signature `funcType`.
LogicalResult verifyLoweredCInterface(ModuleOp lowered, StringRef name,
                                      FunctionType funcType, Location loc);

//===----------------------------------------------------------------------===//
// LLVM IR and object code
//===----------------------------------------------------------------------===//

struct AttnTargetOptions {
  /// Empty: the host CPU.
  std::string cpu;
  /// Comma-separated "+feat,-feat"; empty with an empty cpu: the host's
  /// features. Appended to the host features when cpu is empty.
  std::string features;
  /// LLVM optimization level 0-3.
  unsigned optLevel = 3;
};

/// A TargetMachine for the host triple (PIC, so objects link into shared
/// libraries). Returns null and sets `error` on failure (unknown CPU, ...).
std::unique_ptr<llvm::TargetMachine>
createAttnTargetMachine(const AttnTargetOptions &options, std::string &error);

/// The instruction set extensions that code for `tm` may use and this host
/// does not support (", "-separated, sorted), "" when the host can run it.
std::string getFeaturesMissingOnHost(const llvm::TargetMachine &tm);

/// Sets the options that depend on the target machine from its description
/// (cpu::getTarget): the vector width the lowering tiles for, the
/// instruction families of its products and the float conversions.
void applyTargetMachine(AttnPipelineOptions &options,
                        const llvm::TargetMachine &tm);

/// The tools' compile step: applyTargetMachine, then lowerToLLVMDialect.
LogicalResult lowerForTarget(ModuleOp module, AttnPipelineOptions &options,
                             const llvm::TargetMachine &tm);

/// Translates a module in the LLVM dialect to LLVM IR, sets triple and data
/// layout from `tm` and runs LLVM's O<optLevel> pipeline. Null on failure
/// (diagnostics reported on the module).
std::unique_ptr<llvm::Module> translateAndOptimize(ModuleOp module,
                                                   llvm::LLVMContext &ctx,
                                                   llvm::TargetMachine &tm,
                                                   unsigned optLevel);

/// Writes `llvmModule` as an object file.
LogicalResult emitObjectFile(llvm::Module &llvmModule, llvm::TargetMachine &tm,
                             llvm::raw_pwrite_stream &os, std::string &error);

//===----------------------------------------------------------------------===//
// C header, C names and what a library says about itself
//===----------------------------------------------------------------------===//

/// Fails with an error located at the function when a public function's name
/// is not a C identifier ([A-Za-z_][A-Za-z0-9_]*): its entry point
/// `_mlir_ciface_<name>` and the header's declarations use it as it is.
LogicalResult verifyCFunctionNames(ModuleOp module);

/// Libraries from attn-compile export, per public function `f`, a C string
/// `attn_signature_f` holding getSignatureText of its tensor-level type, and
/// `attn_target`, "<cpu>\n<features>" of the code, so that attn-run --so can
/// check a library against the module it is given and against the host.
inline constexpr llvm::StringLiteral kSignatureSymbolPrefix = "attn_signature_";
inline constexpr llvm::StringLiteral kTargetSymbol = "attn_target";
/// And `attn_packed_f(void **args)`, which calls `_mlir_ciface_f` with the
/// values args[0..n) point to (attnrt_call_packed's calling convention).
inline constexpr llvm::StringLiteral kPackedSymbolPrefix = "attn_packed_";

/// "attn-signature 1: <function type>".
std::string getSignatureText(FunctionType type);

/// Adds the exported constants above to `llvmModule` for the public
/// functions of `signatures` (name, tensor-level type) and the target `tm`.
void embedLibraryInfo(
    llvm::Module &llvmModule,
    ArrayRef<std::pair<std::string, FunctionType>> signatures,
    const llvm::TargetMachine &tm);

/// Writes a C header declaring `_mlir_ciface_<name>` for every public
/// function of the tensor-level `module` (call before lowering). Fails with a
/// located diagnostic on a signature with no C mapping. `cudaManaged`: the
/// module is compiled for --target=cuda (results in CUDA managed memory, and
/// the header declares attnrt_cuda_free).
LogicalResult emitCHeader(ModuleOp module, llvm::raw_ostream &os,
                          bool cudaManaged, StringRef guardName);

} // namespace mlir::attn

#endif // ATTN_PIPELINES_PIPELINES_H
