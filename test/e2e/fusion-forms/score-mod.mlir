// End-to-end check of the chains that fuse with a score_mod region (the
// attribute form cannot express them): attn-run --check runs each function
// fused (one attn.sdpa whose region holds the chain's ops) and unfused (the
// chain, math lowering) on the same seeded inputs; i1 masks get fully masked
// rows, so NaN rows must agree too. Each trace has one sdpa span and no
// softmax span, so these fail if the fusion silently stops.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// Gemma-2 soft-capping 30 * tanh(s / 30), then a boolean mask, f32
// RUN: attn-run %s --entry softcap_f32 --check --trace %t.softcap_f32.json | FileCheck %s --check-prefix=SOFTCAP_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.softcap_f32.json
// SOFTCAP_F32: result 0: 1x2x37x24xf32 {{.*}} nan={{[1-9][0-9]*}}
// SOFTCAP_F32: check: {{.*}} ok
func.func @softcap_f32(%q: tensor<1x2x37x24xf32>, %k: tensor<1x2x41x24xf32>, %v: tensor<1x2x41x24xf32>, %mask: tensor<37x41xi1>) -> tensor<1x2x37x24xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x41x24xf32> -> tensor<1x2x24x41xf32>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x37x24xf32>, tensor<1x2x24x41xf32>) -> tensor<1x2x37x41xf32>
  %cap = arith.constant dense<30.0> : tensor<f32>
  %d = attn.div %s0, %cap : (tensor<1x2x37x41xf32>, tensor<f32>) -> tensor<1x2x37x41xf32>
  %t = attn.tanh %d : tensor<1x2x37x41xf32>
  %c = attn.mul %t, %cap : (tensor<1x2x37x41xf32>, tensor<f32>) -> tensor<1x2x37x41xf32>
  %m = attn.masked_fill %c, %mask value(0xFFF0000000000000) : (tensor<1x2x37x41xf32>, tensor<37x41xi1>) -> tensor<1x2x37x41xf32>
  %p = attn.softmax %m dim(-1) : tensor<1x2x37x41xf32>
  %o = attn.matmul %p, %v : (tensor<1x2x37x41xf32>, tensor<1x2x41x24xf32>) -> tensor<1x2x37x24xf32>
  return %o : tensor<1x2x37x24xf32>
}

// Gemma-2 soft-capping 30 * tanh(s / 30), then a boolean mask, f16
// RUN: attn-run %s --entry softcap_f16 --check --trace %t.softcap_f16.json | FileCheck %s --check-prefix=SOFTCAP_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.softcap_f16.json
// SOFTCAP_F16: result 0: 2x1x33x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// SOFTCAP_F16: check: {{.*}} ok
func.func @softcap_f16(%q: tensor<2x1x33x40xf16>, %k: tensor<2x1x65x40xf16>, %v: tensor<2x1x65x40xf16>, %mask: tensor<33x65xi1>) -> tensor<2x1x33x40xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x1x65x40xf16> -> tensor<2x1x40x65xf16>
  %s0 = attn.matmul %q, %kt : (tensor<2x1x33x40xf16>, tensor<2x1x40x65xf16>) -> tensor<2x1x33x65xf16>
  %cap = arith.constant dense<30.0> : tensor<f16>
  %d = attn.div %s0, %cap : (tensor<2x1x33x65xf16>, tensor<f16>) -> tensor<2x1x33x65xf16>
  %t = attn.tanh %d : tensor<2x1x33x65xf16>
  %c = attn.mul %t, %cap : (tensor<2x1x33x65xf16>, tensor<f16>) -> tensor<2x1x33x65xf16>
  %m = attn.masked_fill %c, %mask value(0xFFF0000000000000) : (tensor<2x1x33x65xf16>, tensor<33x65xi1>) -> tensor<2x1x33x65xf16>
  %p = attn.softmax %m dim(-1) : tensor<2x1x33x65xf16>
  %o = attn.matmul %p, %v : (tensor<2x1x33x65xf16>, tensor<2x1x65x40xf16>) -> tensor<2x1x33x40xf16>
  return %o : tensor<2x1x33x40xf16>
}

