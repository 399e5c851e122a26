// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// Chains that fused into an attn.sdpa computing a different function (found
// in review, with e2e reproducers in test/e2e/fusion-forms/review.mlir), and
// the neighbours that still fuse.

// f16/bf16 additive masks: the chain adds them in f16 (rounding the scores
// away next to a large finite mask value such as -1e4 or the dtype's lowest),
// attn.sdpa in f32. A fully padded row is a uniform average in the chain but
// a softmax-weighted one fused.
// CHECK-LABEL: func.func @negative_f16_additive_runtime_mask
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_f16_additive_runtime_mask(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf16>, %bias: tensor<2x1x4xf16>) -> tensor<2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf16> -> tensor<2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x4x4xf16>
  %m = attn.add %s, %bias : (tensor<2x4x4xf16>, tensor<2x1x4xf16>) -> tensor<2x4x4xf16>
  // expected-remark @+1 {{not fused: the additive mask is not a constant of values in [-16, 16] or -inf: the chain adds it in f16, attn.sdpa in f32 (large finite mask values round the scores away)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %o : tensor<2x4x8xf16>
}

// -----

// CHECK-LABEL: func.func @negative_bf16_additive_large_constant
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_bf16_additive_large_constant(%q: tensor<2x4x8xbf16>, %k: tensor<2x4x8xbf16>, %v: tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xbf16> -> tensor<2x8x4xbf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xbf16>, tensor<2x8x4xbf16>) -> tensor<2x4x4xbf16>
  %bias = arith.constant dense<[[0.0, 0.0, -1.0e4, -1.0e4], [-1.0e4, -1.0e4, -1.0e4, -1.0e4], [0.0, 0.0, 0.0, 0.0], [0.0, -1.0e4, 0.0, -1.0e4]]> : tensor<4x4xbf16>
  %m = attn.add %s, %bias : (tensor<2x4x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4x4xbf16>
  // expected-remark @+1 {{not fused: the additive mask is not a constant of values in [-16, 16] or -inf: the chain adds it in bf16, attn.sdpa in f32}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xbf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4xbf16>, tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
  return %o : tensor<2x4x8xbf16>
}

// -----

// Small constants and -inf stay within rounding: they fuse.
// CHECK-LABEL: func.func @f16_additive_small_constant_fuses
// CHECK: attn.sdpa
// CHECK-NOT: attn.softmax
func.func @f16_additive_small_constant_fuses(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf16> -> tensor<2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x4x4xf16>
  %bias = arith.constant dense<[[0.0, -1.0, -2.0, -3.0], [0xFC00, 0xFC00, 0xFC00, 0xFC00], [16.0, 0.0, -16.0, 0xFC00], [0.5, 0.25, 0.0, -0.5]]> : tensor<4x4xf16>
  %m = attn.add %s, %bias : (tensor<2x4x4xf16>, tensor<4x4xf16>) -> tensor<2x4x4xf16>
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %o : tensor<2x4x8xf16>
}

// -----

// A causal constant with a finite fill, then an additive mask: the chain
// gives future positions fill + mask, attn.sdpa (every lowering) adds the
// mask first and then replaces them by masked_value. A mask row of -inf is a
// NaN row in the chain, a uniform average over the future positions fused.
// CHECK-LABEL: func.func @negative_causal_finite_fill_then_additive
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_causal_finite_fill_then_additive(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %bias: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %causal = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %f = attn.masked_fill %s, %causal value(-1.0e9) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %m = attn.add %f, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: a causal mask with the finite fill -1.0E+9 followed by an additive mask (attn.sdpa replaces the future positions by masked_value after adding the mask)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// With -inf, the chain's -inf + mask equals the contract's replacement
// unless the mask holds +inf or NaN there: a runtime mask may, so this does
// not fuse...
// CHECK-LABEL: func.func @negative_causal_neginf_then_runtime_additive
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_causal_neginf_then_runtime_additive(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %bias: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %causal = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %f = attn.masked_fill %s, %causal value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %m = attn.add %f, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: a causal mask followed by an additive mask that is not a constant free of +inf and NaN}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
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
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A mask that must be inverted (masked_fill: true = masked out) with `?`
// dims: the inversion's all-true constant cannot have `?` dims (the pass
// used to emit `dense<true> : tensor<?x?xi1>`, which does not parse back
// and fails to lower).
// CHECK-LABEL: func.func @negative_dynamic_mask_inverted
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_dynamic_mask_inverted(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<?x?xi1>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<?x?xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: a dynamic-shaped boolean mask would have to be inverted or combined}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Two `?`-shaped masks may broadcast differently at run time ([1, S] and
// [L, 1]): arith.andi of them is not their broadcast conjunction.
// CHECK-LABEL: func.func @negative_two_dynamic_masks
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_two_dynamic_masks(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m1: tensor<?x?xi1>, %m2: tensor<?x?xi1>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0xFF800000> : tensor<f32>
  %a = attn.where %m1, %s, %c : (tensor<?x?xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b = attn.where %m2, %a, %c : (tensor<?x?xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: a dynamic-shaped boolean mask would have to be inverted or combined}}
  %p = attn.softmax %b dim(-1) : tensor<2x4x4xf32>
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
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.0003999471664429 : f64}
// CHECK-NOT: masked_value
// CHECK-NOT: attn.softmax
func.func @mask_then_wide_scale_overflows_fill(%q: tensor<1x2x4x8xf16>, %k: tensor<1x2x4x8xf16>, %v: tensor<1x2x4x8xf16>, %m: tensor<4x4xi1>) -> tensor<1x2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x4x8xf16> -> tensor<1x2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<1x2x4x8xf16>, tensor<1x2x8x4xf16>) -> tensor<1x2x4x4xf16>
  %f = attn.masked_fill %s, %m value(-65504.0) : (tensor<1x2x4x4xf16>, tensor<4x4xi1>) -> tensor<1x2x4x4xf16>
  %c = arith.constant dense<1.0004> : tensor<f64>
  %ss = attn.mul %f, %c : (tensor<1x2x4x4xf16>, tensor<f64>) -> tensor<1x2x4x4xf16>
  %p = attn.softmax %ss dim(-1) : tensor<1x2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x4x4xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>
  return %o : tensor<1x2x4x8xf16>
}
