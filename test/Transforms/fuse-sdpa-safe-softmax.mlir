// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// attn.safe_softmax (torch._safe_softmax, PyTorch's SDPA math path) fuses
// as attn.softmax does, into an attn.sdpa with safe_softmax = true, in the
// attribute form and in the score_mod form; the f32 upcast idiom around it
// normalises too. The plain softmax never gets the attribute.

// CHECK-LABEL: func.func @safe_softmax_bool_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x5x8xf32>, %[[K:[^:]+]]: tensor<2x4x7x8xf32>, %[[V:[^:]+]]: tensor<2x4x7x8xf32>, %[[M:[^:]+]]: tensor<5x7xi1>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {safe_softmax = true, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.safe_softmax
// CHECK: return %[[O]]
func.func @safe_softmax_bool_mask(%q: tensor<2x4x5x8xf32>, %k: tensor<2x4x7x8xf32>, %v: tensor<2x4x7x8xf32>, %m: tensor<5x7xi1>) -> tensor<2x4x5x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x7x8xf32> -> tensor<2x4x8x7xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x5x8xf32>, tensor<2x4x8x7xf32>) -> tensor<2x4x5x7xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x5x7xf32>, tensor<f32>) -> tensor<2x4x5x7xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %w = attn.where %m, %ss, %ninf : (tensor<5x7xi1>, tensor<2x4x5x7xf32>, tensor<f32>) -> tensor<2x4x5x7xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.safe_softmax %w dim(-1) : tensor<2x4x5x7xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x5x7xf32>, tensor<2x4x7x8xf32>) -> tensor<2x4x5x8xf32>
  return %o : tensor<2x4x5x8xf32>
}

// -----

// CHECK-LABEL: func.func @safe_softmax_upcast_f16
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {mask_polarity = #attn.mask_polarity<drop>, safe_softmax = true, scale = 1.000000e+00 : f64}
// CHECK-SAME: -> tensor<3x9x16xf16>
// CHECK-NOT: attn.cast
// CHECK-NOT: softmax
func.func @safe_softmax_upcast_f16(%q: tensor<3x9x16xf16>, %k: tensor<3x11x16xf16>, %v: tensor<3x11x16xf16>, %m: tensor<9x11xi1>) -> tensor<3x9x16xf16> {
  %kt = attn.transpose %k dims(1, 2) : tensor<3x11x16xf16> -> tensor<3x16x11xf16>
  %s = attn.matmul %q, %kt : (tensor<3x9x16xf16>, tensor<3x16x11xf16>) -> tensor<3x9x11xf16>
  %f = attn.masked_fill %s, %m value(0xFFF0000000000000) : (tensor<3x9x11xf16>, tensor<9x11xi1>) -> tensor<3x9x11xf16>
  %up = attn.cast %f : tensor<3x9x11xf16> -> tensor<3x9x11xf32>
  %p32 = attn.safe_softmax %up dim(-1) : tensor<3x9x11xf32>
  // The upcast normalises to an f16 safe softmax at the cast back.
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.cast %p32 : tensor<3x9x11xf32> -> tensor<3x9x11xf16>
  %o = attn.matmul %p, %v : (tensor<3x9x11xf16>, tensor<3x11x16xf16>) -> tensor<3x9x16xf16>
  return %o : tensor<3x9x16xf16>
}

// -----

// A soft-capped chain: the score_mod form keeps safe_softmax.
// CHECK-LABEL: func.func @safe_softmax_score_mod
// CHECK: attn.sdpa {{.*}}safe_softmax = true{{.*}} score_mod
// CHECK: math.tanh
// CHECK-NOT: attn.safe_softmax
func.func @safe_softmax_score_mod(%q: tensor<2x6x8xbf16>, %k: tensor<2x6x8xbf16>, %v: tensor<2x6x8xbf16>) -> tensor<2x6x8xbf16> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x6x8xbf16> -> tensor<2x8x6xbf16>
  %s = attn.matmul %q, %kt : (tensor<2x6x8xbf16>, tensor<2x8x6xbf16>) -> tensor<2x6x6xbf16>
  %t = attn.tanh %s : tensor<2x6x6xbf16>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region}}
  %p = attn.safe_softmax %t dim(-1) : tensor<2x6x6xbf16>
  %o = attn.matmul %p, %v : (tensor<2x6x6xbf16>, tensor<2x6x8xbf16>) -> tensor<2x6x8xbf16>
  return %o : tensor<2x6x8xbf16>
}

// -----

// CHECK-LABEL: func.func @plain_softmax_not_safe
// CHECK: attn.sdpa
// CHECK-NOT: safe_softmax
func.func @plain_softmax_not_safe(%q: tensor<2x6x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x6x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x6x8xf32> -> tensor<2x8x6xf32>
  %s = attn.matmul %q, %kt : (tensor<2x6x8xf32>, tensor<2x8x6xf32>) -> tensor<2x6x6xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %s dim(-1) : tensor<2x6x6xf32>
  %o = attn.matmul %p, %v : (tensor<2x6x6xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  return %o : tensor<2x6x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_safe_softmax_weights_returned
// CHECK-NOT: attn.sdpa
// CHECK: attn.safe_softmax
func.func @negative_safe_softmax_weights_returned(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: attention weights have 2 users}}
  %p = attn.safe_softmax %s dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %p : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_safe_softmax_dim
// CHECK-NOT: attn.sdpa
// CHECK: attn.safe_softmax
func.func @negative_safe_softmax_dim(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: the softmax is over dim 1}}
  %p = attn.safe_softmax %s dim(1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