// Gemma-2 soft-capping 30 * tanh(s / 30), then a boolean mask, bf16
// RUN: attn-run %s --entry softcap_bf16 --check --trace %t.softcap_bf16.json | FileCheck %s --check-prefix=SOFTCAP_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.softcap_bf16.json
// SOFTCAP_BF16: result 0: 1x3x17x80xbf16 {{.*}} nan={{[1-9][0-9]*}}
// SOFTCAP_BF16: check: {{.*}} ok
func.func @softcap_bf16(%q: tensor<1x3x17x80xbf16>, %k: tensor<1x3x29x80xbf16>, %v: tensor<1x3x29x80xbf16>, %mask: tensor<17x29xi1>) -> tensor<1x3x17x80xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x3x29x80xbf16> -> tensor<1x3x80x29xbf16>
  %s0 = attn.matmul %q, %kt : (tensor<1x3x17x80xbf16>, tensor<1x3x80x29xbf16>) -> tensor<1x3x17x29xbf16>
  %cap = arith.constant dense<30.0> : tensor<bf16>
  %d = attn.div %s0, %cap : (tensor<1x3x17x29xbf16>, tensor<bf16>) -> tensor<1x3x17x29xbf16>
  %t = attn.tanh %d : tensor<1x3x17x29xbf16>
  %c = attn.mul %t, %cap : (tensor<1x3x17x29xbf16>, tensor<bf16>) -> tensor<1x3x17x29xbf16>
  %m = attn.masked_fill %c, %mask value(0xFFF0000000000000) : (tensor<1x3x17x29xbf16>, tensor<17x29xi1>) -> tensor<1x3x17x29xbf16>
  %p = attn.softmax %m dim(-1) : tensor<1x3x17x29xbf16>
  %o = attn.matmul %p, %v : (tensor<1x3x17x29xbf16>, tensor<1x3x29x80xbf16>) -> tensor<1x3x17x80xbf16>
  return %o : tensor<1x3x17x80xbf16>
}

// Hugging Face padding: where(pad, 0, -10000.0) added in f16 (fully padded rows are uniform averages in the chain)
// RUN: attn-run %s --entry padding_f16_16x16 --check --trace %t.padding_f16_16x16.json | FileCheck %s --check-prefix=PADDING_F16_16X16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.padding_f16_16x16.json
// PADDING_F16_16X16: result 0: 2x2x16x32xf16 {{.*}} nan=0
// PADDING_F16_16X16: check: {{.*}} ok
func.func @padding_f16_16x16(%q: tensor<2x2x16x32xf16>, %k: tensor<2x2x16x32xf16>, %v: tensor<2x2x16x32xf16>, %pad: tensor<2x1x1x16xi1>) -> tensor<2x2x16x32xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x16x32xf16> -> tensor<2x2x32x16xf16>
  %s0 = attn.matmul %q, %kt : (tensor<2x2x16x32xf16>, tensor<2x2x32x16xf16>) -> tensor<2x2x16x16xf16>
  %zero = arith.constant dense<0.0> : tensor<f16>
  %neg = arith.constant dense<-10000.0> : tensor<f16>
  %bias = attn.where %pad, %zero, %neg : (tensor<2x1x1x16xi1>, tensor<f16>, tensor<f16>) -> tensor<2x1x1x16xf16>
  %sc = arith.constant dense<0.17677669529663687> : tensor<f16>
  %ss = attn.mul %s0, %sc : (tensor<2x2x16x16xf16>, tensor<f16>) -> tensor<2x2x16x16xf16>
  %m = attn.add %ss, %bias : (tensor<2x2x16x16xf16>, tensor<2x1x1x16xf16>) -> tensor<2x2x16x16xf16>
  %p = attn.softmax %m dim(-1) : tensor<2x2x16x16xf16>
  %o = attn.matmul %p, %v : (tensor<2x2x16x16xf16>, tensor<2x2x16x32xf16>) -> tensor<2x2x16x32xf16>
  return %o : tensor<2x2x16x32xf16>
}

