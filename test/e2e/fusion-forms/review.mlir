// Review findings (wrong fusions, now fixed) as end-to-end checks: fused
// vs unfused on the same random inputs. The chains the attribute form got
// wrong now fuse with a score_mod region that repeats the chain's ops and
// roundings; each trace has one sdpa span and no softmax span.
// IR-level tests: test/Transforms/fuse-sdpa-numerics.mlir and
// fuse-sdpa-score-mod.mlir.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// f16 additive padding mask where(pad, 0, -1e4) (batch 0 fully padded): fused it was a softmax-weighted average where the f16 chain rounds the scores away (uniform); max_abs_err ~0.16 FAIL. Now fused exactly, with a score_mod region.
// RUN: attn-run %s --entry additive_pad_1e4_f16 --check --trace %t.additive_pad_1e4_f16.json | FileCheck %s --check-prefix=ADDITIVE_PAD_1E4_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.additive_pad_1e4_f16.json
// ADDITIVE_PAD_1E4_F16: result 0: 2x2x16x32xf16 {{.*}} nan=0
// ADDITIVE_PAD_1E4_F16: check: {{.*}} ok
func.func @additive_pad_1e4_f16(%q: tensor<2x2x16x32xf16>, %k: tensor<2x2x16x32xf16>, %v: tensor<2x2x16x32xf16>, %pad: tensor<2x1x1x16xi1>) -> tensor<2x2x16x32xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x16x32xf16> -> tensor<2x2x32x16xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x16x32xf16>, tensor<2x2x32x16xf16>) -> tensor<2x2x16x16xf16>
  %t3 = arith.constant dense<0.1767766952966369> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x16x16xf16>, tensor<f16>) -> tensor<2x2x16x16xf16>
  %t5 = arith.constant dense<0.0> : tensor<f16>
  %t6 = arith.constant dense<-10000.0> : tensor<f16>
  %t7 = attn.where %pad, %t5, %t6 : (tensor<2x1x1x16xi1>, tensor<f16>, tensor<f16>) -> tensor<2x1x1x16xf16>
  %t8 = attn.add %t4, %t7 : (tensor<2x2x16x16xf16>, tensor<2x1x1x16xf16>) -> tensor<2x2x16x16xf16>
  %t9 = attn.softmax %t8 dim(-1) : tensor<2x2x16x16xf16>
  %t10 = attn.matmul %t9, %v : (tensor<2x2x16x16xf16>, tensor<2x2x16x32xf16>) -> tensor<2x2x16x32xf16>
  return %t10 : tensor<2x2x16x32xf16>
}

// bf16 additive padding mask where(pad, 0, -1e4) (batch 0 fully padded): fused it was a softmax-weighted average where the bf16 chain rounds the scores away (uniform); max_abs_err ~0.16 FAIL. Now fused exactly, with a score_mod region.
// RUN: attn-run %s --entry additive_pad_1e4_bf16 --check --trace %t.additive_pad_1e4_bf16.json | FileCheck %s --check-prefix=ADDITIVE_PAD_1E4_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.additive_pad_1e4_bf16.json
// ADDITIVE_PAD_1E4_BF16: result 0: 2x2x16x32xbf16 {{.*}} nan=0
// ADDITIVE_PAD_1E4_BF16: check: {{.*}} ok
func.func @additive_pad_1e4_bf16(%q: tensor<2x2x16x32xbf16>, %k: tensor<2x2x16x32xbf16>, %v: tensor<2x2x16x32xbf16>, %pad: tensor<2x1x1x16xi1>) -> tensor<2x2x16x32xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x16x32xbf16> -> tensor<2x2x32x16xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x16x32xbf16>, tensor<2x2x32x16xbf16>) -> tensor<2x2x16x16xbf16>
  %t3 = arith.constant dense<0.1767766952966369> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x16x16xbf16>, tensor<bf16>) -> tensor<2x2x16x16xbf16>
  %t5 = arith.constant dense<0.0> : tensor<bf16>
  %t6 = arith.constant dense<-10000.0> : tensor<bf16>
  %t7 = attn.where %pad, %t5, %t6 : (tensor<2x1x1x16xi1>, tensor<bf16>, tensor<bf16>) -> tensor<2x1x1x16xbf16>
  %t8 = attn.add %t4, %t7 : (tensor<2x2x16x16xbf16>, tensor<2x1x1x16xbf16>) -> tensor<2x2x16x16xbf16>
  %t9 = attn.softmax %t8 dim(-1) : tensor<2x2x16x16xbf16>
  %t10 = attn.matmul %t9, %v : (tensor<2x2x16x16xbf16>, tensor<2x2x16x32xbf16>) -> tensor<2x2x16x32xbf16>
  return %t10 : tensor<2x2x16x32xbf16>
}

