// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One case per verifier message of the attn dialect.

func.func @matmul_lhs_rank(%a: tensor<64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+1 {{'attn.matmul' op 'lhs' must have rank >= 2, got shape 64}}
  %0 = attn.matmul %a, %b : (tensor<64xf32>, tensor<64x32xf32>) -> tensor<32xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%a: tensor<8x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{'rhs' must have rank >= 2, got shape 64}}
  %0 = attn.matmul %a, %b : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<8x64xf16>, %b: tensor<64x8xf32>) {
  // expected-error @+1 {{element types differ: 'lhs' is 'f16' but 'rhs' is 'f32'}}
  %0 = attn.matmul %a, %b : (tensor<8x64xf16>, tensor<64x8xf32>) -> tensor<8x8xf16>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x8x64xf32>, %b: tensor<2x32x8xf32>) {
  // expected-error @+1 {{contraction dims differ: 'lhs' 2x8x64 has 64 columns but 'rhs' 2x32x8 has 32 rows}}
  %0 = attn.matmul %a, %b : (tensor<2x8x64xf32>, tensor<2x32x8xf32>) -> tensor<2x8x8xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x8x64xf32>, %b: tensor<3x64x8xf32>) {
  // expected-error @+1 {{batch dims of 'lhs' (2) and 'rhs' (3) do not broadcast}}
  %0 = attn.matmul %a, %b : (tensor<2x8x64xf32>, tensor<3x64x8xf32>) -> tensor<2x8x8xf32>
  return
}

// -----

func.func @matmul_result_shape(%a: tensor<2x8x64xf32>, %b: tensor<1x64x16xf32>) {
  // expected-error @+1 {{result shape 2x8x8 does not match the expected 2x8x16}}
  %0 = attn.matmul %a, %b : (tensor<2x8x64xf32>, tensor<1x64x16xf32>) -> tensor<2x8x8xf32>
  return
}

// -----

func.func @matmul_result_type(%a: tensor<8x64xf32>, %b: tensor<64x16xf32>) {
  // expected-error @+1 {{result element type 'f16' does not match the expected 'f32'}}
  %0 = attn.matmul %a, %b : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf16>
  return
}

// -----

func.func @matmul_integer(%a: tensor<8x64xi32>, %b: tensor<64x16xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = "attn.matmul"(%a, %b) : (tensor<8x64xi32>, tensor<64x16xi32>) -> tensor<8x16xi32>
  return
}

// -----

func.func @transpose_dim_range(%k: tensor<2x8x64xf32>) {
  // expected-error @+1 {{'dim1' 3 is out of range for rank 3 (expected [-3, 2])}}
  %0 = attn.transpose %k dims(1, 3) : tensor<2x8x64xf32> -> tensor<2x64x8xf32>
  return
}

// -----

func.func @transpose_negative_range(%k: tensor<2x8x64xf32>) {
  // expected-error @+1 {{'dim0' -4 is out of range for rank 3 (expected [-3, 2])}}
  %0 = attn.transpose %k dims(-4, -1) : tensor<2x8x64xf32> -> tensor<2x64x8xf32>
  return
}

// -----

func.func @transpose_result(%k: tensor<2x8x64xf32>) {
  // expected-error @+1 {{result shape 2x8x64 does not match the expected 2x64x8}}
  %0 = attn.transpose %k dims(-2, -1) : tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  return
}

// -----

func.func @binary_element_types(%a: tensor<8x8xf16>, %b: tensor<8x8xf32>) {
  // expected-error @+1 {{element types differ: 'lhs' is 'f16' but 'rhs' is 'f32'}}
  %0 = attn.mul %a, %b : (tensor<8x8xf16>, tensor<8x8xf32>) -> tensor<8x8xf16>
  return
}

// -----

func.func @binary_broadcast(%a: tensor<8x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{shape 4x8 of 'rhs' does not broadcast with 8x8 (from 'lhs')}}
  %0 = attn.add %a, %b : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @binary_result(%a: tensor<8x1xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{result shape 8x1 does not match the expected 8x8}}
  %0 = attn.sub %a, %b : (tensor<8x1xf32>, tensor<1x8xf32>) -> tensor<8x1xf32>
  return
}

// -----

