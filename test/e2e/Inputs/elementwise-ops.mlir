// Inputs of elementwise-ops.test: each new elementwise op on one f32 vector
// (or two), so a Python reference can check every element.
func.func @tanh(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = attn.tanh %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @exp(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = attn.exp %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @neg(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = attn.neg %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @abs(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = attn.abs %x : tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @maximum(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %0 = attn.maximum %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @minimum(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %0 = attn.minimum %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @tanh_f16(%x: tensor<16xf16>) -> tensor<16xf16> {
  %0 = attn.tanh %x : tensor<16xf16>
  return %0 : tensor<16xf16>
}
func.func @cmp_eq(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %c = attn.cmp eq, %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = attn.where %c, %one, %zero : (tensor<16xi1>, tensor<f32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @cmp_ne(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %c = attn.cmp ne, %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = attn.where %c, %one, %zero : (tensor<16xi1>, tensor<f32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @cmp_lt(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %c = attn.cmp lt, %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = attn.where %c, %one, %zero : (tensor<16xi1>, tensor<f32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @cmp_le(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %c = attn.cmp le, %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = attn.where %c, %one, %zero : (tensor<16xi1>, tensor<f32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @cmp_gt(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %c = attn.cmp gt, %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = attn.where %c, %one, %zero : (tensor<16xi1>, tensor<f32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
func.func @cmp_ge(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %c = attn.cmp ge, %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xi1>
  %one = arith.constant dense<1.0> : tensor<f32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = attn.where %c, %one, %zero : (tensor<16xi1>, tensor<f32>, tensor<f32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
