// RUN: attn-opt %s --cse --split-input-file | FileCheck %s --check-prefix=CSE
// RUN: attn-opt %s --canonicalize --split-input-file | FileCheck %s --check-prefix=DCE
// RUN: attn-opt %s --loop-invariant-code-motion --split-input-file | FileCheck %s --check-prefix=LICM

// attn.sdpa and attn.dropout have no memory effects (dropout's mask is a pure
// function of the element index and the seed): CSE merges identical ones and
// an unused one is dead. attn.sdpa is speculatable only with static shapes
// (a `?` dim is checked at run time), so only then is it hoisted.

// CSE-LABEL: func.func @merge_identical
// CSE-COUNT-1: attn.sdpa
// CSE-NOT: attn.sdpa
// CSE-COUNT-1: attn.dropout
// CSE-NOT: attn.dropout
// DCE-LABEL: func.func @merge_identical
func.func @merge_identical(%q: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %a = attn.sdpa %q, %q, %q {dropout_p = 1.000000e-01 : f64, seed = 3 : i64} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %b = attn.sdpa %q, %q, %q {dropout_p = 1.000000e-01 : f64, seed = 3 : i64} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %c = attn.dropout %q p(2.000000e-01) train(true) {seed = 5 : i64} : tensor<2x8x4xf32>
  %d = attn.dropout %q p(2.000000e-01) train(true) {seed = 5 : i64} : tensor<2x8x4xf32>
  return %a, %b, %c, %d : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// -----

// Different seeds are different functions: both stay.
// CSE-LABEL: func.func @negative_different_seeds
// CSE-COUNT-2: attn.dropout
func.func @negative_different_seeds(%q: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %c = attn.dropout %q p(2.000000e-01) train(true) {seed = 5 : i64} : tensor<2x8x4xf32>
  %d = attn.dropout %q p(2.000000e-01) train(true) {seed = 6 : i64} : tensor<2x8x4xf32>
  return %c, %d : tensor<2x8x4xf32>, tensor<2x8x4xf32>
}

// -----

// DCE-LABEL: func.func @unused_is_dead
// DCE-NOT: attn.sdpa
// DCE-NOT: attn.dropout
// DCE: return
func.func @unused_is_dead(%q: tensor<2x8x4xf32>) {
  %a = attn.sdpa %q, %q, %q {dropout_p = 1.000000e-01 : f64} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %c = attn.dropout %q p(2.000000e-01) train(true) : tensor<2x8x4xf32>
  return
}

// -----

// LICM-LABEL: func.func @hoist_static_only
// LICM: attn.sdpa {{.*}} -> tensor<2x8x4xf32>
// LICM: scf.for
// LICM: attn.sdpa {{.*}} -> tensor<?x8x4xf32>
// LICM: scf.yield
func.func @hoist_static_only(%q: tensor<2x8x4xf32>, %d: tensor<?x8x4xf32>, %n: index) -> (tensor<2x8x4xf32>, tensor<?x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %q, %y = %d) -> (tensor<2x8x4xf32>, tensor<?x8x4xf32>) {
    %a = attn.sdpa %q, %q, %q : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
    %b = attn.sdpa %d, %d, %d : (tensor<?x8x4xf32>, tensor<?x8x4xf32>, tensor<?x8x4xf32>) -> tensor<?x8x4xf32>
    scf.yield %a, %b : tensor<2x8x4xf32>, tensor<?x8x4xf32>
  }
  return %r#0, %r#1 : tensor<2x8x4xf32>, tensor<?x8x4xf32>
}
