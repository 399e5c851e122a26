// RUN: attn-opt %s --attn-check-failure-calls | FileCheck %s

// The pass on its own: each cf.assert becomes a conditional branch to a call
// of attnrt_check_failed with its message (one global per distinct message).
// CHECK-DAG: llvm.mlir.global private constant @attn_check_message_0("sizes differ\00")
// CHECK-DAG: llvm.func @attnrt_check_failed(!llvm.ptr)
// CHECK-LABEL: func.func @two_asserts
// CHECK: cf.cond_br %{{.*}}, ^[[OK:bb[0-9]+]], ^[[FAIL:bb[0-9]+]]
// CHECK: llvm.call @attnrt_check_failed
// CHECK-NEXT: llvm.unreachable
// CHECK-NOT: cf.assert
func.func @two_asserts(%a: i1, %b: i1) {
  cf.assert %a, "sizes differ"
  cf.assert %b, "sizes differ"
  return
}

// CHECK-LABEL: func.func @negative_no_assert
// CHECK-NOT: attnrt_check_failed
// CHECK: return
func.func @negative_no_assert() {
  return
}
