//===- attn-gemm-fuzzer.cpp - CPU GEMM/GEMV against a float64 reference ---===//
//
// A differential target for the CPU products: the input's bytes choose a
// matrix product as the Python exporter writes it (python/attnfuse/ops/
// products.py and attention.py):
//   - nn.Linear: x[..., K] . W^T, W an [N, K] `attn.weight` argument through
//     linalg.transpose, leading dims of x collapsed into rows;
//   - GPT-2's Conv1D (addmm): a stored [K, N] weight;
//   both onto zeros (linalg.fill) or onto a bias extended to every row (the
//   linalg.generic that writes the [N] bias into the f32 accumulator), the
//   f32 result returned or rounded to bf16 (a truncf generic);
//   - torch.matmul/bmm: a batched "attn.matmul" (rank-3 or rank-2 rhs);
// M from 1 (the GEMV/decode path) to a few hundred, static or dynamic (?),
// N and K from 1 to 300 around the 16/32/64/128/256 block edges, f32 or
// bf16 (accumulated in f32), and with or without weight prepacking: the
// module then goes through attn-cpu-prepack-weights (attn-compile
// --prepack-weights, same options from the target machine) and the harness
// calls the pack entry point `_mlir_ciface_f_pack_<i>` on the raw weight
// before passing its panels to `f`.
//
// It is JIT-compiled with the tools' pipeline for the host's instruction
// set (as attn::lowerForTarget: vector width, bf16 pair dots and AMX from
// the target machine); some inputs take a subset of it that other hosts
// have (the host's features without AVX-512, or without AVX: 256- and
// 128-bit code) or force the bf16 pair path (vdpbf16ps) where the host has
// AVX512-BF16 but its CPU's cost model chose widened FMAs. It is run on
// seeded inputs (sometimes one NaN or infinity among them), and the result
// is compared with a float64 product computed here from the same inputs:
// bf16 inputs and their products are exact in f64, so only the f32
// accumulation (bounded by (K + 2) * 2^-24 * sum |x w|, twice that here)
// and the final rounding to bf16 (2^-8 |y|) may differ; NaN only against
// NaN, infinities exactly. A difference, a failed run-time check or a
// pipeline error on a valid module aborts with the module's text.
//
// AMX: on a host with amx-tile and amx-bf16 the bf16 products are compiled
// for the tiles; each is run twice, once with the tiles and once with them
// forbidden (the vdpbf16ps/vector fallback that ATTNFUSE_AMX=0 selects). The
// runtime's attnrt_amx_available() decides once per process (pthread_once,
// lib/Runtime/Amx.c), so the environment variable cannot switch paths
// between runs: the harness renames the compiled code's call to
// attn_fuzz_amx_available, which answers "no" while forbidden and asks the
// runtime otherwise. On hosts without AMX the tiles never run: only the
// vector paths, among them (where the bytes ask for it) the fallback of code
// compiled for AMX (the host's features plus amx-tile and amx-bf16, its
// prepacked panels in whole tiles), with the tiles forbidden.
//
//===----------------------------------------------------------------------===//

#include "AttnFuzzer.h"
#include "HostTensor.h"
#include "Jit.h"

#include "attn/Transforms/Cpu/Passes.h"
#include "attn/InitAttn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Runtime/AttnRuntime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Target/TargetMachine.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace attnrun;
using attn::fuzz::Reader;

namespace {
/// One product.
struct Problem {
  enum Form { Linear, Stored, Matmul } form;
  bool bf16;     // inputs (and the bias) bf16, else f32
  bool bias;     // Linear/Stored: onto a bias, else onto zeros
  bool round;    // the result rounded to bf16 (Matmul: whenever bf16)
  bool dynamic;  // M is `?`
  bool prepack;  // Linear/Stored: attn-cpu-prepack-weights
  bool rhsBatch; // Matmul: rhs [B, K, N], else [K, N]
  int64_t batch; // a leading dim before M (0: none; Matmul: at least 1)
  int64_t m, n, k;
  enum Special { None, NanX, InfX, InfW, NanBias } special;
  uint64_t specialAt;
  /// The target: the host's, the host without AVX-512 or without AVX (the
  /// lowering for 256- or 128-bit vectors, run here), the host with the
  /// bf16 pair path (vdpbf16ps) forced for a bf16 product where the host
  /// has AVX512-BF16 but its CPU's cost model prefers widened FMAs, or, on
  /// a host without AMX, the host plus AMX-BF16 for a bf16 product, run
  /// only with the tiles forbidden (the fallback of an AMX target).
  enum Target { Host, NoAvx512, NoAvx, Pairs, AmxFallback } target;
};
} // namespace

