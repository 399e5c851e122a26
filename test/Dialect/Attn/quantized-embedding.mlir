// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of attn.quantized_embedding: indices of any rank (dynamic dims
// too, i32 or i64), the result their shape followed by K.

// CHECK-LABEL: func.func @tokens
// CHECK: attn.quantized_embedding %{{.*}}, %{{.*}} {format = #attn.quant<q8_0>, num_rows = 10 : i64} : (tensor<2x?xi64>, tensor<680xi8>) -> tensor<2x?x64xf32>
func.func @tokens(%ids: tensor<2x?xi64>, %w: tensor<680xi8>) -> tensor<2x?x64xf32> {
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 10} : (tensor<2x?xi64>, tensor<680xi8>) -> tensor<2x?x64xf32>
  return %e : tensor<2x?x64xf32>
}

// CHECK-LABEL: func.func @scalar_index
// CHECK: attn.quantized_embedding %{{.*}}, %{{.*}} {format = #attn.quant<int8_asym, group = 40, scale = f32>, num_rows = 10 : i64} : (tensor<i32>, tensor<522xi8>) -> tensor<40xbf16>
func.func @scalar_index(%id: tensor<i32>, %w: tensor<522xi8>) -> tensor<40xbf16> {
  %e = attn.quantized_embedding %id, %w {format = #attn.quant<int8_asym, group = 40, scale = f32>, num_rows = 10} : (tensor<i32>, tensor<522xi8>) -> tensor<40xbf16>
  return %e : tensor<40xbf16>
}