func.func @binary_scalar_result_type(%a: tensor<8x8xf16>, %c: tensor<f32>) {
  // A scalar operand takes the tensor's element type (PyTorch's rule).
  // expected-error @+1 {{result element type 'f32' does not match the expected 'f16'}}
  %0 = attn.div %a, %c : (tensor<8x8xf16>, tensor<f32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @masked_fill_broadcast(%s: tensor<2x8x16x16xf32>, %m: tensor<4x16xi1>) {
  // expected-error @+1 {{'mask' of shape 4x16 does not broadcast to the input shape 2x8x16x16}}
  %0 = attn.masked_fill %s, %m value(0.0) : (tensor<2x8x16x16xf32>, tensor<4x16xi1>) -> tensor<2x8x16x16xf32>
  return
}

// -----

func.func @masked_fill_grows_input(%s: tensor<16x16xf32>, %m: tensor<2x16x16xi1>) {
  // masked_fill keeps the input's shape: a mask may not broadcast it up.
  // expected-error @+1 {{'mask' of shape 2x16x16 does not broadcast to the input shape 16x16}}
  %0 = attn.masked_fill %s, %m value(0.0) : (tensor<16x16xf32>, tensor<2x16x16xi1>) -> tensor<16x16xf32>
  return
}

// -----

func.func @masked_fill_result(%s: tensor<16x16xf32>, %m: tensor<16x16xi1>) {
  // expected-error @+1 {{result type 'tensor<16x16xf16>' differs from the input type 'tensor<16x16xf32>'}}
  %0 = attn.masked_fill %s, %m value(0.0) : (tensor<16x16xf32>, tensor<16x16xi1>) -> tensor<16x16xf16>
  return
}

// -----

func.func @masked_fill_float_mask(%s: tensor<16x16xf32>, %m: tensor<16x16xf32>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 1-bit signless integer values}}
  %0 = "attn.masked_fill"(%s, %m) {value = 0.0 : f64} : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

func.func @where_element_types(%c: tensor<16x16xi1>, %a: tensor<16x16xf32>, %b: tensor<16x16xbf16>) {
  // expected-error @+1 {{element types differ: 'a' is 'f32' but 'b' is 'bf16'}}
  %0 = attn.where %c, %a, %b : (tensor<16x16xi1>, tensor<16x16xf32>, tensor<16x16xbf16>) -> tensor<16x16xf32>
  return
}

// -----

func.func @where_broadcast(%c: tensor<8x16xi1>, %a: tensor<16x16xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{shape 16x16 of 'a' does not broadcast with 8x16 (from 'cond')}}
  %0 = attn.where %c, %a, %b : (tensor<8x16xi1>, tensor<16x16xf32>, tensor<f32>) -> tensor<16x16xf32>
  return
}

// -----

func.func @where_result(%c: tensor<2x16x16xi1>, %a: tensor<16x16xf32>, %b: tensor<f32>) {
  // expected-error @+1 {{result shape 16x16 does not match the expected 2x16x16}}
  %0 = attn.where %c, %a, %b : (tensor<2x16x16xi1>, tensor<16x16xf32>, tensor<f32>) -> tensor<16x16xf32>
  return
}

// -----

func.func @softmax_dim(%s: tensor<8x16xf32>) {
  // expected-error @+1 {{'dim' 2 is out of range for rank 2 (expected [-2, 1])}}
  %0 = attn.softmax %s dim(2) : tensor<8x16xf32>
  return
}

// -----

func.func @softmax_rank0(%s: tensor<f32>) {
  // expected-error @+1 {{'input' must have rank >= 1}}
  %0 = attn.softmax %s dim(0) : tensor<f32>
  return
}

// -----