static std::string text;
static Problem problem;
/// Which run is being checked (for the abort message).
static const char *runName = "";

[[noreturn]] static void bug(const llvm::Twine &what) {
  const Problem &p = problem;
  llvm::errs() << "attn fuzz: " << what << "\nproblem: "
               << (p.form == Problem::Linear   ? "linear"
                   : p.form == Problem::Stored ? "stored weight"
                                               : "attn.matmul")
               << " " << (p.bf16 ? "bf16" : "f32") << " batch=" << p.batch
               << " M=" << p.m << " N=" << p.n << " K=" << p.k
               << (p.dynamic ? " dynamic-M" : "") << (p.bias ? " bias" : "")
               << (p.round ? " rounded-to-bf16" : "")
               << (p.prepack ? " prepacked" : "") << " special=" << p.special
               << "@" << p.specialAt << " target="
               << (p.target == Problem::NoAvx512 ? "host,-avx512f"
                   : p.target == Problem::NoAvx  ? "host,-avx"
                   : p.target == Problem::Pairs  ? "host+bf16-pairs"
                   : p.target == Problem::AmxFallback
                       ? "host+amx-tile,+amx-bf16 (tiles forbidden)"
                       : "host")
               << " run=" << runName << "\nmodule:\n" << text << "\n";
  abort();
}

/// A size: mostly one of the block edges and odd sizes, else any in
/// [1, max].
static int64_t pickSize(Reader &in, ArrayRef<int64_t> list, int64_t max) {
  if (in.pick(4) != 0)
    return list[in.pick(list.size())];
  unsigned hi = in.pick(256), lo = in.pick(256);
  return 1 + int64_t(hi * 256 + lo) % max;
}

static Problem chooseProblem(Reader &in) {
  static const int64_t rows[] = {1,  1,  2,  3,  4,  5,   6,   7,   8,
                                 13, 15, 16, 17, 31, 32,  33,  37,  48,
                                 49, 64, 65, 97, 128, 129, 200, 263, 300};
  static const int64_t dims[] = {1,   2,   3,   5,   7,   8,   9,   15,
                                 16,  17,  24,  31,  32,  33,  40,  47,
                                 48,  63,  64,  65,  96,  100, 127, 128,
                                 129, 191, 192, 255, 256, 257, 300};
  Problem p;
  p.form = static_cast<Problem::Form>(in.pick(3));
  p.bf16 = in.pick(2);
  p.bias = p.form != Problem::Matmul && in.pick(2);
  p.round = p.bf16 && (p.form == Problem::Matmul || in.pick(2));
  p.dynamic = in.pick(2);
  p.prepack = p.form != Problem::Matmul && in.pick(2);
  unsigned batch = in.pick(9);
  p.batch = batch >= 6 ? batch - 5 : 0;
  if (p.form == Problem::Matmul && p.batch == 0)
    p.batch = 1;
  p.rhsBatch = p.form == Problem::Matmul && in.pick(2);
  p.m = pickSize(in, rows, 300);
  p.n = pickSize(in, dims, 300);
  p.k = pickSize(in, dims, 300);
  unsigned special = in.pick(16);
  p.special = special <= 4 ? static_cast<Problem::Special>(special)
                           : Problem::None;
  if (p.special == Problem::NanBias && !p.bias)
    p.special = Problem::NanX;
  p.specialAt = in.pick(256) * 256 + in.pick(256);
  unsigned target = in.pick(8);
  p.target = target < 5 ? static_cast<Problem::Target>(target)
                        : Problem::Host;
  if ((p.target == Problem::Pairs || p.target == Problem::AmxFallback) &&
      !p.bf16)
    p.target = Problem::Host;
  // At most 2^25 multiply-adds (the f64 reference runs instrumented).
  while (std::max<int64_t>(p.batch, 1) * p.m * p.n * p.k > (1 << 25)) {
    if (p.batch > 1)
      --p.batch;
    else
      p.m = std::max<int64_t>(1, p.m / 2);
  }
  return p;
}

