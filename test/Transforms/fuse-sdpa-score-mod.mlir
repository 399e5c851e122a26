// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | attn-opt | FileCheck %s --check-prefix=ROUNDTRIP

// Chains that attn.sdpa's attributes cannot express exactly fuse with a
// score_mod region: each op between the two matmuls becomes its own scalar
// function (the code the unfused lowering runs), in the chain's order and
// element types, after the score is rounded to the scores' element type as
// the matmul rounds it. Operands that do not come from the scores become
// extra operands (splat constants become scalar constants). The remark says
// why the attribute form did not apply.
// ROUNDTRIP-NOT: attn.softmax

// Gemma-2 soft-capping: s = cap * tanh(s / cap), then a boolean mask. The
// leading scale steps of f32 scores (/ cap here) become `scale`.
// CHECK-LABEL: func.func @softcap_f32
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x2x8x16xf32>, %[[K:[^:]+]]: tensor<1x2x8x16xf32>, %[[V:[^:]+]]: tensor<1x2x8x16xf32>, %[[M:[^:]+]]: tensor<8x8xi1>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] extras(%[[M]]) {scale = 2.000000e-02 : f64} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8x8xi1>) -> tensor<1x2x8x16xf32> score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %[[ME:.+]]: i1):
// CHECK-DAG: %[[C:.+]] = arith.constant 5.000000e+01 : f32
// CHECK-DAG: %[[NI:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[T:.+]] = math.tanh %[[S]] : f32
// CHECK: %[[R:.+]] = arith.mulf %[[T]], %[[C]] : f32
// CHECK: %[[SEL:.+]] = arith.select %[[ME]], %[[NI]], %[[R]] : f32
// CHECK: attn.yield %[[SEL]] : f32
// CHECK: return %[[O]]
func.func @softcap_f32(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %mask: tensor<8x8xi1>) -> tensor<1x2x8x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x8x16xf32> -> tensor<1x2x16x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %cap = arith.constant dense<50.0> : tensor<f32>
  %d = attn.div %s, %cap : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %t = attn.tanh %d : tensor<1x2x8x8xf32>
  %c = attn.mul %t, %cap : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %m = attn.masked_fill %c, %mask value(0xFFF0000000000000) : (tensor<1x2x8x8xf32>, tensor<8x8xi1>) -> tensor<1x2x8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the scores go through 'attn.tanh', which is no scale, mask or additive mask)}}
  %p = attn.softmax %m dim(-1) : tensor<1x2x8x8xf32>
  %o = attn.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// A Hugging Face f16 attention with a runtime padding mask added in f16:
// the region rounds the score to f16 and adds in f16 (widen, add, round),
// as the chain does, so large finite mask values round the same way.
// CHECK-LABEL: func.func @f16_runtime_padding
// CHECK: attn.sdpa {{.*}} extras(%{{.+}}) {scale = 1.250000e-01 : f64}
// CHECK-SAME: score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %[[PAD:.+]]: f16):
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: %[[A:.+]] = arith.extf %[[H]] : f16 to f32
// CHECK-NEXT: %[[B:.+]] = arith.extf %[[PAD]] : f16 to f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[R]] : f16 to f32
// CHECK-NEXT: attn.yield %[[W]] : f32
func.func @f16_runtime_padding(%q: tensor<2x4x6x64xf16>, %k: tensor<2x4x6x64xf16>, %v: tensor<2x4x6x64xf16>, %pad: tensor<2x1x1x6xf16>) -> tensor<2x4x6x64xf16> {
  %qs = arith.constant dense<0.125> : tensor<f16>
  %q2 = attn.mul %q, %qs : (tensor<2x4x6x64xf16>, tensor<f16>) -> tensor<2x4x6x64xf16>
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x6x64xf16> -> tensor<2x4x64x6xf16>
  %s = attn.matmul %q2, %kt : (tensor<2x4x6x64xf16>, tensor<2x4x64x6xf16>) -> tensor<2x4x6x6xf16>
  %m = attn.add %s, %pad : (tensor<2x4x6x6xf16>, tensor<2x1x1x6xf16>) -> tensor<2x4x6x6xf16>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the additive mask is not a constant of values in [-16, 16] or -inf: the chain adds it in f16)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x6x6xf16>
  %o = attn.matmul %p, %v : (tensor<2x4x6x6xf16>, tensor<2x4x6x64xf16>) -> tensor<2x4x6x64xf16>
  return %o : tensor<2x4x6x64xf16>
}