func.func @softmax_result(%s: tensor<8x16xf32>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = "attn.softmax"(%s) {dim = -1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf16>
  return
}

// -----

func.func @cast_shape(%s: tensor<8x16xf16>) {
  // expected-error @+1 {{result shape 16x8 differs from the input shape 8x16}}
  %0 = attn.cast %s : tensor<8x16xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @dropout_p(%s: tensor<8x16xf32>) {
  // expected-error @+1 {{'p' must be in [0, 1), got 1}}
  %0 = attn.dropout %s p(1.0) train(true) : tensor<8x16xf32>
  return
}

// -----

func.func @dropout_negative_p(%s: tensor<8x16xf32>) {
  // expected-error @+1 {{'p' must be in [0, 1), got -0.5}}
  %0 = attn.dropout %s p(-0.5) train(false) : tensor<8x16xf32>
  return
}

// -----

func.func @repeat_interleave_dim(%k: tensor<2x2x16x8xf32>) {
  // expected-error @+1 {{'dim' 4 is out of range for rank 4 (expected [-4, 3])}}
  %0 = attn.repeat_interleave %k repeats(2) dim(4) : tensor<2x2x16x8xf32> -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @repeat_interleave_repeats(%k: tensor<2x2x16x8xf32>) {
  // expected-error @+1 {{'repeats' must be >= 1, got 0}}
  %0 = attn.repeat_interleave %k repeats(0) dim(1) : tensor<2x2x16x8xf32> -> tensor<2x0x16x8xf32>
  return
}

// -----

func.func @repeat_interleave_result(%k: tensor<2x2x16x8xf32>) {
  // expected-error @+1 {{result shape 2x4x16x8 does not match the expected 2x6x16x8}}
  %0 = attn.repeat_interleave %k repeats(3) dim(1) : tensor<2x2x16x8xf32> -> tensor<2x4x16x8xf32>
  return
}

// -----

func.func @sdpa_query_rank(%q: tensor<64xf32>) {
  // expected-error @+1 {{'query' must have rank >= 2 ([..., L, E]), got shape 64}}
  %0 = attn.sdpa %q, %q, %q : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

func.func @sdpa_ranks(%q: tensor<2x16x64xf32>, %k: tensor<16x64xf32>) {
  // expected-error @+1 {{'query', 'key' and 'value' must have the same rank, got shapes 2x16x64, 16x64 and 16x64}}
  %0 = attn.sdpa %q, %k, %k : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @sdpa_element_types(%q: tensor<16x64xf32>, %k: tensor<16x64xf16>) {
  // expected-error @+1 {{'query', 'key' and 'value' must share one element type, got 'f32', 'f16' and 'f16'}}
  %0 = attn.sdpa %q, %k, %k : (tensor<16x64xf32>, tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_head_dim(%q: tensor<2x16x64xf32>, %k: tensor<2x32x32xf32>, %v: tensor<2x32x64xf32>) {
  // expected-error @+1 {{'key' head dim 32 differs from the 'query' head dim 64 (query 2x16x64, key 2x32x32)}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x16x64xf32>, tensor<2x32x32xf32>, tensor<2x32x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @sdpa_value_length(%q: tensor<2x16x64xf32>, %k: tensor<2x32x64xf32>, %v: tensor<2x31x64xf32>) {
  // expected-error @+1 {{'value' sequence length 31 differs from the 'key' sequence length 32 (key 2x32x64, value 2x31x64)}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x31x64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @sdpa_kv_batch(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'key' and 'value' batch dims differ: 2x4x32x64 vs 2x2x32x64}}
  %0 = attn.sdpa %q, %k, %v : (tensor<2x4x16x64xf32>, tensor<2x4x32x64xf32>, tensor<2x2x32x64xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_gqa_heads(%q: tensor<2x8x16x64xf32>, %k: tensor<2x3x32x64xf32>) {
  // expected-error @+1 {{'key' batch dim 1 (3) must equal the 'query' one (8) or be 1, or divide it (grouped-query attention)}}
  %0 = attn.sdpa %q, %k, %k : (tensor<2x8x16x64xf32>, tensor<2x3x32x64xf32>, tensor<2x3x32x64xf32>) -> tensor<2x8x16x64xf32>
  return
}

// -----

func.func @sdpa_outer_batch(%q: tensor<4x8x16x64xf32>, %k: tensor<2x8x32x64xf32>) {
  // Only the head dim may group; other batch dims match or broadcast.
  // expected-error @+1 {{'key' batch dim 0 (2) must equal the 'query' one (4) or be 1}}
  %0 = attn.sdpa %q, %k, %k : (tensor<4x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32>) -> tensor<4x8x16x64xf32>
  return
}

// -----

func.func @sdpa_mask_type(%q: tensor<16x64xf32>, %m: tensor<16x16xi32>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of 1-bit signless integer or 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = "attn.sdpa"(%q, %q, %q, %m) : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x16xi32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_mask_shape(%q: tensor<2x16x64xf32>, %k: tensor<2x32x64xf32>, %m: tensor<16x16xi1>) {
  // expected-error @+1 {{'mask' of shape 16x16 does not broadcast to the scores shape 2x16x32}}
  %0 = attn.sdpa %q, %k, %k, %m : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x64xf32>, tensor<16x16xi1>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @sdpa_mask_grows_result(%q: tensor<16x64xf32>, %m: tensor<2x16x16xi1>) {
  // expected-error @+1 {{'mask' of shape 2x16x16 does not broadcast to the scores shape 16x16}}
  %0 = attn.sdpa %q, %q, %q, %m : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<2x16x16xi1>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_scale(%q: tensor<16x64xf32>) {
  // expected-error @+1 {{'scale' must be finite}}
  %0 = attn.sdpa %q, %q, %q {scale = 0x7FF0000000000000 : f64} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_dropout(%q: tensor<16x64xf32>) {
  // expected-error @+1 {{'dropout_p' must be in [0, 1), got 1.5}}
  %0 = attn.sdpa %q, %q, %q {dropout_p = 1.5 : f64} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_masked_value(%q: tensor<16x64xf32>) {
  // expected-error @+1 {{'masked_value' must not be NaN}}
  %0 = attn.sdpa %q, %q, %q {is_causal = true, masked_value = 0x7FF8000000000000 : f64} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_result(%q: tensor<16x64xf32>, %v: tensor<16x32xf32>) {
  // expected-error @+1 {{result shape 16x64 does not match the expected 16x32}}
  %0 = attn.sdpa %q, %q, %v : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x32xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_attr_type(%q: tensor<16x64xf32>) {
  // expected-error @+1 {{attribute 'is_causal' failed to satisfy constraint: bool attribute}}
  %0 = "attn.sdpa"(%q, %q, %q) {is_causal = 1 : i64} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @dropout_seed_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{attribute 'seed' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = attn.dropout %x p(1.000000e-01) train(true) {seed = 1.5 : f64} : tensor<4x8xf32>
  return
}

// -----

func.func @sdpa_seed_type(%q: tensor<16x64xf32>) {
  // expected-error @+1 {{attribute 'seed' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = attn.sdpa %q, %q, %q {dropout_p = 1.000000e-01 : f64, seed = 3 : i32} : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  return
}

// -----

// A result type must be exactly the inferred one: refining a `?` would need a
// run-time check the op does not make (tensor.cast says it explicitly).
func.func @transpose_refined_result(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{result shape 4x3 does not match the expected 4x?}}
  %0 = attn.transpose %x dims(0, 1) : tensor<?x4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @add_refined_result(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{result shape 3x4 does not match the expected ?x4}}
  %0 = attn.add %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @add_generalized_result(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{result shape ?x4 does not match the expected 3x4}}
  %0 = attn.add %x, %x : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @cast_refined_result(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{result shape 3x4 differs from the input shape ?x4}}
  %0 = attn.cast %x : tensor<?x4xf32> -> tensor<3x4xf16>
  return
}

// -----

func.func @score_mod_score_type(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{score_mod must take the score ('f32') and 3 indices (one per score dim) first}}
  %0 = attn.sdpa %q, %q, %q : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f16, %b: index, %i: index, %j: index):
    attn.yield %s : f16
  }
  return
}
// -----

func.func @score_mod_index_type(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{score_mod argument 2 must be an index (score dim 1), got 'i64'}}
  %0 = attn.sdpa %q, %q, %q : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: i64, %j: index):
    attn.yield %s : f32
  }
  return
}
// -----

func.func @score_mod_extra_count(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) {
  // expected-error @+1 {{score_mod reads 2 extra operand(s), but the op has 0}}
  %0 = attn.sdpa %q, %q, %q, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %x: f32, %y: f32):
    attn.yield %s : f32
  }
  return
}
// -----

func.func @score_mod_extra_shape(%q: tensor<2x4x8xf32>, %m: tensor<5x4xf32>) {
  // expected-error @+1 {{extra operand 0 of shape 5x4 does not broadcast to the scores shape 2x4x4}}
  %0 = attn.sdpa %q, %q, %q extras(%m) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<5x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %x: f32):
    attn.yield %s : f32
  }
  return
}
// -----

func.func @score_mod_extra_type(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) {
  // expected-error @+1 {{score_mod argument 4 has type 'f16', but extra operand 0 has element type 'f32'}}
  %0 = attn.sdpa %q, %q, %q extras(%m) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %x: f16):
    attn.yield %s : f32
  }
  return
}
// -----

func.func @score_mod_yield_type(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{score_mod must end with 'attn.yield' of the new score ('f32')}}
  %0 = attn.sdpa %q, %q, %q : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    %h = arith.truncf %s : f32 to f16
    attn.yield %h : f16
  }
  return
}

// -----

func.func @score_mod_empty_block(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{score_mod must end with 'attn.yield' of the new score ('f32')}}
  %0 = attn.sdpa %q, %q, %q : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
  }
  return
}

