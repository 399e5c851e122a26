// A NUL in a function name (attn-compile-names-and-outputs.test).
func.func @"a\00b"(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
