// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | FileCheck %s

// Form 6: layouts. 3-D [B*H, L, E] is covered by the other files; here 4-D,
// a key given already transposed, the nanoGPT transpose(x, 1, 2) form, cross
// attention (L != S) with a value head dim Ev != E.

// k given as kT [..., E, S]: the fused op needs k, so a transpose back is
// emitted outside it.

// CHECK-LABEL: func.func @key_given_transposed
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf32>, %[[KT:[^:]+]]: tensor<2x2x8x4xf32>, %[[V:[^:]+]]: tensor<2x2x4x8xf32>)
// CHECK: %[[K:.+]] = attn.transpose %[[KT]] dims(-2, -1) : tensor<2x2x8x4xf32> -> tensor<2x2x4x8xf32>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @key_given_transposed(%q: tensor<2x2x4x8xf32>, %kt: tensor<2x2x8x4xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// nanoGPT: q, k, v are [B, L, H, E] transposed to [B, H, L, E]; those
// transposes stay outside the fused op, the output transpose back too.

// CHECK-LABEL: func.func @nanogpt_layout
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x3x8xf32>, %[[Y:[^:]+]]: tensor<2x4x3x8xf32>, %[[Z:[^:]+]]: tensor<2x4x3x8xf32>)
// CHECK-DAG: %[[Q:.+]] = attn.transpose %[[X]] dims(1, 2)
// CHECK-DAG: %[[K:.+]] = attn.transpose %[[Y]] dims(1, 2)
// CHECK-DAG: %[[V:.+]] = attn.transpose %[[Z]] dims(1, 2)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {is_causal = true, scale = 0.35355338454246521 : f64}
// CHECK-SAME: -> tensor<2x3x4x8xf32>
// CHECK: attn.transpose %[[O]] dims(1, 2)
// CHECK-NOT: attn.softmax
func.func @nanogpt_layout(%x: tensor<2x4x3x8xf32>, %y: tensor<2x4x3x8xf32>, %z: tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32> {
  %q = attn.transpose %x dims(1, 2) : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %k = attn.transpose %y dims(1, 2) : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %v = attn.transpose %z dims(1, 2) : tensor<2x4x3x8xf32> -> tensor<2x3x4x8xf32>
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x3x4x8xf32> -> tensor<2x3x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x3x4x8xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x4x4xf32>
  %c = arith.constant dense<0.35355339059327379> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3x4x4xf32>
  %bias = arith.constant dense<[[[[false, true, true, true], [false, false, true, true],
                                  [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %m = attn.masked_fill %ss, %bias value(0xFFF0000000000000) : (tensor<2x3x4x4xf32>, tensor<1x1x4x4xi1>) -> tensor<2x3x4x4xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x3x4x4xf32>
  %y2 = attn.matmul %p, %v : (tensor<2x3x4x4xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  %out = attn.transpose %y2 dims(1, 2) : tensor<2x3x4x8xf32> -> tensor<2x4x3x8xf32>
  return %out : tensor<2x4x3x8xf32>
}

// -----

// Cross attention: L = 3 queries, S = 5 keys, E = 8, Ev = 6, with a padding
// mask over S. The softmax is written dim(2) on the 3-D scores: the last dim,
// so it fuses.

// CHECK-LABEL: func.func @cross_attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x3x8xf32>, %[[K:[^:]+]]: tensor<2x5x8xf32>, %[[V:[^:]+]]: tensor<2x5x6xf32>, %[[M:[^:]+]]: tensor<2x1x5xi1>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-SAME: (tensor<2x3x8xf32>, tensor<2x5x8xf32>, tensor<2x5x6xf32>, tensor<2x1x5xi1>) -> tensor<2x3x6xf32>
// CHECK-NOT: attn.softmax
func.func @cross_attention(%q: tensor<2x3x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x6xf32>, %keep: tensor<2x1x5xi1>) -> tensor<2x3x6xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x5x8xf32> -> tensor<2x8x5xf32>
  %s = attn.matmul %q, %kt : (tensor<2x3x8xf32>, tensor<2x8x5xf32>) -> tensor<2x3x5xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attn.where %keep, %ss, %ninf : (tensor<2x1x5xi1>, tensor<2x3x5xf32>, tensor<f32>) -> tensor<2x3x5xf32>
  %p = attn.softmax %m dim(2) : tensor<2x3x5xf32>
  %o = attn.matmul %p, %v : (tensor<2x3x5xf32>, tensor<2x5x6xf32>) -> tensor<2x3x6xf32>
  return %o : tensor<2x3x6xf32>
}

// -----

// Form 7: multi-query attention, one k/v head broadcast by the matmuls.

// CHECK-LABEL: func.func @multi_query
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x4x8xf16>, %[[K:[^:]+]]: tensor<2x1x4x8xf16>, %[[V:[^:]+]]: tensor<2x1x4x8xf16>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-SAME: (tensor<2x4x4x8xf16>, tensor<2x1x4x8xf16>, tensor<2x1x4x8xf16>) -> tensor<2x4x4x8xf16>
// CHECK-NOT: attn.softmax
func.func @multi_query(%q: tensor<2x4x4x8xf16>, %k: tensor<2x1x4x8xf16>, %v: tensor<2x1x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x1x4x8xf16> -> tensor<2x1x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x4x8xf16>, tensor<2x1x8x4xf16>) -> tensor<2x4x4x4xf16>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4x4xf16>, tensor<f32>) -> tensor<2x4x4x4xf16>
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x4x4x4xf16>, tensor<2x1x4x8xf16>) -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}

// -----

// Grouped-query attention: H_kv = 2 heads expanded to H = 4 with
// repeat_interleave; attn.sdpa takes the un-expanded k and v.

// CHECK-LABEL: func.func @grouped_query
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x4x8xf16>, %[[K:[^:]+]]: tensor<2x2x4x8xf16>, %[[V:[^:]+]]: tensor<2x2x4x8xf16>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {is_causal = true, scale = 1.250000e-01 : f64}
// CHECK-SAME: (tensor<2x4x4x8xf16>, tensor<2x2x4x8xf16>, tensor<2x2x4x8xf16>) -> tensor<2x4x4x8xf16>
// CHECK-NOT: attn.repeat_interleave
// CHECK-NOT: attn.softmax
func.func @grouped_query(%q: tensor<2x4x4x8xf16>, %k: tensor<2x2x4x8xf16>, %v: tensor<2x2x4x8xf16>) -> tensor<2x4x4x8xf16> {
  %k4 = attn.repeat_interleave %k repeats(2) dim(1) : tensor<2x2x4x8xf16> -> tensor<2x4x4x8xf16>
  %v4 = attn.repeat_interleave %v repeats(2) dim(-3) : tensor<2x2x4x8xf16> -> tensor<2x4x4x8xf16>
  %kt = attn.transpose %k4 dims(-2, -1) : tensor<2x4x4x8xf16> -> tensor<2x4x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x4x8xf16>, tensor<2x4x8x4xf16>) -> tensor<2x4x4x4xf16>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4x4xf16>, tensor<f32>) -> tensor<2x4x4x4xf16>
  %mask = arith.constant dense<[[false, true, true, true], [false, false, true, true],
                                [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x4x4x4xf16>, tensor<4x4xi1>) -> tensor<2x4x4x4xf16>
  %p = attn.softmax %m dim(-1) : tensor<2x4x4x4xf16>
  %o = attn.matmul %p, %v4 : (tensor<2x4x4x4xf16>, tensor<2x4x4x8xf16>) -> tensor<2x4x4x8xf16>
  return %o : tensor<2x4x4x8xf16>
}

// -----

// Only k is expanded with repeat_interleave (v already has H heads): k stays
// expanded (the op outside the fused one), which attn.sdpa accepts as is.

// CHECK-LABEL: func.func @grouped_query_only_key_expanded
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x4x8xf32>, %[[K:[^:]+]]: tensor<2x2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x4x8xf32>)
// CHECK: %[[K4:.+]] = attn.repeat_interleave %[[K]] repeats(2) dim(1)
// CHECK: attn.sdpa %[[Q]], %[[K4]], %[[V]] {scale = 1.000000e+00 : f64}
// CHECK-NOT: attn.softmax
func.func @grouped_query_only_key_expanded(%q: tensor<2x4x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32> {
  %k4 = attn.repeat_interleave %k repeats(2) dim(1) : tensor<2x2x4x8xf32> -> tensor<2x4x4x8xf32>
  %kt = attn.transpose %k4 dims(-2, -1) : tensor<2x4x4x8xf32> -> tensor<2x4x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x4x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x4x4xf32>
  %p = attn.softmax %s dim(-1) : tensor<2x4x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  return %o : tensor<2x4x4x8xf32>
}

// -----

// Dynamic batch and sequence dims fuse: a `?` dim never broadcasts at run
// time (the lowerings check it), so `?` against `?` or N is the same size.
// CHECK-LABEL: func.func @dynamic_dims
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x8x?x64xf32>, %[[K:[^:]+]]: tensor<?x8x?x64xf32>, %[[V:[^:]+]]: tensor<?x8x?x64xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64} : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32>
// CHECK-NOT: attn.softmax
func.func @dynamic_dims(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<?x8x?x64xf32> -> tensor<?x8x64x?xf32>
  %s = attn.matmul %q, %kt : (tensor<?x8x?x64xf32>, tensor<?x8x64x?xf32>) -> tensor<?x8x?x?xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %p = attn.softmax %ss dim(-1) : tensor<?x8x?x?xf32>
  %o = attn.matmul %p, %v : (tensor<?x8x?x?xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