// -----

func.func @score_mod_op_kind(%q: tensor<2x4x8xf32>) {
  %0 = attn.sdpa %q, %q, %q : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    // expected-error @+1 {{'ub.poison' op is not allowed in an attn.sdpa score_mod (scalar arith and math ops only)}}
    %p = ub.poison : f32
    attn.yield %p : f32
  }
  return
}

// -----

func.func @score_mod_captures(%q: tensor<2x4x8xf32>, %c: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = attn.sdpa %q, %q, %q : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    // expected-error @+1 {{using value defined outside the region}}
    %r = arith.addf %s, %c : f32
    attn.yield %r : f32
  }
  return
}

// -----

func.func @score_mod_two_regions(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{has 2 regions; at most one (score_mod) is allowed}}
  %0 = "attn.sdpa"(%q, %q, %q) ({
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    "attn.yield"(%s) : (f32) -> ()
  }, {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    "attn.yield"(%s) : (f32) -> ()
  }) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @yield_outside_sdpa(%x: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op 'attn.sdpa'}}
  attn.yield %x : f32
}

// -----

func.func @cmp_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'attn.cmp' op}}
  %0 = attn.cmp lt, %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  return
}

// -----

func.func @cmp_result_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{result shape 5 does not match the expected 4}}
  %0 = attn.cmp eq, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xi1>
  return
}

