// RUN: attn-opt %s --canonicalize --split-input-file | FileCheck %s

// attn.sdpa canonicalization (AttnCanonicalize.cpp): constant masks that say
// nothing beyond causality become is_causal, masks that keep everything go,
// and an unused masked_value goes. Each rewrite is exact; the negative_ cases
// look close but would change the function.

// CHECK-LABEL: func.func @bool_tril_becomes_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[K:[^:]+]]: tensor<2x4x8xf32>, %[[V:[^:]+]]: tensor<2x4x8xf32>)
// CHECK-NOT: arith.constant
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] {is_causal = true, scale = 1.250000e-01 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
func.func @bool_tril_becomes_causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[true, false, false, false], [true, true, false, false],
                             [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %o = attn.sdpa %q, %k, %v, %m {scale = 0.125 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Causal in every batch slice, and a finite masked_value that stays (is_causal
// uses it exactly as the mask did).

// CHECK-LABEL: func.func @bool_tril_batched_keeps_masked_value
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {is_causal = true, masked_value = -1.000000e+04 : f64}
// CHECK-SAME: (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
func.func @bool_tril_batched_keeps_masked_value(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %m = arith.constant dense<[[[[true, false, false, false], [true, true, false, false],
                               [true, true, true, false], [true, true, true, true]]],
                             [[[true, false, false, false], [true, true, false, false],
                               [true, true, true, false], [true, true, true, true]]]]> : tensor<2x1x4x4xi1>
  %o = attn.sdpa %q, %k, %v, %m {masked_value = -1.0e4 : f64} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x4x4xi1>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @bool_all_true_goes
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
func.func @bool_all_true_goes(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %m = arith.constant dense<true> : tensor<4x4xi1>
  %n = arith.constant dense<[[true, true, true, true]]> : tensor<1x4xi1>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  %o2 = attn.sdpa %q, %k, %v, %n : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x4xi1>) -> tensor<2x4x8xf32>
  return %o, %o2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @additive_zero_goes
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
func.func @additive_zero_goes(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<0.0> : tensor<4x4xf32>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A 0/-inf additive causal mask stays a mask: the chain adds -inf, which
// gives NaN where a score is NaN or +inf, while is_causal would replace the
// score by -inf.
// CHECK-LABEL: func.func @negative_additive_causal_stays
// CHECK: %[[M:.+]] = arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
// CHECK-NOT: is_causal
func.func @negative_additive_causal_stays(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000],
                             [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A masked_value that nothing uses (additive mask, not causal) goes.

// CHECK-LABEL: func.func @unused_masked_value_goes
// CHECK-SAME: %[[M:[^:]+]]: tensor<4x4xf32>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
func.func @unused_masked_value_goes(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %o = attn.sdpa %q, %k, %v, %m {masked_value = -1.0e4 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// tril(diagonal=-1): the diagonal is masked too (row 0 is fully masked):
// not is_causal, the window j <= i - 1.

// CHECK-LABEL: func.func @strict_tril_is_window
// CHECK-NOT: arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {window_right = -1 : i64} :
func.func @strict_tril_is_window(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[false, false, false, false], [true, false, false, false],
                             [true, true, false, false], [true, true, true, false]]> : tensor<4x4xi1>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// One bit flipped (row 3 drops key 2).

// CHECK-LABEL: func.func @negative_one_bit_flipped
// CHECK: %[[M:.+]] = arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
// CHECK-NOT: is_causal
func.func @negative_one_bit_flipped(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[true, false, false, false], [true, true, false, false],
                             [true, true, true, false], [true, true, false, true]]> : tensor<4x4xi1>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A row mask [1, S] broadcast over L is causal for row 0 only: not the same
// size as the scores, not is_causal.

// CHECK-LABEL: func.func @negative_causal_wrong_size
// CHECK: %[[M:.+]] = arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
// CHECK-NOT: is_causal
func.func @negative_causal_wrong_size(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[true, false, false, false]]> : tensor<1x4xi1>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Causal one batch slice out of two.

// CHECK-LABEL: func.func @negative_causal_one_slice
// CHECK: %[[M:.+]] = arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
// CHECK-NOT: is_causal
func.func @negative_causal_one_slice(%q: tensor<2x2x8xf32>, %k: tensor<2x2x8xf32>, %v: tensor<2x2x8xf32>) -> tensor<2x2x8xf32> {
  %m = arith.constant dense<[[[true, false], [true, true]], [[true, true], [true, true]]]> : tensor<2x2x2xi1>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x2xi1>) -> tensor<2x2x8xf32>
  return %o : tensor<2x2x8xf32>
}

// -----

// An additive causal mask on top of is_causal with a finite masked_value: the
// positions above the diagonal get masked_value + (-inf) = -inf; dropping
// the mask would give them -1e4.

// CHECK-LABEL: func.func @negative_additive_causal_finite_masked_value
// CHECK: %[[M:.+]] = arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] {is_causal = true, masked_value = -1.000000e+04 : f64}
func.func @negative_additive_causal_finite_masked_value(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000],
                             [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %o = attn.sdpa %q, %k, %v, %m {is_causal = true, masked_value = -1.0e4 : f64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// An additive "causal" mask with -1e9 instead of -inf is not is_causal (a
// finite value shifts the scores, it does not remove them).

// CHECK-LABEL: func.func @negative_additive_finite_causal_shape
// CHECK: %[[M:.+]] = arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
// CHECK-NOT: is_causal
func.func @negative_additive_finite_causal_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9],
                             [0.0, 0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// All masked (splat false) stays: every row is NaN, which no attribute says.

// CHECK-LABEL: func.func @negative_all_masked
// CHECK: %[[M:.+]] = arith.constant dense<false>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
func.func @negative_all_masked(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<false> : tensor<4x4xi1>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A bool mask next to is_causal that is not itself causal stays.

// CHECK-LABEL: func.func @negative_padding_with_causal
// CHECK-SAME: %[[M:[^:]+]]: tensor<2x1x4xi1>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] {is_causal = true}
func.func @negative_padding_with_causal(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %m: tensor<2x1x4xi1>) -> tensor<2x4x8xf32> {
  %o = attn.sdpa %q, %k, %v, %m {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// A score_mod region that yields its score unchanged goes, with its extra
// operands.
// CHECK-LABEL: func.func @score_mod_identity
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NOT: score_mod
func.func @score_mod_identity(%q: tensor<2x4x8xf32>, %b: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q extras(%b) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f32):
    attn.yield %s : f32
  }
  return %0 : tensor<2x4x8xf32>
}

// -----

// Extra operands the region does not read go.
// CHECK-LABEL: func.func @score_mod_unused_extra
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} extras(%[[C:[^)]+]])
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %{{[^:]+}}: index, %{{[^:]+}}: index, %{{[^:]+}}: index, %{{[^:]+}}: f16):
func.func @score_mod_unused_extra(%q: tensor<2x4x8xf32>, %b: tensor<4x4xf32>, %c: tensor<4xf16>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q extras(%b, %c) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xf32>, tensor<4xf16>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f32, %f: f16):
    %w = arith.extf %f : f16 to f32
    %r = arith.mulf %s, %w : f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x4x8xf32>
}

// -----

// s + e in f32 (e widened exactly) is the additive mask operand.
// CHECK-LABEL: func.func @score_mod_add_is_mask
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[B:[^:]+]]: tensor<2x1x4xf16>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[B]] {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4xf16>) -> tensor<2x4x8xf32>
// CHECK-NOT: score_mod
func.func @score_mod_add_is_mask(%q: tensor<2x4x8xf32>, %b: tensor<2x1x4xf16>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q extras(%b) {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x4xf16>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f16):
    %w = arith.extf %e : f16 to f32
    %r = arith.addf %w, %s : f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x4x8xf32>
}

// -----

// An f16 chain's region rounds the score to f16 before adding: it stays.
// CHECK-LABEL: func.func @negative_score_mod_f16_add
// CHECK: score_mod
func.func @negative_score_mod_f16_add(%q: tensor<2x4x8xf16>, %b: tensor<2x1x4xf16>) -> tensor<2x4x8xf16> {
  %0 = attn.sdpa %q, %q, %q extras(%b) : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x1x4xf16>) -> tensor<2x4x8xf16> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f16):
    %h = arith.truncf %s : f32 to f16
    %a = arith.extf %h : f16 to f32
    %w = arith.extf %e : f16 to f32
    %r = arith.addf %a, %w : f32
    %rh = arith.truncf %r : f32 to f16
    %rw = arith.extf %rh : f16 to f32
    attn.yield %rw : f32
  }
  return %0 : tensor<2x4x8xf16>
}

// -----

// With a mask operand already, the add stays in the region (one mask).
// CHECK-LABEL: func.func @negative_score_mod_add_with_mask
// CHECK: score_mod
func.func @negative_score_mod_add_with_mask(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>, %b: tensor<2x1x4xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q, %m extras(%b) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>, tensor<2x1x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f32):
    %r = arith.addf %s, %e : f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x4x8xf32>
}

// -----

// A constant band (two keys back and the diagonal, a 2-wide window) with an
// existing is_causal: the intersection, as attributes.

// CHECK-LABEL: func.func @bool_band_becomes_window
// CHECK-NOT: arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} {is_causal = true, window_left = 2 : i64} :
func.func @bool_band_becomes_window(%q: tensor<2x5x8xf32>, %k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %m = arith.constant dense<[[true, true, false, false, false], [true, true, true, false, false],
                             [true, true, true, true, false], [false, true, true, true, true],
                             [false, false, true, true, true]]> : tensor<5x5xi1>
  %o = attn.sdpa %q, %k, %v, %m {is_causal = true} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<5x5xi1>) -> tensor<2x5x8xf32>
  return %o : tensor<2x5x8xf32>
}

