// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 amx=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --split-input-file | FileCheck %s --check-prefix=NOAMX

// Decode products that stay on the vector dot products even with amx:
// weights of fewer than 32 rows (24), whose K is not whole 32-k steps
// (100: a tile would read past the weight's rows), f32 operands, and a
// weight of dynamic shape. No runtime check, no tile. Without amx no
// product has one.
// CHECK-NOT: call @attnrt_amx_available
// CHECK-NOT: amx.
// CHECK-LABEL: func.func @fewer_rows_than_a_block
// CHECK: vector.fma
// CHECK-LABEL: func.func @k_not_whole_steps
// CHECK: vector.fma
// CHECK-LABEL: func.func @f32_weight
// CHECK: vector.fma
// CHECK-LABEL: func.func @dynamic_weight
// CHECK: vector.fma
// NOAMX-NOT: amx.
func.func @fewer_rows_than_a_block(%x: tensor<4x96xbf16>, %w: tensor<24x96xbf16>, %b: tensor<4x24xf32>) -> tensor<4x24xf32> {
  %t0 = tensor.empty() : tensor<96x24xbf16>
  %wt = linalg.transpose ins(%w : tensor<24x96xbf16>) outs(%t0 : tensor<96x24xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<4x96xbf16>, tensor<96x24xbf16>) outs(%b : tensor<4x24xf32>) -> tensor<4x24xf32>
  return %r : tensor<4x24xf32>
}

func.func @k_not_whole_steps(%x: tensor<4x100xbf16>, %w: tensor<64x100xbf16>, %b: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %t0 = tensor.empty() : tensor<100x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x100xbf16>) outs(%t0 : tensor<100x64xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<4x100xbf16>, tensor<100x64xbf16>) outs(%b : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

func.func @f32_weight(%x: tensor<4x96xf32>, %w: tensor<64x96xf32>, %b: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %t0 = tensor.empty() : tensor<96x64xf32>
  %wt = linalg.transpose ins(%w : tensor<64x96xf32>) outs(%t0 : tensor<96x64xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<4x96xf32>, tensor<96x64xf32>) outs(%b : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

func.func @dynamic_weight(%x: tensor<4x96xbf16>, %w: tensor<?x96xbf16>, %b: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %w, %c0 : tensor<?x96xbf16>
  %t0 = tensor.empty(%n) : tensor<96x?xbf16>
  %wt = linalg.transpose ins(%w : tensor<?x96xbf16>) outs(%t0 : tensor<96x?xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<4x96xbf16>, tensor<96x?xbf16>) outs(%b : tensor<4x?xf32>) -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// -----

// NOAMX-LABEL: func.func @decode_proj
// NOAMX-NOT: amx.
// NOAMX: vector.fma
func.func @decode_proj(%x: tensor<4x96xbf16>, %w: tensor<64x96xbf16>, %b: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %t0 = tensor.empty() : tensor<96x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x96xbf16>) outs(%t0 : tensor<96x64xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<4x96xbf16>, tensor<96x64xbf16>) outs(%b : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}
