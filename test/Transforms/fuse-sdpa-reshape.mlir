// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// Reshapes that only split or merge batch dims (torch view/reshape between
// bmm calls) move out of the chain: the chain fuses in one shape, and the
// operands and the result get the reshapes. A reshape that touches the last
// two dims, or one that cannot move out, is refused with a remark.

// The Inductor/BERT form: q, k, v [B, H, L, E] viewed as [B*H, L, E] for
// bmm, the scores viewed back to [B, H, L, S] for the padding mask, then to
// [B*H, L, S] for the softmax and the second bmm, the output viewed back.
// Every reshape cancels: one attn.sdpa on the original operands.
// CHECK-LABEL: func.func @bmm_views
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x3x5x8xf32>, %[[K:[^:]+]]: tensor<2x3x7x8xf32>, %[[V:[^:]+]]: tensor<2x3x7x4xf32>, %[[M:[^:]+]]: tensor<2x1x1x7xf32>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: tensor.
// CHECK: return %[[O]]
func.func @bmm_views(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x7x4xf32>, %m: tensor<2x1x1x7xf32>) -> tensor<2x3x5x4xf32> {
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x3x5x8xf32> into tensor<6x5x8xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x3x7x8xf32> into tensor<6x7x8xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x3x7x4xf32> into tensor<6x7x4xf32>
  %kt = attn.transpose %k3 dims(1, 2) : tensor<6x7x8xf32> -> tensor<6x8x7xf32>
  %s = attn.matmul %q3, %kt : (tensor<6x5x8xf32>, tensor<6x8x7xf32>) -> tensor<6x5x7xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<6x5x7xf32>, tensor<f32>) -> tensor<6x5x7xf32>
  %s4 = tensor.expand_shape %ss [[0, 1], [2], [3]] output_shape [2, 3, 5, 7] : tensor<6x5x7xf32> into tensor<2x3x5x7xf32>
  %a = attn.add %s4, %m : (tensor<2x3x5x7xf32>, tensor<2x1x1x7xf32>) -> tensor<2x3x5x7xf32>
  %a3 = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<2x3x5x7xf32> into tensor<6x5x7xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %a3 dim(-1) : tensor<6x5x7xf32>
  %o = attn.matmul %p, %v3 : (tensor<6x5x7xf32>, tensor<6x7x4xf32>) -> tensor<6x5x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 3, 5, 4] : tensor<6x5x4xf32> into tensor<2x3x5x4xf32>
  return %o4 : tensor<2x3x5x4xf32>
}

// -----

// attn.reshape on rank-3 operands: the chain fuses at [2, 3, L, S], where the
// mask broadcasts; q, k, v are expanded and the result collapsed back.
// CHECK-LABEL: func.func @attn_reshape_scores
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<6x5x8xf16>, %[[K:[^:]+]]: tensor<6x7x8xf16>, %[[V:[^:]+]]: tensor<6x7x4xf16>, %[[M:[^:]+]]: tensor<2x1x5x7xi1>)
// CHECK-DAG: %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 5, 8]
// CHECK-DAG: %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 7, 8]
// CHECK-DAG: %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 7, 4]
// CHECK: %[[O:.+]] = attn.sdpa %[[Q4]], %[[K4]], %[[V4]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>,
// CHECK-SAME: -> tensor<2x3x5x4xf16>
// CHECK: %[[O3:.+]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x5x4xf16> into tensor<6x5x4xf16>
// CHECK: return %[[O3]]
func.func @attn_reshape_scores(%q: tensor<6x5x8xf16>, %k: tensor<6x7x8xf16>, %v: tensor<6x7x4xf16>, %m: tensor<2x1x5x7xi1>) -> tensor<6x5x4xf16> {
  %kt = attn.transpose %k dims(1, 2) : tensor<6x7x8xf16> -> tensor<6x8x7xf16>
  %s = attn.matmul %q, %kt : (tensor<6x5x8xf16>, tensor<6x8x7xf16>) -> tensor<6x5x7xf16>
  %s4 = attn.reshape %s : tensor<6x5x7xf16> -> tensor<2x3x5x7xf16>
  %f = attn.masked_fill %s4, %m value(0xFFF0000000000000) : (tensor<2x3x5x7xf16>, tensor<2x1x5x7xi1>) -> tensor<2x3x5x7xf16>
  %f3 = attn.reshape %f : tensor<2x3x5x7xf16> -> tensor<6x5x7xf16>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %f3 dim(-1) : tensor<6x5x7xf16>
  %o = attn.matmul %p, %v : (tensor<6x5x7xf16>, tensor<6x7x4xf16>) -> tensor<6x5x4xf16>
  return %o : tensor<6x5x4xf16>
}

// -----

