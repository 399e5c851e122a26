// RUN: attn-opt %s | FileCheck %s
// RUN: attn-opt %s | attn-opt --mlir-print-op-generic | attn-opt | FileCheck %s

// Other tools write the attn dialect in generic form (DESIGN.md); every op's
// generic form parses, verifies and prints back in the custom form.

// CHECK-LABEL: func.func @naive
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x128x64xf32>, %[[K:.+]]: tensor<2x8x128x64xf32>, %[[V:.+]]: tensor<2x8x128x64xf32>, %[[MASK:.+]]: tensor<128x128xi1>)
// CHECK: %[[KT:.+]] = attn.transpose %[[K]] dims(-2, -1) : tensor<2x8x128x64xf32> -> tensor<2x8x64x128xf32>
// CHECK: %[[S:.+]] = attn.matmul %[[Q]], %[[KT]] : (tensor<2x8x128x64xf32>, tensor<2x8x64x128xf32>) -> tensor<2x8x128x128xf32>
// CHECK: %[[C:.+]] = arith.constant dense<1.250000e-01> : tensor<f32>
// CHECK: %[[SS:.+]] = attn.mul %[[S]], %[[C]] : (tensor<2x8x128x128xf32>, tensor<f32>) -> tensor<2x8x128x128xf32>
// CHECK: %[[M:.+]] = attn.masked_fill %[[SS]], %[[MASK]] value(0xFFF0000000000000) : (tensor<2x8x128x128xf32>, tensor<128x128xi1>) -> tensor<2x8x128x128xf32>
// CHECK: %[[P:.+]] = attn.softmax %[[M]] dim(-1) : tensor<2x8x128x128xf32>
// CHECK: %[[O:.+]] = attn.matmul %[[P]], %[[V]] : (tensor<2x8x128x128xf32>, tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32>
// CHECK: return %[[O]]
func.func @naive(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>,
                 %v: tensor<2x8x128x64xf32>, %mask: tensor<128x128xi1>) -> tensor<2x8x128x64xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x8x128x64xf32>) -> tensor<2x8x64x128xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x8x128x64xf32>, tensor<2x8x64x128xf32>) -> tensor<2x8x128x128xf32>
  %c  = arith.constant dense<0.125> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<2x8x128x128xf32>, tensor<f32>) -> tensor<2x8x128x128xf32>
  %m  = "attn.masked_fill"(%ss, %mask) {value = 0xFFF0000000000000 : f64} : (tensor<2x8x128x128xf32>, tensor<128x128xi1>) -> tensor<2x8x128x128xf32>
  %p  = "attn.softmax"(%m) {dim = -1 : i64} : (tensor<2x8x128x128xf32>) -> tensor<2x8x128x128xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x8x128x128xf32>, tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32>
  return %o : tensor<2x8x128x64xf32>
}

// CHECK-LABEL: func.func @every_other_op
// CHECK: attn.div %{{.*}}, %{{.*}} : (tensor<4x16x16xf16>, tensor<f16>) -> tensor<4x16x16xf16>
// CHECK: attn.add %{{.*}}, %{{.*}} : (tensor<4x16x16xf16>, tensor<16x16xf16>) -> tensor<4x16x16xf16>
// CHECK: attn.sub %{{.*}}, %{{.*}} : (tensor<4x16x16xf16>, tensor<f16>) -> tensor<4x16x16xf16>
// CHECK: attn.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16x16xi1>, tensor<4x16x16xf16>, tensor<f16>) -> tensor<4x16x16xf16>
// CHECK: attn.cast %{{.*}} : tensor<4x16x16xf16> -> tensor<4x16x16xf32>
// CHECK: attn.dropout %{{.*}} p(2.000000e-01) train(true) : tensor<4x16x16xf32>
// CHECK: attn.repeat_interleave %{{.*}} repeats(2) dim(0) : tensor<4x16x16xf32> -> tensor<8x16x16xf32>
func.func @every_other_op(%s: tensor<4x16x16xf16>, %c: tensor<f16>, %m: tensor<16x16xf16>,
                          %b: tensor<16x16xi1>) -> tensor<8x16x16xf32> {
  %0 = "attn.div"(%s, %c) : (tensor<4x16x16xf16>, tensor<f16>) -> tensor<4x16x16xf16>
  %1 = "attn.add"(%0, %m) : (tensor<4x16x16xf16>, tensor<16x16xf16>) -> tensor<4x16x16xf16>
  %2 = "attn.sub"(%1, %c) : (tensor<4x16x16xf16>, tensor<f16>) -> tensor<4x16x16xf16>
  %3 = "attn.where"(%b, %2, %c) : (tensor<16x16xi1>, tensor<4x16x16xf16>, tensor<f16>) -> tensor<4x16x16xf16>
  %4 = "attn.cast"(%3) : (tensor<4x16x16xf16>) -> tensor<4x16x16xf32>
  %5 = "attn.dropout"(%4) {p = 0.2 : f64, train = true} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %6 = "attn.repeat_interleave"(%5) {repeats = 2 : i64, dim = 0 : i64} : (tensor<4x16x16xf32>) -> tensor<8x16x16xf32>
  return %6 : tensor<8x16x16xf32>
}

