// An attn.sdpa the CUDA kernels cannot run (f32); see attn-compile-errors.test.
func.func @f32(%q: tensor<2x16x64xf32>) -> tensor<2x16x64xf32> {
  // The kernels take f16 and bf16.
  %o = attn.sdpa %q, %q, %q : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  return %o : tensor<2x16x64xf32>
}
