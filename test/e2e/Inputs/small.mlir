// Small functions for the attn-run / attn-compile driver tests.

func.func @f(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>,
             %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %c  = arith.constant dense<0.35355339059327373> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<1x2x16x16xf32>, tensor<f32>) -> tensor<1x2x16x16xf32>
  %p  = "attn.softmax"(%ss) {dim = -1 : i64} : (tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

func.func @half(%x: tensor<1x2x16x8xf16>) -> tensor<1x2x16x8xf16> {
  %p = "attn.softmax"(%x) {dim = -1 : i64} : (tensor<1x2x16x8xf16>) -> tensor<1x2x16x8xf16>
  return %p : tensor<1x2x16x8xf16>
}

func.func @wide(%x: tensor<1x2x32x8xf32>) -> tensor<1x2x32x8xf32> {
  %p = "attn.softmax"(%x) {dim = -1 : i64} : (tensor<1x2x32x8xf32>) -> tensor<1x2x32x8xf32>
  return %p : tensor<1x2x32x8xf32>
}

func.func @scalar_arg(%x: tensor<4x8xf32>, %t: f32) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}

func.func @dyn(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %p = "attn.softmax"(%x) {dim = -1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %p : tensor<?x8xf32>
}

func.func private @helper(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
