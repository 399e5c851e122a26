// RUN: attn-opt %s --split-input-file --attn-cpu-omp-fork-guard | FileCheck %s

// A row-block loop of run-time length (what convert-scf-to-openmp makes of
// attn-cpu-tile-and-fuse's scf.forall): the team forks only for more than
// one block.
// CHECK-LABEL: func.func @dynamic_trips
// CHECK-SAME: %[[M:[^:]+]]: memref<?xf32>, %[[N:[^:]+]]: index
// CHECK: %[[SPAN:.+]] = arith.subi %[[N]], %[[LB:.+]] : index
// CHECK: %[[POS:.+]] = arith.maxsi %[[SPAN]], %{{.+}} : index
// CHECK: %[[T:.+]] = arith.ceildivsi %[[POS]], %[[STEP:.+]] : index
// CHECK: %[[TRIPS:.+]] = arith.muli %{{.+}}, %[[T]] : index
// CHECK: %[[SEVERAL:.+]] = arith.cmpi sgt, %[[TRIPS]], %{{.+}} : index
// CHECK: omp.parallel if(%[[SEVERAL]])
// CHECK: omp.loop_nest (%{{.+}}) : index = (%[[LB]]) to (%[[N]]) step (%[[STEP]])
func.func @dynamic_trips(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c8) {
        %v = arith.constant 1.0 : f32
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Two loops (a GEMM's row blocks by its column blocks): the product of
// both trip counts.
// CHECK-LABEL: func.func @two_loops
// CHECK-SAME: %{{[^:]+}}: memref<?x?xf32>, %[[R:[^:]+]]: index, %[[C:[^:]+]]: index
// CHECK: %[[TR:.+]] = arith.ceildivsi
// CHECK: %[[P:.+]] = arith.muli %{{.+}}, %[[TR]] : index
// CHECK: %[[TC:.+]] = arith.ceildivsi
// CHECK: %[[TRIPS:.+]] = arith.muli %[[P]], %[[TC]] : index
// CHECK: %[[SEVERAL:.+]] = arith.cmpi sgt, %[[TRIPS]]
// CHECK: omp.parallel if(%[[SEVERAL]])
func.func @two_loops(%m: memref<?x?xf32>, %r: index, %c: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%r, %c) step (%c1, %c1) {
        %v = arith.constant 1.0 : f32
        memref.store %v, %m[%i, %j] : memref<?x?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Constant bounds, a region with work besides the loop, a bound computed
// inside the region, and a condition already there stay as they are.
// CHECK-LABEL: func.func @negative_forms
// CHECK-NOT: arith.cmpi
// CHECK: omp.parallel {
// CHECK: omp.parallel {
// CHECK: omp.parallel {
// CHECK: omp.parallel if(%{{.+}}) {
// CHECK-NOT: arith.cmpi
// CHECK: return
func.func @negative_forms(%m: memref<?xf32>, %n: index, %cond: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %v = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c64) step (%c1) {
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    memref.store %v, %m[%c0] : memref<?xf32>
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    %d = memref.dim %m, %c0 : memref<?xf32>
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%d) step (%c1) {
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel if(%cond) {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %v, %m[%i] : memref<?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
