// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// Band masks become is_causal and the window attributes (j kept iff
// i - window_left <= j <= i + window_right): masks built from positions
// (attn.iota compared) and constant bands. Position masks that are no band
// go into the score_mod region, computed from the indices; band masks at the
// end of such a chain leave the region for the attributes. The negative_
// cases must not become a window.

// Mistral: j > i is future, j <= i - 4096 is too old; here w = 3.
// CHECK-LABEL: func.func @causal_window
// CHECK-NOT: attn.iota
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {is_causal = true, scale = 1.000000e+00 : f64, window_left = 2 : i64} :
// CHECK-NOT: score_mod
func.func @causal_window(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<2x8x4xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %fut = attn.cmp gt, %j, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %w = arith.constant dense<3.0> : tensor<f32>
  %lo = attn.sub %i, %w : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32>
  %old = attn.cmp le, %j, %lo : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %m1 = attn.masked_fill %s, %fut value(0xFFF0000000000000) : (tensor<2x8x8xf32>, tensor<8x8xi1>) -> tensor<2x8x8xf32>
  %m2 = attn.masked_fill %m1, %old value(0xFFF0000000000000) : (tensor<2x8x8xf32>, tensor<8x8xi1>) -> tensor<2x8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %m2 dim(-1) : tensor<2x8x8xf32>
  %o = attn.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// Keep polarity (attn.where), i - j written the other way round, a finite
// fill in f16: |i - j| <= 2 gives window_left = window_right = 2 and the
// fill as masked_value.
// CHECK-LABEL: func.func @local_window_f16
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {masked_value = -1.000000e+04 : f64, scale = 1.000000e+00 : f64, window_left = 2 : i64, window_right = 2 : i64} :
func.func @local_window_f16(%q: tensor<6x4xf16>, %k: tensor<9x4xf16>, %v: tensor<9x4xf16>) -> tensor<6x4xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<9x4xf16> -> tensor<4x9xf16>
  %s = attn.matmul %q, %kt : (tensor<6x4xf16>, tensor<4x9xf16>) -> tensor<6x9xf16>
  %i = attn.iota 0 : tensor<6x1xf16>
  %j = attn.iota 1 : tensor<1x9xf16>
  %d = attn.sub %i, %j : (tensor<6x1xf16>, tensor<1x9xf16>) -> tensor<6x9xf16>
  %two = arith.constant dense<2.0> : tensor<f16>
  %mtwo = arith.constant dense<-2.0> : tensor<f16>
  %near = attn.cmp le, %d, %two : (tensor<6x9xf16>, tensor<f16>) -> tensor<6x9xi1>
  %near2 = attn.cmp ge, %d, %mtwo : (tensor<6x9xf16>, tensor<f16>) -> tensor<6x9xi1>
  %fill = arith.constant dense<-1.0e4> : tensor<f16>
  %m1 = attn.where %near, %s, %fill : (tensor<6x9xi1>, tensor<6x9xf16>, tensor<f16>) -> tensor<6x9xf16>
  %m2 = attn.where %near2, %m1, %fill : (tensor<6x9xi1>, tensor<6x9xf16>, tensor<f16>) -> tensor<6x9xf16>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %m2 dim(-1) : tensor<6x9xf16>
  %o = attn.matmul %p, %v : (tensor<6x9xf16>, tensor<9x4xf16>) -> tensor<6x4xf16>
  return %o : tensor<6x4xf16>
}

// -----

// A constant band mask, masked_fill polarity (true = masked): j > i or
// j < i - 1.
// CHECK-LABEL: func.func @constant_band
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {is_causal = true, scale = 1.000000e+00 : f64, window_left = 1 : i64} :
func.func @constant_band(%q: tensor<4x4xf32>, %k: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<4x4xf32> -> tensor<4x4xf32>
  %s = attn.matmul %q, %kt : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = arith.constant dense<[[false, true, true, true], [false, false, true, true],
                             [true, false, false, true], [true, true, false, false]]> : tensor<4x4xi1>
  %f = attn.masked_fill %s, %m value(0xFFF0000000000000) : (tensor<4x4xf32>, tensor<4x4xi1>) -> tensor<4x4xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %f dim(-1) : tensor<4x4xf32>
  %o = attn.matmul %p, %v : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %o : tensor<4x4xf32>
}

