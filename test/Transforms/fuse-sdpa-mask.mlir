// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | FileCheck %s

// Form 3: masks (a masked_fill mask, true where filled, is passed as it is
// with mask_polarity = drop). attn.sdpa applies, in order: scale, then the boolean mask
// and is_causal (masked positions get masked_value, rounded to the element
// type), then the additive mask. The fused op must give the same value at
// every position, so the fill value of the chain becomes masked_value
// (absent when it is -inf), scaled when the chain scales after masking.
// A finite fill: a fully masked row is uniform in the chain; masked_value
// keeps that.
// CHECK-LABEL: func.func @masked_fill_finite_f32
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK-NOT: arith.xori
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>, masked_value = -1.000000e+09 : f64, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @masked_fill_finite_f32(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = attn.masked_fill %ss, %mask value(-1.0e9) : (tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @masked_fill_f32_lowest
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>, masked_value = -3.4028234663852886E+38 : f64, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @masked_fill_f32_lowest(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = attn.masked_fill %ss, %mask value(-3.4028234663852886e38) : (tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @masked_fill_f16_lowest
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf16>, %[[K:[^:]+]]: tensor<2x2x4x8xf16>, %[[V:[^:]+]]: tensor<2x2x4x8xf16>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>, masked_value = -6.550400e+04 : f64, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @masked_fill_f16_lowest(%q: tensor<2x2x4x8xf16>, %k: tensor<2x2x4x8xf16>, %v: tensor<2x2x4x8xf16>, %mask: tensor<4x4xi1>) -> tensor<2x2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf16> -> tensor<2x2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf16>, tensor<2x2x8x4xf16>) -> tensor<2x2x4x4xf16>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf16>, tensor<f32>) -> tensor<2x2x4x4xf16>
  %m = attn.masked_fill %ss, %mask value(-65504.0) : (tensor<2x2x4x4xf16>, tensor<4x4xi1>) -> tensor<2x2x4x4xf16>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf16>, tensor<2x2x4x8xf16>) -> tensor<2x2x4x8xf16>
  return %o : tensor<2x2x4x8xf16>
}

// -----
// -1e9 rounds to -inf in f16 (the chain's masked_fill fills -inf), so the
// default masked_value is the exact one.
// CHECK-LABEL: func.func @masked_fill_f16_rounds_to_neg_inf
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf16>, %[[K:[^:]+]]: tensor<2x2x4x8xf16>, %[[V:[^:]+]]: tensor<2x2x4x8xf16>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>, scale = 1.250000e-01 : f64}
// CHECK-NOT: masked_value
// CHECK-NOT: attn.softmax
func.func @masked_fill_f16_rounds_to_neg_inf(%q: tensor<2x2x4x8xf16>, %k: tensor<2x2x4x8xf16>, %v: tensor<2x2x4x8xf16>, %mask: tensor<4x4xi1>) -> tensor<2x2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf16> -> tensor<2x2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf16>, tensor<2x2x8x4xf16>) -> tensor<2x2x4x4xf16>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf16>, tensor<f32>) -> tensor<2x2x4x4xf16>
  %m = attn.masked_fill %ss, %mask value(-1.0e9) : (tensor<2x2x4x4xf16>, tensor<4x4xi1>) -> tensor<2x2x4x4xf16>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf16>, tensor<2x2x4x8xf16>) -> tensor<2x2x4x8xf16>
  return %o : tensor<2x2x4x8xf16>
}

