// End-to-end check of sliding windows and position masks (attn.iota):
// attn-run --check runs each function fused (attn.sdpa with is_causal and
// window attributes, or a score_mod region that computes an ALiBi bias from
// the indices) and unfused (the chain, math lowering) on the same seeded
// inputs, with the flash and the math lowering of the fused op. Each trace
// has one sdpa span and no softmax span, so these fail if the fusion stops;
// the _IR prefixes check the form the fusion chose.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// Mistral-style causal sliding window of 48 keys from positions (j > i, j <= i - 48 masked), 200 keys: key blocks outside the band are skipped
// RUN: attn-run %s --entry causal_window_f32 --backend=flash --check --trace %t.causal_window_f32.flash.json | FileCheck %s --check-prefix=CW_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_window_f32.flash.json
// CW_F32: result 0: 1x2x200x32xf32 {{.*}} nan=0
// CW_F32: check: {{.*}} ok
// RUN: attn-run %s --entry causal_window_f32 --backend=math --check --trace %t.causal_window_f32.math.json | FileCheck %s --check-prefix=CW_F32_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_window_f32.math.json
// CW_F32_MATH: result 0: 1x2x200x32xf32 {{.*}} nan=0
// CW_F32_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=CW_F32_IR
// CW_F32_IR-LABEL: func.func @causal_window_f32(
// CW_F32_IR: attn.sdpa {{.*}}is_causal = true{{.*}}window_left = 47
func.func @causal_window_f32(%q: tensor<1x2x200x32xf32>, %k: tensor<1x2x200x32xf32>, %v: tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x200x32xf32> -> tensor<1x2x32x200xf32>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x200x32xf32>, tensor<1x2x32x200xf32>) -> tensor<1x2x200x200xf32>
  %i = attn.iota 0 : tensor<200x1xf32>
  %j = attn.iota 1 : tensor<1x200xf32>
  %c = arith.constant dense<48.0> : tensor<f32>
  %lo = attn.sub %i, %c : (tensor<200x1xf32>, tensor<f32>) -> tensor<200x1xf32>
  %old = attn.cmp le, %j, %lo : (tensor<1x200xf32>, tensor<200x1xf32>) -> tensor<200x200xi1>
  %fut = attn.cmp gt, %j, %i : (tensor<1x200xf32>, tensor<200x1xf32>) -> tensor<200x200xi1>
  %sc = arith.constant dense<0.125> : tensor<f32>
  %s1 = attn.mul %s0, %sc : (tensor<1x2x200x200xf32>, tensor<f32>) -> tensor<1x2x200x200xf32>
  %s2 = attn.masked_fill %s1, %fut value(0xFFF0000000000000) : (tensor<1x2x200x200xf32>, tensor<200x200xi1>) -> tensor<1x2x200x200xf32>
  %sm = attn.masked_fill %s2, %old value(0xFFF0000000000000) : (tensor<1x2x200x200xf32>, tensor<200x200xi1>) -> tensor<1x2x200x200xf32>
  %p = attn.softmax %sm dim(-1) : tensor<1x2x200x200xf32>
  %o = attn.matmul %p, %v : (tensor<1x2x200x200xf32>, tensor<1x2x200x32xf32>) -> tensor<1x2x200x32xf32>
  return %o : tensor<1x2x200x32xf32>
}

