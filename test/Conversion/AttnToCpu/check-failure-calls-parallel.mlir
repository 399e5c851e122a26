// RUN: attn-opt %s --attn-check-failure-calls --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-check-failure-calls --split-input-file --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --convert-cf-to-llvm --convert-openmp-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir --split-input-file | FileCheck %s --check-prefix=IR

// A check inside a parallel loop (an embedding's index check, run on every
// thread of the team): its failure is recorded in a slot of the function
// and ends the iteration (omp.yield), the rest of the body (the read at the
// index) does not run; after the region has joined, the calling thread
// fails with the recorded message. The slot is set to null before each run
// of the region, from one alloca in the entry block.
// CHECK-LABEL: func.func @index_check_in_parallel_loop(
// CHECK: %[[ONE:.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[SLOT:.+]] = llvm.alloca %[[ONE]] x !llvm.ptr {alignment = 8 : i64} : (i64) -> !llvm.ptr
// CHECK: %[[NULL:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.store %[[NULL]], %[[SLOT]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: omp.parallel {
// CHECK: omp.loop_nest
// CHECK: cf.cond_br %{{.+}}, ^[[OK:bb[0-9]+]], ^[[FAIL:bb[0-9]+]]
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: %[[MSG:.+]] = llvm.mlir.addressof @attn_check_message_0 : !llvm.ptr
// CHECK-NEXT: llvm.call @attnrt_check_failed_deferred(%[[SLOT]], %[[MSG]]) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NEXT: omp.yield
// CHECK: ^[[OK]]:
// CHECK: memref.load
// CHECK: omp.yield
// CHECK: omp.terminator
// CHECK-NEXT: }
// CHECK-NEXT: %[[RECORDED:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[NONE:.+]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[PASSED:.+]] = llvm.icmp "eq" %[[RECORDED]], %[[NONE]] : !llvm.ptr
// CHECK-NEXT: cf.cond_br %[[PASSED]], ^[[AFTER:bb[0-9]+]], ^[[RAISE:bb[0-9]+]]
// CHECK: ^[[RAISE]]:
// CHECK-NEXT: llvm.call @attnrt_check_failed(%[[RECORDED]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[AFTER]]:
// CHECK-NEXT: return

// In LLVM IR, the failure block of the outlined region calls
// the deferred function and joins the loop's latch; no unreachable there.
// IR-LABEL: define void @index_check_in_parallel_loop(
// IR: store ptr null, ptr %[[ISLOT:[0-9]+]]
// IR: call void {{.*}}@__kmpc_fork_call(
// IR: %[[R:[0-9]+]] = load ptr, ptr %[[ISLOT]]
// IR: icmp eq ptr %[[R]], null
// IR: call void @attnrt_check_failed(ptr %[[R]])
// IR: define internal void @index_check_in_parallel_loop..omp_par(
// IR: call void @attnrt_check_failed_deferred(
// IR-NOT: unreachable
// IR: }
func.func @index_check_in_parallel_loop(%table: memref<128xf32>, %ids: memref<4096xindex>, %out: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4096 : index
  %rows = arith.constant 128 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        %id = memref.load %ids[%i] : memref<4096xindex>
        %lo = arith.cmpi sge, %id, %c0 : index
        %hi = arith.cmpi slt, %id, %rows : index
        %ok = arith.andi %lo, %hi : i1
        cf.assert %ok, "index out of range"
        %x = memref.load %table[%id] : memref<128xf32>
        memref.store %x, %out[%i] : memref<4096xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// A check outside the parallel regions, and one in a region but outside
// its loop nest (code every thread of the team runs once), fail at once.
// CHECK-LABEL: func.func @negative_outside_loops(
// CHECK-NOT: llvm.alloca
// CHECK-NOT: attnrt_check_failed_deferred
// CHECK: llvm.call @attnrt_check_failed(
// CHECK-NEXT: llvm.unreachable
// CHECK: omp.parallel
// CHECK: llvm.call @attnrt_check_failed(
// CHECK-NEXT: llvm.unreachable
// CHECK: omp.terminator
func.func @negative_outside_loops(%a: i1, %b: i1) {
  cf.assert %a, "sizes differ"
  omp.parallel {
    cf.assert %b, "sizes differ"
    omp.terminator
  }
  return
}
