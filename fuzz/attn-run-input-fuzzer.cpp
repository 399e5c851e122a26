//===- attn-run-input-fuzzer.cpp - fuzz attn-run's argument handling ------===//
//
// attn-run's --entry, --shape, --input, --output, --seed and --dist, run by
// the code attn-run runs (tools/attn-run/RunInputs.cpp) against a fixed
// module of entry points with static, dynamic, f16/bf16/f32/f64, i1 and
// integer arguments. The input's first line holds the options, separated by
// spaces ("--shape 0=2x?x8 --input 1=@npy --seed 5"); the rest is a .npy
// file that the options name as "@npy". Rejected options are expected
// results; accepted ones must give inputs of the entry's element types and
// shapes compatible with its argument types, and an --input argument must
// hold the file's array: anything else aborts. Nothing is compiled.
//
//===----------------------------------------------------------------------===//

#include "RunInputs.h"

#include "attn/InitAttn.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;
using namespace attnrun;

static const char *const kModule = R"mlir(
func.func @attend(%q: tensor<?x4x?x8xf32>, %k: tensor<?x4x?x8xf32>, %m: tensor<?x?xi1>) -> tensor<?x4x?x8xf32> {
  return %q : tensor<?x4x?x8xf32>
}
func.func @narrow(%a: tensor<3x5xf16>, %b: tensor<?xbf16>, %c: tensor<f64>) -> (tensor<3x5xf16>, tensor<?xbf16>) {
  return %a, %b : tensor<3x5xf16>, tensor<?xbf16>
}
func.func @ints(%a: tensor<2x?xi8>, %b: tensor<?x2xi16>, %c: tensor<4xi32>, %d: tensor<?xi64>) -> tensor<4xi32> {
  return %c : tensor<4xi32>
}
func.func @scalar(%a: f32) -> f32 {
  return %a : f32
}
)mlir";

static void check(bool ok, const char *what) {
  if (ok)
    return;
  llvm::errs() << "attn fuzz: " << what << "\n";
  abort();
}

/// The module, parsed once; its diagnostics (an unsupported argument type)
/// are dropped.
static ModuleOp getModule() {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    attn::registerAllAttnDialects(registry);
    auto *ctx = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    ctx->getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
    return ctx;
  }();
  static OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kModule, context);
  return *module;
}

/// A file descriptor holding `bytes`, named by /proc/self/fd/<fd>.
static int makeMemoryFile(llvm::StringRef bytes) {
  int fd = memfd_create("npy", 0);
  check(fd >= 0, "memfd_create failed");
  check(write(fd, bytes.data(), bytes.size()) ==
            static_cast<ssize_t>(bytes.size()),
        "writing the memory file failed");
  return fd;
}

/// The options of the input's first line.
static InputOptions parseOptions(llvm::StringRef line, llvm::StringRef npyPath) {
  InputOptions options;
  options.entryName = "attend";
  SmallVector<StringRef> words;
  line.split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (size_t i = 0; i + 1 < words.size(); i += 2) {
    std::string value = words[i + 1].str();
    if (size_t at = value.find("@npy"); at != std::string::npos)
      value.replace(at, 4, npyPath.str());
    StringRef flag = words[i];
    if (flag == "--entry")
      options.entryName = value;
    else if (flag == "--shape")
      options.shapes.push_back(value);
    else if (flag == "--input")
      options.inputs.push_back(value);
    else if (flag == "--output")
      options.outputs.push_back(value);
    else if (flag == "--seed")
      (void)llvm::to_integer(value, options.seed);
    else if (flag == "--dist")
      options.normalDist = value == "normal";
  }
  return options;
}

/// Whether a `--shape I=AxBx...` asks for more than kMaxElements: attn-run
/// then fills gigabytes of random input, correctly but slowly (a libFuzzer
/// timeout, not a bug), so the harness leaves such inputs out.
static bool isHugeShape(llvm::StringRef value) {
  constexpr uint64_t kMaxElements = uint64_t(1) << 22;
  llvm::StringRef dims = value.split('=').second;
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  uint64_t elements = 1;
  for (StringRef part : parts) {
    uint64_t dim = 0;
    if (part.getAsInteger(10, dim))
      return false; // malformed: attn-run's own error
    if (dim != 0 && elements > kMaxElements / dim)
      return true;
    elements *= dim;
  }
  return elements > kMaxElements;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto [line, npy] = text.split('\n');
  InputOptions probe = parseOptions(line, "");
  if (llvm::any_of(probe.shapes, isHugeShape))
    return -1; // not added to the corpus
  int fd = makeMemoryFile(npy);
  std::string npyPath = "/proc/self/fd/" + std::to_string(fd);
  InputOptions options = parseOptions(line, npyPath);
  ModuleOp module = getModule();
  auto entry = module.lookupSymbol<func::FuncOp>(options.entryName);
  if (entry) {
    FailureOr<IndexedOptions> indexed =
        parseIndexedOptions(options, entry.getFunctionType());
    FailureOr<SmallVector<HostTensor>> inputs =
        succeeded(indexed) ? makeInputs(entry, options, *indexed)
                           : FailureOr<SmallVector<HostTensor>>(failure());
    if (succeeded(inputs)) {
      check(inputs->size() == entry.getNumArguments(), "an argument missing");
      for (auto [i, t] : llvm::enumerate(*inputs)) {
        auto type = cast<RankedTensorType>(entry.getArgumentTypes()[i]);
        check(getTensorDType(type) == t.getDType(), "an input of another dtype");
        check(succeeded(verifyCompatibleShape(type.getShape(), t.getShape())),
              "an input whose shape contradicts its type");
        auto path = indexed->inputPaths.find(i);
        if (path == indexed->inputPaths.end())
          continue;
        std::string error;
        std::optional<HostTensor> file = readNpy(path->second, error);
        check(file && file->getNumBytes() == t.getNumBytes() &&
                  std::memcmp(file->getData(), t.getData(),
                              t.getNumBytes()) == 0,
              "an --input argument that is not the file's array");
      }
    }
  }
  close(fd);
  return 0;
}
