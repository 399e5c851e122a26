// RUN: attn-opt %s --split-input-file --attn-check-allocations --verify-diagnostics | FileCheck %s

// Dynamic sizes: the byte size is multiplied out with overflow checks before
// the allocation; after it, the pointer must not be null unless the buffer
// is empty.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: %[[M:[^:]+]]: index, %[[N:[^:]+]]: index
// CHECK: %[[C8:.+]] = arith.constant 8 : i64
// CHECK: %[[MI:.+]] = arith.index_cast %[[M]] : index to i64
// CHECK: %[[LO:.+]], %[[HI:.+]] = arith.mului_extended %[[C8]], %[[MI]] : i64
// CHECK: arith.cmpi eq, %[[HI]]
// CHECK: arith.cmpi ule, %[[LO]]
// CHECK: %[[NI:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[LO2:.+]], %{{.+}} = arith.mului_extended %[[LO]], %[[NI]] : i64
// CHECK: cf.assert %{{.+}}, "the buffer of memref<?x2x?xf32> (for the op at {{.*}}check-allocations.mlir:{{[0-9]+}}:{{[0-9]+}}) needs 2^63 bytes or more (its run-time sizes overflow)"
// CHECK: %[[A:.+]] = memref.alloc(%[[M]], %[[N]]) {alignment = 64 : i64} : memref<?x2x?xf32>
// CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[NOTNULL:.+]] = arith.cmpi ne, %[[P]], %{{.+}} : index
// CHECK: %[[EMPTY:.+]] = arith.cmpi eq, %[[LO2]], %{{.+}} : i64
// CHECK: %[[OK:.+]] = arith.ori %[[NOTNULL]], %[[EMPTY]]
// CHECK: cf.assert %[[OK]], "out of memory: allocating the buffer of memref<?x2x?xf32> (for the op at {{.*}}) failed"
func.func @dynamic(%m: index, %n: index) -> memref<?x2x?xf32> {
  %a = memref.alloc(%m, %n) {alignment = 64 : i64} : memref<?x2x?xf32>
  return %a : memref<?x2x?xf32>
}

// -----

// Static sizes: only the null check.
// CHECK-LABEL: func.func @static
// CHECK-NOT: mului_extended
// CHECK: memref.alloc() : memref<4x8xf16>
// CHECK: cf.assert %{{.+}}, "out of memory: allocating the buffer of memref<4x8xf16>
func.func @static() -> memref<4x8xf16> {
  %a = memref.alloc() : memref<4x8xf16>
  return %a : memref<4x8xf16>
}

// -----

// Stack buffers are left alone.
// CHECK-LABEL: func.func @negative_alloca
// CHECK-NOT: cf.assert
func.func @negative_alloca() -> f32 {
  %a = memref.alloca() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  return %v : f32
}

// -----

func.func @too_big() -> memref<1x1xf32> {
  // expected-error @+1 {{the buffer of 'memref<4611686018427387904x4xf32>' needs 2^63 bytes or more (its static sizes overflow)}}
  %a = memref.alloc() : memref<4611686018427387904x4xf32>
  %s = memref.subview %a[0, 0] [1, 1] [1, 1] : memref<4611686018427387904x4xf32> to memref<1x1xf32, strided<[4, 1]>>
  %c = memref.alloc() : memref<1x1xf32>
  return %c : memref<1x1xf32>
}