// -----

// A relative-position bias per head [1, H, L, S] added after the scale, and
// a boolean padding mask: two masks, both extra operands.
// CHECK-LABEL: func.func @bias_and_padding
// CHECK: attn.sdpa {{.*}} extras(%{{.+}}, %{{.+}})
// CHECK-SAME: score_mod
func.func @bias_and_padding(%q: tensor<2x4x6x8xf32>, %k: tensor<2x4x6x8xf32>, %v: tensor<2x4x6x8xf32>, %bias: tensor<1x4x6x6xf32>, %pad: tensor<2x1x1x6xi1>) -> tensor<2x4x6x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x6x8xf32> -> tensor<2x4x8x6xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x6x8xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x6x6xf32>
  %c = arith.constant dense<0.35355339059327373> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x6x6xf32>, tensor<f32>) -> tensor<2x4x6x6xf32>
  %b = attn.add %ss, %bias : (tensor<2x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %m = attn.masked_fill %b, %pad value(0xFFF0000000000000) : (tensor<2x4x6x6xf32>, tensor<2x1x1x6xi1>) -> tensor<2x4x6x6xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: both a boolean and an additive mask (attn.sdpa takes one mask))}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x6x6xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  return %o : tensor<2x4x6x8xf32>
}

// -----

// The scores read twice (s * sigmoid-like gate s / (1 + |s|)): elementwise,
// so the region holds it.
// CHECK-LABEL: func.func @scores_read_twice
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK: math.absf
func.func @scores_read_twice(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %a = attn.abs %s : tensor<2x4x4xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %d = attn.add %a, %one : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %g = attn.div %s, %d : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.mul %s, %g : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the scores go through 'attn.abs', which is no scale, mask or additive mask)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A threshold mask computed from the scores themselves (attn.cmp): the i1
// value lives inside the region too.
// CHECK-LABEL: func.func @mask_from_scores
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK: arith.cmpf olt
// CHECK: arith.select
func.func @mask_from_scores(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %t = arith.constant dense<-2.0> : tensor<f32>
  %low = attn.cmp lt, %s, %t : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xi1>
  %m = attn.masked_fill %s, %low value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<2x4x4xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the scores go through 'attn.cmp', which is no scale, mask or additive mask)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// softmax -> dropout(train) -> cast back -> matmul, in f16 with an f32
// softmax: the upcast cast goes into the region, the weights cast goes.
// CHECK-LABEL: func.func @dropout_then_cast_back
// CHECK: attn.sdpa {{.*}}dropout_p = 1.000000e-01 : f64{{.*}}seed = 3 : i64
// CHECK-SAME: score_mod
// CHECK-NOT: attn.cast
// CHECK-NOT: attn.dropout
func.func @dropout_then_cast_back(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf16> -> tensor<2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x4x4xf16>
  %up = attn.cast %s : tensor<2x4x4xf16> -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the softmax runs in another type than the scores)}}
  %p = attn.softmax %up dim(-1) : tensor<2x4x4xf32>
  %d = attn.dropout %p p(0.1) train(true) {seed = 3 : i64} : tensor<2x4x4xf32>
  %p16 = attn.cast %d : tensor<2x4x4xf32> -> tensor<2x4x4xf16>
  %o = attn.matmul %p16, %v : (tensor<2x4x4xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %o : tensor<2x4x8xf16>
}

// -----

