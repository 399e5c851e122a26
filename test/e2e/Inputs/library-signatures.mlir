// For attn-run-library-checks.test: the test derives modules with other
// signatures from this one with sed.
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = attn.exp %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
