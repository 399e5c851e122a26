// Causal attention as a frontend writes it (the naive chain of
// examples/naive_causal_attention.mlir) at a size small enough for an
// example: attn-compile fuses it into one attn.sdpa and compiles it to a
// shared library that main.c calls.
func.func @causal_attention(%q: tensor<1x2x32x16xf32>, %k: tensor<1x2x32x16xf32>,
                            %v: tensor<1x2x32x16xf32>, %mask: tensor<32x32xi1>) -> tensor<1x2x32x16xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<1x2x32x16xf32>) -> tensor<1x2x16x32xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<1x2x32x16xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x32x32xf32>
  %c  = arith.constant dense<0.25> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<1x2x32x32xf32>, tensor<f32>) -> tensor<1x2x32x32xf32>
  %m  = "attn.masked_fill"(%ss, %mask) {value = 0xFFF0000000000000 : f64} : (tensor<1x2x32x32xf32>, tensor<32x32xi1>) -> tensor<1x2x32x32xf32>
  %p  = "attn.softmax"(%m) {dim = -1 : i64} : (tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<1x2x32x32xf32>, tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32>
  return %o : tensor<1x2x32x16xf32>
}
