// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 bf16-dot=true" | FileCheck %s

// A weight used as stored (not prepacked) is packed per call, panel by
// panel, each just before its tiles: the tiles prefetch nothing (only
// prepacked panels are prefetched, prepack-weights.mlir).
// CHECK-LABEL: func.func @as_stored(
// CHECK-NOT: memref.prefetch
// CHECK: vector.fma
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @as_stored(%x: tensor<64x300xf32>, %w: tensor<300x200xf32> {attn.weight}) -> tensor<64x200xf32> {
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<64x200xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<64x200xf32>) -> tensor<64x200xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x300xf32>, tensor<300x200xf32>) outs(%f : tensor<64x200xf32>) -> tensor<64x200xf32>
  return %y : tensor<64x200xf32>
}

// The same on bf16 pair dots: a bf16 weight as stored is pair-packed per
// call, and its tiles prefetch nothing.
// CHECK-LABEL: func.func @pairs_as_stored(
// CHECK-NOT: memref.prefetch
// CHECK: x86vector.avx512.dot
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @pairs_as_stored(%x: tensor<64x300xbf16>, %w: tensor<300x200xbf16> {attn.weight}) -> tensor<64x200xf32> {
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<64x200xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<64x200xf32>) -> tensor<64x200xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x300xbf16>, tensor<300x200xbf16>) outs(%f : tensor<64x200xf32>) -> tensor<64x200xf32>
  return %y : tensor<64x200xf32>
}
