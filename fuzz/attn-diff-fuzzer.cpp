//===- attn-diff-fuzzer.cpp - fused against math-path numbers -------------===//
//
// A differential target: the input's bytes choose a small attention problem
// (batch, heads with GQA, query and key lengths down to the decode path's
// single row, head dims, f32/f16/bf16, a boolean or additive mask, causal,
// scale) written either as one attn.sdpa or as the hand-written chain
// (transpose, matmul, scale, mask, softmax, matmul) a frontend writes. It is
// JIT-compiled twice with the tools' pipeline: fused (attn-fuse-sdpa, the
// flash or decode lowering) and as the reference (no fusion, the math
// lowering), run on the same seeded inputs, and compared with attn-run
// --check's tolerance (NaN only against NaN). A difference, a failed
// run-time check or a pipeline error on a valid module aborts with the
// module's text, so wrong numbers are found, not only crashes.
//
//===----------------------------------------------------------------------===//

#include "AttnFuzzer.h"
#include "HostTensor.h"
#include "Jit.h"

#include "attn/InitAttn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Target/TargetMachine.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace attnrun;
using attn::fuzz::Reader;

namespace {
/// One attention problem.
struct Problem {
  std::string dtype; // f32, f16, bf16
  int64_t batch, heads, kvHeads, l, s, e, ev;
  enum Mask { None, Bool, Padding, Additive } mask;
  bool causal, chain;
  double scale; // 0: 1/sqrt(E)
};
} // namespace

static std::string text;

/// The module text is kept for the abort message.
[[noreturn]] static void bug(const llvm::Twine &what) {
  llvm::errs() << "attn fuzz: " << what << "\nmodule:\n" << text << "\n";
  abort();
}

static Problem chooseProblem(Reader &in) {
  static const char *const dtypes[] = {"f32", "f16", "bf16"};
  static const int64_t lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 40};
  static const int64_t dims[] = {1, 3, 8, 16, 24, 32, 40, 64, 72};
  Problem p;
  p.dtype = dtypes[in.pick(3)];
  p.chain = in.pick(2);
  p.batch = 1 + in.pick(2);
  p.kvHeads = 1 + in.pick(2);
  p.heads = p.chain ? p.kvHeads : p.kvHeads * (1 + in.pick(3));
  p.l = lengths[in.pick(12)];
  p.s = lengths[in.pick(12)] + in.pick(40);
  p.e = dims[in.pick(9)];
  p.ev = in.pick(2) ? p.e : dims[in.pick(9)];
  p.mask = static_cast<Problem::Mask>(in.pick(4));
  p.causal = !p.chain && in.pick(2);
  p.scale = in.pick(3) == 0 ? 0.03125 * (1 + in.pick(16)) : 0.0;
  return p;
}

/// "tensor<AxBx...xT>".
static std::string tensorType(ArrayRef<int64_t> shape, StringRef element) {
  std::string t = "tensor<";
  for (int64_t d : shape)
    t += std::to_string(d) + "x";
  return t + element.str() + ">";
}

/// The mask operand's type, or "" without one.
static std::string maskType(const Problem &p) {
  switch (p.mask) {
  case Problem::None:
    return "";
  case Problem::Bool:
    return tensorType({p.l, p.s}, "i1");
  case Problem::Padding:
    return tensorType({p.batch, 1, 1, p.s}, "i1");
  case Problem::Additive:
    return tensorType({p.l, p.s}, p.dtype);
  }
  return "";
}