// -----

func.func @cmp_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = attn.cmp lte, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @maximum_broadcast(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{shape 3 of 'rhs' does not broadcast with 4 (from 'lhs')}}
  %0 = attn.maximum %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @tanh_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{'attn.tanh' op failed to verify that all of {input, result} have same type}}
  %0 = "attn.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @iota_dimension() {
  // expected-error @+1 {{'attn.iota' op dimension 2 is out of range for a rank-2 result}}
  %0 = attn.iota 2 : tensor<4x1xf32>
  return
}

// -----

func.func @iota_negative_dimension() {
  // expected-error @+1 {{'attn.iota' op dimension -1 is out of range for a rank-2 result}}
  %0 = attn.iota -1 : tensor<4x1xf32>
  return
}

// -----

func.func @iota_dynamic_f32(%l: index) {
  // expected-error @+1 {{'attn.iota' op positions along the dynamic dim 0 need f64 to be exact, got 'f32'}}
  %0 = attn.iota 0 (%l) : tensor<?x1xf32>
  return
}

// -----

func.func @iota_missing_size() {
  // expected-error @+1 {{'attn.iota' op has 0 dynamic sizes for the 1 dynamic dims of 'tensor<?x1xf64>'}}
  %0 = "attn.iota"() {dimension = 0 : i64} : () -> tensor<?x1xf64>
  return
}

// -----

func.func @iota_extra_size(%l: index) {
  // expected-error @+1 {{'attn.iota' op has 1 dynamic sizes for the 0 dynamic dims of 'tensor<4x1xf64>'}}
  %0 = attn.iota 0 (%l) : tensor<4x1xf64>
  return
}

// -----

func.func @iota_inexact_bf16() {
  // expected-error @+1 {{'attn.iota' op positions up to 299 are not exact in 'bf16'}}
  %0 = attn.iota 1 : tensor<1x300xbf16>
  return
}

// -----

func.func @iota_inexact_f16() {
  // expected-error @+1 {{'attn.iota' op positions up to 4095 are not exact in 'f16'}}
  %0 = attn.iota 0 : tensor<4096xf16>
  return
}