// A per-head scale [1, H, 1, 1] is not a scalar.
// CHECK-LABEL: func.func @scale_per_head
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @scale_per_head(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> (tensor<2x2x4x8xf32>) {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf32> -> tensor<2x2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<[[[[0.125]], [[0.25]]]]> : tensor<1x2x1x1xf32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<2x2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the scores are multiplied by a value that is not a scalar constant)}}
  %p = attn.softmax %ss dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// An f32 additive mask added to upcast f16 scores: the region rounds the
// score to f16, widens it (the cast) and adds the f32 mask in f32.
// CHECK-LABEL: func.func @f32_additive_mask_in_f16_chain
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @f32_additive_mask_in_f16_chain(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf16>, %mask: tensor<4x4xf32>) -> (tensor<2x4x8xf16>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf16> -> tensor<2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x4x4xf16>
  %up = attn.cast %s : tensor<2x4x4xf16> -> tensor<2x4x4xf32>
  %m = attn.add %up, %mask : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the softmax runs in another type than the scores)}}
  %p32 = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %p = attn.cast %p32 : tensor<2x4x4xf32> -> tensor<2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %o : tensor<2x4x8xf16>
}

// -----

// CHECK-LABEL: func.func @where_branch_not_constant
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @where_branch_not_constant(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>, %other: tensor<2x4x4xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.where %mask, %s, %other : (tensor<4x4xi1>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the other branch of the where is not a scalar constant)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @fill_nan
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @fill_nan(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %s, %mask value(0x7FF8000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the masked positions are filled with NaN)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @fill_pos_inf
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @fill_pos_inf(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %s, %mask value(0x7FF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the masked positions are filled with +inf)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// Mask then a negative scale: masked positions become +1.25e8.
// CHECK-LABEL: func.func @mask_then_negative_scale
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @mask_then_negative_scale(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %s, %mask value(-1.0e9) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<-0.125> : tensor<f32>
  %ms = attn.mul %m, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a non-positive scale is applied after the boolean mask)}}
  %p = attn.softmax %ms dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// (s + bias) * c would need the mask scaled: not exact.
// CHECK-LABEL: func.func @scale_after_additive_mask
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @scale_after_additive_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %bias: tensor<4x4xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.add %s, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ms = attn.mul %m, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a scale is applied after the additive mask)}}
  %p = attn.softmax %ms dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// The contract adds the additive mask after the boolean one: fill then add
// gives -inf + bias (NaN for a +inf bias) where the chain has the fill.
// CHECK-LABEL: func.func @bool_mask_after_additive_mask
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @bool_mask_after_additive_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>, %bias: tensor<4x4xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %a = attn.add %ss, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %a, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  // A runtime boolean mask after the additive one: attn.sdpa has one mask
  // operand (a constant causal mask there would fuse, as is_causal).
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: both a boolean and an additive mask (attn.sdpa takes one mask))}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// In the contract's order, but attn.sdpa has one mask operand.
// CHECK-LABEL: func.func @bool_and_additive_mask
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @bool_and_additive_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>, %bias: tensor<4x4xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %a = attn.add %m, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: both a boolean and an additive mask (attn.sdpa takes one mask))}}
  %p = attn.softmax %a dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @two_fills_differ
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @two_fills_differ(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>, %mask2: tensor<4x4xi1>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %m1 = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %m1, %mask2 value(-1.0e4) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: two boolean masks fill different values)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// Two non-constant masks of different shapes (no i1 broadcast op to combine
// them).
// CHECK-LABEL: func.func @bool_masks_different_shapes
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @bool_masks_different_shapes(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>, %mask2: tensor<2x1x4xi1>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %m1 = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %m1, %mask2 value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<2x1x4xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: boolean masks of different shapes cannot be combined into one)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @scalar_added
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @scalar_added(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<1.0> : tensor<f32>
  %a = attn.add %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the scores get a scalar added, not a mask)}}
  %p = attn.softmax %a dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// f16/bf16 additive masks: the chain adds them in f16 (rounding the scores
