// RUN: attn-opt %s --canonicalize --split-input-file | FileCheck %s

// Folders of the attn ops: only the trivial, exact cases.

// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x16x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_of_transpose(%x: tensor<2x8x16x4xf32>) -> tensor<2x8x16x4xf32> {
  %0 = attn.transpose %x dims(-2, -1) : tensor<2x8x16x4xf32> -> tensor<2x8x4x16xf32>
  // Same pair of dims, spelled differently.
  %1 = attn.transpose %0 dims(3, 2) : tensor<2x8x4x16xf32> -> tensor<2x8x16x4xf32>
  return %1 : tensor<2x8x16x4xf32>
}

// CHECK-LABEL: func.func @negative_transpose_different_dims
// CHECK-COUNT-2: attn.transpose
func.func @negative_transpose_different_dims(%x: tensor<4x4x4xf32>) -> tensor<4x4x4xf32> {
  %0 = attn.transpose %x dims(0, 1) : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
  %1 = attn.transpose %0 dims(1, 2) : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
  return %1 : tensor<4x4x4xf32>
}

// CHECK-LABEL: func.func @transpose_same_dim
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_same_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = attn.transpose %x dims(1, -1) : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @mul_by_one
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf16>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]]
func.func @mul_by_one(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %ones = arith.constant dense<1.0> : tensor<4x8xf16>
  %0 = attn.mul %x, %one : (tensor<4x8xf16>, tensor<f32>) -> tensor<4x8xf16>
  %1 = attn.mul %ones, %x : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  %2 = attn.div %x, %one : (tensor<4x8xf16>, tensor<f32>) -> tensor<4x8xf16>
  return %0, %1, %2 : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}

// CHECK-LABEL: func.func @negative_mul_by_one_broadcasts
// A splat 1 that broadcasts the result to a larger shape is not an identity.
// CHECK: attn.mul
func.func @negative_mul_by_one_broadcasts(%x: tensor<8xf32>) -> tensor<4x8xf32> {
  %ones = arith.constant dense<1.0> : tensor<4x8xf32>
  %0 = attn.mul %x, %ones : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @negative_mul_by_two
// CHECK: attn.mul
// CHECK: attn.div
func.func @negative_mul_by_two(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %two = arith.constant dense<2.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %0 = attn.mul %x, %two : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  // 1 / x is not x.
  %1 = attn.div %one, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @dropout_identity
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @dropout_identity(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = attn.dropout %x p(0.0) train(true) : tensor<4x8xf32>
  %1 = attn.dropout %x p(0.5) train(false) : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @negative_dropout_training
// CHECK: attn.dropout %{{.*}} p(1.000000e-01) train(true)
func.func @negative_dropout_training(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = attn.dropout %x p(0.1) train(true) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @cast_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xbf16>)
// CHECK-NEXT: return %[[X]]
func.func @cast_round_trip(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = attn.cast %x : tensor<4x8xbf16> -> tensor<4x8xf32>
  %1 = attn.cast %0 : tensor<4x8xf32> -> tensor<4x8xbf16>
  return %1 : tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @negative_cast_lossy_round_trip
// f16 -> bf16 loses mantissa bits, so f16 -> bf16 -> f16 is not the identity.
// CHECK-COUNT-2: attn.cast
func.func @negative_cast_lossy_round_trip(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = attn.cast %x : tensor<4x8xf16> -> tensor<4x8xbf16>
  %1 = attn.cast %0 : tensor<4x8xbf16> -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @repeat_once
// CHECK-SAME: (%[[X:.+]]: tensor<2x2x8x4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @repeat_once(%x: tensor<2x2x8x4xf32>) -> tensor<2x2x8x4xf32> {
  %0 = attn.repeat_interleave %x repeats(1) dim(1) : tensor<2x2x8x4xf32> -> tensor<2x2x8x4xf32>
  return %0 : tensor<2x2x8x4xf32>
}