/// "tensor<AxBx...xT>", ShapedType::kDynamic as '?'.
static std::string tensorType(ArrayRef<int64_t> shape, StringRef element) {
  std::string t = "tensor<";
  for (int64_t d : shape)
    t += (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d)) +
         "x";
  return t + element.str() + ">";
}

/// x's leading dims ([B,] M), with M `?` when dynamic.
static SmallVector<int64_t> leadShape(const Problem &p, bool symbolic) {
  int64_t m = symbolic && p.dynamic ? ShapedType::kDynamic : p.m;
  if (p.batch)
    return {p.batch, m};
  return {m};
}

static SmallVector<int64_t> withLast(SmallVector<int64_t> shape, int64_t d) {
  shape.push_back(d);
  return shape;
}

/// "(d0, d1, d2)" for `rank` dims.
static std::string dimList(int64_t rank) {
  std::string s = "(";
  for (int64_t i = 0; i < rank; ++i)
    s += (i ? ", d" : "d") + std::to_string(i);
  return s + ")";
}

/// The iterator types of an all-parallel generic of `rank` dims.
static std::string parallel(int64_t rank) {
  std::string s = "[";
  for (int64_t i = 0; i < rank; ++i)
    s += i ? ", \"parallel\"" : "\"parallel\"";
  return s + "]";
}