// The same window in f16, odd sizes (L = 37 < S = 131: rows 0..36 read the first keys only)
// RUN: attn-run %s --entry causal_window_f16 --backend=flash --check --trace %t.causal_window_f16.flash.json | FileCheck %s --check-prefix=CW_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_window_f16.flash.json
// CW_F16: result 0: 2x1x37x24xf16 {{.*}} nan=0
// CW_F16: check: {{.*}} ok
// RUN: attn-run %s --entry causal_window_f16 --backend=math --check --trace %t.causal_window_f16.math.json | FileCheck %s --check-prefix=CW_F16_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_window_f16.math.json
// CW_F16_MATH: result 0: 2x1x37x24xf16 {{.*}} nan=0
// CW_F16_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=CW_F16_IR
// CW_F16_IR-LABEL: func.func @causal_window_f16(
// CW_F16_IR: attn.sdpa {{.*}}is_causal = true{{.*}}window_left = 4
func.func @causal_window_f16(%q: tensor<2x1x37x24xf16>, %k: tensor<2x1x131x24xf16>, %v: tensor<2x1x131x24xf16>) -> tensor<2x1x37x24xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x1x131x24xf16> -> tensor<2x1x24x131xf16>
  %s0 = attn.matmul %q, %kt : (tensor<2x1x37x24xf16>, tensor<2x1x24x131xf16>) -> tensor<2x1x37x131xf16>
  %i = attn.iota 0 : tensor<37x1xf16>
  %j = attn.iota 1 : tensor<1x131xf16>
  %c = arith.constant dense<5.0> : tensor<f16>
  %lo = attn.sub %i, %c : (tensor<37x1xf16>, tensor<f16>) -> tensor<37x1xf16>
  %old = attn.cmp le, %j, %lo : (tensor<1x131xf16>, tensor<37x1xf16>) -> tensor<37x131xi1>
  %fut = attn.cmp gt, %j, %i : (tensor<1x131xf16>, tensor<37x1xf16>) -> tensor<37x131xi1>
  %sc = arith.constant dense<0.125> : tensor<f16>
  %s1 = attn.mul %s0, %sc : (tensor<2x1x37x131xf16>, tensor<f16>) -> tensor<2x1x37x131xf16>
  %s2 = attn.masked_fill %s1, %fut value(0xFFF0000000000000) : (tensor<2x1x37x131xf16>, tensor<37x131xi1>) -> tensor<2x1x37x131xf16>
  %sm = attn.masked_fill %s2, %old value(0xFFF0000000000000) : (tensor<2x1x37x131xf16>, tensor<37x131xi1>) -> tensor<2x1x37x131xf16>
  %p = attn.softmax %sm dim(-1) : tensor<2x1x37x131xf16>
  %o = attn.matmul %p, %v : (tensor<2x1x37x131xf16>, tensor<2x1x131x24xf16>) -> tensor<2x1x37x24xf16>
  return %o : tensor<2x1x37x24xf16>
}

// bf16, window of 3
// RUN: attn-run %s --entry causal_window_bf16 --backend=flash --check --trace %t.causal_window_bf16.flash.json | FileCheck %s --check-prefix=CW_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_window_bf16.flash.json
// CW_BF16: result 0: 1x3x65x16xbf16 {{.*}} nan=0
// CW_BF16: check: {{.*}} ok
// RUN: attn-run %s --entry causal_window_bf16 --backend=math --check --trace %t.causal_window_bf16.math.json | FileCheck %s --check-prefix=CW_BF16_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_window_bf16.math.json
// CW_BF16_MATH: result 0: 1x3x65x16xbf16 {{.*}} nan=0
// CW_BF16_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=CW_BF16_IR
// CW_BF16_IR-LABEL: func.func @causal_window_bf16(
// CW_BF16_IR: attn.sdpa {{.*}}is_causal = true{{.*}}window_left = 2
func.func @causal_window_bf16(%q: tensor<1x3x65x16xbf16>, %k: tensor<1x3x65x16xbf16>, %v: tensor<1x3x65x16xbf16>) -> tensor<1x3x65x16xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x3x65x16xbf16> -> tensor<1x3x16x65xbf16>
  %s0 = attn.matmul %q, %kt : (tensor<1x3x65x16xbf16>, tensor<1x3x16x65xbf16>) -> tensor<1x3x65x65xbf16>
  %i = attn.iota 0 : tensor<65x1xbf16>
  %j = attn.iota 1 : tensor<1x65xbf16>
  %c = arith.constant dense<3.0> : tensor<bf16>
  %lo = attn.sub %i, %c : (tensor<65x1xbf16>, tensor<bf16>) -> tensor<65x1xbf16>
  %old = attn.cmp le, %j, %lo : (tensor<1x65xbf16>, tensor<65x1xbf16>) -> tensor<65x65xi1>
  %fut = attn.cmp gt, %j, %i : (tensor<1x65xbf16>, tensor<65x1xbf16>) -> tensor<65x65xi1>
  %sc = arith.constant dense<0.125> : tensor<bf16>
  %s1 = attn.mul %s0, %sc : (tensor<1x3x65x65xbf16>, tensor<bf16>) -> tensor<1x3x65x65xbf16>
  %s2 = attn.masked_fill %s1, %fut value(0xFFF0000000000000) : (tensor<1x3x65x65xbf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xbf16>
  %sm = attn.masked_fill %s2, %old value(0xFFF0000000000000) : (tensor<1x3x65x65xbf16>, tensor<65x65xi1>) -> tensor<1x3x65x65xbf16>
  %p = attn.softmax %sm dim(-1) : tensor<1x3x65x65xbf16>
  %o = attn.matmul %p, %v : (tensor<1x3x65x65xbf16>, tensor<1x3x65x16xbf16>) -> tensor<1x3x65x16xbf16>
  return %o : tensor<1x3x65x16xbf16>
}

