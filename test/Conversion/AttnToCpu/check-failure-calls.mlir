// RUN: attn-opt %s --attn-cpu-lowering-pipeline="check-failure-calls=true num-threads=1" | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1" | FileCheck %s --check-prefix=ABORT

// With check-failure-calls, the run-time size check (two `?` dims that must
// agree) branches to a call of the runtime's attnrt_check_failed with the
// message; without it, LLVM's lowering prints with puts and aborts.

// CHECK-DAG: llvm.mlir.global private constant @attn_check_message_0("attn: dynamic dims that broadcast must be equal at run time{{.*}}\00")
// CHECK-DAG: llvm.func @attnrt_check_failed(!llvm.ptr)
// CHECK-LABEL: llvm.func @add_dynamic
// CHECK: %[[MSG:.*]] = llvm.mlir.addressof @attn_check_message_0
// CHECK: llvm.cond_br %{{.*}}, ^[[OK:bb[0-9]+]], ^[[FAIL:bb[0-9]+]]
// CHECK: ^[[FAIL]]:
// CHECK-NEXT: llvm.call @attnrt_check_failed(%[[MSG]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: llvm.unreachable
// CHECK-NOT: @abort

// ABORT-NOT: attnrt_check_failed
// ABORT: llvm.call @abort
func.func @add_dynamic(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = "attn.add"(%a, %b) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}
