// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of every op in its custom form, and through the generic form.

// CHECK-LABEL: func.func @matmul_broadcast
// CHECK: attn.matmul %{{.*}}, %{{.*}} : (tensor<2x8x128x64xf16>, tensor<2x1x64x96xf16>) -> tensor<2x8x128x96xf16>
func.func @matmul_broadcast(%a: tensor<2x8x128x64xf16>, %b: tensor<2x1x64x96xf16>) -> tensor<2x8x128x96xf16> {
  %0 = attn.matmul %a, %b : (tensor<2x8x128x64xf16>, tensor<2x1x64x96xf16>) -> tensor<2x8x128x96xf16>
  return %0 : tensor<2x8x128x96xf16>
}

// CHECK-LABEL: func.func @matmul_dynamic
// CHECK: attn.matmul %{{.*}}, %{{.*}} : (tensor<?x?x64xf32>, tensor<?x64x?xf32>) -> tensor<?x?x?xf32>
func.func @matmul_dynamic(%a: tensor<?x?x64xf32>, %b: tensor<?x64x?xf32>) -> tensor<?x?x?xf32> {
  %0 = attn.matmul %a, %b : (tensor<?x?x64xf32>, tensor<?x64x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK: attn.transpose %{{.*}} dims(-2, -1) : tensor<2x8x128x64xf32> -> tensor<2x8x64x128xf32>
func.func @transpose(%k: tensor<2x8x128x64xf32>) -> tensor<2x8x64x128xf32> {
  %0 = attn.transpose %k dims(-2, -1) : tensor<2x8x128x64xf32> -> tensor<2x8x64x128xf32>
  return %0 : tensor<2x8x64x128xf32>
}

// CHECK-LABEL: func.func @elementwise
// CHECK: attn.mul %{{.*}}, %{{.*}} : (tensor<8x16x16xbf16>, tensor<f32>) -> tensor<8x16x16xbf16>
// CHECK: attn.div %{{.*}}, %{{.*}} : (tensor<8x16x16xbf16>, tensor<bf16>) -> tensor<8x16x16xbf16>
// CHECK: attn.add %{{.*}}, %{{.*}} : (tensor<8x16x16xbf16>, tensor<1x16xbf16>) -> tensor<8x16x16xbf16>
// CHECK: attn.sub %{{.*}}, %{{.*}} : (tensor<8x1x16xbf16>, tensor<16x1xbf16>) -> tensor<8x16x16xbf16>
func.func @elementwise(%s: tensor<8x16x16xbf16>, %c: tensor<f32>, %d: tensor<bf16>,
                       %m: tensor<1x16xbf16>, %x: tensor<8x1x16xbf16>, %y: tensor<16x1xbf16>)
    -> (tensor<8x16x16xbf16>, tensor<8x16x16xbf16>) {
  %0 = attn.mul %s, %c : (tensor<8x16x16xbf16>, tensor<f32>) -> tensor<8x16x16xbf16>
  %1 = attn.div %0, %d : (tensor<8x16x16xbf16>, tensor<bf16>) -> tensor<8x16x16xbf16>
  %2 = attn.add %1, %m : (tensor<8x16x16xbf16>, tensor<1x16xbf16>) -> tensor<8x16x16xbf16>
  %3 = attn.sub %x, %y : (tensor<8x1x16xbf16>, tensor<16x1xbf16>) -> tensor<8x16x16xbf16>
  return %2, %3 : tensor<8x16x16xbf16>, tensor<8x16x16xbf16>
}

// CHECK-LABEL: func.func @masks
// CHECK: attn.masked_fill %{{.*}}, %{{.*}} value(0xFFF0000000000000) : (tensor<2x4x16x32xf32>, tensor<16x32xi1>) -> tensor<2x4x16x32xf32>
// CHECK: attn.masked_fill %{{.*}}, %{{.*}} value(-1.000000e+09) : (tensor<2x4x16x32xf32>, tensor<2x1x1x32xi1>) -> tensor<2x4x16x32xf32>
// CHECK: attn.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16x32xi1>, tensor<2x4x16x32xf32>, tensor<f32>) -> tensor<2x4x16x32xf32>
func.func @masks(%s: tensor<2x4x16x32xf32>, %causal: tensor<16x32xi1>, %pad: tensor<2x1x1x32xi1>,
                 %neg: tensor<f32>) -> tensor<2x4x16x32xf32> {
  %0 = attn.masked_fill %s, %causal value(0xFFF0000000000000) : (tensor<2x4x16x32xf32>, tensor<16x32xi1>) -> tensor<2x4x16x32xf32>
  %1 = attn.masked_fill %0, %pad value(-1.0e9) : (tensor<2x4x16x32xf32>, tensor<2x1x1x32xi1>) -> tensor<2x4x16x32xf32>
  %2 = attn.where %causal, %1, %neg : (tensor<16x32xi1>, tensor<2x4x16x32xf32>, tensor<f32>) -> tensor<2x4x16x32xf32>
  return %2 : tensor<2x4x16x32xf32>
}

// CHECK-LABEL: func.func @softmax_cast_dropout
// CHECK: attn.cast %{{.*}} : tensor<4x16x16xf16> -> tensor<4x16x16xf32>
// CHECK: attn.softmax %{{.*}} dim(-1) : tensor<4x16x16xf32>
// CHECK: attn.cast %{{.*}} : tensor<4x16x16xf32> -> tensor<4x16x16xf16>
// CHECK: attn.dropout %{{.*}} p(1.000000e-01) train(true) : tensor<4x16x16xf16>
func.func @softmax_cast_dropout(%s: tensor<4x16x16xf16>) -> tensor<4x16x16xf16> {
  %0 = attn.cast %s : tensor<4x16x16xf16> -> tensor<4x16x16xf32>
  %1 = attn.softmax %0 dim(-1) : tensor<4x16x16xf32>
  %2 = attn.cast %1 : tensor<4x16x16xf32> -> tensor<4x16x16xf16>
  %3 = attn.dropout %2 p(0.1) train(true) : tensor<4x16x16xf16>
  return %3 : tensor<4x16x16xf16>
}

// CHECK-LABEL: func.func @repeat_interleave
// CHECK: attn.repeat_interleave %{{.*}} repeats(4) dim(1) : tensor<2x2x128x64xf16> -> tensor<2x8x128x64xf16>
func.func @repeat_interleave(%k: tensor<2x2x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %0 = attn.repeat_interleave %k repeats(4) dim(1) : tensor<2x2x128x64xf16> -> tensor<2x8x128x64xf16>
  return %0 : tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @sdpa
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x128x64xf16>, tensor<2x8x96x64xf16>, tensor<2x8x96x80xf16>) -> tensor<2x8x128x80xf16>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {dropout_p = 1.000000e-01 : f64, is_causal = true, masked_value = -1.000000e+09 : f64, scale = 1.250000e-01 : f64}
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x128x64xf16>, tensor<2x2x96x64xf16>, tensor<2x2x96x64xf16>, tensor<2x1x1x96xi1>) -> tensor<2x8x128x64xf16>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?xf32>) -> tensor<?x?x64xf32>
func.func @sdpa(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x96x64xf16>, %v: tensor<2x8x96x80xf16>,
                %k2: tensor<2x2x96x64xf16>, %pad: tensor<2x1x1x96xi1>,
                %dq: tensor<?x?x64xf32>, %dm: tensor<?x?xf32>)
    -> (tensor<2x8x128x80xf16>, tensor<2x8x128x80xf16>, tensor<2x8x128x64xf16>, tensor<?x?x64xf32>) {
  %0 = attn.sdpa %q, %k, %v : (tensor<2x8x128x64xf16>, tensor<2x8x96x64xf16>, tensor<2x8x96x80xf16>) -> tensor<2x8x128x80xf16>
  %1 = attn.sdpa %q, %k, %v {scale = 0.125 : f64, is_causal = true, dropout_p = 0.1 : f64, masked_value = -1.0e9 : f64}
      : (tensor<2x8x128x64xf16>, tensor<2x8x96x64xf16>, tensor<2x8x96x80xf16>) -> tensor<2x8x128x80xf16>
  %2 = attn.sdpa %q, %k2, %k2, %pad : (tensor<2x8x128x64xf16>, tensor<2x2x96x64xf16>, tensor<2x2x96x64xf16>, tensor<2x1x1x96xi1>) -> tensor<2x8x128x64xf16>
  %3 = attn.sdpa %dq, %dq, %dq, %dm : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?xf32>) -> tensor<?x?x64xf32>
  return %0, %1, %2, %3 : tensor<2x8x128x80xf16>, tensor<2x8x128x80xf16>, tensor<2x8x128x64xf16>, tensor<?x?x64xf32>
}

