// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | FileCheck %s

// attn.sdpa ops as a frontend writes them (the Python exporter writes
// F.scaled_dot_product_attention as attn.sdpa): a mask or extra operand
// that only broadcasts a smaller tensor is read before the broadcast, and
// an additive mask computed from positions (attn.iota) and small tensors
// becomes a score_mod region computing it per tile. The negative_ cases
// keep their operands.

// transformers' padding mask expanded to [B, 1, L, S]: read as [B, 1, 1, S].
// CHECK-LABEL: func.func @expanded_padding_mask
// CHECK-SAME: %[[PAD:[^:]+]]: tensor<2x1x1x8xi1>
// CHECK-NOT: linalg.generic
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[PAD]] {is_causal = true} : ({{.*}}, tensor<2x1x1x8xi1>) ->
func.func @expanded_padding_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %pad: tensor<2x1x1x8xi1>) -> tensor<2x4x8x16xf32> {
  %e = tensor.empty() : tensor<2x1x8x8xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pad : tensor<2x1x1x8xi1>) outs(%e : tensor<2x1x8x8xi1>) {
  ^bb0(%a: i1, %o: i1):
    linalg.yield %a : i1
  } -> tensor<2x1x8x8xi1>
  %r = attn.sdpa %q, %k, %v, %m {is_causal = true} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x8x8xi1>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// A lower-rank source (NumPy-aligned trailing dims) with `?` dims: the
// source broadcasts the same way.
// CHECK-LABEL: func.func @dynamic_lower_rank_source
// CHECK-SAME: %[[M:[^:]+]]: tensor<?x?xf32>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] : ({{.*}}, tensor<?x?xf32>) ->
func.func @dynamic_lower_rank_source(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %m: tensor<?x?xf32>, %b: index) -> tensor<?x4x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = tensor.dim %m, %c0 : tensor<?x?xf32>
  %s = tensor.dim %m, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%b, %l, %s) : tensor<?x1x?x?xf32>
  %bm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m : tensor<?x?xf32>) outs(%e : tensor<?x1x?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x1x?x?xf32>
  %r = attn.sdpa %q, %k, %v, %bm : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x1x?x?xf32>) -> tensor<?x4x?x16xf32>
  return %r : tensor<?x4x?x16xf32>
}

// -----

// A generic that transposes while it broadcasts is no plain broadcast.
// CHECK-LABEL: func.func @negative_transposing_generic
// CHECK: %[[G:.+]] = linalg.generic
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[G]] :
func.func @negative_transposing_generic(%q: tensor<1x8x16xf32>, %k: tensor<1x8x16xf32>, %v: tensor<1x8x16xf32>, %m: tensor<8x8xf32>) -> tensor<1x8x16xf32> {
  %e = tensor.empty() : tensor<1x8x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : tensor<8x8xf32>) outs(%e : tensor<1x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x8x8xf32>
  %r = attn.sdpa %q, %k, %v, %t : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x8xf32>) -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}

// -----

