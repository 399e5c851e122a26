// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | FileCheck %s

// Form 1: the seed's NaiveCausalAttention (examples/naive_causal_attention.mlir),
// in generic form as a frontend writes it. masked_fill fills where the mask is
// TRUE, so the fused op takes the mask as it is with mask_polarity = drop
// (attn.sdpa's default, keep, is true where a position takes part).

// CHECK-LABEL: func.func @naive
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x128x64xf32>, %[[K:[^:]+]]: tensor<2x8x128x64xf32>, %[[V:[^:]+]]: tensor<2x8x128x64xf32>, %[[MASK:[^:]+]]: tensor<128x128xi1>)
// CHECK-NOT: arith.xori
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]], %[[MASK]] {mask_polarity = #attn.mask_polarity<drop>, scale = 1.250000e-01 : f64}
// CHECK-SAME: (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<128x128xi1>) -> tensor<2x8x128x64xf32>
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.matmul
// CHECK: return %[[O]]
func.func @naive(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>,
                 %v: tensor<2x8x128x64xf32>, %mask: tensor<128x128xi1>) -> tensor<2x8x128x64xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x8x128x64xf32>) -> tensor<2x8x64x128xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x8x128x64xf32>, tensor<2x8x64x128xf32>) -> tensor<2x8x128x128xf32>
  %c  = arith.constant dense<0.125> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<2x8x128x128xf32>, tensor<f32>) -> tensor<2x8x128x128xf32>
  %m  = "attn.masked_fill"(%ss, %mask) {value = 0xFFF0000000000000 : f64} : (tensor<2x8x128x128xf32>, tensor<128x128xi1>) -> tensor<2x8x128x128xf32>
  %p  = "attn.softmax"(%m) {dim = -1 : i64} : (tensor<2x8x128x128xf32>) -> tensor<2x8x128x128xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x8x128x128xf32>, tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32>
  return %o : tensor<2x8x128x64xf32>
}

// -----

// masked_fill_ (in place) exports to the same attn.masked_fill, so this is the
// same case; here the mask is a constant triu(ones, diagonal=1) (no
// comparison): its inverse is tril, which is exactly is_causal, and no mask
// operand is left.

// CHECK-LABEL: func.func @naive_constant_causal_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>)
// The f64 scalar takes the scores' f32 type (as in the chain), hence the scale.
// CHECK-NOT: arith.constant
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {is_causal = true, scale = 0.35355338454246521 : f64}
// CHECK-SAME: (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
// CHECK-NOT: attn.softmax
// CHECK: return %[[O]]
func.func @naive_constant_causal_mask(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>,
                                      %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %mask = arith.constant dense<[[false, true, true, true], [false, false, true, true],
                                [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.35355339059327379> : tensor<f64>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f64>) -> tensor<2x2x4x4xf32>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A constant mask that is not causal (one bit flipped) stays a mask operand,
// as written, with the drop polarity.

// CHECK-LABEL: func.func @naive_constant_mask_not_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: %[[DROP:.+]] = arith.constant dense<{{\[}}[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, true, false]]> : tensor<4x4xi1>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[DROP]] {mask_polarity = #attn.mask_polarity<drop>, scale = 1.250000e-01 : f64}
// CHECK-NOT: is_causal
// CHECK-NOT: attn.softmax
func.func @naive_constant_mask_not_causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>,
                                          %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %mask = arith.constant dense<[[false, true, true, true], [false, false, true, true],
                                [false, false, false, true], [false, false, true, false]]> : tensor<4x4xi1>
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