// Bidirectional local attention |j - i| <= 7 (where keeps, masked_fill drops), 150 keys
// RUN: attn-run %s --entry local_window_f32 --backend=flash --check --trace %t.local_window_f32.flash.json | FileCheck %s --check-prefix=LOCAL_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.local_window_f32.flash.json
// LOCAL_F32: result 0: 2x2x150x16xf32 {{.*}} nan=0
// LOCAL_F32: check: {{.*}} ok
// RUN: attn-run %s --entry local_window_f32 --backend=math --check --trace %t.local_window_f32.math.json | FileCheck %s --check-prefix=LOCAL_F32_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.local_window_f32.math.json
// LOCAL_F32_MATH: result 0: 2x2x150x16xf32 {{.*}} nan=0
// LOCAL_F32_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=LOCAL_F32_IR
// LOCAL_F32_IR-LABEL: func.func @local_window_f32(
// LOCAL_F32_IR: attn.sdpa {{.*}}window_left = 7 : i64, window_right = 7
func.func @local_window_f32(%q: tensor<2x2x150x16xf32>, %k: tensor<2x2x150x16xf32>, %v: tensor<2x2x150x16xf32>) -> tensor<2x2x150x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x2x150x16xf32> -> tensor<2x2x16x150xf32>
  %s0 = attn.matmul %q, %kt : (tensor<2x2x150x16xf32>, tensor<2x2x16x150xf32>) -> tensor<2x2x150x150xf32>
  %i = attn.iota 0 : tensor<150x1xf32>
  %j = attn.iota 1 : tensor<1x150xf32>
  %d = attn.sub %j, %i : (tensor<1x150xf32>, tensor<150x1xf32>) -> tensor<150x150xf32>
  %c = arith.constant dense<7.0> : tensor<f32>
  %nc = arith.constant dense<-7.0> : tensor<f32>
  %near = attn.cmp le, %d, %c : (tensor<150x150xf32>, tensor<f32>) -> tensor<150x150xi1>
  %far = attn.cmp lt, %d, %nc : (tensor<150x150xf32>, tensor<f32>) -> tensor<150x150xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %s1 = attn.where %near, %s0, %ninf : (tensor<150x150xi1>, tensor<2x2x150x150xf32>, tensor<f32>) -> tensor<2x2x150x150xf32>
  %sm = attn.masked_fill %s1, %far value(0xFFF0000000000000) : (tensor<2x2x150x150xf32>, tensor<150x150xi1>) -> tensor<2x2x150x150xf32>
  %p = attn.softmax %sm dim(-1) : tensor<2x2x150x150xf32>
  %o = attn.matmul %p, %v : (tensor<2x2x150x150xf32>, tensor<2x2x150x16xf32>) -> tensor<2x2x150x16xf32>
  return %o : tensor<2x2x150x16xf32>
}

