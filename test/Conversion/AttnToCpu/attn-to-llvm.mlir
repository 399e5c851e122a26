// attn-to-llvm is the pass pipeline of attn-compile and attn-run: fusion,
// the CPU lowering with the run-time checks on (failed checks call the
// runtime, allocations are checked), or with target=cuda the attn.sdpa the
// kernels support as a call into their bridge and allocations through the
// generic (managed-memory) functions. attn-cpu-lowering-pipeline alone has
// the checks off.
// RUN: attn-opt %s --attn-to-llvm | FileCheck %s --check-prefix=CPU
// RUN: attn-opt %s --attn-to-llvm=target=cuda | FileCheck %s --check-prefix=CUDA
// RUN: attn-opt %s --attn-cpu-lowering-pipeline | FileCheck %s --check-prefix=PLAIN

// CPU-LABEL: llvm.func @attn_to_llvm(
// CPU: llvm.call @malloc
// CPU: llvm.call @attnrt_check_failed
// CPU-NOT: attnrt_cuda_sdpa
// CPU: llvm.func @_mlir_ciface_attn_to_llvm(

// CUDA-LABEL: llvm.func @attn_to_llvm(
// CUDA: llvm.call @_mlir_memref_to_llvm_alloc
// CUDA: llvm.call @attnrt_cuda_sdpa_f32
// CUDA-NOT: llvm.call @malloc

// PLAIN-NOT: attnrt_check_failed
// PLAIN: llvm.func @_mlir_ciface_attn_to_llvm(
func.func @attn_to_llvm(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
