// End-to-end check of a fusion form family (issue 3): attn-run --check runs
// each function fused (default pipeline) and unfused (math lowering) on the
// same seeded random inputs; i1 mask arguments get fully masked rows.
// This file: scale by div, by mul (both orders), on q, split across q and k, absent, splat [1,1,1,1], before/after the mask.
// Every function's trace has exactly one sdpa span and no softmax span
// (attn-run --trace), so these tests fail if fusion silently stops.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// scale by div (scores / sqrt(E)), no mask, f32
// RUN: attn-run %s --entry div_f32 --check --trace %t.div_f32.json | FileCheck %s --check-prefix=DIV_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.div_f32.json
// DIV_F32: result 0: 2x2x37x24xf32 {{.*}} nan=0
// DIV_F32: check: {{.*}} ok
func.func @div_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = arith.constant dense<4.898979485566356> : tensor<f32>
  %t4 = attn.div %t2, %t3 : (tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t5 = attn.softmax %t4 dim(-1) : tensor<2x2x37x37xf32>
  %t6 = attn.matmul %t5, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t6 : tensor<2x2x37x24xf32>
}

// scale by div (scores / sqrt(E)), no mask, f16
// RUN: attn-run %s --entry div_f16 --check --trace %t.div_f16.json | FileCheck %s --check-prefix=DIV_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.div_f16.json
// DIV_F16: result 0: 1x3x65x40xf16 {{.*}} nan=0
// DIV_F16: check: {{.*}} ok
func.func @div_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = arith.constant dense<6.324555320336759> : tensor<f16>
  %t4 = attn.div %t2, %t3 : (tensor<1x3x65x65xf16>, tensor<f16>) -> tensor<1x3x65x65xf16>
  %t5 = attn.softmax %t4 dim(-1) : tensor<1x3x65x65xf16>
  %t6 = attn.matmul %t5, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t6 : tensor<1x3x65x40xf16>
}

// scale by div (scores / sqrt(E)), no mask, bf16
// RUN: attn-run %s --entry div_bf16 --check --trace %t.div_bf16.json | FileCheck %s --check-prefix=DIV_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.div_bf16.json
// DIV_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan=0
// DIV_BF16: check: {{.*}} ok
func.func @div_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = arith.constant dense<8.94427190999916> : tensor<bf16>
  %t4 = attn.div %t2, %t3 : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t5 = attn.softmax %t4 dim(-1) : tensor<2x1x37x37xbf16>
  %t6 = attn.matmul %t5, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t6 : tensor<2x1x37x80xbf16>
}

// scale as mul(c, scores) (constant on the left), where(mask, s, -inf), f32
// RUN: attn-run %s --entry mul_lhs_f32 --check --trace %t.mul_lhs_f32.json | FileCheck %s --check-prefix=MUL_LHS_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.mul_lhs_f32.json
// MUL_LHS_F32: result 0: 2x2x37x24xf32 {{.*}} nan={{[1-9][0-9]*}}
// MUL_LHS_F32: check: {{.*}} ok
func.func @mul_lhs_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t2 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t3 = attn.matmul %q, %t2 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t4 = attn.mul %t1, %t3 : (tensor<f32>, tensor<2x2x37x37xf32>) -> tensor<2x2x37x37xf32>
  %t5 = arith.constant dense<0xFF800000> : tensor<f32>
  %t6 = attn.where %mask, %t4, %t5 : (tensor<37x37xi1>, tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x37x37xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t8 : tensor<2x2x37x24xf32>
}

// scale as mul(c, scores) (constant on the left), where(mask, s, -inf), f16
// RUN: attn-run %s --entry mul_lhs_f16 --check --trace %t.mul_lhs_f16.json | FileCheck %s --check-prefix=MUL_LHS_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.mul_lhs_f16.json
// MUL_LHS_F16: result 0: 1x3x65x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// MUL_LHS_F16: check: {{.*}} ok
func.func @mul_lhs_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t2 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t3 = attn.matmul %q, %t2 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t4 = attn.mul %t1, %t3 : (tensor<f16>, tensor<1x3x65x65xf16>) -> tensor<1x3x65x65xf16>
  %t5 = arith.constant dense<0xFC00> : tensor<f16>
  %t6 = attn.where %mask, %t4, %t5 : (tensor<65x65xi1>, tensor<1x3x65x65xf16>, tensor<f16>) -> tensor<1x3x65x65xf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<1x3x65x65xf16>
  %t8 = attn.matmul %t7, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t8 : tensor<1x3x65x40xf16>
}

