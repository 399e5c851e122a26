// Without vector-bits the lowering tiles for kDefaultVectorBits (256: 8 f32
// lanes), whatever the host has: the same IR on every machine. The tools
// pass the width of the machine they compile for.
// RUN: attn-opt %s --attn-lower-to-cpu > %t.default
// RUN: attn-opt %s --attn-lower-to-cpu=vector-bits=256 > %t.256
// RUN: diff %t.default %t.256
// RUN: FileCheck %s < %t.default

// CHECK-LABEL: func.func @default_vector_bits(
// CHECK: vector<8xf32>
// CHECK-NOT: vector<16xf32>
func.func @default_vector_bits(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}
