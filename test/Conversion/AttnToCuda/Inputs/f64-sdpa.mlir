// An attn.sdpa the CUDA kernels cannot run (f64); see attn-compile-errors.test.
func.func @f64(%q: tensor<2x16x64xf64>) -> tensor<2x16x64xf64> {
  // The kernels take f16, bf16 and f32.
  %o = attn.sdpa %q, %q, %q : (tensor<2x16x64xf64>, tensor<2x16x64xf64>, tensor<2x16x64xf64>) -> tensor<2x16x64xf64>
  return %o : tensor<2x16x64xf64>
}
