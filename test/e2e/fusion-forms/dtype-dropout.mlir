// End-to-end check of a fusion form family (issue 3): attn-run --check runs
// each function fused (default pipeline) and unfused (math lowering) on the
// same seeded random inputs; i1 mask arguments get fully masked rows.
// This file: f16/bf16 softmax upcast; dropout in eval mode or with p = 0 (training dropout: dropout-train.mlir).
// Every function's trace has exactly one sdpa span and no softmax span
// (attn-run --trace), so these tests fail if fusion silently stops.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// softmax upcast .float().softmax(-1).type_as(q), f16
// RUN: attn-run %s --entry upcast_f16 --check --trace %t.upcast_f16.json | FileCheck %s --check-prefix=UPCAST_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.upcast_f16.json
// UPCAST_F16: result 0: 1x3x65x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// UPCAST_F16: check: {{.*}} ok
func.func @upcast_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<1x3x65x65xf16>, tensor<f16>) -> tensor<1x3x65x65xf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t6 = attn.cast %t5 : tensor<1x3x65x65xf16> -> tensor<1x3x65x65xf32>
  %t7 = attn.softmax %t6 dim(-1) : tensor<1x3x65x65xf32>
  %t8 = attn.cast %t7 : tensor<1x3x65x65xf32> -> tensor<1x3x65x65xf16>
  %t9 = attn.matmul %t8, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t9 : tensor<1x3x65x40xf16>
}

// softmax upcast .float().softmax(-1).type_as(q), bf16
// RUN: attn-run %s --entry upcast_bf16 --check --trace %t.upcast_bf16.json | FileCheck %s --check-prefix=UPCAST_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.upcast_bf16.json
// UPCAST_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan={{[1-9][0-9]*}}
// UPCAST_BF16: check: {{.*}} ok
func.func @upcast_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = arith.constant dense<0.11180339887498948> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t6 = attn.cast %t5 : tensor<2x1x37x37xbf16> -> tensor<2x1x37x37xf32>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x1x37x37xf32>
  %t8 = attn.cast %t7 : tensor<2x1x37x37xf32> -> tensor<2x1x37x37xbf16>
  %t9 = attn.matmul %t8, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t9 : tensor<2x1x37x80xbf16>
}

// dropout p=0.1 train=False on the weights (removed), f32
// RUN: attn-run %s --entry dropout_eval_f32 --check --trace %t.dropout_eval_f32.json | FileCheck %s --check-prefix=DROPOUT_EVAL_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dropout_eval_f32.json
// DROPOUT_EVAL_F32: result 0: 2x2x37x24xf32 {{.*}} nan={{[1-9][0-9]*}}
// DROPOUT_EVAL_F32: check: {{.*}} ok
func.func @dropout_eval_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<2x2x37x37xf32>, tensor<37x37xi1>) -> tensor<2x2x37x37xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x37x37xf32>
  %t7 = attn.dropout %t6 p(0.1) train(false) : tensor<2x2x37x37xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t8 : tensor<2x2x37x24xf32>
}

// dropout p=0.1 train=False on the weights (removed), f16
// RUN: attn-run %s --entry dropout_eval_f16 --check --trace %t.dropout_eval_f16.json | FileCheck %s --check-prefix=DROPOUT_EVAL_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dropout_eval_f16.json
// DROPOUT_EVAL_F16: result 0: 1x3x65x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// DROPOUT_EVAL_F16: check: {{.*}} ok
func.func @dropout_eval_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<1x3x65x65xf16>, tensor<f16>) -> tensor<1x3x65x65xf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<1x3x65x65xf16>
  %t7 = attn.dropout %t6 p(0.1) train(false) : tensor<1x3x65x65xf16>
  %t8 = attn.matmul %t7, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t8 : tensor<1x3x65x40xf16>
}

// dropout p=0.1 train=False on the weights (removed), bf16
// RUN: attn-run %s --entry dropout_eval_bf16 --check --trace %t.dropout_eval_bf16.json | FileCheck %s --check-prefix=DROPOUT_EVAL_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dropout_eval_bf16.json
// DROPOUT_EVAL_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan={{[1-9][0-9]*}}
// DROPOUT_EVAL_BF16: check: {{.*}} ok
func.func @dropout_eval_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = arith.constant dense<0.11180339887498948> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x1x37x37xbf16>
  %t7 = attn.dropout %t6 p(0.1) train(false) : tensor<2x1x37x37xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t8 : tensor<2x1x37x80xbf16>
}

// dropout p=0.0 train=True on the weights (removed), f32
// RUN: attn-run %s --entry dropout_p0_f32 --check --trace %t.dropout_p0_f32.json | FileCheck %s --check-prefix=DROPOUT_P0_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dropout_p0_f32.json
// DROPOUT_P0_F32: result 0: 2x2x37x24xf32 {{.*}} nan={{[1-9][0-9]*}}
// DROPOUT_P0_F32: check: {{.*}} ok
func.func @dropout_p0_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<2x2x37x37xf32>, tensor<37x37xi1>) -> tensor<2x2x37x37xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x37x37xf32>
  %t7 = attn.dropout %t6 p(0.0) train(true) : tensor<2x2x37x37xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t8 : tensor<2x2x37x24xf32>
}

// dropout p=0.0 train=True on the weights (removed), f16
// RUN: attn-run %s --entry dropout_p0_f16 --check --trace %t.dropout_p0_f16.json | FileCheck %s --check-prefix=DROPOUT_P0_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dropout_p0_f16.json
// DROPOUT_P0_F16: result 0: 1x3x65x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// DROPOUT_P0_F16: check: {{.*}} ok
func.func @dropout_p0_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<1x3x65x65xf16>, tensor<f16>) -> tensor<1x3x65x65xf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<1x3x65x65xf16>
  %t7 = attn.dropout %t6 p(0.0) train(true) : tensor<1x3x65x65xf16>
  %t8 = attn.matmul %t7, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t8 : tensor<1x3x65x40xf16>
}

// dropout p=0.0 train=True on the weights (removed), bf16
// RUN: attn-run %s --entry dropout_p0_bf16 --check --trace %t.dropout_p0_bf16.json | FileCheck %s --check-prefix=DROPOUT_P0_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.dropout_p0_bf16.json
// DROPOUT_P0_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan={{[1-9][0-9]*}}
// DROPOUT_P0_BF16: check: {{.*}} ok
func.func @dropout_p0_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = arith.constant dense<0.11180339887498948> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x1x37x37xbf16>
  %t7 = attn.dropout %t6 p(0.0) train(true) : tensor<2x1x37x37xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t8 : tensor<2x1x37x80xbf16>
}
