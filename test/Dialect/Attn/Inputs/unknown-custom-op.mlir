func.func @f(%x: tensor<4xf32>) {
  %0 = attn.gelu %x : tensor<4xf32>
  return
}
