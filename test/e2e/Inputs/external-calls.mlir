// Calls of external functions, for attn-run-jit-symbols.test.

func.func private @exit(i32)
func.func @calls_exit(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 3 : i32
  call @exit(%c) : (i32) -> ()
  return %x : tensor<4xf32>
}

func.func private @expf(f32) -> f32
func.func @calls_expf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.extract %x[%c0] : tensor<4xf32>
  %y = call @expf(%e) : (f32) -> f32
  %r = tensor.insert %y into %x[%c0] : tensor<4xf32>
  return %r : tensor<4xf32>
}
