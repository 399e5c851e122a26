// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One case per verifier message of attn.reshape.

func.func @reshape_dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'attn.reshape' op needs static shapes (input ?x4, result 2x4)}}
  %0 = attn.reshape %x : tensor<?x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'attn.reshape' op result element type 'f16' differs from the input element type 'f32'}}
  %0 = attn.reshape %x : tensor<2x4xf32> -> tensor<8xf16>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'attn.reshape' op result 3x5 has 15 elements, the input 2x8 has 16}}
  %0 = attn.reshape %x : tensor<2x8xf32> -> tensor<3x5xf32>
  return
}