// The same in f16, L = 20 and S = 90 (rows see keys i - 7 .. i + 7 only)
// RUN: attn-run %s --entry local_window_f16 --backend=flash --check --trace %t.local_window_f16.flash.json | FileCheck %s --check-prefix=LOCAL_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.local_window_f16.flash.json
// LOCAL_F16: result 0: 1x2x20x8xf16 {{.*}} nan=0
// LOCAL_F16: check: {{.*}} ok
// RUN: attn-run %s --entry local_window_f16 --backend=math --check --trace %t.local_window_f16.math.json | FileCheck %s --check-prefix=LOCAL_F16_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.local_window_f16.math.json
// LOCAL_F16_MATH: result 0: 1x2x20x8xf16 {{.*}} nan=0
// LOCAL_F16_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=LOCAL_F16_IR
// LOCAL_F16_IR-LABEL: func.func @local_window_f16(
// LOCAL_F16_IR: attn.sdpa {{.*}}window_left = 7 : i64, window_right = 7
func.func @local_window_f16(%q: tensor<1x2x20x8xf16>, %k: tensor<1x2x90x8xf16>, %v: tensor<1x2x90x8xf16>) -> tensor<1x2x20x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x90x8xf16> -> tensor<1x2x8x90xf16>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x20x8xf16>, tensor<1x2x8x90xf16>) -> tensor<1x2x20x90xf16>
  %i = attn.iota 0 : tensor<20x1xf16>
  %j = attn.iota 1 : tensor<1x90xf16>
  %d = attn.sub %j, %i : (tensor<1x90xf16>, tensor<20x1xf16>) -> tensor<20x90xf16>
  %c = arith.constant dense<7.0> : tensor<f16>
  %nc = arith.constant dense<-7.0> : tensor<f16>
  %near = attn.cmp le, %d, %c : (tensor<20x90xf16>, tensor<f16>) -> tensor<20x90xi1>
  %far = attn.cmp lt, %d, %nc : (tensor<20x90xf16>, tensor<f16>) -> tensor<20x90xi1>
  %ninf = arith.constant dense<0xFC00> : tensor<f16>
  %s1 = attn.where %near, %s0, %ninf : (tensor<20x90xi1>, tensor<1x2x20x90xf16>, tensor<f16>) -> tensor<1x2x20x90xf16>
  %sm = attn.masked_fill %s1, %far value(0xFFF0000000000000) : (tensor<1x2x20x90xf16>, tensor<20x90xi1>) -> tensor<1x2x20x90xf16>
  %p = attn.softmax %sm dim(-1) : tensor<1x2x20x90xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x20x90xf16>, tensor<1x2x90x8xf16>) -> tensor<1x2x20x8xf16>
  return %o : tensor<1x2x20x8xf16>
}

// Strictly past keys (j < i): row 0 is fully masked and gives NaN in both
// RUN: attn-run %s --entry strict_past_f32 --backend=flash --check --trace %t.strict_past_f32.flash.json | FileCheck %s --check-prefix=STRICT
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.strict_past_f32.flash.json
// STRICT: result 0: 1x2x70x16xf32 {{.*}} nan={{[1-9][0-9]*}}
// STRICT: check: {{.*}} ok
// RUN: attn-run %s --entry strict_past_f32 --backend=math --check --trace %t.strict_past_f32.math.json | FileCheck %s --check-prefix=STRICT_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.strict_past_f32.math.json
// STRICT_MATH: result 0: 1x2x70x16xf32 {{.*}} nan={{[1-9][0-9]*}}
// STRICT_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=STRICT_IR
// STRICT_IR-LABEL: func.func @strict_past_f32(
// STRICT_IR: attn.sdpa {{.*}}window_right = -1
func.func @strict_past_f32(%q: tensor<1x2x70x16xf32>, %k: tensor<1x2x70x16xf32>, %v: tensor<1x2x70x16xf32>) -> tensor<1x2x70x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x70x16xf32> -> tensor<1x2x16x70xf32>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x70x16xf32>, tensor<1x2x16x70xf32>) -> tensor<1x2x70x70xf32>
  %i = attn.iota 0 : tensor<70x1xf32>
  %j = attn.iota 1 : tensor<1x70xf32>
  %notpast = attn.cmp ge, %j, %i : (tensor<1x70xf32>, tensor<70x1xf32>) -> tensor<70x70xi1>
  %sm = attn.masked_fill %s0, %notpast value(0xFFF0000000000000) : (tensor<1x2x70x70xf32>, tensor<70x70xi1>) -> tensor<1x2x70x70xf32>
  %p = attn.softmax %sm dim(-1) : tensor<1x2x70x70xf32>
  %o = attn.matmul %p, %v : (tensor<1x2x70x70xf32>, tensor<1x2x70x16xf32>) -> tensor<1x2x70x16xf32>
  return %o : tensor<1x2x70x16xf32>
}

