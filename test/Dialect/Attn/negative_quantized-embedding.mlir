// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One case per error of attn.quantized_embedding (the format's own errors:
// negative_quantized-matmul.mlir).

func.func @result_not_indices_and_k(%ids: tensor<2x3xi64>, %w: tensor<680xi8>) {
  // expected-error @+1 {{result shape 2x64 is not the indices' shape 2x3 followed by K}}
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 10} : (tensor<2x3xi64>, tensor<680xi8>) -> tensor<2x64xf32>
  return
}

// -----

func.func @dynamic_k(%ids: tensor<3xi64>, %w: tensor<680xi8>) {
  // expected-error @+1 {{K (the result's last dim) must be static and positive, got result shape 3x?}}
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 10} : (tensor<3xi64>, tensor<680xi8>) -> tensor<3x?xf32>
  return
}

// -----

func.func @wrong_size(%ids: tensor<3xi64>, %w: tensor<679xi8>) {
  // expected-error @+1 {{'weight' has 679 bytes, but #attn.quant<q8_0> lays out an [N, K] = [10, 64] weight in 680 bytes}}
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 10} : (tensor<3xi64>, tensor<679xi8>) -> tensor<3x64xf32>
  return
}

// -----

func.func @k_not_whole_blocks(%ids: tensor<3xi64>, %w: tensor<680xi8>) {
  // expected-error @+1 {{K = 48 is not a multiple of the group of 32 elements of #attn.quant<q8_0>}}
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 10} : (tensor<3xi64>, tensor<680xi8>) -> tensor<3x48xf32>
  return
}

// -----

func.func @no_rows(%ids: tensor<3xi64>, %w: tensor<680xi8>) {
  // expected-error @+1 {{attribute 'num_rows' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 0} : (tensor<3xi64>, tensor<680xi8>) -> tensor<3x64xf32>
  return
}

// -----

func.func @float_indices(%ids: tensor<3xf32>, %w: tensor<680xi8>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 10} : (tensor<3xf32>, tensor<680xi8>) -> tensor<3x64xf32>
  return
}
