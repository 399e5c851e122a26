// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// Chains that attn.sdpa's attributes reproduce exactly (found in review, with
// e2e reproducers in test/e2e/fusion-forms/review.mlir): their neighbours
// that need a score_mod region are in fuse-sdpa-score-mod.mlir.

// Small constants and -inf stay within rounding: they fuse.
// CHECK-LABEL: func.func @f16_additive_small_constant_fuses
// CHECK: attn.sdpa
// CHECK-NOT: attn.softmax
func.func @f16_additive_small_constant_fuses(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf16> -> tensor<2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x4x4xf16>
  %bias = arith.constant dense<[[0.0, -1.0, -2.0, -3.0], [0xFC00, 0xFC00, 0xFC00, 0xFC00], [16.0, 0.0, -16.0, 0xFC00], [0.5, 0.25, 0.0, -0.5]]> : tensor<4x4xf16>
  %m = attn.add %s, %bias : (tensor<2x4x4xf16>, tensor<4x4xf16>) -> tensor<2x4x4xf16>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %o : tensor<2x4x8xf16>
}

// -----

// ... a constant mask without +inf or NaN does.
// CHECK-LABEL: func.func @causal_neginf_then_constant_additive_fuses
// CHECK: %[[BIAS:.+]] = arith.constant dense<{{.+}}> : tensor<4x4xf32>
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}}, %[[BIAS]] {is_causal = true, scale = 1.000000e+00 : f64}
// CHECK-NOT: attn.softmax
func.func @causal_neginf_then_constant_additive_fuses(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %causal = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %f = attn.masked_fill %s, %causal value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %bias = arith.constant dense<[[0.0, -1.0, -2.0, -3.0], [1.0, 0.0, -1.0, -2.0], [2.0, 1.0, 0.0, -1.0], [3.0, 2.0, 1.0, 0xFF800000]]> : tensor<4x4xf32>
  %m = attn.add %f, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// The additive mask first, then the causal fill (any fill value): exactly
// the contract's order (add, then replace), with a runtime mask too.
// CHECK-LABEL: func.func @additive_then_causal_fuses
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<4x4xf32>)
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}}, %[[BIAS]] {is_causal = true, masked_value = -1.000000e+09 : f64, scale = 1.000000e+00 : f64}
// CHECK-NOT: attn.softmax
func.func @additive_then_causal_fuses(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %bias: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %a = attn.add %s, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  %causal = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %m = attn.masked_fill %a, %causal value(-1.0e9) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// One `?`-shaped mask that keeps (where(m, s, c)) is passed through as is.
// CHECK-LABEL: func.func @dynamic_keep_mask_fuses
// CHECK-SAME: %[[M:[^:]+]]: tensor<?x?xi1>)
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}}, %[[M]]
// CHECK-NOT: arith.xori
func.func @dynamic_keep_mask_fuses(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<?x?xi1>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0xFF800000> : tensor<f32>
  %a = attn.where %m, %s, %c : (tensor<?x?xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %a dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A rank-0 scale of a wider type than the f16 scores takes part at f32 (as
// the lowered chain computes it) and the product is rounded once: after the
// fill -65504, * 1.0004 overflows to -inf in the chain, so masked_value is
// -inf (left out), not -65504 (what rounding 1.0004 to f16 first, 1.0, gave:
// finite averages where the chain has NaN rows).
// CHECK-LABEL: func.func @mask_then_wide_scale_overflows_fill
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {mask_polarity = #attn.mask_polarity<drop>, scale = 1.0003999471664429 : f64}
// CHECK-NOT: masked_value
// CHECK-NOT: attn.softmax
func.func @mask_then_wide_scale_overflows_fill(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf16>, %m: tensor<4x4xi1>) -> tensor<1x2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x4x8xf16> -> tensor<1x2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<1x2x4x8xf16>, tensor<1x2x8x4xf16>) -> tensor<1x2x4x4xf16>
  %f = attn.masked_fill %s, %m value(-65504.0) : (tensor<1x2x4x4xf16>, tensor<4x4xi1>) -> tensor<1x2x4x4xf16>
  %c = arith.constant dense<1.0004> : tensor<f64>
  %ss = attn.mul %f, %c : (tensor<1x2x4x4xf16>, tensor<f64>) -> tensor<1x2x4x4xf16>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %ss dim(-1) : tensor<1x2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x4x4xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>
  return %o : tensor<1x2x4x8xf16>
}