// causal constant with fill -1e4, then an additive mask whose row 0 is -inf: NaN rows in the chain; fused (sdpa adds the mask, then replaces the future positions) they were finite averages, 32 mismatches FAIL. Now fused exactly, with a score_mod region.
// RUN: attn-run %s --entry causal_finite_fill_additive_f32 --check --trace %t.causal_finite_fill_additive_f32.json | FileCheck %s --check-prefix=CAUSAL_FINITE_FILL_ADDITIVE_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_finite_fill_additive_f32.json
// CAUSAL_FINITE_FILL_ADDITIVE_F32: result 0: 2x2x11x8xf32 {{.*}} nan={{[1-9][0-9]*}}
// CAUSAL_FINITE_FILL_ADDITIVE_F32: check: {{.*}} ok
func.func @causal_finite_fill_additive_f32(%q: tensor<2x2x11x8xf32>, %k: tensor<2x2x11x8xf32>, %v: tensor<2x2x11x8xf32>) -> tensor<2x2x11x8xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x11x8xf32> -> tensor<2x2x8x11xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x11x8xf32>, tensor<2x2x8x11xf32>) -> tensor<2x2x11x11xf32>
  %t3 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false]]> : tensor<11x11xi1>
  %t4 = attn.masked_fill %t2, %t3 value(-10000.0) : (tensor<2x2x11x11xf32>, tensor<11x11xi1>) -> tensor<2x2x11x11xf32>
  %t5 = arith.constant dense<[[0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000], [-0.190, 0.239, 1.697, -0.137, 0.031, 0.350, -1.261, 0.048, 0.520, 1.172, -1.624], [-0.786, -1.637, 1.239, 0.774, -1.832, 1.929, 1.859, 0.616, 0.462, -1.370, -1.940], [0.114, -1.762, -1.239, -1.032, -1.880, -0.144, -0.238, 1.370, 0.076, 0.561, -0.001], [0.650, -0.171, -0.887, 1.991, 1.983, 1.361, 0.831, -0.739, -1.081, -0.844, -1.719], [1.065, -0.398, 1.386, -0.454, 1.832, 1.389, -1.998, -1.161, 1.641, -0.120, 1.921], [-0.410, -1.708, 0.518, 1.114, -0.921, -1.651, -0.670, 1.856, 1.032, -1.528, -1.014], [-1.596, -1.760, 1.188, -1.289, 0.237, -0.210, -1.237, 0.928, -1.476, 0.575, -1.534], [-0.317, -1.149, -0.921, 1.884, 1.214, -0.783, 1.539, -1.157, -0.423, 1.418, 0.567], [-1.599, 1.957, -1.147, -0.967, 1.091, -0.684, -0.815, -1.706, -1.640, 0.331, -1.028], [0.405, -0.513, -0.187, 1.837, -0.065, 0.298, 1.466, -1.269, -1.383, 1.634, 1.271]]> : tensor<11x11xf32>
  %t6 = attn.add %t4, %t5 : (tensor<2x2x11x11xf32>, tensor<11x11xf32>) -> tensor<2x2x11x11xf32>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x11x11xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x11x11xf32>, tensor<2x2x11x8xf32>) -> tensor<2x2x11x8xf32>
  return %t8 : tensor<2x2x11x8xf32>
}

// the same with fill -inf and a runtime mask: -inf + mask is NaN in the chain
// where the mask holds +inf or NaN, which the attribute form (add, then
// replace) would not reproduce: fused with a score_mod region.
// RUN: attn-run %s --entry causal_neginf_additive_f32 --check --trace %t.causal_neginf_additive_f32.json | FileCheck %s --check-prefix=CAUSAL_NEGINF_ADDITIVE_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_neginf_additive_f32.json
// CAUSAL_NEGINF_ADDITIVE_F32: result 0: 2x2x11x8xf32 {{.*}} nan=0
// CAUSAL_NEGINF_ADDITIVE_F32: check: {{.*}} ok
func.func @causal_neginf_additive_f32(%q: tensor<2x2x11x8xf32>, %k: tensor<2x2x11x8xf32>, %v: tensor<2x2x11x8xf32>, %bias: tensor<11x11xf32>) -> tensor<2x2x11x8xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x11x8xf32> -> tensor<2x2x8x11xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x11x8xf32>, tensor<2x2x8x11xf32>) -> tensor<2x2x11x11xf32>
  %t3 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false]]> : tensor<11x11xi1>
  %t4 = attn.masked_fill %t2, %t3 value(0xFFF0000000000000) : (tensor<2x2x11x11xf32>, tensor<11x11xi1>) -> tensor<2x2x11x11xf32>
  %t5 = attn.add %t4, %bias : (tensor<2x2x11x11xf32>, tensor<11x11xf32>) -> tensor<2x2x11x11xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x11x11xf32>
  %t7 = attn.matmul %t6, %v : (tensor<2x2x11x11xf32>, tensor<2x2x11x8xf32>) -> tensor<2x2x11x8xf32>
  return %t7 : tensor<2x2x11x8xf32>
}

