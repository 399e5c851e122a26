// RUN: attn-opt %s --attn-fuse-sdpa --split-input-file | FileCheck %s

// Form 2: every way a frontend writes the scale ends up in `scale` (f64).
// Scalars are rank-0 or splat constants; like the lowered chain, a scalar
// takes part at the compute precision (f32 for f16/bf16 scores; a wider
// rank-0 constant is rounded to it, not to the scores' element type). Division by c becomes scale = 1/c: the chain's
// x / c and the fused x * (1/c) can differ in the last bit, which is within
// the fused op's tolerance (it also scales once, in f32, after an unrounded
// q.k^T). The same holds for scales written on q or k.

// CHECK-LABEL: func.func @scale_div
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: %[[O:.+]] = attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 0.33333333333333331 : f64}
// CHECK-NOT: attn.softmax
// CHECK: return %[[O]]
func.func @scale_div(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<3.0> : tensor<f32>
  %ss = attn.div %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @scale_mul_scalar_on_the_left
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @scale_mul_scalar_on_the_left(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %ss = attn.mul %c, %s : (tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A splat constant of shape [L, S] is a scalar, whatever its shape.

// CHECK-LABEL: func.func @scale_splat_tensor
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @scale_splat_tensor(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<4x4xf32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// The scale applied to q before the first matmul (q * d**-0.5).

// CHECK-LABEL: func.func @scale_on_query
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x4x8xf16>, %[[K:[^:]+]]: tensor<2x2x4x8xf16>, %[[V:[^:]+]]: tensor<2x2x4x8xf16>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.mul
// CHECK-NOT: attn.softmax
func.func @scale_on_query(%q: tensor<2x2x4x8xf16>, %k: tensor<2x2x4x8xf16>, %v: tensor<2x2x4x8xf16>) -> tensor<2x2x4x8xf16> {
  %c = arith.constant dense<0.125> : tensor<f32>
  %qs = attn.mul %q, %c : (tensor<2x2x4x8xf16>, tensor<f32>) -> tensor<2x2x4x8xf16>
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x4x8xf16> -> tensor<2x2x8x4xf16>
  %s = attn.matmul %qs, %kt : (tensor<2x2x4x8xf16>, tensor<2x2x8x4xf16>) -> tensor<2x2x4x4xf16>
  %p = attn.softmax %s dim(-1) : tensor<2x2x4x4xf16>
  %o = attn.matmul %p, %v : (tensor<2x2x4x4xf16>, tensor<2x2x4x8xf16>) -> tensor<2x2x4x8xf16>
  return %o : tensor<2x2x4x8xf16>
}

// -----

// Split across q and k (q * s**0.5, k * s**0.5, k scaled before the
// transpose): the product of the two (f32-rounded) factors.

// CHECK-LABEL: func.func @scale_split_k_before_transpose
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x16xf32>, %[[K:[^:]+]]: tensor<2x4x16xf32>, %[[V:[^:]+]]: tensor<2x4x16xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK-NOT: attn.mul
// CHECK-NOT: attn.softmax
func.func @scale_split_k_before_transpose(%q: tensor<2x4x16xf32>, %k: tensor<2x4x16xf32>, %v: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %c = arith.constant dense<0.5> : tensor<f32>
  %qs = attn.mul %q, %c : (tensor<2x4x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
  %ks = attn.mul %c, %k : (tensor<f32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %kt = attn.transpose %ks dims(-2, -1) : tensor<2x4x16xf32> -> tensor<2x16x4xf32>
  %s = attn.matmul %qs, %kt : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %s dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %o : tensor<2x4x16xf32>
}

// -----

// k scaled after the transpose, with a non-power-of-two factor
// (0.125**0.5 rounded to f32, squared in f64).

// CHECK-LABEL: func.func @scale_split_k_after_transpose
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x64xf32>, %[[K:[^:]+]]: tensor<2x4x64xf32>, %[[V:[^:]+]]: tensor<2x4x64xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 0.12499999{{[0-9]+}} : f64}
// CHECK-NOT: attn.mul
// CHECK-NOT: attn.softmax
func.func @scale_split_k_after_transpose(%q: tensor<2x4x64xf32>, %k: tensor<2x4x64xf32>, %v: tensor<2x4x64xf32>) -> tensor<2x4x64xf32> {
  %c = arith.constant dense<0.35355339059327379> : tensor<f32>
  %qs = attn.mul %q, %c : (tensor<2x4x64xf32>, tensor<f32>) -> tensor<2x4x64xf32>
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x64xf32> -> tensor<2x64x4xf32>
  %kts = attn.mul %kt, %c : (tensor<2x64x4xf32>, tensor<f32>) -> tensor<2x64x4xf32>
  %s = attn.matmul %qs, %kts : (tensor<2x4x64xf32>, tensor<2x64x4xf32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %s dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x64xf32>) -> tensor<2x4x64xf32>
  return %o : tensor<2x4x64xf32>
}

// -----

// No scale at all: scale 1.0 must be written, since attn.sdpa's default is
// 1/sqrt(E).

// CHECK-LABEL: func.func @scale_absent
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.000000e+00 : f64}
// CHECK-NOT: attn.softmax
func.func @scale_absent(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %s dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Two scales on the scores (div then mul) multiply together.

// CHECK-LABEL: func.func @scale_twice
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e+00 : f64}
// CHECK-NOT: attn.softmax
func.func @scale_twice(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c8 = arith.constant dense<8.0> : tensor<f32>
  %c10 = arith.constant dense<10.0> : tensor<f32>
  %s1 = attn.div %s, %c8 : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %s2 = attn.mul %s1, %c10 : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %s2 dim(-1) : tensor<2x4x4xf32>
  %o = attn.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A constant written out element by element with one value is a splat (MLIR
// stores it as one), hence a scalar.

// CHECK-LABEL: func.func @scale_written_out_constant
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x2x8xf32>, %[[K:[^:]+]]: tensor<2x2x8xf32>, %[[V:[^:]+]]: tensor<2x2x8xf32>)
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
// CHECK-NOT: attn.softmax
func.func @scale_written_out_constant(%q: tensor<2x2x8xf32>, %k: tensor<2x2x8xf32>, %v: tensor<2x2x8xf32>) -> tensor<2x2x8xf32> {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x2x8xf32> -> tensor<2x8x2xf32>
  %s = attn.matmul %q, %kt : (tensor<2x2x8xf32>, tensor<2x8x2xf32>) -> tensor<2x2x2xf32>
  %c = arith.constant dense<[[0.125, 0.125], [0.125, 0.125]]> : tensor<2x2xf32>
  %ss = attn.mul %s, %c : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x2x2xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x2xf32>, tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  return %o : tensor<2x2x8xf32>
}
