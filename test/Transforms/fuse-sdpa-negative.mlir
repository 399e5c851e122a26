// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | FileCheck %s
// Without explain there are no remarks at all.
// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark:

// Chains that must NOT fuse, each with the remark explain=true gives on the
// softmax. Remarks go to softmaxes that are plausibly attention: the input
// comes from an attn.matmul through at most 6 elementwise ops, or the result
// feeds an attn.matmul (directly or through one dropout/cast/mul/div).
// The weights are also returned.
// CHECK-LABEL: func.func @negative_weights_returned
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_weights_returned(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: attention weights have 2 users}}
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %p : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_scores_returned
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_scores_returned(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: the scores have 2 users}}
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %s : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_scaled_scores_returned
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_scaled_scores_returned(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: the scaled scores have 2 users}}
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %ss : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_masked_scores_returned
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_masked_scores_returned(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>, %bias: tensor<4x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %m2 = attn.add %m, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: the masked scores have 2 users}}
  %p = attn.softmax %m2 dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %m : tensor<2x4x8xf32>, tensor<2x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_softmax_not_last_dim
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_softmax_not_last_dim(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: the softmax is over dim 1, not the last dim}}
  %p = attn.softmax %ss dim(1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// The weights are the rhs: x . p is not p . v.
// CHECK-LABEL: func.func @negative_weights_on_the_right
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_weights_on_the_right(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %x: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: attention weights are the right operand of the second matmul (expected weights . v)}}
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %x, %p : (tensor<2x8x4xf32>, tensor<2x4x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// CHECK-LABEL: func.func @negative_scores_not_from_matmul
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_scores_not_from_matmul(%s: tensor<2x4x4xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>) {
  // expected-remark @+1 {{not fused: the scores are a block argument, not a matmul}}
  %p = attn.softmax %s dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_scale_after_softmax
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_scale_after_softmax(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: attention weights feed 'attn.mul', not a matmul}}
  %p = attn.softmax %s dim(-1) : tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ps = attn.mul %p, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %o = attn.matmul %ps, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// The mask [3, 2, L, S] broadcasts the scores [2, L, S] up: the chain's
// result has a batch dim the fused op would not have.
// CHECK-LABEL: func.func @negative_where_broadcasts_result
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_where_broadcasts_result(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<3x2x4x4xi1>) -> (tensor<3x2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attn.where %mask, %s, %ninf : (tensor<3x2x4x4xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<3x2x4x4xf32>
  // expected-remark @+1 {{not fused: the scores are broadcast to a bigger shape by 'attn.where'}}
  %p = attn.softmax %m dim(-1) : tensor<3x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<3x2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<3x2x4x8xf32>
  return %o : tensor<3x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_additive_broadcasts_result
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_additive_broadcasts_result(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %mask: tensor<3x2x4x4xf32>) -> (tensor<3x2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %m = attn.add %s, %mask : (tensor<2x4x4xf32>, tensor<3x2x4x4xf32>) -> tensor<3x2x4x4xf32>
  // expected-remark @+1 {{not fused: the scores are broadcast to a bigger shape by 'attn.add'}}
  %p = attn.softmax %m dim(-1) : tensor<3x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<3x2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<3x2x4x8xf32>
  return %o : tensor<3x2x4x8xf32>
}

// -----
// An f16 chain whose softmax output stays f32 and meets an f32 v: attn.sdpa
// has one element type.
// CHECK-LABEL: func.func @negative_f16_scores_f32_softmax
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_f16_scores_f32_softmax(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf16> -> tensor<2x8x4xf16>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x4x4xf16>
  %up = attn.cast %s : tensor<2x4x4xf16> -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: query, key and value element types differ from the scores' f16}}
  %p = attn.softmax %up dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----
// q [1, L, E] broadcasts against k [2, S, E]: the fused op's result would
// have q's batch dims.
// CHECK-LABEL: func.func @negative_query_broadcasts
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_query_broadcasts(%q: tensor<1x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<1x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{not fused: the query batch dims broadcast against the key's}}
  %p = attn.softmax %s dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_key_value_batch_differ
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_key_value_batch_differ(%q: tensor<2x2x4x8xf32>, %k: tensor<2x1x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> (tensor<2x2x4x8xf32>) {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x1x4x8xf32> -> tensor<2x1x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x1x8x4xf32>) -> tensor<2x2x4x4xf32>
  // expected-remark @+1 {{not fused: key and value batch dims differ (attn.sdpa needs them equal)}}
  %p = attn.softmax %s dim(-1) : tensor<2x2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----
// A softmax with nothing to do with attention gets no remark.
// CHECK-LABEL: func.func @not_attention_softmax
// CHECK: attn.softmax
func.func @not_attention_softmax(%x: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>) {
  %p = attn.softmax %x dim(-1) : tensor<2x4x4xf32>
  return %p : tensor<2x4x4xf32>
}

// -----

// A static 1 query batch against a `?` key batch: the chain's result batch
// is `?` (q may broadcast up), the fused op's would be 1.
// CHECK-LABEL: func.func @negative_dynamic_key_batch_broadcasts_query
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_dynamic_key_batch_broadcasts_query(%q: tensor<1x8x16x64xf32>, %k: tensor<?x8x16x64xf32>, %v: tensor<?x8x16x64xf32>) -> tensor<?x8x16x64xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<?x8x16x64xf32> -> tensor<?x8x64x16xf32>
  %s = attn.matmul %q, %kt : (tensor<1x8x16x64xf32>, tensor<?x8x64x16xf32>) -> tensor<?x8x16x16xf32>
  // expected-remark @+1 {{not fused: the query batch dims broadcast up in the matmuls (the fused op's result would be tensor<1x8x16x64xf32>, not tensor<?x8x16x64xf32>)}}
  %p = attn.softmax %s dim(-1) : tensor<?x8x16x16xf32>
  %o = attn.matmul %p, %v : (tensor<?x8x16x16xf32>, tensor<?x8x16x64xf32>) -> tensor<?x8x16x64xf32>
  return %o : tensor<?x8x16x64xf32>
}

// -----

// A column joined to the scores (torch.cat: an insert_slice) that is an
// argument [B, H, L, 1], not one value per head broadcast, the softmax over
// both, the column dropped before p . v: no attention sinks attn.sdpa can
// express (fuse-sdpa-sinks.mlir has those). Not fused, and the remark says
// so.
// CHECK-LABEL: func.func @negative_sinks
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_sinks(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %sinks: tensor<1x2x8x1xf32>) -> tensor<1x2x8x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x8x16xf32> -> tensor<1x2x16x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x2x8x9xf32>
  %c0 = tensor.insert_slice %s into %e[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x8xf32> into tensor<1x2x8x9xf32>
  %c1 = tensor.insert_slice %sinks into %c0[0, 0, 0, 8] [1, 2, 8, 1] [1, 1, 1, 1] : tensor<1x2x8x1xf32> into tensor<1x2x8x9xf32>
  // expected-remark @+1 {{not fused: attention sinks: the sink column is not one value per head (broadcast from tensor<1x2x8x1xf32>, the scores have 2 heads)}}
  %p = attn.softmax %c1 dim(-1) : tensor<1x2x8x9xf32>
  %p8 = tensor.extract_slice %p[0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x9xf32> to tensor<1x2x8x8xf32>
  %o = attn.matmul %p8, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
