func.func @truncated(%q: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  %0 = attn.sdpa %q, %q, %q : (tensor<2x16x64xf32>, tensor<2x16x64xf32>,
