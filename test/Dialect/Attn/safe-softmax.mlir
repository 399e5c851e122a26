// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Round trip of attn.safe_softmax and of attn.sdpa's safe_softmax attribute
// (printed when true, elided when false, the default).

// CHECK-LABEL: func.func @safe_softmax
// CHECK: attn.safe_softmax %{{.*}} dim(-1) : tensor<2x4x16x32xf16>
// CHECK: attn.safe_softmax %{{.*}} dim(0) : tensor<7xbf16>
func.func @safe_softmax(%s: tensor<2x4x16x32xf16>, %t: tensor<7xbf16>) -> (tensor<2x4x16x32xf16>, tensor<7xbf16>) {
  %0 = attn.safe_softmax %s dim(-1) : tensor<2x4x16x32xf16>
  %1 = attn.safe_softmax %t dim(0) : tensor<7xbf16>
  return %0, %1 : tensor<2x4x16x32xf16>, tensor<7xbf16>
}

// CHECK-LABEL: func.func @sdpa_safe_softmax
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {safe_softmax = true, scale = 1.250000e-01 : f64} : (tensor<2x8x16x64xf32>, tensor<2x8x24x64xf32>, tensor<2x8x24x64xf32>, tensor<16x24xi1>) -> tensor<2x8x16x64xf32>
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x16x64xf32>, tensor<2x8x24x64xf32>, tensor<2x8x24x64xf32>) -> tensor<2x8x16x64xf32>
func.func @sdpa_safe_softmax(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x24x64xf32>, %v: tensor<2x8x24x64xf32>, %m: tensor<16x24xi1>)
    -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) {
  %0 = attn.sdpa %q, %k, %v, %m {safe_softmax = true, scale = 0.125 : f64}
      : (tensor<2x8x16x64xf32>, tensor<2x8x24x64xf32>, tensor<2x8x24x64xf32>, tensor<16x24xi1>) -> tensor<2x8x16x64xf32>
  %1 = attn.sdpa %q, %k, %v {safe_softmax = false}
      : (tensor<2x8x16x64xf32>, tensor<2x8x24x64xf32>, tensor<2x8x24x64xf32>) -> tensor<2x8x16x64xf32>
  return %0, %1 : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>
}

// CHECK-LABEL: func.func @sdpa_safe_softmax_score_mod
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {safe_softmax = true} : ({{.*}}) -> tensor<4x8x16xf32> score_mod {
// CHECK: math.tanh
func.func @sdpa_safe_softmax_score_mod(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %0 = attn.sdpa %q, %k, %v {safe_softmax = true}
      : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    %t = math.tanh %s : f32
    attn.yield %t : f32
  }
  return %0 : tensor<4x8x16xf32>
}