/// nn.Linear or Conv1D as products.py writes them.
static std::string linearText(const Problem &p) {
  std::string t = p.bf16 ? "bf16" : "f32";
  SmallVector<int64_t> lead = leadShape(p, /*symbolic=*/true);
  int64_t rank = lead.size() + 1;
  int64_t rowsDim =
      p.dynamic ? ShapedType::kDynamic : std::max<int64_t>(p.batch, 1) * p.m;
  std::string x = tensorType(withLast(lead, p.k), t);
  std::string acc = tensorType(withLast(lead, p.n), "f32");
  std::string out = tensorType(withLast(lead, p.n), p.round ? "bf16" : "f32");
  std::string rowsX = tensorType({rowsDim, p.k}, t);
  std::string rowsAcc = tensorType({rowsDim, p.n}, "f32");
  std::string wt = tensorType({p.k, p.n}, t);
  std::string w = p.form == Problem::Linear ? tensorType({p.n, p.k}, t) : wt;
  std::string groups = p.batch ? "[[0, 1], [2]]" : "[[0], [1]]";
  std::string dynOperand = p.dynamic ? "%m" : "";
  std::string body;
  if (p.dynamic)
    body += llvm::formatv("  %cdim = arith.constant {0} : index\n"
                          "  %m = tensor.dim %x, %cdim : {1}\n",
                          p.batch ? 1 : 0, x);
  std::string rhs = "%w";
  if (p.form == Problem::Linear) {
    body += llvm::formatv(
        "  %t0 = tensor.empty() : {0}\n  %wt = linalg.transpose ins(%w : "
        "{1}) outs(%t0 : {0}) permutation = [1, 0]\n",
        wt, w);
    rhs = "%wt";
  }
  std::string init;
  if (p.bias) {
    std::string dims = dimList(rank);
    body += llvm::formatv(
        "  %e = tensor.empty({0}) : {1}\n"
        "  %b = linalg.generic {{indexing_maps = [affine_map<{2} -> (d{3})>, "
        "affine_map<{2} -> {2}>], iterator_types = {4}} ins(%bias : {5}) "
        "outs(%e : {1}) {{\n  ^bb0(%a: {6}, %o: f32):\n",
        dynOperand, acc, dims, rank - 1, parallel(rank),
        tensorType({p.n}, t), t);
    body += p.bf16 ? "    %y = arith.extf %a : bf16 to f32\n"
                     "    linalg.yield %y : f32\n"
                   : "    linalg.yield %a : f32\n";
    body += llvm::formatv(
        "  } -> {0}\n"
        "  %x2 = tensor.collapse_shape %x {1} : {2} into {3}\n"
        "  %b2 = tensor.collapse_shape %b {1} : {0} into {4}\n",
        acc, groups, x, rowsX, rowsAcc);
    init = "%b2";
  } else {
    body += llvm::formatv("  %x2 = tensor.collapse_shape %x {0} : {1} into "
                          "{2}\n",
                          groups, x, rowsX);
    std::string rows = dynOperand;
    if (p.dynamic && p.batch) {
      body += llvm::formatv("  %cb = arith.constant {0} : index\n"
                            "  %rows = arith.muli %cb, %m : index\n",
                            p.batch);
      rows = "%rows";
    }
    body += llvm::formatv(
        "  %e = tensor.empty({0}) : {1}\n"
        "  %z = arith.constant 0.000000e+00 : f32\n"
        "  %f = linalg.fill ins(%z : f32) outs(%e : {1}) -> {1}\n",
        rows, rowsAcc);
    init = "%f";
  }
  std::string outputShape =
      (p.batch ? std::to_string(p.batch) + ", " : std::string()) +
      (p.dynamic ? std::string("%m") : std::to_string(p.m)) + ", " +
      std::to_string(p.n);
  body += llvm::formatv(
      "  %y = linalg.matmul ins(%x2, {0} : {1}, {2}) outs({3} : {4}) -> {4}\n"
      "  %y3 = tensor.expand_shape %y {5} output_shape [{6}] : {4} into {7}\n",
      rhs, rowsX, wt, init, rowsAcc, groups, outputShape, acc);
  std::string result = "%y3";
  if (p.round) {
    std::string dims = dimList(rank);
    body += llvm::formatv(
        "  %o0 = tensor.empty({0}) : {1}\n"
        "  %o = linalg.generic {{indexing_maps = [affine_map<{2} -> {2}>, "
        "affine_map<{2} -> {2}>], iterator_types = {3}} ins(%y3 : {4}) "
        "outs(%o0 : {1}) {{\n  ^bb0(%a: f32, %u: bf16):\n"
        "    %r = arith.truncf %a : f32 to bf16\n    linalg.yield %r : bf16\n"
        "  } -> {1}\n",
        dynOperand, out, dims, parallel(rank), acc);
    result = "%o";
  }
  std::string args = "%w: " + w + " {attn.weight}";
  if (p.bias)
    args += ", %bias: " + tensorType({p.n}, t) + " {attn.weight}";
  args += ", %x: " + x;
  return "func.func @f(" + args + ") -> " + out + " {\n" + body +
         "  return " + result + " : " + out + "\n}\n";
}

/// torch.matmul/bmm: one attn.matmul, the result in the inputs' dtype.
static std::string matmulText(const Problem &p) {
  std::string t = p.bf16 ? "bf16" : "f32";
  SmallVector<int64_t> lead = leadShape(p, /*symbolic=*/true);
  std::string a = tensorType(withLast(lead, p.k), t);
  std::string b = p.rhsBatch ? tensorType({p.batch, p.k, p.n}, t)
                             : tensorType({p.k, p.n}, t);
  std::string out = tensorType(withLast(lead, p.n), t);
  std::string body;
  if (p.dynamic)
    body += llvm::formatv("  %cdim = arith.constant 1 : index\n"
                          "  %m = tensor.dim %a, %cdim : {0}\n",
                          a);
  body += llvm::formatv(
      "  %c = \"attn.matmul\"(%a, %b) : ({0}, {1}) -> {2}\n", a, b, out);
  return "func.func @f(%a: " + a + ", %b: " + b + ") -> " + out + " {\n" +
         body + "  return %c : " + out + "\n}\n";
}