// A generic that computes (negates) is no broadcast either.
// CHECK-LABEL: func.func @negative_computing_generic
// CHECK: %[[G:.+]] = linalg.generic
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[G]] :
func.func @negative_computing_generic(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>, %m: tensor<2x1x8xf32>) -> tensor<2x8x16xf32> {
  %e = tensor.empty() : tensor<2x8x8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : tensor<2x1x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = arith.negf %a : f32
    linalg.yield %x : f32
  } -> tensor<2x8x8xf32>
  %r = attn.sdpa %q, %k, %v, %n : (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

// Falcon's ALiBi mask for F.scaled_dot_product_attention: the [B, H, 1, S]
// bias where the causal band keeps a key, the lowest float elsewhere.
// The region adds it per score, reading the bias as an extra operand; the
// band comes from the indices.
// CHECK-LABEL: func.func @alibi_band_mask
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<2x4x1x8xf32>
// CHECK-NOT: attn.iota
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} extras(%[[BIAS]]) {safe_softmax = true, scale = 2.500000e-01 : f64} : ({{.*}}, tensor<2x4x1x8xf32>) -> tensor<2x4x8x16xf32> score_mod {
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %{{.+}}: index, %[[I:.+]]: index, %[[J:.+]]: index, %[[E:.+]]: f32):
// CHECK-DAG: arith.index_castui %[[I]]
// CHECK-DAG: arith.index_castui %[[J]]
// CHECK: %[[KEEP:.+]] = arith.cmpf ole
// CHECK: %[[M:.+]] = arith.select %[[KEEP]], %[[E]], %{{.+}} : f32
// CHECK: %[[R:.+]] = arith.addf %[[S]], %[[M]] : f32
// CHECK: attn.yield %[[R]] : f32
func.func @alibi_band_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %bias: tensor<2x4x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %keep = attn.cmp le, %j, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %m = attn.where %keep, %bias, %min : (tensor<8x8xi1>, tensor<2x4x1x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %r = attn.sdpa %q, %k, %v, %m {safe_softmax = true, scale = 0.25 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// An f16 mask is computed in f16 (the where selects f16 values) and added
// in f32, as the contract adds a float mask.
// CHECK-LABEL: func.func @f16_position_mask
// CHECK: score_mod {
// CHECK: %[[M:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f16
// CHECK: %[[W:.+]] = arith.extf %[[M]] : f16 to f32
// CHECK: arith.addf %{{.+}}, %[[W]] : f32
func.func @f16_position_mask(%q: tensor<1x8x16xf16>, %k: tensor<1x8x16xf16>, %v: tensor<1x8x16xf16>, %bias: tensor<1x1x8xf16>) -> tensor<1x8x16xf16> {
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %keep = attn.cmp le, %j, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %min = arith.constant dense<-6.550400e+04> : tensor<f16>
  %m = attn.where %keep, %bias, %min : (tensor<8x8xi1>, tensor<1x1x8xf16>, tensor<f16>) -> tensor<1x8x8xf16>
  %r = attn.sdpa %q, %k, %v, %m : (tensor<1x8x16xf16>, tensor<1x8x16xf16>, tensor<1x8x16xf16>, tensor<1x8x8xf16>) -> tensor<1x8x16xf16>
  return %r : tensor<1x8x16xf16>
}

// -----

// A materialised additive mask that no position computes stays the mask.
// CHECK-LABEL: func.func @negative_plain_additive_mask
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x4x8x8xf32>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
// CHECK-NOT: score_mod
func.func @negative_plain_additive_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32> {
  %r = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  return %r : tensor<2x4x8x16xf32>
}

// -----

// A boolean mask from positions is not added: it stays the mask operand
// (a band of it is canonicalized elsewhere).
// CHECK-LABEL: func.func @negative_bool_position_mask
// CHECK: %[[K:.+]] = attn.cmp
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[K]] :
// CHECK-NOT: score_mod
func.func @negative_bool_position_mask(%q: tensor<1x8x16xf32>, %k: tensor<1x8x16xf32>, %v: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %d = attn.mul %j, %two : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %keep = attn.cmp le, %d, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %r = attn.sdpa %q, %k, %v, %keep : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<8x8xi1>) -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}

// -----

// An op that already has a region keeps its mask (the region runs before
// the mask is added: moving the mask in is a later change).
// CHECK-LABEL: func.func @negative_existing_region
// CHECK: %[[M:.+]] = attn.where
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] {{.*}}score_mod
func.func @negative_existing_region(%q: tensor<1x8x16xf32>, %k: tensor<1x8x16xf32>, %v: tensor<1x8x16xf32>, %bias: tensor<1x1x8xf32>) -> tensor<1x8x16xf32> {
  %i = attn.iota 0 : tensor<8x1xf32>
  %j = attn.iota 1 : tensor<1x8xf32>
  %keep = attn.cmp le, %j, %i : (tensor<1x8xf32>, tensor<8x1xf32>) -> tensor<8x8xi1>
  %min = arith.constant dense<-1.0e30> : tensor<f32>
  %m = attn.where %keep, %bias, %min : (tensor<8x8xi1>, tensor<1x1x8xf32>, tensor<f32>) -> tensor<1x8x8xf32>
  %r = attn.sdpa %q, %k, %v, %m : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x8xf32>) -> tensor<1x8x16xf32> score_mod {
  ^bb0(%s: f32, %b: index, %ii: index, %jj: index):
    %t = math.tanh %s : f32
    attn.yield %t : f32
  }
  return %r : tensor<1x8x16xf32>
}

// -----