// CHECK-LABEL: func.func @sdpa_generic
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {is_causal = true, scale = 1.250000e-01 : f64} : (tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>) -> tensor<2x8x128x64xbf16>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x1x128x128xbf16>) -> tensor<2x8x128x64xbf16>
func.func @sdpa_generic(%q: tensor<2x8x128x64xbf16>, %m: tensor<2x1x128x128xbf16>)
    -> (tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>) {
  %0 = "attn.sdpa"(%q, %q, %q) {scale = 0.125 : f64, is_causal = true, dropout_p = 0.0 : f64}
      : (tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>) -> tensor<2x8x128x64xbf16>
  %1 = "attn.sdpa"(%q, %q, %q, %m)
      : (tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>, tensor<2x1x128x128xbf16>) -> tensor<2x8x128x64xbf16>
  return %0, %1 : tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>
}

// Generic attn.sdpa needs no operandSegmentSizes: the score_mod region's
// arguments past the score and the indices count the extra operands, and an
// operand between `value` and them is the mask. (The generic printer writes
// the sizes out, which parses back too: the second RUN line.)
// CHECK-LABEL: func.func @sdpa_generic_segments
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>, %[[X:[^:]+]]: tensor<2x1x4xf32>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[M]] extras(%[[X]]) {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>, tensor<2x1x4xf32>) -> tensor<2x4x8xf32> score_mod {
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]] extras(%[[X]]) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4xf32>) -> tensor<2x4x8xf32> score_mod {
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[X]] : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4xf32>) -> tensor<2x4x8xf32> score_mod {
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %{{[^:]+}}: index, %{{[^:]+}}: index, %{{[^:]+}}: index):
func.func @sdpa_generic_segments(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>, %x: tensor<2x1x4xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %0 = "attn.sdpa"(%q, %q, %q, %m, %x) ({
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %e: f32):
    %r = arith.addf %s, %e : f32
    "attn.yield"(%r) : (f32) -> ()
  }) {mask_polarity = #attn.mask_polarity<drop>}
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>, tensor<2x1x4xf32>) -> tensor<2x4x8xf32>
  %1 = "attn.sdpa"(%q, %q, %q, %x) ({
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %e: f32):
    %r = arith.mulf %s, %e : f32
    "attn.yield"(%r) : (f32) -> ()
  }) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4xf32>) -> tensor<2x4x8xf32>
  // A region without extra arguments: the operand after `value` is the mask.
  %2 = "attn.sdpa"(%q, %q, %q, %x) ({
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    %c = arith.constant 2.0 : f32
    %r = arith.mulf %s, %c : f32
    "attn.yield"(%r) : (f32) -> ()
  }) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4xf32>) -> tensor<2x4x8xf32>
  return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// operandSegmentSizes as written before attn.sdpa had sinks (7 entries) and
// before it had lengths (5 entries) still parses; with sinks, 8 entries.
// CHECK-LABEL: func.func @sdpa_generic_segment_versions
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>, %[[N:[^:]+]]: tensor<2xi32>, %[[S:[^:]+]]: tensor<2xf16>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[M]] kv_lengths(%[[N]]) :
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[M]] :
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]] q_lengths(%[[N]]) sinks(%[[S]]) :
func.func @sdpa_generic_segment_versions(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>, %n: tensor<2xi32>, %s: tensor<2xf16>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %0 = "attn.sdpa"(%q, %q, %q, %m, %n) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 0>}>
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>, tensor<2xi32>) -> tensor<2x4x8xf32>
  %1 = "attn.sdpa"(%q, %q, %q, %m) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}>
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  %2 = "attn.sdpa"(%q, %q, %q, %n, %s) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 1, 0>}>
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2xi32>, tensor<2xf16>) -> tensor<2x4x8xf32>
  return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
