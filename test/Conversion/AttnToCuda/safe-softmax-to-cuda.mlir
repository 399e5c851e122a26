// RUN: attn-opt %s --split-input-file --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s

// An attn.sdpa with safe_softmax runs on the kernels, which give 0 (not NaN)
// on a row that no key takes part in: safe_softmax is 1 in the attributes
// the bridge reads (sdpa-to-cuda.mlir has their layout: its bytes 32-35),
// 0 without the attribute.

// CHECK-DAG: memref.global "private" constant @[[$SAFE:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[$UNSAFE:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @safe_softmax
// CHECK: %[[S:.+]] = memref.get_global @[[$SAFE]]
// CHECK-NEXT: %[[SU:.+]] = memref.cast %[[S]]
// CHECK-NEXT: call @attnrt_cuda_sdpa_f16_bool(%{{.+}}, %[[SU]]) : (
// CHECK: %[[U:.+]] = memref.get_global @[[$UNSAFE]]
// CHECK-NEXT: %[[UU:.+]] = memref.cast %[[U]]
// CHECK-NEXT: call @attnrt_cuda_sdpa_f16(%{{.+}}, %[[UU]]) : (
// CHECK-NOT: = attn.sdpa
func.func @safe_softmax(%d: tensor<2x16x64xf16>, %m: tensor<2x16x16xi1>) -> (tensor<2x16x64xf16>, tensor<2x16x64xf16>) {
  %0 = attn.sdpa %d, %d, %d, %m {safe_softmax = true} : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x16xi1>) -> tensor<2x16x64xf16>
  %1 = attn.sdpa %d, %d, %d : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  return %0, %1 : tensor<2x16x64xf16>, tensor<2x16x64xf16>
}

// -----

// The flag reaches the entry point generated for a score_mod region too.

// CHECK: memref.global "private" constant @[[$MODSAFE:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @safe_score_mod
// CHECK: %[[S:.+]] = memref.get_global @[[$MODSAFE]]
// CHECK-NEXT: %[[SU:.+]] = memref.cast %[[S]]
// CHECK-NEXT: call @attnrt_cuda_sdpa_mod_{{[0-9a-f]+}}(%{{.+}}, %[[SU]]) : (
func.func @safe_score_mod(%d: tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16> {
  %0 = attn.sdpa %d, %d, %d {safe_softmax = true} : (tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 2.000000e+00 : f32
    %r = arith.mulf %s, %c : f32
    attn.yield %r : f32
  }
  return %0 : tensor<1x2x16x64xf16>
}

// -----

// What still keeps a safe_softmax op on the CPU is what keeps any op there,
// e.g. dropout.

// CHECK-LABEL: func.func @safe_softmax_dropout_stays
// CHECK: attn.sdpa {{.*}}safe_softmax = true
// CHECK-NOT: call @attnrt_cuda_sdpa
func.func @safe_softmax_dropout_stays(%d: tensor<2x16x64xf16>) -> tensor<2x16x64xf16> {
  // expected-remark @+1 {{stays on the CPU: dropout_p > 0 (the CUDA kernels are inference kernels)}}
  %0 = attn.sdpa %d, %d, %d {safe_softmax = true, dropout_p = 1.000000e-01 : f64} : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16>
  return %0 : tensor<2x16x64xf16>
}
