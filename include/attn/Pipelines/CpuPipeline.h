//===- CpuPipeline.h - attn on tensors to the LLVM dialect ------*- C++ -*-===//
//
// buildAttnCpuLoweringPipeline takes attn on tensors to the LLVM dialect with
// _mlir_ciface_ entry points (lib/Pipelines/CpuLoweringPipeline.cpp): the op
// lowerings (attn/Conversion/AttnToCpu), bufferization, the CPU transforms
// (attn/Transforms/Cpu) and upstream's conversions to LLVM.
// With numThreads != 1 the code calls the OpenMP runtime: load libomp.so
// (Debian package libomp-22-dev: /usr/lib/llvm-22/lib/libomp.so) in the JIT,
// link -lomp for AOT.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_CPUPIPELINE_H
#define ATTN_PIPELINES_CPUPIPELINE_H

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

/// The options of the whole CPU lowering: one struct for the C++ API
/// (buildAttnCpuLoweringPipeline) and for the registered pipeline
/// `attn-cpu-lowering-pipeline`, whose option names are the ones below.
struct AttnCpuPipelineOptions
    : public PassPipelineOptions<AttnCpuPipelineOptions> {
  /// The target that the options below describe (vector-bits, bf16-dot,
  /// amx, native-bf16, expand-f16, vnni), and the reverse.
  cpu::Target getTarget() const;
  void setTarget(const cpu::Target &target);

  Option<SdpaCpuBackend> backend{
      *this, "backend", llvm::cl::desc("attn.sdpa implementation"),
      llvm::cl::init(SdpaCpuBackend::Auto), sdpaCpuBackendValues()};
  /// Run attn-instrument-trace first: each lowered attn op sits between
  /// attnrt_trace_begin/end(i64) calls and the module attribute
  /// `attn.trace_names` records the op names.
  Option<bool> trace{*this, "trace",
                     llvm::cl::desc("emit attnrt_trace_begin/end calls"),
                     llvm::cl::init(false)};
  /// With `trace`: the span names carry each op's source file and line
  /// (attn-instrument-trace's `locations`).
  Option<bool> traceLocations{
      *this, "trace-locations",
      llvm::cl::desc("with trace: span names carry the op's file and line"),
      llvm::cl::init(false)};
  /// With `trace`: the linalg ops of function bodies are spans too
  /// (attn-instrument-trace's `linalg-ops`).
  Option<bool> traceLinalgOps{
      *this, "trace-linalg-ops",
      llvm::cl::desc("with trace: linalg ops of function bodies are spans "
                     "too"),
      llvm::cl::init(false)};
  /// 1: sequential code (scf.forall -> scf.for, no OpenMP); 0: OpenMP with
  /// the runtime's default thread count; N > 1: OpenMP with N threads.
  /// OpenMP code needs libomp.so when it runs (JIT: pass it as a shared
  /// library; AOT: link -lomp).
  Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("1: no OpenMP; 0: OpenMP default; N: N threads"),
      llvm::cl::init(0)};
  /// Replace exp, tanh, erf... by polynomial approximations
  /// (attn-cpu-math-approximation) so that the loops vectorise (otherwise a
  /// scalar libm call per element).
  Option<bool> fastMath{
      *this, "fast-math",
      llvm::cl::desc("polynomial exp, tanh, erf... (vectorise)"),
      llvm::cl::init(true)};
  Option<int64_t> maxCallsPerFunction{
      *this, "max-calls-per-function",
      llvm::cl::desc("split a function block of more calls into parts of "
                     "this many (attn-cpu-split-large-functions; 0: never)"),
      llvm::cl::init(32)};
  Option<int64_t> blockQ{*this, "block-q",
                         llvm::cl::desc("flash query rows (0: auto)"),
                         llvm::cl::init(0)};
  Option<int64_t> blockKV{*this, "block-kv",
                          llvm::cl::desc("flash keys per block (0: auto)"),
                          llvm::cl::init(0)};
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("target vector width in bits (128, 256 or 512)"),
      llvm::cl::init(kDefaultVectorBits)};
  /// bf16 GEMMs with AVX512-BF16's vdpbf16ps (a target that has it: the
  /// tools set it from the machine they compile for).
  Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("bf16 GEMMs with vdpbf16ps (target has AVX512-BF16)"),
      llvm::cl::init(false)};
  /// bf16 GEMMs on AMX tiles (a target that has AMX-BF16: the tools set
  /// it from the machine they compile for). The code then calls the
  /// runtime's kAmxAvailableFunction.
  Option<bool> amx{*this, "amx",
                   llvm::cl::desc("bf16 GEMMs and attention on AMX tiles "
                                  "(target has AMX-BF16)"),
                   llvm::cl::init(false)};
  /// The target has vpdpbusd on 256-bit registers (AVX-VNNI, or
  /// AVX512-VNNI with AVX512-VL: the tools set it from the machine they
  /// compile for); used only with quantized-activations=int8.
  Option<bool> vnni{*this, "vnni",
                    llvm::cl::desc("the target has AVX-VNNI or AVX512-VNNI "
                                   "with AVX512-VL (vpdpbusd on ymm)"),
                    llvm::cl::init(false)};
  /// With vnni: the target has AVX-VNNI (the VEX form of vpdpbusd).
  Option<bool> avxVnni{*this, "avx-vnni",
                       llvm::cl::desc("with vnni: the target has AVX-VNNI "
                                      "(vpdpbusd's VEX form)"),
                       llvm::cl::init(false)};
  /// With vnni and vector-bits=512: the target has AVX512-VNNI and
  /// AVX512-BW (vpdpbusd on zmm).
  /// The target has AVX2 (integer ops on ymm).
  Option<bool> avx2{*this, "avx2",
                    llvm::cl::desc("the target has AVX2 (without vnni, "
                                   "vpmaddubsw for the quantized GEMV's "
                                   "4- and 6-bit codes)"),
                    llvm::cl::init(false)};
  Option<bool> vnni512{*this, "vnni-512",
                       llvm::cl::desc("with vnni and vector-bits=512: the "
                                      "target has AVX512-VNNI and AVX512-BW "
                                      "(vpdpbusd on zmm)"),
                       llvm::cl::init(false)};
  /// The quantized decode GEMV's inputs: none (f32, exact) or int8
  /// (quantized per block of 32 and multiplied in integers where the
  /// target has vnni; docs/quantization.md).
  Option<QuantizedActivations> quantizedActivations{
      *this, "quantized-activations",
      llvm::cl::desc("quantized decode products: none (f32 inputs) or int8 "
                     "(int8 inputs per block of 32, integer dots with vnni)"),
      llvm::cl::init(QuantizedActivations::None),
      quantizedActivationsValues()};
  Option<int64_t> positionBound{
      *this, "position-bound",
      llvm::cl::desc("dynamic lengths with 32-bit score_mod positions"),
      llvm::cl::init(kDefaultPositionBound)};
  /// Expand f16 <-> f32 conversions in integer code (a target without
  /// F16C, where LLVM would call compiler-rt's __extendhfsf2/__truncsfhf2).
  /// bf16 and f64 -> f16 conversions are always expanded.
  Option<bool> expandF16Conversions{
      *this, "expand-f16",
      llvm::cl::desc("expand f16 <-> f32 conversions (no F16C)"),
      llvm::cl::init(false)};
  /// Round f32 to bf16 with the target's vcvtneps2bf16 (AVX512-BF16: the
  /// tools set it from the machine they compile for) instead of integer
  /// code: f32 subnormals then round to zero (attn-cpu-expand-narrow-floats).
  Option<bool> nativeBf16{
      *this, "native-bf16",
      llvm::cl::desc("f32 -> bf16 with vcvtneps2bf16 (target has "
                     "AVX512-BF16; subnormals become zero)"),
      llvm::cl::init(false)};
  /// Run attn-check-allocations: a buffer size that overflows and a failed
  /// malloc fail a run-time check.
  Option<bool> checkAllocations{
      *this, "check-allocations",
      llvm::cl::desc("check buffer sizes and malloc results at run time"),
      llvm::cl::init(false)};
  /// Lower cf.assert (the run-time checks) to a call of the AttnFuse
  /// runtime's attnrt_check_failed(message), which calls a handler the
  /// program can set, instead of LLVM's puts + abort. The code then needs
  /// lib/Runtime when it runs.
  Option<bool> checkFailureCalls{
      *this, "check-failure-calls",
      llvm::cl::desc("failed checks call attnrt_check_failed"),
      llvm::cl::init(false)};
  /// Allocate through _mlir_memref_to_llvm_alloc/free instead of
  /// malloc/free (the CUDA runtime provides them with managed memory).
  Option<bool> useGenericAllocFunctions{
      *this, "generic-alloc",
      llvm::cl::desc("allocate through _mlir_memref_to_llvm_alloc/free"),
      llvm::cl::init(false)};
  /// Run attn-cpu-outline-kernels before the lowering (GEMMs, attention)
  /// and after the elementwise fusion (other linalg ops): each kernel
  /// repeated in the module is emitted once, as a noinline function (what
  /// keeps the compile time of N identical layers from growing N-fold).
  Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("emit each repeated kernel once, as a noinline function"),
      llvm::cl::init(true)};
  /// Run attn-cpu-tile-and-fuse after the elementwise fusion: large linalg
  /// ops (norms, activations, rotary embeddings) run in parallel blocks of
  /// rows, each block's producers fused into it.
  Option<bool> tileAndFuse{
      *this, "tile-and-fuse",
      llvm::cl::desc("run large linalg ops in parallel row blocks with their "
                     "producers fused"),
      llvm::cl::init(true)};
};

/// Everything from attn on tensors to the LLVM dialect: attn-lower-to-cpu,
/// one-shot bufferization (function boundaries, identity layouts), buffer
/// deallocation, linalg to loops, scf.forall to OpenMP (or to loops when
/// numThreads == 1), then math/arith/index/cf/func/memref/openmp to LLVM and
/// reconcile-unrealized-casts. Public functions get llvm.emit_c_interface.
void buildAttnCpuLoweringPipeline(OpPassManager &pm,
                                  const AttnCpuPipelineOptions &options);

/// Registers `attn-cpu-lowering-pipeline` (AttnCpuPipelineOptions) for
/// attn-opt.
void registerAttnCpuLoweringPipeline();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_CPUPIPELINE_H
