// RUN: attn-opt %s --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s

// The CUDA kernels take no attention sinks: an attn.sdpa with sinks is not
// called on the GPU (which would ignore them) but stays on the CPU, sinks
// included, with a remark.
// CHECK-LABEL: func.func @sinks
// CHECK-NOT: func.call
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} sinks(%{{.+}}) {is_causal = true}
func.func @sinks(%q: tensor<2x4x16x64xf16>, %s: tensor<4xf16>) -> tensor<2x4x16x64xf16> {
  // expected-remark @+1 {{attn.sdpa stays on the CPU: attention sinks (the CUDA kernels take no sinks)}}
  %0 = attn.sdpa %q, %q, %q sinks(%s) {is_causal = true} : (tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<4xf16>) -> tensor<2x4x16x64xf16>
  return %0 : tensor<2x4x16x64xf16>
}
