// One bf16 x bf16 GEMM accumulated in f32 (the product the AMX tiles
// take, when the target has them): matmul-gemm-amx.test's per-target
// choice of tile code, on a module that compiles fast.
func.func @bf16_gemm(%a: tensor<64x96xbf16>, %b: tensor<96x80xbf16>, %c: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x96xbf16>, tensor<96x80xbf16>) outs(%c : tensor<64x80xf32>) -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
}
