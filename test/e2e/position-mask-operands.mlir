// Masks computed from positions over small tensors, as the Python exporter
// writes whole Hugging Face models, with run-time (`?`) batch and sequence
// dims at two sizes: attn-run --check runs each function fused (the band
// computed per tile from f64 positions, the small tensors read as extra
// operands) and unfused (every op on its own, the dynamic attn.iota
// materialised), on the same seeded inputs (boolean masks with fully
// masked rows).

// Eager attention with a padding mask and a causal band, distributed over
// the terms: where(j <= i, s + where(pad, 0, min), s + min).
// RUN: attn-run %s --entry eager_band --check --shape 0=2x4x9x16 --shape 1=2x4x9x16 --shape 2=2x4x9x16 --shape 3=2x1x1x9 | FileCheck %s --check-prefix=EAGER_A
// RUN: attn-run %s --entry eager_band --check --shape 0=3x4x33x16 --shape 1=3x4x33x16 --shape 2=3x4x33x16 --shape 3=3x1x1x33 | FileCheck %s --check-prefix=EAGER_B
// EAGER_A: result 0: 2x4x9x16xf32
// EAGER_A: check: {{.*}} ok
// EAGER_B: result 0: 3x4x33x16xf32
// EAGER_B: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=EAGER_IR
// EAGER_IR-LABEL: func.func @eager_band(
// EAGER_IR-NOT: attn.softmax
// EAGER_IR: attn.sdpa {{.*}} extras(%{{[^)]+}}) {{.*}}tensor<?x1x1x?xf32>) -> tensor<?x4x?x16xf32> score_mod
func.func @eager_band(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %pad: tensor<?x1x1x?xi1>) -> tensor<?x4x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<?x4x?x16xf32>
  %sl = tensor.dim %k, %c2 : tensor<?x4x?x16xf32>
  %kt = attn.transpose %k dims(-2, -1) : tensor<?x4x?x16xf32> -> tensor<?x4x16x?xf32>
  %s0 = attn.matmul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %s = attn.mul %s0, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %pm = attn.where %pad, %zero, %min : (tensor<?x1x1x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x1x1x?xf32>
  %kept = attn.add %s, %pm : (tensor<?x4x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x?x?xf32>
  %out = attn.add %s, %min : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %i = attn.iota 0 (%l) : tensor<?x1xf64>
  %j = attn.iota 1 (%sl) : tensor<1x?xf64>
  %keep = attn.cmp le, %j, %i : (tensor<1x?xf64>, tensor<?x1xf64>) -> tensor<?x?xi1>
  %m = attn.where %keep, %kept, %out : (tensor<?x?xi1>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %p = attn.softmax %m dim(-1) : tensor<?x4x?x?xf32>
  %o = attn.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// Falcon's ALiBi mask for F.scaled_dot_product_attention, a sliding window
// of 5 keys: the [B, H, 1, S] bias inside the band, the lowest float
// outside, written as attn.sdpa's additive mask; the fusion pass turns it
// into a region reading the bias.
// RUN: attn-run %s --entry alibi_window_sdpa --check --shape 0=2x4x7x16 --shape 1=2x4x7x16 --shape 2=2x4x7x16 --shape 3=2x4x1x7 | FileCheck %s --check-prefix=ALIBI_A
// RUN: attn-run %s --entry alibi_window_sdpa --check --shape 0=1x4x40x16 --shape 1=1x4x40x16 --shape 2=1x4x40x16 --shape 3=1x4x1x40 | FileCheck %s --check-prefix=ALIBI_B
// ALIBI_A: result 0: 2x4x7x16xf32
// ALIBI_A: check: {{.*}} ok
// ALIBI_B: result 0: 1x4x40x16xf32
// ALIBI_B: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=ALIBI_IR
// ALIBI_IR-LABEL: func.func @alibi_window_sdpa(
// ALIBI_IR: attn.sdpa {{.*}} extras(%{{[^)]+}}) {{.*}}tensor<?x4x1x?xf32>) -> tensor<?x4x?x16xf32> score_mod
func.func @alibi_window_sdpa(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>, %bias: tensor<?x4x1x?xf32>) -> tensor<?x4x?x16xf32> {
  %c2 = arith.constant 2 : index
  %l = tensor.dim %q, %c2 : tensor<?x4x?x16xf32>
  %sl = tensor.dim %k, %c2 : tensor<?x4x?x16xf32>
  %i = attn.iota 0 (%l) : tensor<?x1xf64>
  %j = attn.iota 1 (%sl) : tensor<1x?xf64>
  %keep = attn.cmp le, %j, %i : (tensor<1x?xf64>, tensor<?x1xf64>) -> tensor<?x?xi1>
  %w = arith.constant dense<5.0> : tensor<f64>
  %lo = attn.sub %i, %w : (tensor<?x1xf64>, tensor<f64>) -> tensor<?x1xf64>
  %recent = attn.cmp gt, %j, %lo : (tensor<1x?xf64>, tensor<?x1xf64>) -> tensor<?x?xi1>
  %min = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %m1 = attn.where %recent, %bias, %min : (tensor<?x?xi1>, tensor<?x4x1x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %m = attn.where %keep, %m1, %min : (tensor<?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %r = attn.sdpa %q, %k, %v, %m {safe_softmax = true, scale = 0.25 : f64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x16xf32>
  return %r : tensor<?x4x?x16xf32>
}
