// For attn-compile-names-and-outputs.test: two public functions whose names
// the header used to map to the same C name.

func.func @"my-func x"(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

func.func @my_func_x(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = attn.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
