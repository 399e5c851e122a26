// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s

// Soft-capping divides every score by its cap: on vectors, the division by
// a constant is a multiplication by the constant's reciprocal (within 1
// ulp; a vector division stalls the score step). The math lowering, the
// reference, keeps the division.
// CHECK-LABEL: func.func @softcap
// CHECK-DAG: %[[RCP:.+]] = arith.constant dense<0.0333333351> : vector<8xf32>
// CHECK-DAG: %[[CAP:.+]] = arith.constant dense<3.000000e+01> : vector<8xf32>
// CHECK: %[[X:.+]] = arith.mulf %{{.+}}, %[[RCP]] : vector<8xf32>
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[X]] : vector<8xf32>
// CHECK-NEXT: arith.mulf %[[T]], %[[CAP]] : vector<8xf32>
// CHECK-NOT: arith.divf %{{.+}}, %[[CAP]]
func.func @softcap(%q: tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x20x8xf32>
}

// -----

// The fast-math flags of the division stay on the multiplication.
// CHECK-LABEL: func.func @flags
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<nnan> : vector<8xf32>
func.func @flags(%q: tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant -5.000000e+01 : f32
    %d = arith.divf %s, %c fastmath<nnan> : f32
    attn.yield %d : f32
  }
  return %o : tensor<1x2x20x8xf32>
}