// Hugging Face padding: where(pad, 0, -10000.0) added in bf16 (fully padded rows are uniform averages in the chain)
// RUN: attn-run %s --entry padding_bf16_16x16 --check --trace %t.padding_bf16_16x16.json | FileCheck %s --check-prefix=PADDING_BF16_16X16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.padding_bf16_16x16.json
// PADDING_BF16_16X16: result 0: 2x2x16x32xbf16 {{.*}} nan=0
// PADDING_BF16_16X16: check: {{.*}} ok
func.func @padding_bf16_16x16(%q: tensor<2x2x16x32xbf16>, %k: tensor<2x2x16x32xbf16>, %v: tensor<2x2x16x32xbf16>, %pad: tensor<2x1x1x16xi1>) -> tensor<2x2x16x32xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x16x32xbf16> -> tensor<2x2x32x16xbf16>
  %s0 = attn.matmul %q, %kt : (tensor<2x2x16x32xbf16>, tensor<2x2x32x16xbf16>) -> tensor<2x2x16x16xbf16>
  %zero = arith.constant dense<0.0> : tensor<bf16>
  %neg = arith.constant dense<-10000.0> : tensor<bf16>
  %bias = attn.where %pad, %zero, %neg : (tensor<2x1x1x16xi1>, tensor<bf16>, tensor<bf16>) -> tensor<2x1x1x16xbf16>
  %sc = arith.constant dense<0.17677669529663687> : tensor<bf16>
  %ss = attn.mul %s0, %sc : (tensor<2x2x16x16xbf16>, tensor<bf16>) -> tensor<2x2x16x16xbf16>
  %m = attn.add %ss, %bias : (tensor<2x2x16x16xbf16>, tensor<2x1x1x16xbf16>) -> tensor<2x2x16x16xbf16>
  %p = attn.softmax %m dim(-1) : tensor<2x2x16x16xbf16>
  %o = attn.matmul %p, %v : (tensor<2x2x16x16xbf16>, tensor<2x2x16x32xbf16>) -> tensor<2x2x16x32xbf16>
  return %o : tensor<2x2x16x32xbf16>
}

// Hugging Face padding: where(pad, 0, -65504.0) added in f16 (fully padded rows are uniform averages in the chain)
// RUN: attn-run %s --entry padding_f16_19x23 --check --trace %t.padding_f16_19x23.json | FileCheck %s --check-prefix=PADDING_F16_19X23
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.padding_f16_19x23.json
// PADDING_F16_19X23: result 0: 2x3x19x40xf16 {{.*}} nan=0
// PADDING_F16_19X23: check: {{.*}} ok
func.func @padding_f16_19x23(%q: tensor<2x3x19x40xf16>, %k: tensor<2x3x23x40xf16>, %v: tensor<2x3x23x40xf16>, %pad: tensor<2x1x1x23xi1>) -> tensor<2x3x19x40xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x3x23x40xf16> -> tensor<2x3x40x23xf16>
  %s0 = attn.matmul %q, %kt : (tensor<2x3x19x40xf16>, tensor<2x3x40x23xf16>) -> tensor<2x3x19x23xf16>
  %zero = arith.constant dense<0.0> : tensor<f16>
  %neg = arith.constant dense<-65504.0> : tensor<f16>
  %bias = attn.where %pad, %zero, %neg : (tensor<2x1x1x23xi1>, tensor<f16>, tensor<f16>) -> tensor<2x1x1x23xf16>
  %sc = arith.constant dense<0.15811388300841897> : tensor<f16>
  %ss = attn.mul %s0, %sc : (tensor<2x3x19x23xf16>, tensor<f16>) -> tensor<2x3x19x23xf16>
  %m = attn.add %ss, %bias : (tensor<2x3x19x23xf16>, tensor<2x1x1x23xf16>) -> tensor<2x3x19x23xf16>
  %p = attn.softmax %m dim(-1) : tensor<2x3x19x23xf16>
  %o = attn.matmul %p, %v : (tensor<2x3x19x23xf16>, tensor<2x3x23x40xf16>) -> tensor<2x3x19x40xf16>
  return %o : tensor<2x3x19x40xf16>
}

