// RUN: attn-opt %s --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s

// An attn.sdpa with safe_softmax stays on the CPU with a remark: the CUDA
// kernels give NaN on fully masked rows. The same op without it is lowered.

// CHECK-LABEL: func.func @safe_softmax_stays
// CHECK: attn.sdpa {{.*}}safe_softmax = true
// CHECK: call @attnrt_cuda_sdpa_f16
func.func @safe_softmax_stays(%d: tensor<2x16x64xf16>) -> (tensor<2x16x64xf16>, tensor<2x16x64xf16>) {
  // expected-remark @+1 {{stays on the CPU: safe_softmax (the CUDA kernels give NaN on fully masked rows)}}
  %0 = attn.sdpa %d, %d, %d {safe_softmax = true} : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  %1 = attn.sdpa %d, %d, %d : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  return %0, %1 : tensor<2x16x64xf16>, tensor<2x16x64xf16>
}
