// RUN: attn-opt %s --split-input-file --attn-cpu-dealloc-after-last-use | FileCheck %s

// The block-end dealloc of upstream's ownership-based deallocation: two
// kernel results (their base buffers extracted for the dealloc) and an
// allocation are freed after their last uses; the returned buffer stays
// retained, the dealloc keeps nothing else.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[X:[^:]+]]: memref<32xf32>
// CHECK: %[[TMP:.+]] = memref.alloc() : memref<32xf32>
// CHECK: memref.copy %[[X]], %[[TMP]]
// CHECK-NEXT: %[[A:.+]] = call @kernel(%[[TMP]])
// CHECK-NEXT: bufferization.dealloc (%[[TMP]] : memref<32xf32>) if (%true)
// CHECK-NEXT: %[[B:.+]] = call @kernel(%[[A]])
// CHECK-NEXT: %[[BASE_A:.+]], %{{.+}}, %{{.+}}, %{{.+}} = memref.extract_strided_metadata %[[A]]
// CHECK-NEXT: bufferization.dealloc (%[[BASE_A]] : memref<f32>) if (%true)
// CHECK-NEXT: %[[C:.+]] = call @kernel(%[[B]])
// CHECK-NEXT: %[[BASE_B:.+]], %{{.+}}, %{{.+}}, %{{.+}} = memref.extract_strided_metadata %[[B]]
// CHECK-NEXT: bufferization.dealloc (%[[BASE_B]] : memref<f32>) if (%true)
// CHECK: bufferization.dealloc retain (%[[C]] : memref<32xf32>)
// CHECK-NEXT: return %[[C]]
func.func private @kernel(%x: memref<32xf32>) -> memref<32xf32> {
  %y = memref.alloc() : memref<32xf32>
  memref.copy %x, %y : memref<32xf32> to memref<32xf32>
  return %y : memref<32xf32>
}
func.func @chain(%x: memref<32xf32>) -> memref<32xf32> {
  %true = arith.constant true
  %tmp = memref.alloc() : memref<32xf32>
  memref.copy %x, %tmp : memref<32xf32> to memref<32xf32>
  %a = call @kernel(%tmp) : (memref<32xf32>) -> memref<32xf32>
  %b = call @kernel(%a) : (memref<32xf32>) -> memref<32xf32>
  %c = call @kernel(%b) : (memref<32xf32>) -> memref<32xf32>
  %base_a, %off_a, %size_a, %stride_a = memref.extract_strided_metadata %a : memref<32xf32> -> memref<f32>, index, index, index
  %base_b, %off_b, %size_b, %stride_b = memref.extract_strided_metadata %b : memref<32xf32> -> memref<f32>, index, index, index
  %r = bufferization.dealloc (%tmp, %base_a, %base_b : memref<32xf32>, memref<f32>, memref<f32>) if (%true, %true, %true) retain (%c : memref<32xf32>)
  return %c : memref<32xf32>
}

// -----

// A view's uses are the buffer's uses, and a use nested in a loop is the
// loop's: the buffer is freed after the loop that reads its reshaped view.
// CHECK-LABEL: func.func @view_in_loop
// CHECK: %[[A:.+]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[V:.+]] = memref.collapse_shape %[[A]]
// CHECK: scf.for
// CHECK: memref.load %[[V]]
// CHECK: }
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<4x8xf32>) if (%true)
// CHECK-NEXT: %[[O:.+]] = memref.alloc() : memref<f32>
// CHECK: bufferization.dealloc retain (%[[O]] : memref<f32>)
func.func @view_in_loop(%x: memref<4x8xf32>) -> memref<f32> {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<4x8xf32>
  memref.copy %x, %a : memref<4x8xf32> to memref<4x8xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %sum = scf.for %i = %c0 to %c32 step %c1 iter_args(%s = %zero) -> (f32) {
    %e = memref.load %v[%i] : memref<32xf32>
    %n = arith.addf %s, %e : f32
    scf.yield %n : f32
  }
  %o = memref.alloc() : memref<f32>
  memref.store %sum, %o[] : memref<f32>
  %r = bufferization.dealloc (%a : memref<4x8xf32>) if (%true) retain (%o : memref<f32>)
  return %o : memref<f32>
}

// -----