// a causal -inf fill, then a runtime additive mask (GPT-2 style)
// RUN: attn-run %s --entry causal_then_runtime_additive_f32 --check --trace %t.causal_then_runtime_additive_f32.json | FileCheck %s --check-prefix=CAUSAL_THEN_RUNTIME_ADDITIVE_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_then_runtime_additive_f32.json
// CAUSAL_THEN_RUNTIME_ADDITIVE_F32: result 0: 2x2x21x16xf32 {{.*}} nan=0
// CAUSAL_THEN_RUNTIME_ADDITIVE_F32: check: {{.*}} ok
func.func @causal_then_runtime_additive_f32(%q: tensor<2x2x21x16xf32>, %k: tensor<2x2x21x16xf32>, %v: tensor<2x2x21x16xf32>, %bias: tensor<2x1x1x21xf32>) -> tensor<2x2x21x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x21x16xf32> -> tensor<2x2x16x21xf32>
  %s0 = attn.matmul %q, %kt : (tensor<2x2x21x16xf32>, tensor<2x2x16x21xf32>) -> tensor<2x2x21x21xf32>
  %tri = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<21x21xi1>
  %f = attn.masked_fill %s0, %tri value(0xFFF0000000000000) : (tensor<2x2x21x21xf32>, tensor<21x21xi1>) -> tensor<2x2x21x21xf32>
  %m = attn.add %f, %bias : (tensor<2x2x21x21xf32>, tensor<2x1x1x21xf32>) -> tensor<2x2x21x21xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x21x21xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x21x21xf32>, tensor<2x2x21x16xf32>) -> tensor<2x2x21x16xf32>
  return %o : tensor<2x2x21x16xf32>
}

// a per-head bias [1, H, L, S] after the scale, then a boolean mask with a finite fill
// RUN: attn-run %s --entry bias_and_bool_mask_f32 --check --trace %t.bias_and_bool_mask_f32.json | FileCheck %s --check-prefix=BIAS_AND_BOOL_MASK_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.bias_and_bool_mask_f32.json
// BIAS_AND_BOOL_MASK_F32: result 0: 2x2x21x16xf32 {{.*}} nan=0
// BIAS_AND_BOOL_MASK_F32: check: {{.*}} ok
func.func @bias_and_bool_mask_f32(%q: tensor<2x2x21x16xf32>, %k: tensor<2x2x21x16xf32>, %v: tensor<2x2x21x16xf32>, %bias: tensor<1x2x21x21xf32>, %mask: tensor<2x1x1x21xi1>) -> tensor<2x2x21x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x21x16xf32> -> tensor<2x2x16x21xf32>
  %s0 = attn.matmul %q, %kt : (tensor<2x2x21x16xf32>, tensor<2x2x16x21xf32>) -> tensor<2x2x21x21xf32>
  %sc = arith.constant dense<0.25> : tensor<f32>
  %ss = attn.mul %s0, %sc : (tensor<2x2x21x21xf32>, tensor<f32>) -> tensor<2x2x21x21xf32>
  %b = attn.add %ss, %bias : (tensor<2x2x21x21xf32>, tensor<1x2x21x21xf32>) -> tensor<2x2x21x21xf32>
  %m = attn.masked_fill %b, %mask value(-1.0e9) : (tensor<2x2x21x21xf32>, tensor<2x1x1x21xi1>) -> tensor<2x2x21x21xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x21x21xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x21x21xf32>, tensor<2x2x21x16xf32>) -> tensor<2x2x21x16xf32>
  return %o : tensor<2x2x21x16xf32>
}

// the scores read twice: s * (s / (1 + |s|)), f16
// RUN: attn-run %s --entry scores_read_twice_f16 --check --trace %t.scores_read_twice_f16.json | FileCheck %s --check-prefix=SCORES_READ_TWICE_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.scores_read_twice_f16.json
// SCORES_READ_TWICE_F16: result 0: 1x2x13x8xf16 {{.*}} nan=0
// SCORES_READ_TWICE_F16: check: {{.*}} ok
func.func @scores_read_twice_f16(%q: tensor<1x2x13x8xf16>, %k: tensor<1x2x27x8xf16>, %v: tensor<1x2x27x8xf16>) -> tensor<1x2x13x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x27x8xf16> -> tensor<1x2x8x27xf16>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x13x8xf16>, tensor<1x2x8x27xf16>) -> tensor<1x2x13x27xf16>
  %a = attn.abs %s0 : tensor<1x2x13x27xf16>
  %one = arith.constant dense<1.0> : tensor<f16>
  %d = attn.add %a, %one : (tensor<1x2x13x27xf16>, tensor<f16>) -> tensor<1x2x13x27xf16>
  %g = attn.div %s0, %d : (tensor<1x2x13x27xf16>, tensor<1x2x13x27xf16>) -> tensor<1x2x13x27xf16>
  %m = attn.mul %s0, %g : (tensor<1x2x13x27xf16>, tensor<1x2x13x27xf16>) -> tensor<1x2x13x27xf16>
  %p = attn.softmax %m dim(-1) : tensor<1x2x13x27xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x13x27xf16>, tensor<1x2x27x8xf16>) -> tensor<1x2x13x8xf16>
  return %o : tensor<1x2x13x8xf16>
}

