//===- Passes.td - attn.sdpa to CUDA kernels ---------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_ATTNTOCUDA_PASSES_TD
#define ATTN_CONVERSION_ATTNTOCUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerSdpaToCuda : Pass<"attn-lower-sdpa-to-cuda", "::mlir::ModuleOp"> {
  let summary = "Lower attn.sdpa to calls into the CUDA flash kernels";
  let description = [{
    Rewrites each `attn.sdpa` that the CUDA kernels (kernels/) support into a
    call of the runtime bridge
    `attnrt_cuda_sdpa_<f16|bf16|f32>[_bool|_add][_lengths]`, passing
    q/k/v/mask, a freshly allocated result and, with sequence lengths,
    q_lengths and kv_lengths (a side without lengths passes the other's) as
    unranked memrefs (the bridge reads sizes and strides from their
    descriptors), then the op's attributes (scale, is_causal, masked_value,
    the boolean mask's polarity, the sliding window, safe_softmax, the
    padding side and which lengths are given) as the bytes of one
    `attn::cuda::SdpaCallAttrs` in a constant `memref.global`
    (kernels/include/attn/kernels/sdpa_contract.h, the kernels' contract,
    which also gives the limits checked here). A non-zero status from the
    bridge fails a `cf.assert`. An
    `attn.transpose` feeding q/k/v that keeps the last dim in place (the
    nanoGPT `x.transpose(1, 2)`) becomes a strided view, so no copy and no
    CPU op is left for it; a boolean mask goes as it is, with its polarity.

    An attn.sdpa with a `score_mod` region calls the entry point generated
    for its region instead, `attnrt_cuda_sdpa_mod_<hash>` (ScoreModToCuda.h),
    with one more unranked memref per extra operand before the attributes;
    the generated CUDA
    source goes into the module's `attn.cuda_sources` dictionary (entry
    point -> source), which `attn-compile --target=cuda` compiles with nvcc.
    A region op without an exact translation keeps the op on the CPU. A
    boolean mask that combines several masks (the fusion's `arith.andi` of
    keep masks or `arith.ori` of drop masks, each maybe an inverted
    `arith.xori %m, true`) becomes such a region too, reading the masks as
    extra operands, so that no host op combines device masks.

    Supported: f16, bf16 and f32 (f32 runs in f32 precision on the kernels'
    generic CUDA-core kernel), rank <= 4, static head dims that are multiples
    of 8 up to 256, dropout_p = 0, score_mod regions the generator
    translates, sequence lengths (right, left or packed; not with a
    score_mod region, not of two integer types, not on a rank-3 padded
    query). Any other attn.sdpa stays for the CPU lowering with a remark
    saying why, or, with `require-gpu`, is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"
  ];
  let options = [
    Option<"requireGpu", "require-gpu", "bool", /*default=*/"false",
           "Fail on an attn.sdpa the CUDA kernels cannot run instead of "
           "leaving it for the CPU lowering">
  ];
}

#endif // ATTN_CONVERSION_ATTNTOCUDA_PASSES_TD
