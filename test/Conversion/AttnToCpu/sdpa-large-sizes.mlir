// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash block-q=64 vector-bits=256" | FileCheck %s

// Sizes near the index range: the number of query blocks, ceil(L / 64), is
// computed without overflow (L + 63 wrapped to a negative scf.forall bound).
// CHECK-LABEL: func.func @huge_static_l
// CHECK: scf.forall ({{.*}}) in (1, 72057594037927936)
func.func @huge_static_l(%q: tensor<1x4611686018427387904x4xf32>, %k: tensor<1x8x4xf32>) -> tensor<1x4611686018427387904x4xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x4611686018427387904x4xf32>, tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x4611686018427387904x4xf32>
  return %o : tensor<1x4611686018427387904x4xf32>
}

// CHECK-LABEL: func.func @max_static_l
// CHECK: scf.forall ({{.*}}) in (144115188075855872)
func.func @max_static_l(%q: tensor<9223372036854775807x4xf32>, %k: tensor<8x4xf32>) -> tensor<9223372036854775807x4xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<9223372036854775807x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<9223372036854775807x4xf32>
  return %o : tensor<9223372036854775807x4xf32>
}