// scale as mul(c, scores) (constant on the left), where(mask, s, -inf), bf16
// RUN: attn-run %s --entry mul_lhs_bf16 --check --trace %t.mul_lhs_bf16.json | FileCheck %s --check-prefix=MUL_LHS_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.mul_lhs_bf16.json
// MUL_LHS_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan={{[1-9][0-9]*}}
// MUL_LHS_BF16: check: {{.*}} ok
func.func @mul_lhs_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = arith.constant dense<0.11180339887498948> : tensor<bf16>
  %t2 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t3 = attn.matmul %q, %t2 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t4 = attn.mul %t1, %t3 : (tensor<bf16>, tensor<2x1x37x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t5 = arith.constant dense<0xFF80> : tensor<bf16>
  %t6 = attn.where %mask, %t4, %t5 : (tensor<37x37xi1>, tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x1x37x37xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t8 : tensor<2x1x37x80xbf16>
}

// scale on q before the matmul (q * c), causal constant mask, f32
// RUN: attn-run %s --entry qscale_f32 --check --trace %t.qscale_f32.json | FileCheck %s --check-prefix=QSCALE_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.qscale_f32.json
// QSCALE_F32: result 0: 2x2x37x24xf32 {{.*}} nan=0
// QSCALE_F32: check: {{.*}} ok
func.func @qscale_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32> {
  %t1 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t2 = attn.mul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<f32>) -> tensor<2x2x37x24xf32>
  %t3 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t4 = attn.matmul %t2, %t3 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t5 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<37x37xi1>
  %t6 = attn.masked_fill %t4, %t5 value(0xFFF0000000000000) : (tensor<2x2x37x37xf32>, tensor<37x37xi1>) -> tensor<2x2x37x37xf32>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x37x37xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t8 : tensor<2x2x37x24xf32>
}

// scale on q before the matmul (q * c), causal constant mask, f16
// RUN: attn-run %s --entry qscale_f16 --check --trace %t.qscale_f16.json | FileCheck %s --check-prefix=QSCALE_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.qscale_f16.json
// QSCALE_F16: result 0: 1x3x65x40xf16 {{.*}} nan=0
// QSCALE_F16: check: {{.*}} ok
func.func @qscale_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16> {
  %t1 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t2 = attn.mul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<f16>) -> tensor<1x3x65x40xf16>
  %t3 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t4 = attn.matmul %t2, %t3 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t5 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<65x65xi1>
  %t6 = attn.masked_fill %t4, %t5 value(0xFFF0000000000000) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<1x3x65x65xf16>
  %t8 = attn.matmul %t7, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t8 : tensor<1x3x65x40xf16>
}

// scale on q before the matmul (q * c), causal constant mask, bf16
// RUN: attn-run %s --entry qscale_bf16 --check --trace %t.qscale_bf16.json | FileCheck %s --check-prefix=QSCALE_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.qscale_bf16.json
// QSCALE_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan=0
// QSCALE_BF16: check: {{.*}} ok
func.func @qscale_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16> {
  %t1 = arith.constant dense<0.11180339887498948> : tensor<bf16>
  %t2 = attn.mul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<bf16>) -> tensor<2x1x37x80xbf16>
  %t3 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t4 = attn.matmul %t2, %t3 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t5 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<37x37xi1>
  %t6 = attn.masked_fill %t4, %t5 value(0xFFF0000000000000) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x1x37x37xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t8 : tensor<2x1x37x80xbf16>
}

// scale split across q and k (both * E^-1/4, k before its transpose), f32
// RUN: attn-run %s --entry split_qk_f32 --check --trace %t.split_qk_f32.json | FileCheck %s --check-prefix=SPLIT_QK_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.split_qk_f32.json
// SPLIT_QK_F32: result 0: 2x2x37x24xf32 {{.*}} nan=0
// SPLIT_QK_F32: check: {{.*}} ok
func.func @split_qk_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32> {
  %t1 = arith.constant dense<0.45180100180492244> : tensor<f32>
  %t2 = attn.mul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<f32>) -> tensor<2x2x37x24xf32>
  %t3 = attn.mul %k, %t1 : (tensor<2x2x37x24xf32>, tensor<f32>) -> tensor<2x2x37x24xf32>
  %t4 = attn.transpose %t3 dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t5 = attn.matmul %t2, %t4 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x37x37xf32>
  %t7 = attn.matmul %t6, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t7 : tensor<2x2x37x24xf32>
}