// CHECK-LABEL: func.func @unary_ops
// CHECK: attn.tanh %{{.*}} : tensor<4x8xf16>
// CHECK: attn.exp %{{.*}} : tensor<4x8xf16>
// CHECK: attn.neg %{{.*}} : tensor<4x8xf16>
// CHECK: attn.abs %{{.*}} : tensor<4x8xf16>
func.func @unary_ops(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = attn.tanh %x : tensor<4x8xf16>
  %1 = attn.exp %0 : tensor<4x8xf16>
  %2 = attn.neg %1 : tensor<4x8xf16>
  %3 = attn.abs %2 : tensor<4x8xf16>
  return %3 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @maximum_minimum_cmp
// CHECK: attn.maximum %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK: attn.minimum %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
// CHECK: attn.cmp ge, %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xi1>
func.func @maximum_minimum_cmp(%x: tensor<2x4x8xf32>, %y: tensor<8xf32>, %c: tensor<f32>) -> tensor<2x4x8xi1> {
  %0 = attn.maximum %x, %y : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %1 = attn.minimum %0, %c : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %2 = attn.cmp ge, %1, %c : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xi1>
  return %2 : tensor<2x4x8xi1>
}

// A score_mod region with a mask and an extra operand.
// CHECK-LABEL: func.func @sdpa_score_mod
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %[[M:.+]] extras(%[[B:.+]]) {is_causal = true, scale = 1.250000e-01 : f64} : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<4x4xi1>, tensor<1x4x4xf16>) -> tensor<2x4x8xf16> score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %{{.+}}: index, %[[E:.+]]: f16):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[E]] : f16 to f32
// CHECK-NEXT: %[[R:.+]] = arith.addf %[[S]], %[[W]] : f32
// CHECK-NEXT: attn.yield %[[R]] : f32
// CHECK-NEXT: }
func.func @sdpa_score_mod(%q: tensor<2x4x8xf16>, %m: tensor<4x4xi1>, %b: tensor<1x4x4xf16>) -> tensor<2x4x8xf16> {
  %0 = attn.sdpa %q, %q, %q, %m extras(%b) {is_causal = true, scale = 0.125 : f64} : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<4x4xi1>, tensor<1x4x4xf16>) -> tensor<2x4x8xf16> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f16):
    %w = arith.extf %e : f16 to f32
    %r = arith.addf %s, %w : f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x4x8xf16>
}