// a mask computed from the scores (s < -1 masked out)
// RUN: attn-run %s --entry mask_from_scores_f32 --check --trace %t.mask_from_scores_f32.json | FileCheck %s --check-prefix=MASK_FROM_SCORES_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.mask_from_scores_f32.json
// MASK_FROM_SCORES_F32: result 0: 1x2x13x8xf32 {{.*}} nan=0
// MASK_FROM_SCORES_F32: check: {{.*}} ok
func.func @mask_from_scores_f32(%q: tensor<1x2x13x8xf32>, %k: tensor<1x2x27x8xf32>, %v: tensor<1x2x27x8xf32>) -> tensor<1x2x13x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x27x8xf32> -> tensor<1x2x8x27xf32>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x13x8xf32>, tensor<1x2x8x27xf32>) -> tensor<1x2x13x27xf32>
  %t = arith.constant dense<-1.0> : tensor<f32>
  %low = attn.cmp lt, %s0, %t : (tensor<1x2x13x27xf32>, tensor<f32>) -> tensor<1x2x13x27xi1>
  %m = attn.masked_fill %s0, %low value(0xFFF0000000000000) : (tensor<1x2x13x27xf32>, tensor<1x2x13x27xi1>) -> tensor<1x2x13x27xf32>
  %p = attn.softmax %m dim(-1) : tensor<1x2x13x27xf32>
  %o = attn.matmul %p, %v : (tensor<1x2x13x27xf32>, tensor<1x2x27x8xf32>) -> tensor<1x2x13x8xf32>
  return %o : tensor<1x2x13x8xf32>
}

// scores clamped to [-3, 2] with maximum/minimum, bf16
// RUN: attn-run %s --entry clamp_bf16 --check --trace %t.clamp_bf16.json | FileCheck %s --check-prefix=CLAMP_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.clamp_bf16.json
// CLAMP_BF16: result 0: 2x1x9x16xbf16 {{.*}} nan=0
// CLAMP_BF16: check: {{.*}} ok
func.func @clamp_bf16(%q: tensor<2x1x9x16xbf16>, %k: tensor<2x1x33x16xbf16>, %v: tensor<2x1x33x16xbf16>) -> tensor<2x1x9x16xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x1x33x16xbf16> -> tensor<2x1x16x33xbf16>
  %s0 = attn.matmul %q, %kt : (tensor<2x1x9x16xbf16>, tensor<2x1x16x33xbf16>) -> tensor<2x1x9x33xbf16>
  %mx = arith.constant dense<2.0> : tensor<bf16>
  %mn = arith.constant dense<-3.0> : tensor<bf16>
  %a = attn.minimum %s0, %mx : (tensor<2x1x9x33xbf16>, tensor<bf16>) -> tensor<2x1x9x33xbf16>
  %m = attn.maximum %a, %mn : (tensor<2x1x9x33xbf16>, tensor<bf16>) -> tensor<2x1x9x33xbf16>
  %p = attn.softmax %m dim(-1) : tensor<2x1x9x33xbf16>
  %o = attn.matmul %p, %v : (tensor<2x1x9x33xbf16>, tensor<2x1x33x16xbf16>) -> tensor<2x1x9x16xbf16>
  return %o : tensor<2x1x9x16xbf16>
}

