// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s

// The score step has one version where the range analysis needs no help
// or there are no positions to narrow: static lengths (the loop bounds
// bound the positions), a region that reads no position (soft-capping), no
// region.
// CHECK-LABEL: func.func @negative_static_lengths
// CHECK-NOT: arith.constant 1073741824
// CHECK-NOT: scf.if
// CHECK: arith.sitofp %{{.+}} : vector<8xi64> to vector<8xf32>
// CHECK-LABEL: func.func @negative_no_positions
// CHECK-NOT: arith.constant 1073741824
// CHECK-NOT: scf.if
// CHECK: math.tanh
// CHECK-LABEL: func.func @negative_no_region
// CHECK-NOT: arith.constant 1073741824
func.func @negative_static_lengths(%q: tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>) -> tensor<1x2x20x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = arith.addf %s, %df : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x20x8xf32>
}

func.func @negative_no_positions(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x?x8xf32>
}

func.func @negative_no_region(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
