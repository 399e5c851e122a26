// The seed's NaiveCausalAttention, written the way a frontend writes it:
// generic form, one attn op per line of the PyTorch module.
//
//   scores = q @ k.transpose(-2, -1)
//   scores = scores * (1.0 / math.sqrt(d))
//   scores = scores.masked_fill(mask, float("-inf"))  # mask: True above the diagonal
//   weights = scores.softmax(-1)
//   out = weights @ v
func.func @naive(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>,
                 %v: tensor<2x8x128x64xf32>, %mask: tensor<128x128xi1>) -> tensor<2x8x128x64xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x8x128x64xf32>) -> tensor<2x8x64x128xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x8x128x64xf32>, tensor<2x8x64x128xf32>) -> tensor<2x8x128x128xf32>
  %c  = arith.constant dense<0.125> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<2x8x128x128xf32>, tensor<f32>) -> tensor<2x8x128x128xf32>
  %m  = "attn.masked_fill"(%ss, %mask) {value = 0xFFF0000000000000 : f64} : (tensor<2x8x128x128xf32>, tensor<128x128xi1>) -> tensor<2x8x128x128xf32>
  %p  = "attn.softmax"(%m) {dim = -1 : i64} : (tensor<2x8x128x128xf32>) -> tensor<2x8x128x128xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x8x128x128xf32>, tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32>
  return %o : tensor<2x8x128x64xf32>
}