static void onCheckFailure(const char *message) {
  bug(llvm::Twine("a run-time check failed on a valid module: ") + message);
}

/// Whether the compiled code may use AMX tiles now (the run that forbids
/// them sets this).
static bool forbidAmx = false;
static int32_t fuzzAmxAvailable() {
  return forbidAmx ? 0 : attnrt_amx_available();
}

namespace {
/// The compiled module: its engine, the pack entry point of the weight
/// (empty without prepacking) and whether its products may use AMX tiles.
struct Compiled {
  std::unique_ptr<ExecutionEngine> engine;
  std::string packEntry;
  bool amx = false;
  /// Compiled for tiles the host does not have: only the fallback runs.
  bool tilesForbidden = false;
};
} // namespace

/// `text` compiled for the problem's target (sequential code), as a JIT;
/// with prepacking, attn-cpu-prepack-weights first, as attn-compile runs it
/// (the same vector width, pairs and tiles as the lowering).
static Compiled compile(const Problem &p) {
  std::string diagnostics;
  std::unique_ptr<MLIRContext> context =
      attn::fuzz::createJitContext(diagnostics);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, context.get());
  if (!module)
    bug("the generated module does not parse: " + diagnostics);
  // The host's features, some removed; AMX added only where the host has
  // none, and then its tiles are never used.
  static const bool hostHasAmx = [] {
    std::string error;
    std::unique_ptr<llvm::TargetMachine> host =
        attn::createAttnTargetMachine({}, error);
    return host && attn::cpu::getTarget(*host).amx;
  }();
  attn::AttnTargetOptions target;
  Compiled compiled;
  if (p.target == Problem::NoAvx512)
    target.features = "-avx512f";
  else if (p.target == Problem::NoAvx)
    target.features = "-avx";
  else if (p.target == Problem::AmxFallback && !hostHasAmx) {
    target.features = "+amx-tile,+amx-bf16";
    compiled.tilesForbidden = true;
  }
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm =
      attn::createAttnTargetMachine(target, error);
  if (!tm)
    bug("no target machine: " + error);
  attn::AttnPipelineOptions options;
  options.numThreads = 1;
  attn::applyTargetMachine(options, *tm);
  if (p.target == Problem::Pairs &&
      tm->getMCSubtargetInfo()->checkFeatures("+avx512bf16"))
    options.bf16Dot = true;
  compiled.amx = options.amx;
  if (p.prepack) {
    PassManager pm(context.get());
    attn::AttnCpuPrepackWeightsOptions prepackOptions;
    attn::setTargetOptions(prepackOptions, options.getTarget());
    pm.addPass(attn::createAttnCpuPrepackWeights(prepackOptions));
    if (failed(pm.run(*module)))
      bug("attn-cpu-prepack-weights failed on a valid module: " +
          diagnostics);
    auto f = module->lookupSymbol<func::FuncOp>("f");
    if (auto packed = f.getArgAttrOfType<DictionaryAttr>(0, "attn.packed"))
      compiled.packEntry = packed.getAs<StringAttr>("entry").str();
  }
  // attn::lowerForTarget, with the options above.
  if (failed(attn::lowerToLLVMDialect(*module, options)))
    bug("the pipeline failed on a valid module: " + diagnostics);
  // The AMX check, answered by the harness (see the file comment).
  StringAttr from = StringAttr::get(context.get(), "attnrt_amx_available");
  if (Operation *decl = SymbolTable::lookupSymbolIn(*module, from)) {
    StringAttr to = StringAttr::get(context.get(), "attn_fuzz_amx_available");
    if (failed(SymbolTable::replaceAllSymbolUses(from, to, *module)))
      bug("cannot rename attnrt_amx_available");
    SymbolTable::setSymbolName(decl, to);
  }
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(3, 0, tm.get());
  engineOptions.transformer = transformer;
  engineOptions.sectionMemoryMapper = &getJitMemoryMapper();
  auto engine = ExecutionEngine::create(*module, engineOptions, std::move(tm));
  if (!engine)
    bug("JIT compilation failed: " + llvm::toString(engine.takeError()));
  registerRuntimeSymbols(**engine);
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    map[interner("attn_fuzz_amx_available")] = {
        llvm::orc::ExecutorAddr::fromPtr(&fuzzAmxAvailable),
        llvm::JITSymbolFlags::Exported};
    return map;
  });
  compiled.engine = std::move(*engine);
  return compiled;
}

