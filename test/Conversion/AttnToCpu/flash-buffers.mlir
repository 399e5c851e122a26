// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --canonicalize --cse \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN: | FileCheck %s

// After bufferization the flash path reads its operands in place (no copy
// of q, k, v or the mask), allocates the result and, per query block
// (inside the forall), block-sized scratch only: q^T [E, blockQ], the score
// tile [blockKV, blockQ], the [blockQ, Ev] accumulator and [blockQ]
// statistics. Nothing of size L x S, and no allocation inside the
// key/value loop.

// CHECK-LABEL: func.func @flash_buffers
// CHECK-NOT: memref.copy
// CHECK-NOT: memref<{{.*}}1000x1000xf32
// CHECK: memref.alloc() {{.*}} : memref<2x4x1000x64xf32>
// CHECK: scf.forall
// CHECK-DAG: memref.alloc() {{.*}} : memref<64x96xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<96x64xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<96xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK-NOT: memref<{{.*}}1000x1000xf32
// CHECK: return
func.func @flash_buffers(%q: tensor<2x4x1000x64xf32>, %k: tensor<2x4x1000x64xf32>, %v: tensor<2x4x1000x64xf32>, %m: tensor<1000x1000xi1>) -> tensor<2x4x1000x64xf32> {
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x1000x64xf32>, tensor<2x4x1000x64xf32>, tensor<2x4x1000x64xf32>, tensor<1000x1000xi1>) -> tensor<2x4x1000x64xf32>
  return %o : tensor<2x4x1000x64xf32>
}