// away next to a large finite mask value such as -1e4 or the dtype's lowest),
// attn.sdpa in f32. A fully padded row is a uniform average in the chain but
// a softmax-weighted one fused.
// CHECK-LABEL: func.func @f16_additive_runtime_mask
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @f16_additive_runtime_mask(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf16>, %bias: tensor<2x1x4xf16>) -> tensor<2x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf16> -> tensor<2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x4x4xf16>
  %m = attn.add %s, %bias : (tensor<2x4x4xf16>, tensor<2x1x4xf16>) -> tensor<2x4x4xf16>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the additive mask is not a constant of values in [-16, 16] or -inf: the chain adds it in f16)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %o : tensor<2x4x8xf16>
}

// -----

// CHECK-LABEL: func.func @bf16_additive_large_constant
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @bf16_additive_large_constant(%q: tensor<2x4x8xbf16>, %k: tensor<2x4x8xbf16>, %v: tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xbf16> -> tensor<2x8x4xbf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xbf16>, tensor<2x8x4xbf16>) -> tensor<2x4x4xbf16>
  %bias = arith.constant dense<[[0.0, 0.0, -1.0e4, -1.0e4], [-1.0e4, -1.0e4, -1.0e4, -1.0e4], [0.0, 0.0, 0.0, 0.0], [0.0, -1.0e4, 0.0, -1.0e4]]> : tensor<4x4xbf16>
  %m = attn.add %s, %bias : (tensor<2x4x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4x4xbf16>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the additive mask is not a constant of values in [-16, 16] or -inf: the chain adds it in bf16)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xbf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4xbf16>, tensor<2x4x8xbf16>) -> tensor<2x4x8xbf16>
  return %o : tensor<2x4x8xbf16>
}

// -----

// A causal constant with a finite fill, then an additive mask: the chain
// gives future positions fill + mask, attn.sdpa (every lowering) adds the
// mask first and then replaces them by masked_value. A mask row of -inf is a
// NaN row in the chain, a uniform average over the future positions fused.
// CHECK-LABEL: func.func @causal_finite_fill_then_additive
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @causal_finite_fill_then_additive(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %bias: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %causal = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %f = attn.masked_fill %s, %causal value(-1.0e9) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %m = attn.add %f, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a causal or window mask with the finite fill -1.0E+9 followed by an additive mask (attn.sdpa replaces the masked positions by masked_value after adding the mask))}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// With -inf, the chain's -inf + mask equals the contract's replacement
// unless the mask holds +inf or NaN there: a runtime mask may, so the attribute form does
// not apply...
// CHECK-LABEL: func.func @causal_neginf_then_runtime_additive
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @causal_neginf_then_runtime_additive(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %bias: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %causal = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %f = attn.masked_fill %s, %causal value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %m = attn.add %f, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a causal or window mask followed by an additive mask that is not a constant free of +inf and NaN)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A mask that must be inverted (masked_fill: true = masked out) with `?`
// dims: the attribute form's inversion constant cannot have `?` dims; the
// region selects on the mask element as masked_fill does.
// CHECK-LABEL: func.func @dynamic_mask_inverted
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @dynamic_mask_inverted(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<?x?xi1>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<?x?xi1>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a dynamic-shaped boolean mask would have to be inverted or combined)}}
  %p = attn.softmax %m dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Two `?`-shaped masks may broadcast differently at run time ([1, S] and
// [L, 1]): arith.andi of them is not their broadcast conjunction.
// CHECK-LABEL: func.func @two_dynamic_masks
// CHECK-NOT: attn.softmax
// CHECK: attn.sdpa
// CHECK-SAME: score_mod
// CHECK-NOT: attn.softmax
func.func @two_dynamic_masks(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m1: tensor<?x?xi1>, %m2: tensor<?x?xi1>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0xFF800000> : tensor<f32>
  %a = attn.where %m1, %s, %c : (tensor<?x?xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b = attn.where %m2, %a, %c : (tensor<?x?xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a dynamic-shaped boolean mask would have to be inverted or combined)}}
  %p = attn.softmax %b dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