// The weights viewed between the softmax and a training dropout and the
// second matmul; the result keeps the expanded shape the chain computes.
// CHECK-LABEL: func.func @weights_view_dropout
// CHECK: attn.sdpa {{.*}}dropout_p = 2.500000e-01{{.*}} -> tensor<2x2x3x4xf32>
// CHECK: tensor.collapse_shape {{.*}} : tensor<2x2x3x4xf32> into tensor<4x3x4xf32>
// CHECK-NOT: attn.softmax
func.func @weights_view_dropout(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<4x5x4xf32>) -> tensor<4x3x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x5x8xf32> -> tensor<2x2x8x5xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x3x8xf32>, tensor<2x2x8x5xf32>) -> tensor<2x2x3x5xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %s dim(-1) : tensor<2x2x3x5xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x2x3x5xf32> into tensor<4x3x5xf32>
  %d = attn.dropout %p3 p(0.25) train(true) {seed = 3 : i64} : tensor<4x3x5xf32>
  %o = attn.matmul %d, %v : (tensor<4x3x5xf32>, tensor<4x5x4xf32>) -> tensor<4x3x4xf32>
  return %o : tensor<4x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_reshape_scores_last_dims
// CHECK-NOT: attn.sdpa
func.func @negative_reshape_scores_last_dims(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x6x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x6x8xf32> -> tensor<2x8x6xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x6xf32>) -> tensor<2x4x6xf32>
  %r = attn.reshape %s : tensor<2x4x6xf32> -> tensor<2x6x4xf32>
  // expected-remark @+1 {{not fused: the scores go through a reshape: attn.reshape reshapes tensor<2x4x6xf32> to tensor<2x6x4xf32>, which changes the last two dims (only batch dims may be split or merged)}}
  %p = attn.softmax %r dim(-1) : tensor<2x6x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x6x4xf32>, tensor<2x4x8xf32>) -> tensor<2x6x8xf32>
  return %o : tensor<2x6x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_reshape_weights_last_dims
// CHECK-NOT: attn.sdpa
func.func @negative_reshape_weights_last_dims(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x6x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x6x8xf32> -> tensor<2x8x6xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x6xf32>) -> tensor<2x4x6xf32>
  // expected-remark @+1 {{not fused: attention weights go through a reshape: attn.reshape reshapes tensor<2x4x6xf32> to tensor<2x6x4xf32>, which changes the last two dims}}
  %p = attn.softmax %s dim(-1) : tensor<2x4x6xf32>
  %r = attn.reshape %p : tensor<2x4x6xf32> -> tensor<2x6x4xf32>
  %o = attn.matmul %r, %v : (tensor<2x6x4xf32>, tensor<2x4x8xf32>) -> tensor<2x6x8xf32>
  return %o : tensor<2x6x8xf32>
}

// -----

// k broadcasts over the batch (one shared key set): the view of the scores
// cannot move onto k, and the mask added after it keeps it from moving past
// the softmax, so it stays and the chain is refused.
// CHECK-LABEL: func.func @negative_reshape_broadcast_key
// CHECK-NOT: attn.sdpa
func.func @negative_reshape_broadcast_key(%q: tensor<6x5x8xf32>, %kt: tensor<1x8x7xf32>, %v: tensor<2x3x7x4xf32>, %m: tensor<2x1x1x7xf32>) -> tensor<2x3x5x4xf32> {
  %s = attn.matmul %q, %kt : (tensor<6x5x8xf32>, tensor<1x8x7xf32>) -> tensor<6x5x7xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 3, 5, 7] : tensor<6x5x7xf32> into tensor<2x3x5x7xf32>
  %a = attn.add %s4, %m : (tensor<2x3x5x7xf32>, tensor<2x1x1x7xf32>) -> tensor<2x3x5x7xf32>
  // expected-remark @+1 {{not fused: the scores go through a reshape: tensor.expand_shape reshapes tensor<6x5x7xf32> to tensor<2x3x5x7xf32> and stays inside the chain}}
  %p = attn.softmax %a dim(-1) : tensor<2x3x5x7xf32>
  %o = attn.matmul %p, %v : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// A dynamic batch: the expands of q, k and v take the size the scores'
// expand was given.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x5x8xf32>, %[[K:[^:]+]]: tensor<?x7x8xf32>, %[[V:[^:]+]]: tensor<?x7x4xf32>, %[[M:[^:]+]]: tensor<?x1x1x7xf32>, %[[B:[^:]+]]: index)
// CHECK-DAG: %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] output_shape [%[[B]], 3, 5, 8]
// CHECK-DAG: %[[K4:.+]] = tensor.expand_shape %[[K]] {{\[\[}}0, 1], [2], [3]] output_shape [%[[B]], 3, 7, 8]
// CHECK-DAG: %[[V4:.+]] = tensor.expand_shape %[[V]] {{\[\[}}0, 1], [2], [3]] output_shape [%{{.+}}, 3, 7, 4]
// CHECK: %[[O:.+]] = attn.sdpa %[[Q4]], %[[K4]], %[[V4]], %[[M]] {scale = 1.000000e+00 : f64} : ({{.*}}) -> tensor<?x3x5x4xf32>
// CHECK: tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]] : tensor<?x3x5x4xf32> into tensor<?x5x4xf32>
func.func @dynamic_batch(%q: tensor<?x5x8xf32>, %k: tensor<?x7x8xf32>, %v: tensor<?x7x4xf32>, %m: tensor<?x1x1x7xf32>, %b: index) -> tensor<?x5x4xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<?x7x8xf32> -> tensor<?x8x7xf32>
  %s = attn.matmul %q, %kt : (tensor<?x5x8xf32>, tensor<?x8x7xf32>) -> tensor<?x5x7xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [%b, 3, 5, 7] : tensor<?x5x7xf32> into tensor<?x3x5x7xf32>
  %a = attn.add %s4, %m : (tensor<?x3x5x7xf32>, tensor<?x1x1x7xf32>) -> tensor<?x3x5x7xf32>
  %a3 = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<?x3x5x7xf32> into tensor<?x5x7xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %a3 dim(-1) : tensor<?x5x7xf32>
  %o = attn.matmul %p, %v : (tensor<?x5x7xf32>, tensor<?x7x4xf32>) -> tensor<?x5x4xf32>
  return %o : tensor<?x5x4xf32>
}