// ALiBi from positions, then causal: the bias is computed in the score_mod region from the indices (no [L, S] operand)
// RUN: attn-run %s --entry alibi_f32 --backend=flash --check --trace %t.alibi_f32.flash.json | FileCheck %s --check-prefix=ALIBI_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.alibi_f32.flash.json
// ALIBI_F32: result 0: 1x2x45x16xf32 {{.*}} nan=0
// ALIBI_F32: check: {{.*}} ok
// RUN: attn-run %s --entry alibi_f32 --backend=math --check --trace %t.alibi_f32.math.json | FileCheck %s --check-prefix=ALIBI_F32_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.alibi_f32.math.json
// ALIBI_F32_MATH: result 0: 1x2x45x16xf32 {{.*}} nan=0
// ALIBI_F32_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=ALIBI_F32_IR
// ALIBI_F32_IR-LABEL: func.func @alibi_f32(
// ALIBI_F32_IR: attn.sdpa {{.*}}is_causal = true{{.*}}score_mod
func.func @alibi_f32(%q: tensor<1x2x45x16xf32>, %k: tensor<1x2x45x16xf32>, %v: tensor<1x2x45x16xf32>) -> tensor<1x2x45x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x45x16xf32> -> tensor<1x2x16x45xf32>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x45x16xf32>, tensor<1x2x16x45xf32>) -> tensor<1x2x45x45xf32>
  %i = attn.iota 0 : tensor<45x1xf32>
  %j = attn.iota 1 : tensor<1x45xf32>
  %d = attn.sub %i, %j : (tensor<45x1xf32>, tensor<1x45xf32>) -> tensor<45x45xf32>
  %a = attn.abs %d : tensor<45x45xf32>
  %slope = arith.constant dense<0.25> : tensor<f32>
  %bias = attn.mul %a, %slope : (tensor<45x45xf32>, tensor<f32>) -> tensor<45x45xf32>
  %s1 = attn.sub %s0, %bias : (tensor<1x2x45x45xf32>, tensor<45x45xf32>) -> tensor<1x2x45x45xf32>
  %fut = attn.cmp gt, %j, %i : (tensor<1x45xf32>, tensor<45x1xf32>) -> tensor<45x45xi1>
  %sm = attn.masked_fill %s1, %fut value(0xFFF0000000000000) : (tensor<1x2x45x45xf32>, tensor<45x45xi1>) -> tensor<1x2x45x45xf32>
  %p = attn.softmax %sm dim(-1) : tensor<1x2x45x45xf32>
  %o = attn.matmul %p, %v : (tensor<1x2x45x45xf32>, tensor<1x2x45x16xf32>) -> tensor<1x2x45x16xf32>
  return %o : tensor<1x2x45x16xf32>
}

