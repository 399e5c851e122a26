// Two public functions (f32 attention, bf16 + i1 mask, two results) and a
// private helper, for attn-compile's header and emit tests.

func.func @attention(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>,
                     %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<1x2x16x8xf32>) -> tensor<1x2x8x16xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %c  = arith.constant dense<0.35355339059327373> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<1x2x16x16xf32>, tensor<f32>) -> tensor<1x2x16x16xf32>
  %p  = "attn.softmax"(%ss) {dim = -1 : i64} : (tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

func.func @masked_probs(%s: tensor<?x16xbf16>, %mask: tensor<16xi1>) -> (tensor<?x16xbf16>, tensor<?x16xf32>) {
  %m = "attn.masked_fill"(%s, %mask) {value = -1.0e4 : f64} : (tensor<?x16xbf16>, tensor<16xi1>) -> tensor<?x16xbf16>
  %p = "attn.softmax"(%m) {dim = -1 : i64} : (tensor<?x16xbf16>) -> tensor<?x16xbf16>
  %f = "attn.cast"(%p) : (tensor<?x16xbf16>) -> tensor<?x16xf32>
  return %p, %f : tensor<?x16xbf16>, tensor<?x16xf32>
}

func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %p = "attn.softmax"(%x) {dim = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %p : tensor<4xf32>
}
