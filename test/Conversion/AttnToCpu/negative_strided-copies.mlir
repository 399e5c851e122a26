// RUN: attn-opt %s --attn-cpu-lower-strided-copies --split-input-file | FileCheck %s
// RUN: not attn-opt %s --attn-cpu-lower-strided-copies="vector-bits=4" --split-input-file 2>&1 | FileCheck %s --check-prefix=BITS

// What stays a memref.copy: dense buffers on both sides (memref-to-llvm
// copies them with one memcpy), rows that are not contiguous, elements
// that are not whole bytes, and 0-d buffers.
// CHECK-LABEL: func.func @dense
// CHECK: memref.copy
// CHECK-NOT: vector.load
func.func @dense(%a: memref<?x64xf32>, %b: memref<?x64xf32>) {
  memref.copy %a, %b : memref<?x64xf32> to memref<?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @static_dense_view
// CHECK: memref.copy
func.func @static_dense_view(%a: memref<4x64xf32, strided<[64, 1], offset: 128>>, %b: memref<4x64xf32>) {
  memref.copy %a, %b : memref<4x64xf32, strided<[64, 1], offset: 128>> to memref<4x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @strided_rows
// CHECK: memref.copy
// CHECK-NOT: vector.load
func.func @strided_rows(%a: memref<?x?xf32, strided<[?, 2]>>, %b: memref<?x?xf32>) {
  memref.copy %a, %b : memref<?x?xf32, strided<[?, 2]>> to memref<?x?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @bits
// CHECK: memref.copy
// CHECK-NOT: vector.load
func.func @bits(%a: memref<?x?xi1, strided<[?, 1]>>, %b: memref<?x?xi1>) {
  memref.copy %a, %b : memref<?x?xi1, strided<[?, 1]>> to memref<?x?xi1>
  return
}

// -----

// CHECK-LABEL: func.func @scalar
// CHECK: memref.copy
func.func @scalar(%a: memref<f32, strided<[], offset: ?>>, %b: memref<f32>) {
  memref.copy %a, %b : memref<f32, strided<[], offset: ?>> to memref<f32>
  return
}

// BITS: error: vector-bits must be at least 8, not 4