/// The hand-written chain (a masked_fill or an additive mask) that
/// attn-fuse-sdpa rewrites into one attn.sdpa.
static std::string chainBody(const Problem &p, StringRef q, StringRef k,
                             StringRef v, StringRef m) {
  std::string t = p.dtype;
  std::string kt = tensorType({p.batch, p.heads, p.e, p.s}, t);
  std::string sc = tensorType({p.batch, p.heads, p.l, p.s}, t);
  std::string o = tensorType({p.batch, p.heads, p.l, p.ev}, t);
  double scale = p.scale ? p.scale : 1.0 / std::sqrt(double(p.e));
  std::string body = llvm::formatv(
      "  %kt = \"attn.transpose\"(%k) {{dim0 = -2 : i64, dim1 = -1 : i64} : "
      "({0}) -> {1}\n  %s = \"attn.matmul\"(%q, %kt) : ({2}, {1}) -> {3}\n"
      "  %c = arith.constant dense<{4:e}> : tensor<{5}>\n"
      "  %ss = \"attn.mul\"(%s, %c) : ({3}, tensor<{5}>) -> {3}\n",
      k, kt, q, sc, scale, t);
  std::string scores = "%ss";
  if (p.mask == Problem::Bool || p.mask == Problem::Padding) {
    body += llvm::formatv("  %sm = \"attn.masked_fill\"(%ss, %m) {{value = "
                          "0xFFF0000000000000 : f64} : ({0}, {1}) -> {0}\n",
                          sc, m);
    scores = "%sm";
  } else if (p.mask == Problem::Additive) {
    body += llvm::formatv(
        "  %sm = \"attn.add\"(%ss, %m) : ({0}, {1}) -> {0}\n", sc, m);
    scores = "%sm";
  }
  body += llvm::formatv(
      "  %p = \"attn.softmax\"({0}) {{dim = -1 : i64} : ({1}) -> {1}\n"
      "  %o = \"attn.matmul\"(%p, %v) : ({1}, {2}) -> {3}\n",
      scores, sc, v, o);
  return body;
}

static std::string moduleText(const Problem &p) {
  std::string q = tensorType({p.batch, p.heads, p.l, p.e}, p.dtype);
  std::string k = tensorType({p.batch, p.kvHeads, p.s, p.e}, p.dtype);
  std::string v = tensorType({p.batch, p.kvHeads, p.s, p.ev}, p.dtype);
  std::string o = tensorType({p.batch, p.heads, p.l, p.ev}, p.dtype);
  std::string m = maskType(p);
  std::string args = "%q: " + q + ", %k: " + k + ", %v: " + v;
  if (!m.empty())
    args += ", %m: " + m;
  std::string body;
  if (p.chain) {
    body = chainBody(p, q, k, v, m);
  } else {
    std::string attrs = p.causal ? "is_causal = true" : "";
    if (p.scale)
      attrs += std::string(attrs.empty() ? "" : ", ") +
               llvm::formatv("scale = {0:e} : f64", p.scale).str();
    body = llvm::formatv("  %o = attn.sdpa %q, %k, %v{0} {{{1}} : ({2}, {3}, "
                         "{4}{5}) -> {6}\n",
                         m.empty() ? "" : ", %m", attrs, q, k, v,
                         m.empty() ? "" : ", " + m, o);
  }
  return "func.func @f(" + args + ") -> " + o + " {\n" + body +
         "  return %o : " + o + "\n}\n";
}

static void onCheckFailure(const char *message) {
  bug(llvm::Twine("a run-time check failed on a valid module: ") + message);
}

/// `text` compiled with `options` for the host (sequential code), as a JIT.
static std::unique_ptr<ExecutionEngine>
compile(attn::AttnPipelineOptions &options) {
  std::string diagnostics;
  std::unique_ptr<MLIRContext> context =
      attn::fuzz::createJitContext(diagnostics);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, context.get());
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm =
      attn::createAttnTargetMachine({}, error);
  if (!module || !tm)
    bug("the generated module does not parse: " + diagnostics + error);
  if (failed(attn::lowerForTarget(*module, options, *tm)))
    bug("the pipeline failed on a valid module: " + diagnostics);
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(3, 0, tm.get());
  engineOptions.transformer = transformer;
  engineOptions.sectionMemoryMapper = &getJitMemoryMapper();
  auto engine = ExecutionEngine::create(*module, engineOptions, std::move(tm));
  if (!engine)
    bug("JIT compilation failed: " + llvm::toString(engine.takeError()));
  registerRuntimeSymbols(**engine);
  return std::move(*engine);
}