// CHECK-LABEL: func.func @sdpa_window
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {is_causal = true, window_left = 127 : i64} :
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {window_left = 4 : i64, window_right = 4 : i64} :
func.func @sdpa_window(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>) -> (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) {
  %0 = attn.sdpa %q, %k, %v {is_causal = true, window_left = 127 : i64} : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
  %1 = attn.sdpa %q, %k, %v {window_left = 4 : i64, window_right = 4 : i64} : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
  return %0, %1 : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @sdpa_lengths
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x128x64xf32>, %[[K:.+]]: tensor<2x8x128x64xf32>, %[[V:.+]]: tensor<2x8x128x64xf32>, %[[M:.+]]: tensor<2x1x1x128xi1>, %[[QL:.+]]: tensor<2xi32>, %[[KL:.+]]: tensor<?xi64>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] q_lengths(%[[QL]]) kv_lengths(%[[QL]]) {is_causal = true} :
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]], %[[M]] kv_lengths(%[[KL]]) {padding_side = #attn.padding_side<left>} :
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] q_lengths(%[[QL]]) extras(%[[M]]) {padding_side = #attn.padding_side<left>} :
func.func @sdpa_lengths(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>, %v: tensor<2x8x128x64xf32>, %m: tensor<2x1x1x128xi1>, %ql: tensor<2xi32>, %kl: tensor<?xi64>) -> (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>) {
  %0 = attn.sdpa %q, %k, %v q_lengths(%ql) kv_lengths(%ql) {is_causal = true} : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x8x128x64xf32>
  %1 = attn.sdpa %q, %k, %v, %m kv_lengths(%kl) {padding_side = #attn.padding_side<left>} : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x1x1x128xi1>, tensor<?xi64>) -> tensor<2x8x128x64xf32>
  %2 = attn.sdpa %q, %k, %v q_lengths(%ql) extras(%m) {padding_side = #attn.padding_side<left>} : (tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2xi32>, tensor<2x1x1x128xi1>) -> tensor<2x8x128x64xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: i1):
    attn.yield %s : f32
  }
  return %0, %1, %2 : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>
}

// CHECK-LABEL: func.func @iota
// CHECK: attn.iota 0 : tensor<128x1xf32>
// CHECK: attn.iota 2 : tensor<1x1x2048xf16>
func.func @iota() -> (tensor<128x1xf32>, tensor<1x1x2048xf16>) {
  %i = attn.iota 0 : tensor<128x1xf32>
  %j = attn.iota 2 : tensor<1x1x2048xf16>
  return %i, %j : tensor<128x1xf32>, tensor<1x1x2048xf16>
}

// Run-time sizes are operands, one per `?` dim; positions along a `?` dim
// are f64, along a static one any float type.
// CHECK-LABEL: func.func @iota_dynamic
// CHECK: attn.iota 0 (%{{.*}}) : tensor<?x1xf64>
// CHECK: attn.iota 1 (%{{.*}}, %{{.*}}) : tensor<?x?xf64>
// CHECK: attn.iota 1 (%{{.*}}) : tensor<?x128xf16>
func.func @iota_dynamic(%l: index, %s: index) -> (tensor<?x1xf64>, tensor<?x?xf64>, tensor<?x128xf16>) {
  %i = attn.iota 0 (%l) : tensor<?x1xf64>
  %j = attn.iota 1 (%l, %s) : tensor<?x?xf64>
  %k = attn.iota 1 (%l) : tensor<?x128xf16>
  return %i, %j, %k : tensor<?x1xf64>, tensor<?x?xf64>, tensor<?x128xf16>
}

// The packed layout: the lengths' count is not a dim of the query.
// CHECK-LABEL: func.func @sdpa_packed
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x?x64xf32>, %[[QL:[^:]+]]: tensor<?xi32>, %[[KL:[^:]+]]: tensor<?xi32>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]] q_lengths(%[[QL]]) kv_lengths(%[[KL]]) {is_causal = true, padding_side = #attn.padding_side<packed>} :
func.func @sdpa_packed(%q: tensor<1x8x?x64xf32>, %ql: tensor<?xi32>, %kl: tensor<?xi32>) -> tensor<1x8x?x64xf32> {
  %0 = attn.sdpa %q, %q, %q q_lengths(%ql) kv_lengths(%kl) {is_causal = true, padding_side = #attn.padding_side<packed>} : (tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<1x8x?x64xf32>
  return %0 : tensor<1x8x?x64xf32>
}

// Attention sinks: one logit per query head, with lengths and a mask.
// CHECK-LABEL: func.func @sdpa_sinks
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x16x64xbf16>, %[[M:[^:]+]]: tensor<2x1x1x16xi1>, %[[N:[^:]+]]: tensor<2xi32>, %[[S:[^:]+]]: tensor<8xf32>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]] sinks(%[[S]]) {is_causal = true} :
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[M]] kv_lengths(%[[N]]) sinks(%[[S]]) :
func.func @sdpa_sinks(%q: tensor<2x8x16x64xbf16>, %m: tensor<2x1x1x16xi1>, %n: tensor<2xi32>, %s: tensor<8xf32>) -> (tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>) {
  %0 = attn.sdpa %q, %q, %q sinks(%s) {is_causal = true} : (tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>, tensor<8xf32>) -> tensor<2x8x16x64xbf16>
  %1 = attn.sdpa %q, %q, %q, %m kv_lengths(%n) sinks(%s) : (tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>, tensor<2x1x1x16xi1>, tensor<2xi32>, tensor<8xf32>) -> tensor<2x8x16x64xbf16>
  return %0, %1 : tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>
}
