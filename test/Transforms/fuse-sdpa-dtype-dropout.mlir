// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | FileCheck %s

// Form 4: the softmax upcast `.float().softmax(-1).type_as(q)`. The f16/bf16
// softmax is defined as computed in f32 and rounded once, which is exactly
// what the cast chain does, so it normalises to an f16/bf16 softmax and the
// chain fuses into an f16/bf16 attn.sdpa (which accumulates in f32).

// CHECK-LABEL: func.func @softmax_upcast_f16
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf16>, %[[K:[^:]+]]: tensor<2x2x4x8xf16>, %[[V:[^:]+]]: tensor<2x2x4x8xf16>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {is_causal = true, scale = 1.250000e-01 : f64}
// CHECK-SAME: -> tensor<2x2x4x8xf16>
// CHECK-NOT: attn.cast
// CHECK-NOT: attn.softmax
// CHECK: return %[[O]]
func.func @softmax_upcast_f16(%q: tensor<2x2x4x8xf16>, %k: tensor<2x2x4x8xf16>, %v: tensor<2x2x4x8xf16>) -> tensor<2x2x4x8xf16> {
  %mask = arith.constant dense<[[false, true, true, true], [false, false, true, true],
                                [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf16> -> tensor<2x2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf16>, tensor<2x2x8x4xf16>) -> tensor<2x2x4x4xf16>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf16>, tensor<f32>) -> tensor<2x2x4x4xf16>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x2x4x4xf16>, tensor<4x4xi1>) -> tensor<2x2x4x4xf16>
  %up = attn.cast %m : tensor<2x2x4x4xf16> -> tensor<2x2x4x4xf32>
  %p32 = attn.softmax %up dim(-1) : tensor<2x2x4x4xf32>
  %p = attn.cast %p32 : tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf16>, tensor<2x2x4x8xf16>) -> tensor<2x2x4x8xf16>
  return %o : tensor<2x2x4x8xf16>
}

// -----

// CHECK-LABEL: func.func @softmax_upcast_bf16
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<8x4x8xbf16>, %[[K:[^:]+]]: tensor<8x4x8xbf16>, %[[V:[^:]+]]: tensor<8x4x8xbf16>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-SAME: -> tensor<8x4x8xbf16>
// CHECK-NOT: attn.cast
// CHECK-NOT: attn.softmax
func.func @softmax_upcast_bf16(%q: tensor<8x4x8xbf16>, %k: tensor<8x4x8xbf16>, %v: tensor<8x4x8xbf16>) -> tensor<8x4x8xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<8x4x8xbf16> -> tensor<8x8x4xbf16>
  %s = attn.matmul %q, %kt : (tensor<8x4x8xbf16>, tensor<8x8x4xbf16>) -> tensor<8x4x4xbf16>
  %c = arith.constant dense<8.0> : tensor<bf16>
  %ss = attn.div %s, %c : (tensor<8x4x4xbf16>, tensor<bf16>) -> tensor<8x4x4xbf16>
  %up = attn.cast %ss : tensor<8x4x4xbf16> -> tensor<8x4x4xf32>
  %p32 = attn.softmax %up dim(-1) : tensor<8x4x4xf32>
  %p = attn.cast %p32 : tensor<8x4x4xf32> -> tensor<8x4x4xbf16>
  %o = attn.matmul %p, %v : (tensor<8x4x4xbf16>, tensor<8x4x8xbf16>) -> tensor<8x4x8xbf16>
  return %o : tensor<8x4x8xbf16>
}

// -----

// Form 5: dropout between softmax and the second matmul. Training with p > 0
// becomes dropout_p.

// CHECK-LABEL: func.func @dropout_training
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {dropout_p = 1.000000e-01 : f64, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.dropout
// CHECK-NOT: attn.softmax
// CHECK: return %[[O]]
func.func @dropout_training(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %d = attn.dropout %p p(0.1) train(true) : tensor<2x4x4xf32>
  %o = attn.matmul %d, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Training dropout with a seed: attn.sdpa carries the seed, so it draws the
// same mask as the chain's attn.dropout (dropping it was a wrong fusion).

// CHECK-LABEL: func.func @dropout_training_seed
// CHECK: attn.sdpa {{.*}} {dropout_p = 5.000000e-01 : f64, scale = 1.000000e+00 : f64, seed = 7 : i64}
// CHECK-NOT: attn.dropout
func.func @dropout_training_seed(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x8x4xf32> -> tensor<1x2x4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s dim(-1) : tensor<1x2x8x8xf32>
  %d = attn.dropout %p p(5.000000e-01) train(true) {seed = 7 : i64} : tensor<1x2x8x8xf32>
  %o = attn.matmul %d, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// Inference with a seed: the dropout goes, and so does its seed.

// CHECK-LABEL: func.func @dropout_inference_seed
// CHECK: attn.sdpa
// CHECK-NOT: seed
// CHECK: return
func.func @dropout_inference_seed(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x8x4xf32> -> tensor<1x2x4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  %p = attn.softmax %s dim(-1) : tensor<1x2x8x8xf32>
  %d = attn.dropout %p p(5.000000e-01) train(false) {seed = 7 : i64} : tensor<1x2x8x8xf32>
  %o = attn.matmul %d, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// Inference (train = false) or p = 0: the dropout is the identity and goes.

// CHECK-LABEL: func.func @dropout_inference
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: dropout
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: dropout
func.func @dropout_inference(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %d = attn.dropout %p p(0.1) train(false) : tensor<2x4x4xf32>
  %o = attn.matmul %d, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s2 = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %ss2 = attn.mul %s2, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p2 = attn.softmax %ss2 dim(-1) : tensor<2x4x4xf32>
  %d2 = attn.dropout %p2 p(0.0) train(true) : tensor<2x4x4xf32>
  %o2 = attn.matmul %d2, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %o2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