// scale split across q and k (both * E^-1/4, k before its transpose), f16
// RUN: attn-run %s --entry split_qk_f16 --check --trace %t.split_qk_f16.json | FileCheck %s --check-prefix=SPLIT_QK_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.split_qk_f16.json
// SPLIT_QK_F16: result 0: 1x3x65x40xf16 {{.*}} nan=0
// SPLIT_QK_F16: check: {{.*}} ok
func.func @split_qk_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16> {
  %t1 = arith.constant dense<0.3976353643835253> : tensor<f16>
  %t2 = attn.mul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<f16>) -> tensor<1x3x65x40xf16>
  %t3 = attn.mul %k, %t1 : (tensor<1x3x65x40xf16>, tensor<f16>) -> tensor<1x3x65x40xf16>
  %t4 = attn.transpose %t3 dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t5 = attn.matmul %t2, %t4 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<1x3x65x65xf16>
  %t7 = attn.matmul %t6, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t7 : tensor<1x3x65x40xf16>
}

// scale split across q and k (both * E^-1/4, k before its transpose), bf16
// RUN: attn-run %s --entry split_qk_bf16 --check --trace %t.split_qk_bf16.json | FileCheck %s --check-prefix=SPLIT_QK_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.split_qk_bf16.json
// SPLIT_QK_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan=0
// SPLIT_QK_BF16: check: {{.*}} ok
func.func @split_qk_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16> {
  %t1 = arith.constant dense<0.334370152488211> : tensor<bf16>
  %t2 = attn.mul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<bf16>) -> tensor<2x1x37x80xbf16>
  %t3 = attn.mul %k, %t1 : (tensor<2x1x37x80xbf16>, tensor<bf16>) -> tensor<2x1x37x80xbf16>
  %t4 = attn.transpose %t3 dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t5 = attn.matmul %t2, %t4 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x1x37x37xbf16>
  %t7 = attn.matmul %t6, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t7 : tensor<2x1x37x80xbf16>
}

// q / E^1/4 and E^-1/4 * k^T (after the transpose, dims(-1, -2)), masked_fill -inf, f32
// RUN: attn-run %s --entry split_qkt_f32 --check --trace %t.split_qkt_f32.json | FileCheck %s --check-prefix=SPLIT_QKT_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.split_qkt_f32.json
// SPLIT_QKT_F32: result 0: 2x2x37x24xf32 {{.*}} nan={{[1-9][0-9]*}}
// SPLIT_QKT_F32: check: {{.*}} ok
func.func @split_qkt_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = arith.constant dense<2.213363839400643> : tensor<f32>
  %t2 = attn.div %q, %t1 : (tensor<2x2x37x24xf32>, tensor<f32>) -> tensor<2x2x37x24xf32>
  %t3 = attn.transpose %k dims(-1, -2) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t4 = arith.constant dense<0.45180100180492244> : tensor<f32>
  %t5 = attn.mul %t4, %t3 : (tensor<f32>, tensor<2x2x24x37xf32>) -> tensor<2x2x24x37xf32>
  %t6 = attn.matmul %t2, %t5 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t7 = attn.masked_fill %t6, %mask value(0xFFF0000000000000) : (tensor<2x2x37x37xf32>, tensor<37x37xi1>) -> tensor<2x2x37x37xf32>
  %t8 = attn.softmax %t7 dim(-1) : tensor<2x2x37x37xf32>
  %t9 = attn.matmul %t8, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t9 : tensor<2x2x37x24xf32>
}

// q / E^1/4 and E^-1/4 * k^T (after the transpose, dims(-1, -2)), masked_fill -inf, f16
// RUN: attn-run %s --entry split_qkt_f16 --check --trace %t.split_qkt_f16.json | FileCheck %s --check-prefix=SPLIT_QKT_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.split_qkt_f16.json
// SPLIT_QKT_F16: result 0: 1x3x65x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// SPLIT_QKT_F16: check: {{.*}} ok
func.func @split_qkt_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = arith.constant dense<2.514866859365871> : tensor<f16>
  %t2 = attn.div %q, %t1 : (tensor<1x3x65x40xf16>, tensor<f16>) -> tensor<1x3x65x40xf16>
  %t3 = attn.transpose %k dims(-1, -2) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t4 = arith.constant dense<0.3976353643835253> : tensor<f16>
  %t5 = attn.mul %t4, %t3 : (tensor<f16>, tensor<1x3x40x65xf16>) -> tensor<1x3x40x65xf16>
  %t6 = attn.matmul %t2, %t5 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t7 = attn.masked_fill %t6, %mask value(0xFFF0000000000000) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t8 = attn.softmax %t7 dim(-1) : tensor<1x3x65x65xf16>
  %t9 = attn.matmul %t8, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t9 : tensor<1x3x65x40xf16>
}

