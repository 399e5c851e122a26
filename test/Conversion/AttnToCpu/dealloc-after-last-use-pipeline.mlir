// RUN: attn-opt %s --attn-cpu-lowering-pipeline --mlir-disable-threading --mlir-print-ir-after=bufferization-lower-deallocations -o /dev/null 2>&1 | FileCheck %s

// In the CPU pipeline: three layers outlined into one kernel; each layer's
// result is freed as soon as the next layer has read it, not before the
// return (where upstream's ownership-based deallocation puts it).
// CHECK-LABEL: func.func @three_layers
// CHECK: %[[A:.+]] = call @attn_kernel_linalg_matmul(%arg0, %arg1)
// CHECK-NEXT: %[[B:.+]] = call @attn_kernel_linalg_matmul(%[[A]], %arg2)
// CHECK-NOT: call
// CHECK: memref.dealloc
// CHECK-NOT: memref.dealloc
// CHECK: %[[C:.+]] = call @attn_kernel_linalg_matmul(%[[B]], %arg3)
// CHECK-NOT: call
// CHECK: memref.dealloc
// CHECK-NOT: memref.dealloc
// CHECK: return %[[C]]
func.func @three_layers(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %c = linalg.matmul ins(%b, %w2 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %c : tensor<16x64xf32>
}