// -----

// The generic form without operandSegmentSizes: the region's arguments say
// how many extra operands there are, so a region that reads more than the
// op has is the same error.
func.func @score_mod_extra_count_generic(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) {
  // expected-error @+1 {{score_mod reads 2 extra operand(s), but the op has 1}}
  %0 = "attn.sdpa"(%q, %q, %q, %m) ({
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %x: f32, %y: f32):
    attn.yield %s : f32
  }) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

// ... and at most one operand (the mask) may precede the extra operands.
func.func @sdpa_generic_too_many_operands(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.sdpa' op has 3 operands after 'value' but its score_mod region reads 1 extra operand(s): at most one mask can precede them}}
  %0 = "attn.sdpa"(%q, %q, %q, %m, %m, %m) ({
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %x: f32):
    attn.yield %s : f32
  }) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_generic_two_masks(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+1 {{'attn.sdpa' op has 2 operands after 'value' but its score_mod region reads 0 extra operand(s): at most one mask can precede them}}
  %0 = "attn.sdpa"(%q, %q, %q, %m, %m) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return
}

// -----

// Segment sizes that are given must add up (the upstream check).
func.func @sdpa_bad_segment_sizes(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+1 {{operand count (4) does not match with the total size (5) specified in attribute 'operandSegmentSizes'}}
  %0 = "attn.sdpa"(%q, %q, %q, %m) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 1>}> : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_extras_without_region(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.sdpa' op has 1 extra operand(s) but no score_mod region to read them}}
  %0 = attn.sdpa %q, %q, %q extras(%m) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_drop_without_bool_mask(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) {
  // expected-error @+1 {{'attn.sdpa' op 'mask_polarity' drop needs a boolean mask}}
  %0 = attn.sdpa %q, %q, %q, %m {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_drop_without_mask(%q: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'attn.sdpa' op 'mask_polarity' drop needs a boolean mask}}
  %0 = "attn.sdpa"(%q, %q, %q) {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_bad_polarity(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+2 {{expected ::mlir::attn::MaskPolarity to be one of: keep, drop}}
  // expected-error @+1 {{failed to parse Attn_MaskPolarityAttr parameter 'value'}}
  %0 = attn.sdpa %q, %q, %q, %m {mask_polarity = #attn.mask_polarity<invert>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_polarity_not_enum(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>) {
  // expected-error @+1 {{'attn.sdpa' op attribute 'mask_polarity' failed to satisfy constraint: keep: true = the position takes part; drop: true = masked out}}
  %0 = "attn.sdpa"(%q, %q, %q, %m) {mask_polarity = 1 : i32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_lengths_rank(%q: tensor<16x64xf32>, %n: tensor<16xi32>) {
  // expected-error @+1 {{'attn.sdpa' op sequence lengths need a batch dim: 'query' must have rank >= 3 ([B, ..., L, E]), got shape 16x64}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16xi32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_lengths_shape(%q: tensor<2x4x16x64xf32>, %n: tensor<4xi32>) {
  // expected-error @+1 {{'attn.sdpa' op 'kv_lengths' has 4 lengths, but the 'query' batch dim 0 has 2 sequences (one length per sequence)}}
  %0 = attn.sdpa %q, %q, %q kv_lengths(%n) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<4xi32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_lengths_element_type(%q: tensor<2x4x16x64xf32>, %n: tensor<2xi16>) {
  // expected-error @+1 {{'attn.sdpa' op operand #3 must be 1D tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xi16>'}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2xi16>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_lengths_rank_2(%q: tensor<2x4x16x64xf32>, %n: tensor<2x1xi32>) {
  // expected-error @+1 {{'attn.sdpa' op operand #3 must be 1D tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2x1xi32>'}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x1xi32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_lengths_finite_masked_value(%q: tensor<2x4x16x64xf32>, %n: tensor<2xi64>) {
  // expected-error @+1 {{'attn.sdpa' op 'masked_value' must be -inf (absent) with sequence lengths, got -10000}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) {masked_value = -1.0e4 : f64} : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2xi64>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_packed_one_side(%q: tensor<1x4x16x64xf32>, %n: tensor<3xi32>) {
  // expected-error @+1 {{'attn.sdpa' op the packed layout ('padding_side' packed) needs both 'q_lengths' and 'kv_lengths'}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) {padding_side = #attn.padding_side<packed>} : (tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<3xi32>) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @sdpa_packed_counts(%q: tensor<1x4x16x64xf32>, %n: tensor<3xi32>, %m: tensor<4xi64>) {
  // expected-error @+1 {{'attn.sdpa' op 'q_lengths' has 3 lengths and 'kv_lengths' 4: the packed layout needs one of each per sequence}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) kv_lengths(%m) {padding_side = #attn.padding_side<packed>} : (tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<3xi32>, tensor<4xi64>) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @sdpa_packed_mask(%q: tensor<1x4x16x64xf32>, %mask: tensor<16x16xi1>, %n: tensor<3xi32>) {
  // expected-error @+1 {{'attn.sdpa' op a mask is not supported with the packed layout ('padding_side' packed)}}
  %0 = attn.sdpa %q, %q, %q, %mask q_lengths(%n) kv_lengths(%n) {padding_side = #attn.padding_side<packed>} : (tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<16x16xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<1x4x16x64xf32>
  return
}

// -----

func.func @sdpa_packed_score_mod(%q: tensor<1x4x16x64xf32>, %n: tensor<3xi32>) {
  // expected-error @+1 {{'attn.sdpa' op a score_mod region is not supported with the packed layout ('padding_side' packed)}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) kv_lengths(%n) {padding_side = #attn.padding_side<packed>} : (tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<3xi32>, tensor<3xi32>) -> tensor<1x4x16x64xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    attn.yield %s : f32
  }
  return
}

// -----

func.func @sdpa_packed_dropout(%q: tensor<1x4x16x64xf32>, %n: tensor<3xi32>) {
  // expected-error @+1 {{'attn.sdpa' op 'dropout_p' > 0 is not supported with the packed layout ('padding_side' packed)}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) kv_lengths(%n) {dropout_p = 0.5 : f64, padding_side = #attn.padding_side<packed>} : (tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<3xi32>, tensor<3xi32>) -> tensor<1x4x16x64xf32>
  return
}

// -----

// Without operandSegmentSizes the operands after 'value' are a mask and
// extra operands: lengths need the segment sizes.
func.func @sdpa_generic_lengths_without_segments(%q: tensor<2x4x8xf32>, %n: tensor<2xi32>) {
  // expected-error @+1 {{'attn.sdpa' op operand #3 must be ranked tensor of 1-bit signless integer or 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2xi32>'}}
  %0 = "attn.sdpa"(%q, %q, %q, %n) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2xi32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @sdpa_sinks_rank(%q: tensor<16x64xf32>, %s: tensor<16xf32>) {
  // expected-error @+1 {{'attn.sdpa' op 'sinks' need a head dim: 'query' must have rank >= 3 ([..., H, L, E]), got shape 16x64}}
  %0 = attn.sdpa %q, %q, %q sinks(%s) : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16xf32>) -> tensor<16x64xf32>
  return
}

// -----

func.func @sdpa_sinks_not_per_head(%q: tensor<2x4x16x64xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'attn.sdpa' op 'sinks' has 2 elements, but the 'query' head dim (third from the end) has 4 heads (one sink per query head)}}
  %0 = attn.sdpa %q, %q, %q sinks(%s) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_sinks_dropout(%q: tensor<2x4x16x64xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'attn.sdpa' op 'sinks' and 'dropout_p' > 0 are not supported together}}
  %0 = attn.sdpa %q, %q, %q sinks(%s) {dropout_p = 0.1 : f64} : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<4xf32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_sinks_element_type(%q: tensor<2x4x16x64xf32>, %s: tensor<4xi32>) {
  // expected-error @+1 {{'attn.sdpa' op operand #3 must be 1D tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = attn.sdpa %q, %q, %q sinks(%s) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<4xi32>) -> tensor<2x4x16x64xf32>
  return
}

// -----

func.func @sdpa_sinks_rank_2(%q: tensor<2x4x16x64xf32>, %s: tensor<4x1xf32>) {
  // expected-error @+1 {{'attn.sdpa' op operand #3 must be 1D tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4x1xf32>'}}
  %0 = attn.sdpa %q, %q, %q sinks(%s) : (tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<4x1xf32>) -> tensor<2x4x16x64xf32>
  return
}