/// Calls `_mlir_ciface_<name>` on the descriptors `args` (of ranks `ranks`)
/// and returns its result descriptor of rank `rank`.
static MemRefDescriptors call(ExecutionEngine &engine, StringRef name,
                              ArrayRef<void *> args, int64_t rank) {
  MemRefDescriptors result({rank});
  SmallVector<void *> values = {result.data()};
  values.append(args.begin(), args.end());
  SmallVector<void *> packed;
  for (void *&v : values)
    packed.push_back(&v);
  if (llvm::Error err = engine.invokePacked(("_mlir_ciface_" + name).str(),
                                            packed))
    bug("the call of " + name + " failed: " + llvm::toString(std::move(err)));
  return result;
}

/// The inputs in argument order: Linear/Stored w, [bias,] x; Matmul a, b.
/// Floats in [-1, 1] (rounded to bf16 for bf16), one of them NaN or
/// infinite where the problem says.
static SmallVector<HostTensor> makeInputs(const Problem &p, uint64_t seed) {
  DType dtype = p.bf16 ? DType::BF16 : DType::F32;
  SmallVector<int64_t> lead = leadShape(p, /*symbolic=*/false);
  SmallVector<SmallVector<int64_t>> shapes;
  if (p.form == Problem::Matmul) {
    shapes.push_back(withLast(lead, p.k));
    shapes.push_back(p.rhsBatch ? SmallVector<int64_t>{p.batch, p.k, p.n}
                                : SmallVector<int64_t>{p.k, p.n});
  } else {
    shapes.push_back(p.form == Problem::Linear
                         ? SmallVector<int64_t>{p.n, p.k}
                         : SmallVector<int64_t>{p.k, p.n});
    if (p.bias)
      shapes.push_back({p.n});
    shapes.push_back(withLast(lead, p.k));
  }
  SmallVector<HostTensor> inputs;
  Rng rng(seed);
  for (ArrayRef<int64_t> shape : shapes) {
    std::string error;
    std::optional<HostTensor> t = HostTensor::allocate(dtype, shape, error);
    if (!t)
      bug("cannot allocate an input: " + error);
    for (int64_t i = 0, n = t->getNumElements(); i < n; ++i)
      t->set(i, 2.0 * rng.uniform() - 1.0);
    inputs.push_back(std::move(*t));
  }
  bool matmul = p.form == Problem::Matmul;
  HostTensor &x = matmul ? inputs[0] : inputs.back();
  HostTensor &w = matmul ? inputs[1] : inputs[0];
  switch (p.special) {
  case Problem::None:
    break;
  case Problem::NanX:
    x.set(p.specialAt % x.getNumElements(), NAN);
    break;
  case Problem::InfX:
    x.set(p.specialAt % x.getNumElements(), INFINITY);
    break;
  case Problem::InfW:
    w.set(p.specialAt % w.getNumElements(), -INFINITY);
    break;
  case Problem::NanBias:
    inputs[1].set(p.specialAt % inputs[1].getNumElements(), NAN);
    break;
  }
  return inputs;
}

