// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="backend=auto vector-bits=256" --split-input-file | FileCheck %s

// Nothing is skipped where skipping a fully masked tile would change the
// result: a finite masked_value (a row that the mask removes entirely
// averages every key), an additive mask (-inf + NaN is NaN), no mask. No
// scan, every key block computed.
// CHECK-LABEL: func.func @finite_masked_value
// CHECK-NOT: scf.while
// CHECK: return
func.func @finite_masked_value(%q: tensor<2x2x40x8xf32>, %k: tensor<2x2x130x8xf32>, %m: tensor<2x1x1x130xi1>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %k, %k, %m {masked_value = -3.4028234663852886E+38 : f64} : (tensor<2x2x40x8xf32>, tensor<2x2x130x8xf32>, tensor<2x2x130x8xf32>, tensor<2x1x1x130xi1>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}

// -----

// CHECK-LABEL: func.func @finite_masked_value_decode
// CHECK-NOT: scf.while
// CHECK: return
func.func @finite_masked_value_decode(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x130x8xf32>, %m: tensor<2x1x1x130xi1>) -> tensor<2x2x1x8xf32> {
  %o = attn.sdpa %q, %k, %k, %m {masked_value = -3.4028234663852886E+38 : f64} : (tensor<2x2x1x8xf32>, tensor<2x2x130x8xf32>, tensor<2x2x130x8xf32>, tensor<2x1x1x130xi1>) -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}

// -----

// CHECK-LABEL: func.func @additive_mask
// CHECK-NOT: scf.while
// CHECK: return
func.func @additive_mask(%q: tensor<2x2x40x8xf32>, %k: tensor<2x2x130x8xf32>, %m: tensor<2x1x1x130xf32>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %k, %k, %m : (tensor<2x2x40x8xf32>, tensor<2x2x130x8xf32>, tensor<2x2x130x8xf32>, tensor<2x1x1x130xf32>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}

// -----

// CHECK-LABEL: func.func @no_mask
// CHECK-NOT: scf.while
// CHECK: return
func.func @no_mask(%q: tensor<2x2x40x8xf32>, %k: tensor<2x2x130x8xf32>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %k, %k {is_causal = true} : (tensor<2x2x40x8xf32>, tensor<2x2x130x8xf32>, tensor<2x2x130x8xf32>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}