// -----

// A band whose rows differ in width is no band: the mask stays.

// CHECK-LABEL: func.func @negative_ragged_band
// CHECK: %[[M:.+]] = arith.constant
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[M]] :
// CHECK-NOT: window
func.func @negative_ragged_band(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[true, false, false, false], [true, true, false, false],
                             [false, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// One spelling per band: window_right = 0 is is_causal; a window_right that
// is_causal implies goes; a tighter one replaces is_causal.

// CHECK-LABEL: func.func @band_spelling
// CHECK: attn.sdpa {{.*}} {is_causal = true} :
// CHECK: attn.sdpa {{.*}} {is_causal = true, window_left = 3 : i64} :
// CHECK: attn.sdpa {{.*}} {window_right = -2 : i64} :
func.func @band_spelling(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %0 = attn.sdpa %q, %k, %v {window_right = 0 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = attn.sdpa %q, %k, %v {is_causal = true, window_left = 3 : i64, window_right = 5 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %2 = attn.sdpa %q, %k, %v {is_causal = true, window_right = -2 : i64} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Mask polarity. An inverted boolean mask (`arith.xori %m, true`, either
// operand order) is %m with the other polarity, so no lowering computes the
// inversion; the xori stays only for its other users.
// CHECK-LABEL: func.func @inversion_becomes_drop
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>, %[[N:[^:]+]]: tensor<2x4x4xi1>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[M]] {mask_polarity = #attn.mask_polarity<drop>}
// CHECK: %[[NOTN:.+]] = arith.xori %[[N]]
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[N]] {mask_polarity = #attn.mask_polarity<drop>}
// CHECK: return %{{.+}}, %{{.+}}, %[[NOTN]]
func.func @inversion_becomes_drop(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>, %n: tensor<2x4x4xi1>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xi1>) {
  %t = arith.constant dense<true> : tensor<4x4xi1>
  %keep = arith.xori %m, %t : tensor<4x4xi1>
  %0 = attn.sdpa %q, %q, %q, %keep : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  %t2 = arith.constant dense<true> : tensor<2x4x4xi1>
  %keep2 = arith.xori %t2, %n : tensor<2x4x4xi1>
  %1 = attn.sdpa %q, %q, %q, %keep2 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xi1>) -> tensor<2x4x8xf32>
  return %0, %1, %keep2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xi1>
}

// -----

// The inversion of a drop mask is a keep mask (the default, not printed).
// CHECK-LABEL: func.func @inverted_drop_becomes_keep
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>, %[[M:[^:]+]]: tensor<4x4xi1>)
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]], %[[M]] : (
func.func @inverted_drop_becomes_keep(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>) -> tensor<2x4x8xf32> {
  %t = arith.constant dense<true> : tensor<4x4xi1>
  %x = arith.xori %m, %t : tensor<4x4xi1>
  %0 = attn.sdpa %q, %q, %q, %x {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// An xori with anything but a splat true is no inversion.
// CHECK-LABEL: func.func @negative_xori_not_inversion
// CHECK: %[[X:.+]] = arith.xori
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[X]] : (
func.func @negative_xori_not_inversion(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>, %n: tensor<4x4xi1>) -> tensor<2x4x8xf32> {
  %x = arith.xori %m, %n : tensor<4x4xi1>
  %0 = attn.sdpa %q, %q, %q, %x : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// A constant drop mask (a masked_fill's triu) is read the other way round:
// true above the diagonal is is_causal; the polarity goes with the mask.
// CHECK-LABEL: func.func @drop_triu_becomes_causal
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x4x8xf32>)
// CHECK-NOT: arith.constant
// CHECK: attn.sdpa %[[Q]], %[[Q]], %[[Q]] {is_causal = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
func.func @drop_triu_becomes_causal(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %m = arith.constant dense<[[false, true, true, true], [false, false, true, true],
                             [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %o = attn.sdpa %q, %q, %q, %m {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// An all-false drop mask keeps everything: it goes. An all-true one drops
// everything (NaN rows): it stays.
// CHECK-LABEL: func.func @drop_all_false_goes
// CHECK: %[[ALL:.+]] = arith.constant dense<true>
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}} : (
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %[[ALL]] {mask_polarity = #attn.mask_polarity<drop>}
func.func @drop_all_false_goes(%q: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %none = arith.constant dense<false> : tensor<4x4xi1>
  %0 = attn.sdpa %q, %q, %q, %none {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  %all = arith.constant dense<true> : tensor<4x4xi1>
  %1 = attn.sdpa %q, %q, %q, %all {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32>
  return %0, %1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// A rebuilt op (here: its identity region goes) keeps its attributes, the
// mask polarity and discardable ones included.
// CHECK-LABEL: func.func @rebuild_keeps_attributes
// CHECK: attn.sdpa %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}} {is_causal = true, mask_polarity = #attn.mask_polarity<drop>, my.note = "kept", scale = 5.000000e-01 : f64} : (
// CHECK-NOT: score_mod
func.func @rebuild_keeps_attributes(%q: tensor<2x4x8xf32>, %m: tensor<4x4xi1>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q, %m {is_causal = true, scale = 0.5 : f64, mask_polarity = #attn.mask_polarity<drop>, my.note = "kept"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<4x4xi1>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index):
    attn.yield %s : f32
  }
  return %0 : tensor<2x4x8xf32>
}
