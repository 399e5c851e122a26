// RUN: attn-opt %s --split-input-file --attn-cpu-dense-call-arguments | FileCheck %s

// A view of dynamic length cast to a dense parameter that the callee writes:
// copied into a dense buffer before the call and back into the view after.
// CHECK-LABEL: func.func @written_view
// CHECK-SAME: (%[[CACHE:.+]]: memref<2x2x33x8xf32>, %{{.+}}: index)
// CHECK: %[[VIEW:.+]] = memref.subview %[[CACHE]]
// CHECK-NOT: memref.cast
// CHECK: %[[D:.+]] = memref.dim %[[VIEW]], %{{.+}}
// CHECK: %[[DENSE:.+]] = memref.alloc(%[[D]]) {alignment = 64 : i64} : memref<2x2x?x8xf32>
// CHECK: memref.copy %[[VIEW]], %[[DENSE]]
// CHECK: call @kernel(%[[DENSE]])
// CHECK: memref.copy %[[DENSE]], %[[VIEW]]
func.func @written_view(%cache: memref<2x2x33x8xf32>, %n: index) {
  %view = memref.subview %cache[0, 0, 0, 0] [2, 2, %n, 8] [1, 1, 1, 1] : memref<2x2x33x8xf32> to memref<2x2x?x8xf32, strided<[528, 264, 8, 1]>>
  %cast = memref.cast %view : memref<2x2x?x8xf32, strided<[528, 264, 8, 1]>> to memref<2x2x?x8xf32>
  call @kernel(%cast) : (memref<2x2x?x8xf32>) -> ()
  return
}
func.func private @kernel(%arg0: memref<2x2x?x8xf32>) {
  %cst = arith.constant 1.0 : f32
  linalg.fill ins(%cst : f32) outs(%arg0 : memref<2x2x?x8xf32>)
  return
}

// -----

// A callee that only reads the parameter (through a view): no copy back.
// CHECK-LABEL: func.func @read_view
// CHECK: %[[DENSE:.+]] = memref.alloc
// CHECK: memref.copy %{{.+}}, %[[DENSE]]
// CHECK: call @reader(%[[DENSE]], %{{.+}})
// CHECK-NOT: memref.copy
// CHECK: return
func.func @read_view(%cache: memref<2x33xf32>, %n: index, %out: memref<2xf32>) {
  %view = memref.subview %cache[0, 0] [2, %n] [1, 1] : memref<2x33xf32> to memref<2x?xf32, strided<[33, 1]>>
  %cast = memref.cast %view : memref<2x?xf32, strided<[33, 1]>> to memref<2x?xf32>
  call @reader(%cast, %out) : (memref<2x?xf32>, memref<2xf32>) -> ()
  return
}
func.func private @reader(%arg0: memref<2x?xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %row = memref.subview %arg0[0, 0] [1, 1] [1, 1] : memref<2x?xf32> to memref<1x1xf32, strided<[?, 1]>>
  %x = memref.load %row[%c0, %c0] : memref<1x1xf32, strided<[?, 1]>>
  memref.store %x, %out[%c0] : memref<2xf32>
  return
}

// -----

// An external callee may write anything it is given: copied back.
// CHECK-LABEL: func.func @external_callee
// CHECK: memref.copy
// CHECK: call @external(
// CHECK: memref.copy
func.func @external_callee(%cache: memref<2x33xf32>, %n: index) {
  %view = memref.subview %cache[0, 0] [2, %n] [1, 1] : memref<2x33xf32> to memref<2x?xf32, strided<[33, 1]>>
  %cast = memref.cast %view : memref<2x?xf32, strided<[33, 1]>> to memref<2x?xf32>
  call @external(%cast) : (memref<2x?xf32>) -> ()
  return
}
func.func private @external(memref<2x?xf32>)

// -----

// Casts that do not claim a view is dense stay: an identity buffer cast to
// dynamic sizes, a view cast to a strided parameter, whole rows of a matrix
// (dense for every row count).
// CHECK-LABEL: func.func @negative_dense_or_strided
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: call @dense_param(%{{.+}}) : (memref<?x8xf32>)
// CHECK: call @strided_param(%{{.+}}) : (memref<2x?xf32, strided<[?, 1]>>)
// CHECK: call @dense_param(%{{.+}}) : (memref<?x8xf32>)
func.func @negative_dense_or_strided(%x: memref<4x8xf32>, %cache: memref<2x33xf32>, %n: index) {
  %dense = memref.cast %x : memref<4x8xf32> to memref<?x8xf32>
  call @dense_param(%dense) : (memref<?x8xf32>) -> ()
  %view = memref.subview %cache[0, 0] [2, %n] [1, 1] : memref<2x33xf32> to memref<2x?xf32, strided<[33, 1]>>
  %cast = memref.cast %view : memref<2x?xf32, strided<[33, 1]>> to memref<2x?xf32, strided<[?, 1]>>
  call @strided_param(%cast) : (memref<2x?xf32, strided<[?, 1]>>) -> ()
  %first = memref.subview %x[0, 0] [%n, 8] [1, 1] : memref<4x8xf32> to memref<?x8xf32, strided<[8, 1]>>
  %dense_rows = memref.cast %first : memref<?x8xf32, strided<[8, 1]>> to memref<?x8xf32>
  call @dense_param(%dense_rows) : (memref<?x8xf32>) -> ()
  return
}
func.func private @dense_param(memref<?x8xf32>)
func.func private @strided_param(memref<2x?xf32, strided<[?, 1]>>)