// -----

// ALiBi from positions, then causal: the bias is computed in the region from
// the indices i and j (no [L, S] extra operand); the trailing causal mask is
// is_causal.
// CHECK-LABEL: func.func @alibi_causal
// CHECK-NOT: attn.iota
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {is_causal = true, scale = 1.000000e+00 : f64} :
// CHECK-SAME: score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %[[B:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-DAG: arith.index_castui %[[I]] : index to i64
// CHECK-DAG: arith.index_castui %[[J]] : index to i64
// CHECK: math.absf
// CHECK-NOT: arith.select
// CHECK: attn.yield
func.func @alibi_causal(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<2x8x4xf32>, tensor<2x4x8xf32>) -> tensor<2x8x8xf32>
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %d = attn.sub %i, %j : (tensor<8x1xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
  %a = attn.abs %d : tensor<8x8xf32>
  %slope = arith.constant dense<0.5> : tensor<f32>
  %bias = attn.mul %a, %slope : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s1 = attn.sub %s, %bias : (tensor<2x8x8xf32>, tensor<8x8xf32>) -> tensor<2x8x8xf32>
  %fut = attn.cmp gt, %j, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %m = attn.masked_fill %s1, %fut value(0xFFF0000000000000) : (tensor<2x8x8xf32>, tensor<8x8xi1>) -> tensor<2x8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: the scores go through 'attn.sub', which is no scale, mask or additive mask)}}
  %p = attn.softmax %m dim(-1) : tensor<2x8x8xf32>
  %o = attn.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// An additive ALiBi bias from positions alone: exact as the mask operand,
// but it would be an [L, S] tensor; the region computes it per tile.
// CHECK-LABEL: func.func @alibi_additive
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {scale = 1.000000e+00 : f64} :
// CHECK-SAME: score_mod {
func.func @alibi_additive(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<8x4xf32> -> tensor<4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %d = attn.sub %j, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %s1 = attn.add %s, %d : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a mask built from positions that is no band (the score_mod region computes it per tile))}}
  %p = attn.softmax %s1 dim(-1) : tensor<8x8xf32>
  %o = attn.matmul %p, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// 2 * i is no band (the slope is not 1): region, not a window.
// CHECK-LABEL: func.func @negative_scaled_position
// CHECK-NOT: window
// CHECK: score_mod
func.func @negative_scaled_position(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<8x4xf32> -> tensor<4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %i2 = attn.mul %i, %two : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32>
  %fut = attn.cmp gt, %j, %i2 : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %m = attn.masked_fill %s, %fut value(0xFFF0000000000000) : (tensor<8x8xf32>, tensor<8x8xi1>) -> tensor<8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a mask built from positions that is no band (the score_mod region computes it per tile))}}
  %p = attn.softmax %m dim(-1) : tensor<8x8xf32>
  %o = attn.matmul %p, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// i + 2047 in f16 is not exact for every row (2048 + 7 rounds): the mask is
// no exact band, so it stays the chain's f16 arithmetic, in the region.
// CHECK-LABEL: func.func @negative_inexact_f16_position
// CHECK-NOT: window
// CHECK: score_mod
func.func @negative_inexact_f16_position(%q: tensor<8x4xf16>, %k: tensor<8x4xf16>, %v: tensor<8x4xf16>) -> tensor<8x4xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<8x4xf16> -> tensor<4x8xf16>
  %s = attn.matmul %q, %kt : (tensor<8x4xf16>, tensor<4x8xf16>) -> tensor<8x8xf16>
  %i = attn.iota 0 : tensor<8x1xf16>
  %j = attn.iota 1 : tensor<1x8xf16>
  %c = arith.constant dense<2047.0> : tensor<f16>
  %ic = attn.add %i, %c : (tensor<8x1xf16>, tensor<f16>) -> tensor<8x1xf16>
  %jc = attn.add %j, %c : (tensor<1x8xf16>, tensor<f16>) -> tensor<1x8xf16>
  %fut = attn.cmp gt, %jc, %ic : (tensor<1x8xf16>, tensor<8x1xf16>) -> tensor<8x8xi1>
  %m = attn.masked_fill %s, %fut value(0xFFF0000000000000) : (tensor<8x8xf16>, tensor<8x8xi1>) -> tensor<8x8xf16>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a mask built from positions that is no band (the score_mod region computes it per tile))}}
  %p = attn.softmax %m dim(-1) : tensor<8x8xf16>
  %o = attn.matmul %p, %v : (tensor<8x8xf16>, tensor<8x4xf16>) -> tensor<8x4xf16>
  return %o : tensor<8x4xf16>
}