// q / E^1/4 and E^-1/4 * k^T (after the transpose, dims(-1, -2)), masked_fill -inf, bf16
// RUN: attn-run %s --entry split_qkt_bf16 --check --trace %t.split_qkt_bf16.json | FileCheck %s --check-prefix=SPLIT_QKT_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.split_qkt_bf16.json
// SPLIT_QKT_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan={{[1-9][0-9]*}}
// SPLIT_QKT_BF16: check: {{.*}} ok
func.func @split_qkt_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = arith.constant dense<2.990697562442441> : tensor<bf16>
  %t2 = attn.div %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<bf16>) -> tensor<2x1x37x80xbf16>
  %t3 = attn.transpose %k dims(-1, -2) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t4 = arith.constant dense<0.334370152488211> : tensor<bf16>
  %t5 = attn.mul %t4, %t3 : (tensor<bf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x80x37xbf16>
  %t6 = attn.matmul %t2, %t5 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t7 = attn.masked_fill %t6, %mask value(0xFFF0000000000000) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t8 = attn.softmax %t7 dim(-1) : tensor<2x1x37x37xbf16>
  %t9 = attn.matmul %t8, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t9 : tensor<2x1x37x80xbf16>
}

// no scale, masked_fill with the dtype's lowest (finite: fully masked rows average v), f32
// RUN: attn-run %s --entry noscale_f32 --check --trace %t.noscale_f32.json | FileCheck %s --check-prefix=NOSCALE_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.noscale_f32.json
// NOSCALE_F32: result 0: 2x2x37x24xf32 {{.*}} nan=0
// NOSCALE_F32: check: {{.*}} ok
func.func @noscale_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = attn.masked_fill %t2, %mask value(-3.4028234663852886e38) : (tensor<2x2x37x37xf32>, tensor<37x37xi1>) -> tensor<2x2x37x37xf32>
  %t4 = attn.softmax %t3 dim(-1) : tensor<2x2x37x37xf32>
  %t5 = attn.matmul %t4, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t5 : tensor<2x2x37x24xf32>
}

// no scale, masked_fill with the dtype's lowest (finite: fully masked rows average v), f16
// RUN: attn-run %s --entry noscale_f16 --check --trace %t.noscale_f16.json | FileCheck %s --check-prefix=NOSCALE_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.noscale_f16.json
// NOSCALE_F16: result 0: 1x3x65x40xf16 {{.*}} nan=0
// NOSCALE_F16: check: {{.*}} ok
func.func @noscale_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = attn.masked_fill %t2, %mask value(-65504.0) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t4 = attn.softmax %t3 dim(-1) : tensor<1x3x65x65xf16>
  %t5 = attn.matmul %t4, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t5 : tensor<1x3x65x40xf16>
}

// no scale, masked_fill with the dtype's lowest (finite: fully masked rows average v), bf16
// RUN: attn-run %s --entry noscale_bf16 --check --trace %t.noscale_bf16.json | FileCheck %s --check-prefix=NOSCALE_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.noscale_bf16.json
// NOSCALE_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan=0
// NOSCALE_BF16: check: {{.*}} ok
func.func @noscale_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = attn.masked_fill %t2, %mask value(-3.3895313892515355e38) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t4 = attn.softmax %t3 dim(-1) : tensor<2x1x37x37xbf16>
  %t5 = attn.matmul %t4, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t5 : tensor<2x1x37x80xbf16>
}

// mask before the scale: masked_fill(-1e9) then / sqrt(E) (the fill is scaled too; -1e9 is -inf in f16), f32
// RUN: attn-run %s --entry mask_then_scale_f32 --check --trace %t.mask_then_scale_f32.json | FileCheck %s --check-prefix=MASK_THEN_SCALE_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.mask_then_scale_f32.json
// MASK_THEN_SCALE_F32: result 0: 2x2x37x24xf32 {{.*}} nan=0
// MASK_THEN_SCALE_F32: check: {{.*}} ok
func.func @mask_then_scale_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = attn.masked_fill %t2, %mask value(-1000000000.0) : (tensor<2x2x37x37xf32>, tensor<37x37xi1>) -> tensor<2x2x37x37xf32>
  %t4 = arith.constant dense<4.898979485566356> : tensor<f32>
  %t5 = attn.div %t3, %t4 : (tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x37x37xf32>
  %t7 = attn.matmul %t6, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t7 : tensor<2x2x37x24xf32>
}

