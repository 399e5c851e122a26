func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = "attn.softmax"(%x) {dim = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p : tensor<4x8xf32
}