// -----

// A position along a batch dim (the head) is no band over (i, j).
// CHECK-LABEL: func.func @negative_batch_position
// CHECK-NOT: window
// CHECK: score_mod
func.func @negative_batch_position(%q: tensor<4x8x4xf32>, %k: tensor<4x8x4xf32>, %v: tensor<4x8x4xf32>) -> tensor<4x8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<4x8x4xf32> -> tensor<4x4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<4x8x4xf32>, tensor<4x4x8xf32>) -> tensor<4x8x8xf32>
  %h = attn.iota 0 : tensor<4x1x1xf32>
  %j = attn.iota 2 : tensor<1x1x8xf32>
  %fut = attn.cmp gt, %j, %h : (tensor<1x1x8xf32>, tensor<4x1x1xf32>) -> tensor<4x1x8xi1>
  %m = attn.masked_fill %s, %fut value(0xFFF0000000000000) : (tensor<4x8x8xf32>, tensor<4x1x8xi1>) -> tensor<4x8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a mask built from positions that is no band (the score_mod region computes it per tile))}}
  %p = attn.softmax %m dim(-1) : tensor<4x8x8xf32>
  %o = attn.matmul %p, %v : (tensor<4x8x8xf32>, tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  return %o : tensor<4x8x4xf32>
}

// -----

// A position DAG that reuses every value (x_{n+1} = x_n + x_n, 40 deep) is
// analysed once per value, not once per path (2^40), and its positions are
// not exact in f32: no band, the region computes the chain's arithmetic.
// CHECK-LABEL: func.func @reused_positions_dag
// CHECK-NOT: window
// CHECK: score_mod
func.func @reused_positions_dag(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<8x4xf32> -> tensor<4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %x0 = attn.iota 0 : tensor<8x1xf32>
  %x1 = attn.add %x0, %x0 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x2 = attn.add %x1, %x1 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x3 = attn.add %x2, %x2 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x4 = attn.add %x3, %x3 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x5 = attn.add %x4, %x4 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x6 = attn.add %x5, %x5 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x7 = attn.add %x6, %x6 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x8 = attn.add %x7, %x7 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x9 = attn.add %x8, %x8 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x10 = attn.add %x9, %x9 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x11 = attn.add %x10, %x10 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x12 = attn.add %x11, %x11 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x13 = attn.add %x12, %x12 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x14 = attn.add %x13, %x13 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x15 = attn.add %x14, %x14 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x16 = attn.add %x15, %x15 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x17 = attn.add %x16, %x16 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x18 = attn.add %x17, %x17 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x19 = attn.add %x18, %x18 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x20 = attn.add %x19, %x19 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x21 = attn.add %x20, %x20 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x22 = attn.add %x21, %x21 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x23 = attn.add %x22, %x22 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x24 = attn.add %x23, %x23 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x25 = attn.add %x24, %x24 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x26 = attn.add %x25, %x25 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x27 = attn.add %x26, %x26 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x28 = attn.add %x27, %x27 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x29 = attn.add %x28, %x28 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x30 = attn.add %x29, %x29 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x31 = attn.add %x30, %x30 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x32 = attn.add %x31, %x31 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x33 = attn.add %x32, %x32 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x34 = attn.add %x33, %x33 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x35 = attn.add %x34, %x34 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x36 = attn.add %x35, %x35 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x37 = attn.add %x36, %x36 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x38 = attn.add %x37, %x37 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x39 = attn.add %x38, %x38 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %x40 = attn.add %x39, %x39 : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %m = attn.cmp gt, %j, %x40 : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %f = attn.masked_fill %s, %m value(0xFFF0000000000000) : (tensor<8x8xf32>, tensor<8x8xi1>) -> tensor<8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a mask built from positions that is no band (the score_mod region computes it per tile))}}
  %p = attn.softmax %f dim(-1) : tensor<8x8xf32>
  %o = attn.matmul %p, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o : tensor<8x4xf32>
}