// f16 masked_fill(-65504) then * a rank-0 f64 1.0004: the chain computes -65504 * 1.0004 in f32 and rounds to -inf (NaN rows); the fuser rounded 1.0004 to f16 (1.0) first and kept masked_value -65504 (finite rows), 32 mismatches FAIL. Now masked_value is -inf.
// RUN: attn-run %s --entry fill_lowest_then_f64_scale_f16 --check --trace %t.fill_lowest_then_f64_scale_f16.json | FileCheck %s --check-prefix=FILL_LOWEST_THEN_F64_SCALE_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.fill_lowest_then_f64_scale_f16.json
// FILL_LOWEST_THEN_F64_SCALE_F16: result 0: 1x2x11x8xf16 {{.*}} nan={{[1-9][0-9]*}}
// FILL_LOWEST_THEN_F64_SCALE_F16: check: {{.*}} ok
func.func @fill_lowest_then_f64_scale_f16(%q: tensor<1x2x11x8xf16>, %k: tensor<1x2x11x8xf16>, %v: tensor<1x2x11x8xf16>, %m: tensor<11x11xi1>) -> tensor<1x2x11x8xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x2x11x8xf16> -> tensor<1x2x8x11xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x2x11x8xf16>, tensor<1x2x8x11xf16>) -> tensor<1x2x11x11xf16>
  %t3 = attn.masked_fill %t2, %m value(-65504.0) : (tensor<1x2x11x11xf16>, tensor<11x11xi1>) -> tensor<1x2x11x11xf16>
  %t4 = arith.constant dense<1.0004> : tensor<f64>
  %t5 = attn.mul %t3, %t4 : (tensor<1x2x11x11xf16>, tensor<f64>) -> tensor<1x2x11x11xf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<1x2x11x11xf16>
  %t7 = attn.matmul %t6, %v : (tensor<1x2x11x11xf16>, tensor<1x2x11x8xf16>) -> tensor<1x2x11x8xf16>
  return %t7 : tensor<1x2x11x8xf16>
}

// masked_fill with a tensor<?x?xi1> mask: the pass emitted dense<true> : tensor<?x?xi1> (invalid), attn-run failed to compile it. Now fused exactly, with a score_mod region.
// RUN: attn-run %s --entry dynamic_mask_f32 --shape 3=11x11 --check --trace %t.dynamic_mask_f32.json | FileCheck %s --check-prefix=DYNAMIC_MASK_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dynamic_mask_f32.json
// DYNAMIC_MASK_F32: result 0: 2x2x11x8xf32 {{.*}} nan={{[1-9][0-9]*}}
// DYNAMIC_MASK_F32: check: {{.*}} ok
func.func @dynamic_mask_f32(%q: tensor<2x2x11x8xf32>, %k: tensor<2x2x11x8xf32>, %v: tensor<2x2x11x8xf32>, %m: tensor<?x?xi1>) -> tensor<2x2x11x8xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x11x8xf32> -> tensor<2x2x8x11xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x11x8xf32>, tensor<2x2x8x11xf32>) -> tensor<2x2x11x11xf32>
  %t3 = attn.masked_fill %t2, %m value(0xFFF0000000000000) : (tensor<2x2x11x11xf32>, tensor<?x?xi1>) -> tensor<2x2x11x11xf32>
  %t4 = attn.softmax %t3 dim(-1) : tensor<2x2x11x11xf32>
  %t5 = attn.matmul %t4, %v : (tensor<2x2x11x11xf32>, tensor<2x2x11x8xf32>) -> tensor<2x2x11x8xf32>
  return %t5 : tensor<2x2x11x8xf32>
}
