// A function with a boolean mask argument, for attn-run's .npy input tests.
func.func @masked(%x: tensor<2x8xf32>, %m: tensor<2x8xi1>) -> tensor<2x8xf32> {
  %y = "attn.masked_fill"(%x, %m) {value = 0.0 : f64} : (tensor<2x8xf32>, tensor<2x8xi1>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