// -----
// where(mask, scores, -inf) keeps the scores where mask is true: mask is
// already a keep-mask (here a padding mask [B, 1, 1, S]).
// CHECK-LABEL: func.func @where_keep_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<2x1x1x4xi1>)
// CHECK-NOT: arith.xori
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @where_keep_mask(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<2x1x1x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attn.where %mask, %ss, %ninf : (tensor<2x1x1x4xi1>, tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// where(mask, value, scores) is the masked_fill form: the drop polarity.
// CHECK-LABEL: func.func @where_inverted_form
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK-NOT: arith.xori
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>, masked_value = -1.000000e+09 : f64, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @where_inverted_form(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %big = arith.constant dense<-1.0e9> : tensor<f32>
  %m = attn.where %mask, %big, %ss : (tensor<4x4xi1>, tensor<f32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @additive_mask_4_4_
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-SAME: tensor<4x4xf32>) -> tensor<2x2x4x8xf32>
// CHECK-NOT: attn.softmax
func.func @additive_mask_4_4_(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = attn.add %ss, %mask : (tensor<2x2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @additive_mask_2_1_1_4_
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<2x1x1x4xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-SAME: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32>
// CHECK-NOT: attn.softmax
func.func @additive_mask_2_1_1_4_(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = attn.add %ss, %mask : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @additive_mask_2_2_4_4_
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<2x2x4x4xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-SAME: tensor<2x2x4x4xf32>) -> tensor<2x2x4x8xf32>
// CHECK-NOT: attn.softmax
func.func @additive_mask_2_2_4_4_(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<2x2x4x4xf32>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = attn.add %ss, %mask : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @additive_mask_on_the_left
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @additive_mask_on_the_left(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = attn.add %mask, %ss : (tensor<4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// A constant additive causal mask (0 on and below the diagonal, -inf above)
// fuses as an additive mask, not as is_causal: s + (-inf) is NaN where s is
// NaN or +inf, which is_causal (a replacement) would not reproduce.
// CHECK-LABEL: func.func @additive_constant_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>)
// CHECK: %[[MASK:.+]] = arith.constant
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[MASK]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @additive_constant_causal(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %mask = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000],
                                [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %m = attn.add %ss, %mask : (tensor<2x2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// Mask, then scale: the fill is scaled too (-1e9 * 0.125 in f32).
// CHECK-LABEL: func.func @mask_then_scale
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>, masked_value = -1.250000e+08 : f64, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @mask_then_scale(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %f = attn.masked_fill %s, %mask value(-1.0e9) : (tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %m = attn.mul %f, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// -inf / 8 stays -inf.
// CHECK-LABEL: func.func @mask_then_div_neg_inf
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>, scale = 1.250000e-01 : f64}
// CHECK-NOT: masked_value
// CHECK-NOT: attn.softmax
func.func @mask_then_div_neg_inf(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %f = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<8.0> : tensor<f32>
  %m = attn.div %f, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// Causal (constant triu) then a padding mask: is_causal plus the padding
// keep-mask.
// CHECK-LABEL: func.func @causal_plus_padding
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<2x1x1x4xi1>)
// CHECK-NOT: arith.xori
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {is_causal = true, mask_polarity = #attn.mask_polarity<drop>, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @causal_plus_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<2x1x1x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %causal = arith.constant dense<[[false, true, true, true], [false, false, true, true],
                                  [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %c1 = attn.masked_fill %ss, %causal value(0xFFF0000000000000) : (tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x2x4x4xf32>
  %m = attn.masked_fill %c1, %mask value(0xFFF0000000000000) : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xi1>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// Two boolean masks of one shape with the same fill combine in the first
// one's polarity (a masked_fill mask: drop): drop where either drops, the
// where condition (a keep mask) inverted.
// CHECK-LABEL: func.func @two_masks_same_shape
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>, %[[M2:[^:]+]]: tensor<4x4xi1>)
// CHECK-DAG: %[[TRUE:.+]] = arith.constant dense<true> : tensor<4x4xi1>
// CHECK-DAG: %[[NOT2:.+]] = arith.xori %[[M2]], %[[TRUE]]
// CHECK: %[[EITHER:.+]] = arith.ori %[[M]], %[[NOT2]]
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[EITHER]] {mask_polarity = #attn.mask_polarity<drop>, masked_value = -1.000000e+04 : f64, scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @two_masks_same_shape(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x4xi1>, %mask2: tensor<4x4xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %c1 = attn.masked_fill %ss, %mask value(-1.0e4) : (tensor<2x2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x2x4x4xf32>
  %fill = arith.constant dense<-1.0e4> : tensor<f32>
  %m = attn.where %mask2, %c1, %fill : (tensor<4x4xi1>, tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A mask [L, 1] broadcast over S (whole query rows masked, so those rows are
// NaN in the chain): attn.sdpa broadcasts its mask the same way and gives NaN
// rows too.

// CHECK-LABEL: func.func @mask_broadcast_over_keys
// CHECK-SAME: %[[M:[^:]+]]: tensor<4x1xi1>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] {mask_polarity = #attn.mask_polarity<drop>, scale = 1.250000e-01 : f64}
// CHECK-SAME: tensor<4x1xi1>) -> tensor<2x2x4x8xf32>
// CHECK-NOT: attn.softmax
func.func @mask_broadcast_over_keys(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<4x1xi1>) -> tensor<2x2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x2x4x4xf32>, tensor<4x1xi1>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}