// A condition computed after the last use: the dealloc goes after it.
// CHECK-LABEL: func.func @late_condition
// CHECK: memref.copy
// CHECK-NEXT: %[[C:.+]] = arith.cmpi
// CHECK-NEXT: bufferization.dealloc (%{{.+}} : memref<8xf32>) if (%[[C]])
func.func @late_condition(%x: memref<8xf32>, %i: index, %j: index) {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  %c = arith.cmpi eq, %i, %j : index
  %y = memref.alloc() : memref<8xf32>
  memref.copy %x, %y : memref<8xf32> to memref<8xf32>
  bufferization.dealloc (%a, %y : memref<8xf32>, memref<8xf32>) if (%c, %c)
  return
}

// -----

// The returned value is a view of the buffer: it stays in the dealloc,
// whose run-time checks keep it alive.
// CHECK-LABEL: func.func @negative_returned_view
// CHECK-NOT: bufferization.dealloc (%{{.+}}) if
// CHECK: bufferization.dealloc (%{{.+}} : memref<4x8xf32>) if (%true) retain
func.func @negative_returned_view(%x: memref<4x8xf32>) -> memref<32xf32> {
  %true = arith.constant true
  %a = memref.alloc() : memref<4x8xf32>
  memref.copy %x, %a : memref<4x8xf32> to memref<4x8xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x8xf32> into memref<32xf32>
  %r = bufferization.dealloc (%a : memref<4x8xf32>) if (%true) retain (%v : memref<32xf32>)
  return %v : memref<32xf32>
}

// -----

// The result of a function without a body (its ABI unknown here) and a
// buffer passed to it stay where they are: the declaration may return its
// argument.
// CHECK-LABEL: func.func @negative_external_call
// CHECK: call @external
// CHECK-NOT: bufferization.dealloc (%{{.+}}) if
// CHECK: bufferization.dealloc (%{{.+}}, %{{.+}} : memref<8xf32>, memref<f32>) if (%true, %true) retain
func.func private @external(memref<8xf32>) -> memref<8xf32>
func.func @negative_external_call(%x: memref<8xf32>) -> memref<8xf32> {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  %b = call @external(%a) : (memref<8xf32>) -> memref<8xf32>
  %o = memref.alloc() : memref<8xf32>
  memref.copy %b, %o : memref<8xf32> to memref<8xf32>
  %base, %off, %size, %stride = memref.extract_strided_metadata %b : memref<8xf32> -> memref<f32>, index, index, index
  %r = bufferization.dealloc (%a, %base : memref<8xf32>, memref<f32>) if (%true, %true) retain (%o : memref<8xf32>)
  return %o : memref<8xf32>
}

// -----

// An alias yielded out of a region (here scf.if) is not followed: the
// buffer stays in the block-end dealloc.
// CHECK-LABEL: func.func @negative_yielded
// CHECK: scf.if
// CHECK-NOT: bufferization.dealloc (%{{.+}}) if
// CHECK: bufferization.dealloc (%{{.+}} : memref<8xf32>) if (%true)
// CHECK-NEXT: return
func.func @negative_yielded(%x: memref<8xf32>, %p: i1) -> f32 {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  %s = scf.if %p -> (memref<8xf32>) {
    scf.yield %a : memref<8xf32>
  } else {
    scf.yield %x : memref<8xf32>
  }
  %e = memref.load %s[%c0] : memref<8xf32>
  bufferization.dealloc (%a : memref<8xf32>) if (%true)
  return %e : f32
}

// -----

// Two operands of one dealloc that are the same buffer (an allocation and a
// base buffer extracted from it): the dealloc's own alias check frees it
// once, so both stay.
// CHECK-LABEL: func.func @negative_same_buffer_twice
// CHECK-NOT: bufferization.dealloc (%{{.+}}) if
// CHECK: bufferization.dealloc (%{{.+}}, %{{.+}} : memref<8xf32>, memref<f32>) if (%true, %true)
func.func @negative_same_buffer_twice(%x: memref<8xf32>) {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  %base, %off, %size, %stride = memref.extract_strided_metadata %a : memref<8xf32> -> memref<f32>, index, index, index
  bufferization.dealloc (%a, %base : memref<8xf32>, memref<f32>) if (%true, %true)
  return
}

// -----

// A buffer the function does not allocate (an argument it was given
// ownership of at run time) stays in the block-end dealloc.
// CHECK-LABEL: func.func @negative_argument
// CHECK: memref.copy
// CHECK-NEXT: bufferization.dealloc (%{{.+}} : memref<8xf32>) if (%{{.+}})
// CHECK-NEXT: return
func.func @negative_argument(%x: memref<8xf32>, %own: i1, %y: memref<8xf32>) {
  memref.copy %x, %y : memref<8xf32> to memref<8xf32>
  bufferization.dealloc (%x : memref<8xf32>) if (%own)
  return
}
