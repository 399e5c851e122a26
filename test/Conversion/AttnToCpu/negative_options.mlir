// RUN: not attn-opt %s --attn-lower-to-cpu=backend=gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-lower-to-cpu=backend=flash 2>&1 | FileCheck %s --check-prefix=DROPOUT

// CHECK: attn-lower-to-cpu: unknown backend 'gpu' (expected auto, flash or math)
// DROPOUT: error: 'attn.sdpa' op cannot be lowered with backend=flash
func.func @negative_unknown_backend(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q {dropout_p = 1.000000e-01 : f64} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