// T5's cross-attention mask for F.scaled_dot_product_attention: its zero
// position bias [1, H, L, S] plus the [B, 1, 1, S] padding mask, folded by
// the export into one where. The splat is read as [1, 1, 1, 1], so the
// mask is the [B, 1, 1, S] padding term and attn.sdpa broadcasts it.
// CHECK-LABEL: func.func @splat_bias_over_padding_mask
// CHECK-SAME: %[[PAD:[^:]+]]: tensor<3x1x1x8xi1>
// CHECK-DAG: %[[MIN:.+]] = arith.constant dense<-3.40282347E+38> : tensor<f32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<1x1x1x1xf32>
// CHECK: %[[M:.+]] = attn.where %[[PAD]], %[[ZERO]], %[[MIN]] : (tensor<3x1x1x8xi1>, tensor<1x1x1x1xf32>, tensor<f32>) -> tensor<3x1x1x8xf32>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] {{.*}}: ({{.*}}, tensor<3x1x1x8xf32>) ->
// CHECK-NOT: 3x4x8x8xf32> -> tensor<3x4x8x8xf32>
func.func @splat_bias_over_padding_mask(%q: tensor<3x4x8x16xf32>, %k: tensor<3x4x8x16xf32>, %v: tensor<3x4x8x16xf32>, %pad: tensor<3x1x1x8xi1>) -> tensor<3x4x8x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<1x4x8x8xf32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %m = attn.where %pad, %zero, %min : (tensor<3x1x1x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<3x4x8x8xf32>
  %r = attn.sdpa %q, %k, %v, %m {safe_softmax = true, scale = 1.0 : f64} : (tensor<3x4x8x16xf32>, tensor<3x4x8x16xf32>, tensor<3x4x8x16xf32>, tensor<3x4x8x8xf32>) -> tensor<3x4x8x16xf32>
  return %r : tensor<3x4x8x16xf32>
}

// -----

// The same for a bf16 extra of a score_mod region (a scale per key),
// computed by an add with a splat: the add keeps its element type and reads the splat as [1, 1].
// CHECK-LABEL: func.func @splat_in_extra
// CHECK-SAME: %[[B:[^:]+]]: tensor<1x8xbf16>
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<1x1xbf16>
// CHECK: %[[E:.+]] = attn.add %[[B]], %[[ONE]] : (tensor<1x8xbf16>, tensor<1x1xbf16>) -> tensor<1x8xbf16>
// CHECK: attn.sdpa {{.*}} extras(%[[E]]) {{.*}}: ({{.*}}, tensor<1x8xbf16>) ->
func.func @splat_in_extra(%q: tensor<1x8x16xbf16>, %k: tensor<1x8x16xbf16>, %v: tensor<1x8x16xbf16>, %b: tensor<1x8xbf16>) -> tensor<1x8x16xbf16> {
  %one = arith.constant dense<1.0> : tensor<8x8xbf16>
  %e = attn.add %b, %one : (tensor<1x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %r = attn.sdpa %q, %k, %v extras(%e) : (tensor<1x8x16xbf16>, tensor<1x8x16xbf16>, tensor<1x8x16xbf16>, tensor<8x8xbf16>) -> tensor<1x8x16xbf16> score_mod {
  ^bb0(%s: f32, %bb: index, %i: index, %j: index, %x: bf16):
    %w = arith.extf %x : bf16 to f32
    %t = arith.mulf %s, %w : f32
    attn.yield %t : f32
  }
  return %r : tensor<1x8x16xbf16>
}

// -----

// A splat no larger than the other operands gives no smaller value: the
// where stays as written.
// CHECK-LABEL: func.func @negative_splat_within_shape
// CHECK: %[[M:.+]] = attn.where %{{.+}} : (tensor<3x4x8x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<3x4x8x8xf32>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
func.func @negative_splat_within_shape(%q: tensor<3x4x8x16xf32>, %k: tensor<3x4x8x16xf32>, %v: tensor<3x4x8x16xf32>, %pad: tensor<3x4x8x8xi1>) -> tensor<3x4x8x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<1x4x8x8xf32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %m = attn.where %pad, %zero, %min : (tensor<3x4x8x8xi1>, tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<3x4x8x8xf32>
  %r = attn.sdpa %q, %k, %v, %m : (tensor<3x4x8x16xf32>, tensor<3x4x8x16xf32>, tensor<3x4x8x16xf32>, tensor<3x4x8x8xf32>) -> tensor<3x4x8x16xf32>
  return %r : tensor<3x4x8x16xf32>
}
