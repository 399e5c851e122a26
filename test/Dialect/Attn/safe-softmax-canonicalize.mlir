// RUN: attn-opt %s --canonicalize | FileCheck %s

// The attn.sdpa canonicalizations that rebuild the op keep safe_softmax: a
// score_mod region that yields its score goes, one that adds an extra operand
// becomes the mask operand, and the op still gives 0 on fully masked rows.

// CHECK-LABEL: func.func @identity_region
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {safe_softmax = true, scale = 5.000000e-01 : f64}
// CHECK-NOT: score_mod
func.func @identity_region(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q {safe_softmax = true, scale = 0.5 : f64}
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
    attn.yield %s : f32
  }
  return %0 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @additive_region
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xf32>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[M]] {safe_softmax = true, scale = 5.000000e-01 : f64}
// CHECK-NOT: score_mod
func.func @additive_region(%q: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q extras(%m) {safe_softmax = true, scale = 0.5 : f64}
      : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index, %e: f32):
    %a = arith.addf %s, %e : f32
    attn.yield %a : f32
  }
  return %0 : tensor<2x4x8xf32>
}
