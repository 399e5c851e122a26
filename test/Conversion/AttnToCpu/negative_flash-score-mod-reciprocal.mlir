// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s

// Divisions that stay divisions on vectors: by zero (x / 0 is +-inf or
// NaN by the sign of x, x * inf is not for x = 0), by a constant whose
// reciprocal is not a normal float (3e38: 1 / c is denormal, x * (1 / c)
// would lose bits), by a value that is not a constant, and every
// division of the math lowering (the reference).
// CHECK-LABEL: func.func @negative_by_zero
// CHECK: %[[Z:.+]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK: arith.divf %{{.+}}, %[[Z]] : vector<8xf32>
func.func @negative_by_zero(%q: tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 0.000000e+00 : f32
    %d = arith.divf %s, %c : f32
    attn.yield %d : f32
  }
  return %o : tensor<1x2x20x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_denormal_reciprocal
// CHECK: %[[C:.+]] = arith.constant dense<3.000000e+38> : vector<8xf32>
// CHECK: arith.divf %{{.+}}, %[[C]] : vector<8xf32>
func.func @negative_denormal_reciprocal(%q: tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+38 : f32
    %d = arith.divf %s, %c : f32
    attn.yield %d : f32
  }
  return %o : tensor<1x2x20x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_not_constant
// CHECK: arith.divf %{{.+}}, %{{.+}} : vector<8xf32>
func.func @negative_not_constant(%q: tensor<1x2x20x8xf32>, %m: tensor<1x2x1x1xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q extras(%m) : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x20x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %cap: f32):
    %d = arith.divf %s, %cap : f32
    attn.yield %d : f32
  }
  return %o : tensor<1x2x20x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_math_backend
// CHECK: %[[CAP:.+]] = arith.constant 3.000000e+01 : f32
// CHECK: arith.divf %{{.+}}, %[[CAP]] : f32
func.func @negative_math_backend(%q: tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q {"attn.cpu_backend" = "math"} : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x20x8xf32>
}
