// RUN: attn-opt %s --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s

// The CUDA kernels take no sequence lengths: an attn.sdpa with lengths is
// not called on the GPU (which would ignore them) but stays on the CPU,
// lengths included, with a remark.
// CHECK-LABEL: func.func @lengths
// CHECK-NOT: func.call
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} q_lengths(%{{.+}}) kv_lengths(%{{.+}}) {padding_side = #attn.padding_side<left>}
func.func @lengths(%q: tensor<2x4x16x64xf16>, %n: tensor<2xi32>) -> tensor<2x4x16x64xf16> {
  // expected-remark @+1 {{attn.sdpa stays on the CPU: sequence lengths (the CUDA kernels take no q_lengths or kv_lengths)}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) kv_lengths(%n) {padding_side = #attn.padding_side<left>} : (tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x4x16x64xf16>
  return %0 : tensor<2x4x16x64xf16>
}
