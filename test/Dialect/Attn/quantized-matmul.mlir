// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of attn.quantized_matmul and #attn.quant for every scheme: the
// GGUF schemes print without their fixed block and scale, the int schemes
// with both; any rank, dynamic batch dims and M.

// CHECK-LABEL: func.func @q8_0
// CHECK: attn.quantized_matmul %{{.*}}, %{{.*}} {format = #attn.quant<q8_0>} : (tensor<3x96xf32>, tensor<3774xi8>) -> tensor<3x37xf32>
func.func @q8_0(%x: tensor<3x96xf32>, %w: tensor<3774xi8>) -> tensor<3x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q8_0>} : (tensor<3x96xf32>, tensor<3774xi8>) -> tensor<3x37xf32>
  return %y : tensor<3x37xf32>
}

// The fixed parameters may be spelled; they print without.
// CHECK-LABEL: func.func @q4_0
// CHECK: {format = #attn.quant<q4_0>} : (tensor<2x?x32xbf16>, tensor<666xi8>) -> tensor<2x?x37xbf16>
func.func @q4_0(%x: tensor<2x?x32xbf16>, %w: tensor<666xi8>) -> tensor<2x?x37xbf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0, group = 32, scale = f16>} : (tensor<2x?x32xbf16>, tensor<666xi8>) -> tensor<2x?x37xbf16>
  return %y : tensor<2x?x37xbf16>
}

// CHECK-LABEL: func.func @q4_k
// CHECK: {format = #attn.quant<q4_k>} : (tensor<?x512xf16>, tensor<2016xi8>) -> tensor<?x7xf16>
func.func @q4_k(%x: tensor<?x512xf16>, %w: tensor<2016xi8>) -> tensor<?x7xf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_k>} : (tensor<?x512xf16>, tensor<2016xi8>) -> tensor<?x7xf16>
  return %y : tensor<?x7xf16>
}

// CHECK-LABEL: func.func @q6_k
// CHECK: {format = #attn.quant<q6_k>} : (tensor<1x1x1x256xf32>, tensor<1470xi8>) -> tensor<1x1x1x7xf32>
func.func @q6_k(%x: tensor<1x1x1x256xf32>, %w: tensor<1470xi8>) -> tensor<1x1x1x7xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q6_k>} : (tensor<1x1x1x256xf32>, tensor<1470xi8>) -> tensor<1x1x1x7xf32>
  return %y : tensor<1x1x1x7xf32>
}

// Per output channel (group = K), f32 scales: codes 37 x 100, scales at 3712.
// CHECK-LABEL: func.func @int8_sym
// CHECK: {format = #attn.quant<int8_sym, group = 100, scale = f32>} : (tensor<1x100xf32>, tensor<3860xi8>) -> tensor<1x37xf32>
func.func @int8_sym(%x: tensor<1x100xf32>, %w: tensor<3860xi8>) -> tensor<1x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_sym, group = 100, scale = f32>} : (tensor<1x100xf32>, tensor<3860xi8>) -> tensor<1x37xf32>
  return %y : tensor<1x37xf32>
}

// The example of docs/quantization.md: N = 2, K = 4, 130 bytes.
// CHECK-LABEL: func.func @int8_asym
// CHECK: {format = #attn.quant<int8_asym, group = 4, scale = f32>} : (tensor<5x4xf32>, tensor<130xi8>) -> tensor<5x2xf32>
func.func @int8_asym(%x: tensor<5x4xf32>, %w: tensor<130xi8>) -> tensor<5x2xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_asym, group = 4, scale = f32>} : (tensor<5x4xf32>, tensor<130xi8>) -> tensor<5x2xf32>
  return %y : tensor<5x2xf32>
}

// CHECK-LABEL: func.func @int4_sym
// CHECK: {format = #attn.quant<int4_sym, group = 32, scale = f16>} : (tensor<8x96xbf16>, tensor<2014xi8>) -> tensor<8x37xbf16>
func.func @int4_sym(%x: tensor<8x96xbf16>, %w: tensor<2014xi8>) -> tensor<8x37xbf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, group = 32, scale = f16>} : (tensor<8x96xbf16>, tensor<2014xi8>) -> tensor<8x37xbf16>
  return %y : tensor<8x37xbf16>
}

// The op description's second example.
// CHECK-LABEL: func.func @int4_asym
// CHECK: {format = #attn.quant<int4_asym, group = 128, scale = f16>} : (tensor<?x1024xf32>, tensor<3018752xi8>) -> tensor<?x5632xf32>
func.func @int4_asym(%x: tensor<?x1024xf32>, %w: tensor<3018752xi8>) -> tensor<?x5632xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_asym, group = 128, scale = f16>} : (tensor<?x1024xf32>, tensor<3018752xi8>) -> tensor<?x5632xf32>
  return %y : tensor<?x5632xf32>
}