// -----

// Run-time sequence lengths: f64 positions of `?` size are exact, so the
// band is known as for static ones (Mistral's window of 4 keys).
// CHECK-LABEL: func.func @dynamic_causal_window
// CHECK-NOT: attn.iota
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {is_causal = true, scale = 1.000000e+00 : f64, window_left = 3 : i64} :
// CHECK-NOT: score_mod
func.func @dynamic_causal_window(%q: tensor<?x?x4xf32>, %k: tensor<?x?x4xf32>, %v: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %c1 = arith.constant 1 : index
  %l = tensor.dim %q, %c1 : tensor<?x?x4xf32>
  %sl = tensor.dim %k, %c1 : tensor<?x?x4xf32>
  %kt = attn.transpose %k dims(-2, -1) : tensor<?x?x4xf32> -> tensor<?x4x?xf32>
  %s = attn.matmul %q, %kt : (tensor<?x?x4xf32>, tensor<?x4x?xf32>) -> tensor<?x?x?xf32>
  %i = attn.iota 0 (%l) : tensor<?x1xf64>
  %j = attn.iota 1 (%sl) : tensor<1x?xf64>
  %keep = attn.cmp le, %j, %i : (tensor<1x?xf64>, tensor<?x1xf64>) -> tensor<?x?xi1>
  %w = arith.constant dense<4.0> : tensor<f64>
  %lo = attn.sub %i, %w : (tensor<?x1xf64>, tensor<f64>) -> tensor<?x1xf64>
  %recent = attn.cmp gt, %j, %lo : (tensor<1x?xf64>, tensor<?x1xf64>) -> tensor<?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m1 = attn.where %keep, %s, %ninf : (tensor<?x?xi1>, tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %m2 = attn.where %recent, %m1, %ninf : (tensor<?x?xi1>, tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %m2 dim(-1) : tensor<?x?x?xf32>
  %o = attn.matmul %p, %v : (tensor<?x?x?xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  return %o : tensor<?x?x4xf32>
}

// -----

// Falcon's eager ALiBi: a mask that selects a [B, H, 1, S] tensor inside
// the causal band is computed in the region from the indices; the region
// reads the small tensor (an extra operand), never the [B, H, L, S] mask.
// CHECK-LABEL: func.func @band_over_small_tensor
// CHECK-SAME: %[[PAD:[^:]+]]: tensor<2x1x1x8xi1>, %[[BIAS:[^:]+]]: tensor<2x4x1x8xf32>
// CHECK: %[[INNER:.+]] = attn.where %[[PAD]], %[[BIAS]]
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} extras(%[[INNER]]) {scale = 1.250000e-01 : f64} : ({{.*}}, tensor<2x4x1x8xf32>) -> tensor<2x4x8x4xf32> score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index, %[[E:.+]]: f32):
// CHECK: %[[KEEP:.+]] = arith.cmpf ole
// CHECK: %[[M:.+]] = arith.select %[[KEEP]], %[[E]], %{{.+}} : f32
// CHECK: arith.addf %[[S]], %[[M]] : f32
func.func @band_over_small_tensor(%q: tensor<2x4x8x4xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x8x4xf32>, %pad: tensor<2x1x1x8xi1>, %bias: tensor<2x4x1x8xf32>) -> tensor<2x4x8x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8x4xf32> -> tensor<2x4x4x8xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %inner = attn.where %pad, %bias, %min : (tensor<2x1x1x8xi1>, tensor<2x4x1x8xf32>, tensor<f32>) -> tensor<2x4x1x8xf32>
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %keep = attn.cmp le, %j, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %mask = attn.where %keep, %inner, %min : (tensor<8x8xi1>, tensor<2x4x1x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %sm = attn.add %ss, %mask : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region (no attribute form: a mask built from positions that is no band (the score_mod region computes it per tile))}}
  %p = attn.softmax %sm dim(-1) : tensor<2x4x8x8xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x8x4xf32>
  return %o : tensor<2x4x8x4xf32>
}
