// RUN: attn-opt %s --attn-cpu-reject-openmp-input | FileCheck %s

// Input without OpenMP ops, parallel loops as scf.forall, passes unchanged.
// CHECK-LABEL: func.func @forall_loop
// CHECK: scf.forall
func.func @forall_loop(%m: memref<8xf32>) {
  %v = arith.constant 1.0 : f32
  scf.forall (%i) in (8) {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  return
}
