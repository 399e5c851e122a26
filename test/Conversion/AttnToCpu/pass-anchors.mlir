// attn-lower-to-cpu runs on any op and attn-cpu-emit-c-interface on
// functions: both as top-level flags and nested in a pipeline (as
// attn-cpu-lowering-pipeline runs them, per function).
// RUN: attn-opt %s --attn-lower-to-cpu --attn-cpu-emit-c-interface | FileCheck %s
// RUN: attn-opt %s --pass-pipeline='builtin.module(func.func(attn-lower-to-cpu,attn-cpu-emit-c-interface))' | FileCheck %s

// Public functions with a body get the C wrapper attribute; declarations and
// private functions do not.
// CHECK-LABEL: func.func @scale
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-NOT: attn.
// CHECK: linalg.generic
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: llvm.emit_c_interface
// CHECK: linalg.transpose
// CHECK-LABEL: func.func private @external
// CHECK-NOT: llvm.emit_c_interface
func.func @scale(%x: tensor<2x4xf32>, %c: tensor<f32>) -> tensor<2x4xf32> {
  %0 = attn.mul %x, %c : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func private @helper(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %0 = attn.transpose %x dims(0, 1) : tensor<2x4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
func.func private @external(tensor<2x4xf32>) -> tensor<2x4xf32>