// ALiBi in f16 (the chain rounds the bias and the sum in f16; so does the region)
// RUN: attn-run %s --entry alibi_f16 --backend=flash --check --trace %t.alibi_f16.flash.json | FileCheck %s --check-prefix=ALIBI_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.alibi_f16.flash.json
// ALIBI_F16: result 0: 1x2x45x16xf16 {{.*}} nan=0
// ALIBI_F16: check: {{.*}} ok
// RUN: attn-run %s --entry alibi_f16 --backend=math --check --trace %t.alibi_f16.math.json | FileCheck %s --check-prefix=ALIBI_F16_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.alibi_f16.math.json
// ALIBI_F16_MATH: result 0: 1x2x45x16xf16 {{.*}} nan=0
// ALIBI_F16_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=ALIBI_F16_IR
// ALIBI_F16_IR-LABEL: func.func @alibi_f16(
// ALIBI_F16_IR: attn.sdpa {{.*}}is_causal = true{{.*}}score_mod
func.func @alibi_f16(%q: tensor<1x2x45x16xf16>, %k: tensor<1x2x77x16xf16>, %v: tensor<1x2x77x16xf16>) -> tensor<1x2x45x16xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x77x16xf16> -> tensor<1x2x16x77xf16>
  %s0 = attn.matmul %q, %kt : (tensor<1x2x45x16xf16>, tensor<1x2x16x77xf16>) -> tensor<1x2x45x77xf16>
  %i = attn.iota 0 : tensor<45x1xf16>
  %j = attn.iota 1 : tensor<1x77xf16>
  %d = attn.sub %i, %j : (tensor<45x1xf16>, tensor<1x77xf16>) -> tensor<45x77xf16>
  %a = attn.abs %d : tensor<45x77xf16>
  %slope = arith.constant dense<0.25> : tensor<f16>
  %bias = attn.mul %a, %slope : (tensor<45x77xf16>, tensor<f16>) -> tensor<45x77xf16>
  %s1 = attn.sub %s0, %bias : (tensor<1x2x45x77xf16>, tensor<45x77xf16>) -> tensor<1x2x45x77xf16>
  %fut = attn.cmp gt, %j, %i : (tensor<1x77xf16>, tensor<45x1xf16>) -> tensor<45x77xi1>
  %sm = attn.masked_fill %s1, %fut value(0xFFF0000000000000) : (tensor<1x2x45x77xf16>, tensor<45x77xi1>) -> tensor<1x2x45x77xf16>
  %p = attn.softmax %sm dim(-1) : tensor<1x2x45x77xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x45x77xf16>, tensor<1x2x77x16xf16>) -> tensor<1x2x45x16xf16>
  return %o : tensor<1x2x45x16xf16>
}

// A constant band mask (4 past keys and the diagonal) becomes is_causal + window_left = 4
// RUN: attn-run %s --entry const_band_f32 --backend=flash --check --trace %t.const_band_f32.flash.json | FileCheck %s --check-prefix=CONST
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.const_band_f32.flash.json
// CONST: result 0: 1x1x12x8xf32 {{.*}} nan=0
// CONST: check: {{.*}} ok
// RUN: attn-run %s --entry const_band_f32 --backend=math --check --trace %t.const_band_f32.math.json | FileCheck %s --check-prefix=CONST_MATH
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.const_band_f32.math.json
// CONST_MATH: result 0: 1x1x12x8xf32 {{.*}} nan=0
// CONST_MATH: check: {{.*}} ok
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=CONST_IR
// CONST_IR-LABEL: func.func @const_band_f32(
// CONST_IR: attn.sdpa {{.*}}is_causal = true{{.*}}window_left = 4
func.func @const_band_f32(%q: tensor<1x1x12x8xf32>, %k: tensor<1x1x12x8xf32>, %v: tensor<1x1x12x8xf32>) -> tensor<1x1x12x8xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x1x12x8xf32> -> tensor<1x1x8x12xf32>
  %s0 = attn.matmul %q, %kt : (tensor<1x1x12x8xf32>, tensor<1x1x8x12xf32>) -> tensor<1x1x12x12xf32>
  %band = arith.constant dense<[[true, false, false, false, false, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false, false, false, false, false], [true, true, true, false, false, false, false, false, false, false, false, false], [true, true, true, true, false, false, false, false, false, false, false, false], [true, true, true, true, true, false, false, false, false, false, false, false], [false, true, true, true, true, true, false, false, false, false, false, false], [false, false, true, true, true, true, true, false, false, false, false, false], [false, false, false, true, true, true, true, true, false, false, false, false], [false, false, false, false, true, true, true, true, true, false, false, false], [false, false, false, false, false, true, true, true, true, true, false, false], [false, false, false, false, false, false, true, true, true, true, true, false], [false, false, false, false, false, false, false, true, true, true, true, true]]> : tensor<12x12xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %sm = attn.where %band, %s0, %ninf : (tensor<12x12xi1>, tensor<1x1x12x12xf32>, tensor<f32>) -> tensor<1x1x12x12xf32>
  %p = attn.softmax %sm dim(-1) : tensor<1x1x12x12xf32>
  %o = attn.matmul %p, %v : (tensor<1x1x12x12xf32>, tensor<1x1x12x8xf32>) -> tensor<1x1x12x8xf32>
  return %o : tensor<1x1x12x8xf32>
}