/// Checks `out` (the lead dims x N result) against the f64 product of the
/// inputs.
static void check(const Problem &p, ArrayRef<HostTensor> inputs,
                  const HostTensor &out) {
  bool matmul = p.form == Problem::Matmul;
  const HostTensor &x = matmul ? inputs[0] : inputs.back();
  const HostTensor &w = matmul ? inputs[1] : inputs[0];
  const HostTensor *bias = p.bias ? &inputs[1] : nullptr;
  int64_t batches = std::max<int64_t>(p.batch, 1);
  if (out.getNumElements() != batches * p.m * p.n)
    bug("the result is " + out.describe());
  // (K + 2) u sum |x w| bounds any order of f32 sums; twice that.
  double u = std::ldexp(1.0, -24);
  double accumulation = 2.0 * double(p.k + 2) * u;
  double rounding = p.round ? std::ldexp(1.0, -8) : 0.0;
  std::vector<double> row(p.k);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < p.m; ++i) {
      int64_t r = b * p.m + i;
      for (int64_t kk = 0; kk < p.k; ++kk)
        row[kk] = x.get(r * p.k + kk);
      int64_t wBase = matmul && p.rhsBatch ? b * p.k * p.n : 0;
      for (int64_t j = 0; j < p.n; ++j) {
        double ref = bias ? bias->get(j) : 0.0;
        double magnitude = std::fabs(ref);
        for (int64_t kk = 0; kk < p.k; ++kk) {
          double wv = p.form == Problem::Linear ? w.get(j * p.k + kk)
                                                : w.get(wBase + kk * p.n + j);
          double prod = row[kk] * wv;
          ref += prod;
          magnitude += std::fabs(prod);
        }
        double got = out.get(r * p.n + j);
        bool same;
        if (std::isnan(ref) || std::isnan(got))
          same = std::isnan(ref) && std::isnan(got);
        else if (std::isinf(ref) || std::isinf(got))
          same = ref == got;
        else
          same = std::fabs(got - ref) <= accumulation * magnitude +
                                             rounding * std::fabs(ref) + 1e-30;
        if (!same)
          bug(llvm::formatv("row {0} (batch {1}, m {2}), column {3}: "
                            "compiled {4:e}, float64 reference {5:e}, "
                            "tolerance {6:e}",
                            r, b, i, j, got, ref,
                            accumulation * magnitude +
                                rounding * std::fabs(ref)));
      }
    }
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  return attn::fuzz::initializeJitTarget(onCheckFailure);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in{data, size};
  Problem &p = problem;
  p = chooseProblem(in);
  text = p.form == Problem::Matmul ? matmulText(p) : linearText(p);
  // The inputs' seed: every byte of the input (FNV-1a).
  uint64_t seed = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i)
    seed = (seed ^ data[i]) * 1099511628211ull;
  SmallVector<HostTensor> inputs = makeInputs(p, seed);
  runName = "compile";
  Compiled compiled = compile(p);

  SmallVector<void *> args;
  SmallVector<int64_t> ranks;
  for (const HostTensor &t : inputs)
    ranks.push_back(t.getShape().size());
  MemRefDescriptors descriptors(ranks);
  for (auto [i, t] : llvm::enumerate(inputs)) {
    t.writeDescriptor(descriptors.get(i));
    args.push_back(descriptors.get(i));
  }
  // The weight's panels, packed once by the pack entry point.
  std::optional<MemRefDescriptors> panels;
  if (!compiled.packEntry.empty()) {
    runName = "pack";
    panels = call(*compiled.engine, compiled.packEntry, {args[0]}, 4);
    args[0] = panels->get(0);
  }
  int64_t rank = p.batch ? 3 : 2;
  DType outType = p.round ? DType::BF16 : DType::F32;
  // The tiles where the host has them, then the fallback without them.
  SmallVector<bool> forbid = {compiled.tilesForbidden};
  if (compiled.amx && p.bf16 && !compiled.tilesForbidden)
    forbid.push_back(true);
  for (bool noTiles : forbid) {
    forbidAmx = noTiles;
    runName = noTiles ? "vector (AMX forbidden)"
              : compiled.amx && p.bf16 ? "AMX" : "vector";
    MemRefDescriptors result = call(*compiled.engine, "f", args, rank);
    DynamicMemRefType<char> memref = result.read(0);
    std::string error;
    std::optional<HostTensor> out = copyFromMemRef(memref, outType, error);
    std::free(memref.basePtr);
    if (!out)
      bug("cannot read the result: " + error);
    check(p, inputs, *out);
  }
  forbidAmx = false;
  if (panels)
    std::free(panels->read(0).basePtr);
  return 0;
}
