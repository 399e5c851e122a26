// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// Attention sinks fused into attn.sdpa's sinks operand: the scores joined
// with one sink column per head (torch.cat as two tensor.insert_slice, or
// tensor.concat), the row max optionally subtracted, the softmax, the
// slice dropping the sink column.

// GPT-OSS as the exporter writes it: the sink parameter [H] reshaped to
// [1, H, 1, 1] and broadcast to [B, H, L, 1], joined as the last column,
// the row max subtracted.
// CHECK-LABEL: func.func @sinks_last_max_subtracted
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8x16xf32>, %[[K:[^:]+]]: tensor<2x4x8x16xf32>, %[[V:[^:]+]]: tensor<2x4x8x16xf32>, %[[S:[^:]+]]: tensor<4xf32>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] sinks(%[[S]]) {is_causal = true, scale = 2.500000e-01 : f64}
// CHECK-NOT: attn.softmax
// CHECK: return %[[O]]
func.func @sinks_last_max_subtracted(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %sinks: tensor<4xf32>) -> tensor<2x4x8x16xf32> {
  %kt = attn.transpose %k dims(2, 3) : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %keep = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %m = attn.where %keep, %ss, %ninf : (tensor<8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %s4 = tensor.expand_shape %sinks [[0, 1, 2, 3]] output_shape [1, 4, 1, 1] : tensor<4xf32> into tensor<1x4x1x1xf32>
  %e = tensor.empty() : tensor<2x4x8x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x4x1x1xf32>) outs(%e : tensor<2x4x8x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x4x8x1xf32>
  %j0 = tensor.empty() : tensor<2x4x8x9xf32>
  %j1 = tensor.insert_slice %m into %j0[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x8xf32> into tensor<2x4x8x9xf32>
  %j = tensor.insert_slice %sb into %j1[0, 0, 0, 8] [2, 4, 8, 1] [1, 1, 1, 1] : tensor<2x4x8x1xf32> into tensor<2x4x8x9xf32>
  %me = tensor.empty() : tensor<2x4x8xf32>
  %mi = arith.constant 0xFF800000 : f32
  %mf = linalg.fill ins(%mi : f32) outs(%me : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%j : tensor<2x4x8x9xf32>) outs(%mf : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %mk = tensor.expand_shape %mx [[0], [1], [2, 3]] output_shape [2, 4, 8, 1] : tensor<2x4x8xf32> into tensor<2x4x8x1xf32>
  %d = attn.sub %j, %mk : (tensor<2x4x8x9xf32>, tensor<2x4x8x1xf32>) -> tensor<2x4x8x9xf32>
  // expected-remark @+1 {{fused into attn.sdpa (attribute form)}}
  %p = attn.softmax %d dim(-1) : tensor<2x4x8x9xf32>
  %pw = tensor.extract_slice %p[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x9xf32> to tensor<2x4x8x8xf32>
  %o = attn.matmul %pw, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// bf16, the sink joined first with tensor.concat, no max subtracted, an
// additive mask and grouped-query key/value heads; the sink source is
// already [1, H, 1, 1] (collapsed to [H] for the op).
// CHECK-LABEL: func.func @sinks_first_concat_bf16
// CHECK-SAME: %[[S:[^:]+]]: tensor<1x4x1x1xbf16>
// CHECK: %[[SH:.+]] = tensor.collapse_shape %[[S]] {{\[\[}}0, 1, 2, 3]] : tensor<1x4x1x1xbf16> into tensor<4xbf16>
// CHECK: attn.sdpa {{.*}} sinks(%[[SH]])
// CHECK-NOT: attn.softmax
func.func @sinks_first_concat_bf16(%q: tensor<1x4x8x16xbf16>, %k: tensor<1x2x8x16xbf16>, %v: tensor<1x2x8x16xbf16>, %mask: tensor<1x1x8x8xbf16>, %sinks: tensor<1x4x1x1xbf16>) -> tensor<1x4x8x16xbf16> {
  %kr = attn.repeat_interleave %k repeats(2) dim(1) : tensor<1x2x8x16xbf16> -> tensor<1x4x8x16xbf16>
  %vr = attn.repeat_interleave %v repeats(2) dim(1) : tensor<1x2x8x16xbf16> -> tensor<1x4x8x16xbf16>
  %kt = attn.transpose %kr dims(2, 3) : tensor<1x4x8x16xbf16> -> tensor<1x4x16x8xbf16>
  %s = attn.matmul %q, %kt : (tensor<1x4x8x16xbf16>, tensor<1x4x16x8xbf16>) -> tensor<1x4x8x8xbf16>
  %a = attn.add %s, %mask : (tensor<1x4x8x8xbf16>, tensor<1x1x8x8xbf16>) -> tensor<1x4x8x8xbf16>
  %e = tensor.empty() : tensor<1x4x8x1xbf16>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sinks : tensor<1x4x1x1xbf16>) outs(%e : tensor<1x4x8x1xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    linalg.yield %x : bf16
  } -> tensor<1x4x8x1xbf16>
  %j = tensor.concat dim(3) %sb, %a : (tensor<1x4x8x1xbf16>, tensor<1x4x8x8xbf16>) -> tensor<1x4x8x9xbf16>
  // expected-remark @+1 {{fused into attn.sdpa}}
  %p = attn.softmax %j dim(-1) : tensor<1x4x8x9xbf16>
  %pw = tensor.extract_slice %p[0, 0, 0, 1] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x9xbf16> to tensor<1x4x8x8xbf16>
  %o = attn.matmul %pw, %vr : (tensor<1x4x8x8xbf16>, tensor<1x4x8x16xbf16>) -> tensor<1x4x8x16xbf16>
  return %o : tensor<1x4x8x16xbf16>
}
