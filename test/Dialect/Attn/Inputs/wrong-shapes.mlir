func.func @f(%q: tensor<2x16x64xf32>, %k: tensor<2x16x32xf32>) -> tensor<2x16x64xf32> {
  %0 = "attn.sdpa"(%q, %k, %k) : (tensor<2x16x64xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x64xf32>
  return %0 : tensor<2x16x64xf32>
}