// mask before the scale: masked_fill(-1e9) then / sqrt(E) (the fill is scaled too; -1e9 is -inf in f16), f16
// RUN: attn-run %s --entry mask_then_scale_f16 --check --trace %t.mask_then_scale_f16.json | FileCheck %s --check-prefix=MASK_THEN_SCALE_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.mask_then_scale_f16.json
// MASK_THEN_SCALE_F16: result 0: 1x3x65x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// MASK_THEN_SCALE_F16: check: {{.*}} ok
func.func @mask_then_scale_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = attn.masked_fill %t2, %mask value(-1000000000.0) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t4 = arith.constant dense<6.324555320336759> : tensor<f16>
  %t5 = attn.div %t3, %t4 : (tensor<1x3x65x65xf16>, tensor<f16>) -> tensor<1x3x65x65xf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<1x3x65x65xf16>
  %t7 = attn.matmul %t6, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t7 : tensor<1x3x65x40xf16>
}

// mask before the scale: masked_fill(-1e9) then / sqrt(E) (the fill is scaled too; -1e9 is -inf in f16), bf16
// RUN: attn-run %s --entry mask_then_scale_bf16 --check --trace %t.mask_then_scale_bf16.json | FileCheck %s --check-prefix=MASK_THEN_SCALE_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.mask_then_scale_bf16.json
// MASK_THEN_SCALE_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan=0
// MASK_THEN_SCALE_BF16: check: {{.*}} ok
func.func @mask_then_scale_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = attn.masked_fill %t2, %mask value(-1000000000.0) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t4 = arith.constant dense<8.94427190999916> : tensor<bf16>
  %t5 = attn.div %t3, %t4 : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x1x37x37xbf16>
  %t7 = attn.matmul %t6, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t7 : tensor<2x1x37x80xbf16>
}

// scale constant of shape [1,1,1,1] (splat) instead of rank 0, f32
// RUN: attn-run %s --entry scale_1111_f32 --check --trace %t.scale_1111_f32.json | FileCheck %s --check-prefix=SCALE_1111_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.scale_1111_f32.json
// SCALE_1111_F32: result 0: 2x2x37x24xf32 {{.*}} nan=0
// SCALE_1111_F32: check: {{.*}} ok
func.func @scale_1111_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<1x1x1x1xf32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x37x37xf32>, tensor<1x1x1x1xf32>) -> tensor<2x2x37x37xf32>
  %t5 = attn.softmax %t4 dim(-1) : tensor<2x2x37x37xf32>
  %t6 = attn.matmul %t5, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t6 : tensor<2x2x37x24xf32>
}

// scale constant of shape [1,1,1,1] (splat) instead of rank 0, f16
// RUN: attn-run %s --entry scale_1111_f16 --check --trace %t.scale_1111_f16.json | FileCheck %s --check-prefix=SCALE_1111_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.scale_1111_f16.json
// SCALE_1111_F16: result 0: 1x3x65x40xf16 {{.*}} nan=0
// SCALE_1111_F16: check: {{.*}} ok
func.func @scale_1111_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<1x1x1x1xf16>
  %t4 = attn.mul %t2, %t3 : (tensor<1x3x65x65xf16>, tensor<1x1x1x1xf16>) -> tensor<1x3x65x65xf16>
  %t5 = attn.softmax %t4 dim(-1) : tensor<1x3x65x65xf16>
  %t6 = attn.matmul %t5, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t6 : tensor<1x3x65x40xf16>
}

// scale constant of shape [1,1,1,1] (splat) instead of rank 0, bf16
// RUN: attn-run %s --entry scale_1111_bf16 --check --trace %t.scale_1111_bf16.json | FileCheck %s --check-prefix=SCALE_1111_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.scale_1111_bf16.json
// SCALE_1111_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan=0
// SCALE_1111_BF16: check: {{.*}} ok
func.func @scale_1111_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = arith.constant dense<0.11180339887498948> : tensor<1x1x1x1xbf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x1x37x37xbf16>, tensor<1x1x1x1xbf16>) -> tensor<2x1x37x37xbf16>
  %t5 = attn.softmax %t4 dim(-1) : tensor<2x1x37x37xbf16>
  %t6 = attn.matmul %t5, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t6 : tensor<2x1x37x80xbf16>
}
