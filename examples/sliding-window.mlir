func.func @mistral(%q: tensor<1x8x4096x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>) -> tensor<1x8x4096x128xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x8x4096x128xbf16> -> tensor<1x8x128x4096xbf16>
  %s = attn.matmul %q, %kt : (tensor<1x8x4096x128xbf16>, tensor<1x8x128x4096xbf16>) -> tensor<1x8x4096x4096xbf16>
  %i = attn.iota 0 : tensor<4096x1xf32>
  %j = attn.iota 1 : tensor<1x4096xf32>
  %w = arith.constant dense<1024.0> : tensor<f32>
  %lo = attn.sub %i, %w : (tensor<4096x1xf32>, tensor<f32>) -> tensor<4096x1xf32>
  %future = attn.cmp gt, %j, %i : (tensor<1x4096xf32>, tensor<4096x1xf32>) -> tensor<4096x4096xi1>
  %old = attn.cmp le, %j, %lo : (tensor<1x4096xf32>, tensor<4096x1xf32>) -> tensor<4096x4096xi1>
  %m1 = attn.masked_fill %s, %future value(0xFFF0000000000000) : (tensor<1x8x4096x4096xbf16>, tensor<4096x4096xi1>) -> tensor<1x8x4096x4096xbf16>
  %m2 = attn.masked_fill %m1, %old value(0xFFF0000000000000) : (tensor<1x8x4096x4096xbf16>, tensor<4096x4096xi1>) -> tensor<1x8x4096x4096xbf16>
  %p = attn.softmax %m2 dim(-1) : tensor<1x8x4096x4096xbf16>
  %o = attn.matmul %p, %v : (tensor<1x8x4096x4096xbf16>, tensor<1x8x4096x128xbf16>) -> tensor<1x8x4096x128xbf16>
  return %o : tensor<1x8x4096x128xbf16>
}
