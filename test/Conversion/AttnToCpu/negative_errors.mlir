// RUN: attn-opt %s --attn-lower-to-cpu --split-input-file --verify-diagnostics

func.func @negative_cast_f64_to_f16(%x: tensor<4xf64>) -> tensor<4xf16> {
  // expected-error @+1 {{'attn.cast' op cannot be lowered to CPU code: a cast from 'f64' to 'f16'}}
  %r = attn.cast %x : tensor<4xf64> -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

func.func @negative_cast_f64_to_bf16(%x: tensor<4xf64>) -> tensor<4xbf16> {
  // expected-error @+1 {{'attn.cast' op cannot be lowered to CPU code: a cast from 'f64' to 'bf16'}}
  %r = attn.cast %x : tensor<4xf64> -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

func.func @negative_flash_dropout(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op cannot be lowered with backend=flash: dropout_p > 0 is only implemented by the math backend}}
  %o = attn.sdpa %q, %q, %q {dropout_p = 1.000000e-01 : f64, "attn.cpu_backend" = "flash"} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @negative_bad_backend_attr(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'attn.sdpa' op 'attn.cpu_backend' must be "auto", "flash" or "math"}}
  %o = attn.sdpa %q, %q, %q {"attn.cpu_backend" = "cuda"} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @negative_where_f64_scalar_into_f16(%c: tensor<4xi1>, %a: tensor<4xf16>, %b: tensor<f64>) -> tensor<4xf16> {
  // expected-error @+1 {{'attn.where' op cannot be lowered to CPU code: selecting a 'f64' scalar into a 'f16' result}}
  %r = attn.where %c, %a, %b : (tensor<4xi1>, tensor<4xf16>, tensor<f64>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

// MLIR's tensor verifier accepts an output_shape that contradicts the result
// type; bufferizing it would make an invalid memref.expand_shape.
func.func @negative_expand_shape_static_mismatch(%x: tensor<66560xf32>) -> tensor<2x4x130x64xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op output_shape gives dim 0 as 4, but the result type has the static size 2 there (the lowering cannot bufferize it)}}
  %r = tensor.expand_shape %x [[0, 1, 2, 3]] output_shape [4, 4, 130, 64] : tensor<66560xf32> into tensor<2x4x130x64xf32>
  return %r : tensor<2x4x130x64xf32>
}

// -----

func.func @negative_expand_shape_value_for_static_dim(%x: tensor<?xf32>, %n: index) -> tensor<2x?xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op output_shape gives dim 0 as a value, but the result type has the static size 2 there}}
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%n, %n] : tensor<?xf32> into tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}

// -----

// A consistent expand_shape, static and dynamic, lowers.
func.func @expand_shape_consistent(%x: tensor<?xf32>, %n: index) -> tensor<2x?xf32> {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [2, %n] : tensor<?xf32> into tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}