/// Runs `engine` on `inputs`; the result, copied out.
static HostTensor run(ExecutionEngine &engine, ArrayRef<HostTensor> inputs,
                      int64_t rank, DType dtype) {
  MemRefDescriptors args(llvm::map_to_vector(inputs, [](const HostTensor &t) {
    return static_cast<int64_t>(t.getShape().size());
  }));
  for (auto [i, t] : llvm::enumerate(inputs))
    t.writeDescriptor(args.get(i));
  MemRefDescriptors result({rank});
  SmallVector<void *> values = {result.data()};
  for (unsigned i = 0; i < inputs.size(); ++i)
    values.push_back(args.get(i));
  SmallVector<void *> packed;
  for (void *&v : values)
    packed.push_back(&v);
  if (llvm::Error err = engine.invokePacked("_mlir_ciface_f", packed))
    bug("the call failed: " + llvm::toString(std::move(err)));
  DynamicMemRefType<char> memref = result.read(0);
  std::string error;
  std::optional<HostTensor> out = copyFromMemRef(memref, dtype, error);
  std::free(memref.basePtr);
  if (!out)
    bug("cannot read the result: " + error);
  return std::move(*out);
}

/// Seeded inputs of the problem's argument types: floats in [-1, 1], masks
/// with some rows fully masked (as attn-run makes them).
static SmallVector<HostTensor> makeInputs(const Problem &p, DType dtype,
                                          uint64_t seed) {
  SmallVector<SmallVector<int64_t>> shapes = {{p.batch, p.heads, p.l, p.e},
                                              {p.batch, p.kvHeads, p.s, p.e},
                                              {p.batch, p.kvHeads, p.s, p.ev}};
  SmallVector<DType> dtypes = {dtype, dtype, dtype};
  if (p.mask == Problem::Bool || p.mask == Problem::Additive)
    shapes.push_back({p.l, p.s});
  else if (p.mask == Problem::Padding)
    shapes.push_back({p.batch, 1, 1, p.s});
  if (p.mask != Problem::None)
    dtypes.push_back(p.mask == Problem::Additive ? dtype : DType::I1);
  SmallVector<HostTensor> inputs;
  Rng rng(seed);
  for (auto [shape, type] : llvm::zip(shapes, dtypes)) {
    std::string error;
    std::optional<HostTensor> t = HostTensor::allocate(type, shape, error);
    if (!t)
      bug("cannot allocate an input: " + error);
    int64_t row = shape.back();
    for (int64_t i = 0, n = t->getNumElements(); i < n; ++i) {
      if (type != DType::I1)
        t->set(i, 2.0 * rng.uniform() - 1.0);
      else
        t->set(i, (i / row) % 5 == 0 ? 0.0 : (rng.next() >> 62) != 0);
    }
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

static void compare(const HostTensor &out, const HostTensor &ref,
                    double tolerance) {
  for (int64_t i = 0, n = ref.getNumElements(); i < n; ++i) {
    double a = out.get(i), b = ref.get(i);
    bool same = std::isnan(a) || std::isnan(b)
                    ? std::isnan(a) && std::isnan(b)
                    : std::fabs(a - b) <= tolerance * (1 + std::fabs(b));
    if (!same)
      bug(llvm::formatv("element {0}: fused {1}, reference {2}", i, a, b));
  }
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  return attn::fuzz::initializeJitTarget(onCheckFailure);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in{data, size};
  Problem p = chooseProblem(in);
  text = moduleText(p);
  DType dtype = p.dtype == "f32"   ? DType::F32
                : p.dtype == "f16" ? DType::F16
                                   : DType::BF16;
  double tolerance = dtype == DType::F32 ? 1e-4 : dtype == DType::F16 ? 2e-2
                                                                       : 5e-2;
  attn::AttnPipelineOptions fused, reference;
  fused.numThreads = reference.numThreads = 1;
  fused.backend = attn::SdpaCpuBackend::Flash;
  reference.fuse = false;
  reference.backend = attn::SdpaCpuBackend::Math;
  SmallVector<HostTensor> inputs = makeInputs(p, dtype, size);
  std::unique_ptr<ExecutionEngine> fusedEngine = compile(fused);
  std::unique_ptr<ExecutionEngine> referenceEngine = compile(reference);
  HostTensor out = run(*fusedEngine, inputs, 4, dtype);
  HostTensor ref = run(*referenceEngine, inputs, 4, dtype);
  compare(out, ref, tolerance);
  return 0;
}
