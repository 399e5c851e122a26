// Two GEMMs start from one accumulator (the same collapse_shape of a zero
// fill, as CSE leaves two bias-less projections of the same input), and an
// elementwise op between them may write over a buffer in place. Each GEMM
// must read the zeros: x @ w1 = 1, x @ w2 = 2, so (x @ w1 + 1) * (x @ w2) is
// 4 everywhere and the sum of the 96 elements is 384 (768 when the second
// GEMM read the first one's result through a merged bufferization.to_buffer).

// RUN: attn-run %s --entry shared_zero_init | FileCheck %s
// CHECK: result 0: 2x3x16xf32 sum=3.840000e+02 abs_sum=3.840000e+02 nan=0
func.func @shared_zero_init() -> tensor<2x3x16xf32> {
  %x = arith.constant dense<1.0> : tensor<2x3x8xf32>
  %w1 = arith.constant dense<0.125> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x16xf32>
  %e = tensor.empty() : tensor<2x3x16xf32>
  %z = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%z : f32) outs(%e : tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %c = tensor.collapse_shape %fill [[0, 1], [2]] : tensor<2x3x16xf32> into tensor<6x16xf32>
  %m1 = linalg.matmul ins(%x2, %w1 : tensor<6x8xf32>, tensor<8x16xf32>) outs(%c : tensor<6x16xf32>) -> tensor<6x16xf32>
  %e1 = tensor.expand_shape %m1 [[0, 1], [2]] output_shape [2, 3, 16] : tensor<6x16xf32> into tensor<2x3x16xf32>
  %e3 = tensor.empty() : tensor<2x3x16xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e1 : tensor<2x3x16xf32>) outs(%e3 : tensor<2x3x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %a, %one : f32
    linalg.yield %s : f32
  } -> tensor<2x3x16xf32>
  %m2 = linalg.matmul ins(%x2, %w2 : tensor<6x8xf32>, tensor<8x16xf32>) outs(%c : tensor<6x16xf32>) -> tensor<6x16xf32>
  %e2 = tensor.expand_shape %m2 [[0, 1], [2]] output_shape [2, 3, 16] : tensor<6x16xf32> into tensor<2x3x16xf32>
  %r = "attn.mul"(%g, %e2) : (tensor<2x3x16xf32>, tensor<2x3x16xf32>) -> tensor<2x3x16xf32>
  return %r : tensor<2x3x16xf32>
}
