// End-to-end check of training dropout with seeds (the hardening issue's
// wrong fusion: the seed was dropped when softmax -> dropout -> matmul became
// attn.sdpa, so every element differed). attn-run --check runs each function
// fused (dropout_p and seed on attn.sdpa, math backend) and unfused (the
// chain's attn.dropout) on the same inputs; both draw the mask from the same
// (seed, element index) hash, so they agree to rounding. i1 masks get fully
// masked rows. Each function's trace has one sdpa span and no softmax span.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// The reproducer: p = 0.5, seed = 7, f32.
// RUN: attn-run %s --entry seed7_f32 --check --trace %t.seed7_f32.json | FileCheck %s --check-prefix=SEED7_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.seed7_f32.json
// SEED7_F32: result 0: 1x2x8x4xf32 {{.*}} nan={{[1-9][0-9]*}}
// SEED7_F32: check: {{.*}} ok
func.func @seed7_f32(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>, %mask: tensor<8x8xi1>) -> tensor<1x2x8x4xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x2x8x4xf32> -> tensor<1x2x4x8xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  %t3 = arith.constant dense<0.5> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<1x2x8x8xf32>, tensor<8x8xi1>) -> tensor<1x2x8x8xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<1x2x8x8xf32>
  %t7 = attn.dropout %t6 p(0.5) train(true) {seed = 7 : i64} : tensor<1x2x8x8xf32>
  %t8 = attn.matmul %t7, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %t8 : tensor<1x2x8x4xf32>
}

// No seed: seed 0 on both paths.
// RUN: attn-run %s --entry noseed_f32 --check --trace %t.noseed_f32.json | FileCheck %s --check-prefix=NOSEED_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.noseed_f32.json
// NOSEED_F32: result 0: 2x2x37x24xf32 {{.*}} nan={{[1-9][0-9]*}}
// NOSEED_F32: check: {{.*}} ok
func.func @noseed_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<2x2x37x37xf32>, tensor<37x37xi1>) -> tensor<2x2x37x37xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x37x37xf32>
  %t7 = attn.dropout %t6 p(0.25) train(true) : tensor<2x2x37x37xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t8 : tensor<2x2x37x24xf32>
}

// A large seed, f16 (the chain drops out in f16; sdpa in f32 and rounds once).
// RUN: attn-run %s --entry seed_f16 --check --trace %t.seed_f16.json | FileCheck %s --check-prefix=SEED_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.seed_f16.json
// SEED_F16: result 0: 1x3x65x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// SEED_F16: check: {{.*}} ok
func.func @seed_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x65x40xf16>, %v: tensor<1x3x65x40xf16>, %mask: tensor<65x65xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x65x40xf16> -> tensor<1x3x40x65xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x65xf16>) -> tensor<1x3x65x65xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<1x3x65x65xf16>, tensor<f16>) -> tensor<1x3x65x65xf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<1x3x65x65xf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<1x3x65x65xf16>
  %t7 = attn.dropout %t6 p(0.1) train(true) {seed = 123456789012 : i64} : tensor<1x3x65x65xf16>
  %t8 = attn.matmul %t7, %v : (tensor<1x3x65x65xf16>, tensor<1x3x65x40xf16>) -> tensor<1x3x65x40xf16>
  return %t8 : tensor<1x3x65x40xf16>
}

// bf16.
// RUN: attn-run %s --entry seed_bf16 --check --trace %t.seed_bf16.json | FileCheck %s --check-prefix=SEED_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.seed_bf16.json
// SEED_BF16: result 0: 2x1x37x80xbf16 {{.*}} nan={{[1-9][0-9]*}}
// SEED_BF16: check: {{.*}} ok
func.func @seed_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %t3 = arith.constant dense<0.11180339887498948> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t5 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<2x1x37x37xbf16>, tensor<37x37xi1>) -> tensor<2x1x37x37xbf16>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x1x37x37xbf16>
  %t7 = attn.dropout %t6 p(0.3) train(true) {seed = -5 : i64} : tensor<2x1x37x37xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %t8 : tensor<2x1x37x80xbf16>
}
