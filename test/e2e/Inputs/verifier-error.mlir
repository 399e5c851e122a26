func.func @f(%a: tensor<4x8xf32>, %b: tensor<7x4xf32>) -> tensor<4x4xf32> {
  %s = "attn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<7x4xf32>) -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}