// -----

// BLOOM: `alibi.baddbmm(q, kT, alpha=...)` on [B*H, L, S] views, where the
// ALiBi bias [B*H, 1, S] broadcasts along the query rows; the scores are
// viewed as [B, H, L, S] for the padding mask. The bias has the scores'
// batch dims, so it is reshaped with them ([B, H, 1, S]) and the chain
// fuses with the bias in the score_mod region.
// CHECK-LABEL: func.func @bloom_alibi_baddbmm
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<6x5x8xf32>, %[[K:[^:]+]]: tensor<6x7x8xf32>, %[[V:[^:]+]]: tensor<6x7x4xf32>, %[[AL:[^:]+]]: tensor<6x1x7xf32>, %[[M:[^:]+]]: tensor<2x1x5x7xf32>)
// CHECK-DAG: %[[AL4:.+]] = tensor.expand_shape %[[AL]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 1, 7]
// CHECK: %[[O:.+]] = attn.sdpa {{.*}} extras(%[[AL4]], %[[M]])
// CHECK-NOT: attn.softmax
func.func @bloom_alibi_baddbmm(%q: tensor<6x5x8xf32>, %k: tensor<6x7x8xf32>, %v: tensor<6x7x4xf32>, %alibi: tensor<6x1x7xf32>, %m: tensor<2x1x5x7xf32>) -> tensor<6x5x4xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<6x7x8xf32> -> tensor<6x8x7xf32>
  %s = attn.matmul %q, %kt : (tensor<6x5x8xf32>, tensor<6x8x7xf32>) -> tensor<6x5x7xf32>
  %c = arith.constant dense<0.353553385> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<6x5x7xf32>, tensor<f32>) -> tensor<6x5x7xf32>
  %b = attn.add %alibi, %ss : (tensor<6x1x7xf32>, tensor<6x5x7xf32>) -> tensor<6x5x7xf32>
  %s4 = tensor.expand_shape %b [[0, 1], [2], [3]] output_shape [2, 3, 5, 7] : tensor<6x5x7xf32> into tensor<2x3x5x7xf32>
  %a = attn.add %s4, %m : (tensor<2x3x5x7xf32>, tensor<2x1x5x7xf32>) -> tensor<2x3x5x7xf32>
  // expected-remark @+1 {{fused into attn.sdpa with a score_mod region}}
  %p = attn.softmax %a dim(-1) : tensor<2x3x5x7xf32>
  %p3 = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<2x3x5x7xf32> into tensor<6x5x7xf32>
  %o = attn.matmul %p3, %v : (tensor<6x5x7xf32>, tensor<6x7x4xf32>) -> tensor<6x5x4xf32>
  return %o : tensor<6x5x4xf32>
}

// -----

// An operand that broadcasts over the batch dims of the view ([1, L, S]
// against [B*H, L, S]) has no [B, H] split: the view stays in the chain.
// CHECK-LABEL: func.func @negative_reshape_bias_broadcasts_batch
// CHECK-NOT: attn.sdpa
func.func @negative_reshape_bias_broadcasts_batch(%q: tensor<6x5x8xf32>, %k: tensor<6x7x8xf32>, %v: tensor<2x3x7x4xf32>, %bias: tensor<1x5x7xf32>, %m: tensor<2x1x5x7xf32>) -> tensor<2x3x5x4xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<6x7x8xf32> -> tensor<6x8x7xf32>
  %s = attn.matmul %q, %kt : (tensor<6x5x8xf32>, tensor<6x8x7xf32>) -> tensor<6x5x7xf32>
  %b = attn.add %s, %bias : (tensor<6x5x7xf32>, tensor<1x5x7xf32>) -> tensor<6x5x7xf32>
  %s4 = tensor.expand_shape %b [[0, 1], [2], [3]] output_shape [2, 3, 5, 7] : tensor<6x5x7xf32> into tensor<2x3x5x7xf32>
  %a = attn.add %s4, %m : (tensor<2x3x5x7xf32>, tensor<2x1x5x7xf32>) -> tensor<2x3x5x7xf32>
  // expected-remark @+1 {{not fused: the scores go through a reshape}}
  %p = attn.softmax %a dim(-1) : tensor<2x3x5x7xf32>
  %o = attn.matmul %p, %v : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}