// s - exp(-s) (neg, exp, sub)
// RUN: attn-run %s --entry neg_exp_f32 --check --trace %t.neg_exp_f32.json | FileCheck %s --check-prefix=NEG_EXP_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.neg_exp_f32.json
// NEG_EXP_F32: result 0: 1x1x11x4xf32 {{.*}} nan=0
// NEG_EXP_F32: check: {{.*}} ok
func.func @neg_exp_f32(%q: tensor<1x1x11x4xf32>, %k: tensor<1x1x12x4xf32>, %v: tensor<1x1x12x4xf32>) -> tensor<1x1x11x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x1x12x4xf32> -> tensor<1x1x4x12xf32>
  %s0 = attn.matmul %q, %kt : (tensor<1x1x11x4xf32>, tensor<1x1x4x12xf32>) -> tensor<1x1x11x12xf32>
  %n = attn.neg %s0 : tensor<1x1x11x12xf32>
  %e = attn.exp %n : tensor<1x1x11x12xf32>
  %m = attn.sub %s0, %e : (tensor<1x1x11x12xf32>, tensor<1x1x11x12xf32>) -> tensor<1x1x11x12xf32>
  %p = attn.softmax %m dim(-1) : tensor<1x1x11x12xf32>
  %o = attn.matmul %p, %v : (tensor<1x1x11x12xf32>, tensor<1x1x12x4xf32>) -> tensor<1x1x11x4xf32>
  return %o : tensor<1x1x11x4xf32>
}

// dynamic batch and sequence dims: tanh cap plus a runtime additive mask
// RUN: attn-run %s --entry dynamic_softcap_bias --check --shape 0=3x2x19x16 --shape 1=3x2x19x16 --shape 2=3x2x19x16 --shape 3=3x1x1x19 --trace %t.dynamic_softcap_bias.json | FileCheck %s --check-prefix=DYNAMIC_SOFTCAP_BIAS
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dynamic_softcap_bias.json
// DYNAMIC_SOFTCAP_BIAS: result 0: 3x2x19x16xf32 {{.*}} nan=0
// DYNAMIC_SOFTCAP_BIAS: check: {{.*}} ok
func.func @dynamic_softcap_bias(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %bias: tensor<?x1x1x?xf32>) -> tensor<?x2x?x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<?x2x?x16xf32> -> tensor<?x2x16x?xf32>
  %s0 = attn.matmul %q, %kt : (tensor<?x2x?x16xf32>, tensor<?x2x16x?xf32>) -> tensor<?x2x?x?xf32>
  %cap = arith.constant dense<20.0> : tensor<f32>
  %d = attn.div %s0, %cap : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %t = attn.tanh %d : tensor<?x2x?x?xf32>
  %m = attn.add %t, %bias : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
  %p = attn.softmax %m dim(-1) : tensor<?x2x?x?xf32>
  %o = attn.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %o : tensor<?x2x?x16xf32>
}

// softmax in f32 -> dropout(train, seed) -> cast to f16 -> matmul
// RUN: attn-run %s --entry dropout_cast_back_f16 --check --trace %t.dropout_cast_back_f16.json | FileCheck %s --check-prefix=DROPOUT_CAST_BACK_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dropout_cast_back_f16.json
// DROPOUT_CAST_BACK_F16: result 0: 2x2x15x8xf16 {{.*}} nan={{[1-9][0-9]*}}
// DROPOUT_CAST_BACK_F16: check: {{.*}} ok
func.func @dropout_cast_back_f16(%q: tensor<2x2x15x8xf16>, %k: tensor<2x2x15x8xf16>, %v: tensor<2x2x15x8xf16>, %mask: tensor<15x15xi1>) -> tensor<2x2x15x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x15x8xf16> -> tensor<2x2x8x15xf16>
  %s0 = attn.matmul %q, %kt : (tensor<2x2x15x8xf16>, tensor<2x2x8x15xf16>) -> tensor<2x2x15x15xf16>
  %up = attn.cast %s0 : tensor<2x2x15x15xf16> -> tensor<2x2x15x15xf32>
  %m = attn.masked_fill %up, %mask value(0xFFF0000000000000) : (tensor<2x2x15x15xf32>, tensor<15x15xi1>) -> tensor<2x2x15x15xf32>
  %p = attn.softmax %m dim(-1) : tensor<2x2x15x15xf32>
  %d = attn.dropout %p p(0.2) train(true) {seed = 11 : i64} : tensor<2x2x15x15xf32>
  %p16 = attn.cast %d : tensor<2x2x15x15xf32> -> tensor<2x2x15x15xf16>
  %o = attn.matmul %p16, %v : (tensor<2x2x15x15xf16>, tensor<2x2x15x8xf16>) -> tensor<2x2x15x8xf16>
  return %o : tensor<2x2x15x8xf16>
}
