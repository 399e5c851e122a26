// A tensor of complex numbers has no C type in the generated header.

func.func @g(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  return %x : tensor<4xcomplex<f32>>
}
