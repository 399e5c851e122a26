// RUN: attn-opt %s --attn-cpu-lower-strided-copies="vector-bits=256" --split-input-file | FileCheck %s

// A dense buffer into a KV cache's rows: one loop per leading dim, whole
// vectors of each row, then a masked vector for the rest.
// CHECK-LABEL: func.func @into_cache
// CHECK-SAME: (%[[SRC:.+]]: memref<?x4x?x20xf32>, %[[DST:.+]]: memref<?x4x?x20xf32, strided<[43776, 10944, 64, 1]>>)
// CHECK-NOT: memref.copy
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[N:.+]] = memref.dim %[[SRC]], %c3 : memref<?x4x?x20xf32>
// CHECK: %[[REM:.+]] = arith.remui %[[N]], %[[C8]]
// CHECK: %[[FULL:.+]] = arith.subi %[[N]], %[[REM]]
// CHECK: %[[TAIL:.+]] = arith.cmpi ult, %[[FULL]], %[[N]]
// CHECK: %[[LEFT:.+]] = arith.subi %[[N]], %[[FULL]]
// CHECK: %[[MASK:.+]] = vector.create_mask %[[LEFT]] : vector<8xi1>
// CHECK: scf.for %[[I:.+]] = %[[C0]] to %{{.+}} step
// CHECK: scf.for %[[J:.+]] = %[[C0]] to %{{.+}} step
// CHECK: scf.for %[[K:.+]] = %[[C0]] to %{{.+}} step
// CHECK: scf.for %[[C:.+]] = %[[C0]] to %[[FULL]] step %[[C8]]
// CHECK:   %[[V:.+]] = vector.load %[[SRC]][%[[I]], %[[J]], %[[K]], %[[C]]] : memref<?x4x?x20xf32>, vector<8xf32>
// CHECK:   vector.store %[[V]], %[[DST]][%[[I]], %[[J]], %[[K]], %[[C]]]
// CHECK: scf.if %[[TAIL]]
// CHECK:   %[[T:.+]] = vector.maskedload %[[SRC]][%[[I]], %[[J]], %[[K]], %[[FULL]]], %[[MASK]]
// CHECK:   vector.maskedstore %[[DST]][%[[I]], %[[J]], %[[K]], %[[FULL]]], %[[MASK]], %[[T]]
func.func @into_cache(%a: memref<?x4x?x20xf32>, %b: memref<?x4x?x20xf32, strided<[43776, 10944, 64, 1]>>) {
  memref.copy %a, %b : memref<?x4x?x20xf32> to memref<?x4x?x20xf32, strided<[43776, 10944, 64, 1]>>
  return
}

// -----

// Rows of a dynamic offset and strides out into a dense buffer; bf16 moves
// 16 to a vector of 256 bits.
// CHECK-LABEL: func.func @view_to_dense_bf16
// CHECK-NOT: memref.copy
// CHECK: vector.load %{{.+}} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<16xbf16>
// CHECK: vector.maskedload {{.+}} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<16xi1>, vector<16xbf16> into vector<16xbf16>
func.func @view_to_dense_bf16(%a: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %b: memref<?x?xbf16>) {
  memref.copy %a, %b : memref<?x?xbf16, strided<[?, 1], offset: ?>> to memref<?x?xbf16>
  return
}

// -----

// One row of a dynamic size at an offset: no outer loop.
// CHECK-LABEL: func.func @one_row
// CHECK-NOT: memref.copy
// CHECK-NOT: scf.for {{.+}} step %c1
// CHECK: scf.for
// CHECK: vector.load %{{.+}} : memref<?xi8, strided<[1], offset: ?>>, vector<32xi8>
func.func @one_row(%a: memref<?xi8, strided<[1], offset: ?>>, %b: memref<?xi8>) {
  memref.copy %a, %b : memref<?xi8, strided<[1], offset: ?>> to memref<?xi8>
  return
}
