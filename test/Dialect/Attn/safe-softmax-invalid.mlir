// RUN: attn-opt %s --split-input-file --verify-diagnostics

// attn.safe_softmax has attn.softmax's verifier; one case per message, and
// attn.sdpa's safe_softmax attribute must be a bool.

func.func @safe_softmax_dim(%s: tensor<8x16xf32>) {
  // expected-error @+1 {{'dim' -3 is out of range for rank 2 (expected [-2, 1])}}
  %0 = attn.safe_softmax %s dim(-3) : tensor<8x16xf32>
  return
}

// -----

func.func @safe_softmax_rank0(%s: tensor<f32>) {
  // expected-error @+1 {{'input' must have rank >= 1}}
  %0 = attn.safe_softmax %s dim(0) : tensor<f32>
  return
}

// -----

func.func @safe_softmax_result(%s: tensor<8x16xf32>) {
  // expected-error @+1 {{failed to verify that all of {input, result} have same type}}
  %0 = "attn.safe_softmax"(%s) {dim = -1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf16>
  return
}

// -----

func.func @safe_softmax_int(%s: tensor<8x16xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = attn.safe_softmax %s dim(-1) : tensor<8x16xi1>
  return
}

// -----

func.func @sdpa_safe_softmax_not_bool(%q: tensor<2x16x8xf32>) {
  // expected-error @+1 {{attribute 'safe_softmax' failed to satisfy constraint: bool attribute}}
  %0 = attn.sdpa %q, %q, %q {safe_softmax = 1 : i64} : (tensor<2x16x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return
}
