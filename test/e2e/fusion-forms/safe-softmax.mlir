// End-to-end check of attn.safe_softmax (torch._safe_softmax) and the fused
// attn.sdpa with safe_softmax: attn-run --check runs each function fused
// (flash and math backends) and unfused (math lowering) on the same seeded
// inputs. Mask argument row r is all false if r % 7 == 0 and all true if
// r % 7 == 1, so every function has fully masked rows: with the safe softmax
// they give 0, not NaN (nan=0), in both runs; a row holding a NaN score stays
// NaN, even when its other scores are all -inf.
// Every fused trace has exactly one sdpa span and no softmax span.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// The unfused op alone: 2x7 rows of 9, rows 1 and 8 (r % 7 == 1) fully
// masked, so the rows sum to 14 - 2 = 12 and nothing is NaN.
// RUN: attn-run %s --entry safe_softmax_alone | FileCheck %s --check-prefix=ALONE
// ALONE: result 0: 2x7x9xf32 sum=1.2000{{[0-9]*}}e+01 {{.*}} nan=0
func.func @safe_softmax_alone(%x: tensor<2x7x9xf32>, %m: tensor<2x7x9xi1>) -> tensor<2x7x9xf32> {
  %f = attn.masked_fill %x, %m value(0xFFF0000000000000) : (tensor<2x7x9xf32>, tensor<2x7x9xi1>) -> tensor<2x7x9xf32>
  %p = attn.safe_softmax %f dim(-1) : tensor<2x7x9xf32>
  return %p : tensor<2x7x9xf32>
}

// where(mask [L,S], s * scale, -inf), safe_softmax, f32, attribute form
// RUN: attn-run %s --entry where_f32 --check --backend=flash --trace %t.where_f32.json | FileCheck %s --check-prefix=NO-NAN
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.where_f32.json
// RUN: attn-run %s --entry where_f32 --check --backend=math | FileCheck %s --check-prefix=NO-NAN
// NO-NAN: result 0: {{.*}} nan=0
// NO-NAN: check: {{.*}} ok
func.func @where_f32(%q: tensor<2x2x37x24xf32>, %k: tensor<2x2x37x24xf32>, %v: tensor<2x2x37x24xf32>, %mask: tensor<37x37xi1>) -> tensor<2x2x37x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x37x24xf32> -> tensor<2x2x24x37xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x37x24xf32>, tensor<2x2x24x37xf32>) -> tensor<2x2x37x37xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t5 = arith.constant dense<0xFF800000> : tensor<f32>
  %t6 = attn.where %mask, %t4, %t5 : (tensor<37x37xi1>, tensor<2x2x37x37xf32>, tensor<f32>) -> tensor<2x2x37x37xf32>
  %t7 = attn.safe_softmax %t6 dim(-1) : tensor<2x2x37x37xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x37x37xf32>, tensor<2x2x37x24xf32>) -> tensor<2x2x37x24xf32>
  return %t8 : tensor<2x2x37x24xf32>
}

// masked_fill(padding [B,1,1,S] -> rows of a [B,1,L,S] mask, -inf), the
// `.float()` upcast around the safe softmax, f16, L != S
// RUN: attn-run %s --entry upcast_f16 --check --backend=flash --trace %t.upcast_f16.json | FileCheck %s --check-prefix=NO-NAN
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.upcast_f16.json
// RUN: attn-run %s --entry upcast_f16 --check --backend=math | FileCheck %s --check-prefix=NO-NAN
func.func @upcast_f16(%q: tensor<1x3x65x40xf16>, %k: tensor<1x3x33x40xf16>, %v: tensor<1x3x33x40xf16>, %mask: tensor<1x1x65x33xi1>) -> tensor<1x3x65x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<1x3x33x40xf16> -> tensor<1x3x40x33xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<1x3x65x40xf16>, tensor<1x3x40x33xf16>) -> tensor<1x3x65x33xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<1x3x65x33xf16>, tensor<f16>) -> tensor<1x3x65x33xf16>
  %t6 = attn.masked_fill %t4, %mask value(0xFFF0000000000000) : (tensor<1x3x65x33xf16>, tensor<1x1x65x33xi1>) -> tensor<1x3x65x33xf16>
  %up = attn.cast %t6 : tensor<1x3x65x33xf16> -> tensor<1x3x65x33xf32>
  %p32 = attn.safe_softmax %up dim(-1) : tensor<1x3x65x33xf32>
  %p = attn.cast %p32 : tensor<1x3x65x33xf32> -> tensor<1x3x65x33xf16>
  %t8 = attn.matmul %p, %v : (tensor<1x3x65x33xf16>, tensor<1x3x33x40xf16>) -> tensor<1x3x65x40xf16>
  return %t8 : tensor<1x3x65x40xf16>
}

// masked_fill(-inf) then a soft-cap: bf16, score_mod form (tanh(-inf) = -1
// would unmask, so the cap comes first, then the mask)
// RUN: attn-run %s --entry softcap_bf16 --check --backend=flash --trace %t.softcap_bf16.json | FileCheck %s --check-prefix=NO-NAN
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.softcap_bf16.json
// RUN: attn-run %s --entry softcap_bf16 --check --backend=math | FileCheck %s --check-prefix=NO-NAN
func.func @softcap_bf16(%q: tensor<2x1x37x80xbf16>, %k: tensor<2x1x37x80xbf16>, %v: tensor<2x1x37x80xbf16>, %mask: tensor<2x1x37x37xi1>) -> tensor<2x1x37x80xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x1x37x80xbf16> -> tensor<2x1x80x37xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x1x37x80xbf16>, tensor<2x1x80x37xbf16>) -> tensor<2x1x37x37xbf16>
  %c = arith.constant dense<5.0> : tensor<bf16>
  %d = attn.div %t2, %c : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %t = attn.tanh %d : tensor<2x1x37x37xbf16>
  %s = attn.mul %t, %c : (tensor<2x1x37x37xbf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  %f = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<2x1x37x37xbf16>, tensor<2x1x37x37xi1>) -> tensor<2x1x37x37xbf16>
  %p = attn.safe_softmax %f dim(-1) : tensor<2x1x37x37xbf16>
  %o = attn.matmul %p, %v : (tensor<2x1x37x37xbf16>, tensor<2x1x37x80xbf16>) -> tensor<2x1x37x80xbf16>
  return %o : tensor<2x1x37x80xbf16>
}

// causal constant and a boolean padding mask, training dropout after the
// safe softmax (a dropped-out 0 is still 0), f32, 3-D; the math backend
// runs it (flash has no dropout), with two seeds
// RUN: attn-run %s --entry causal_dropout_f32 --check --trace %t.causal_dropout_f32.json | FileCheck %s --check-prefix=NO-NAN
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.causal_dropout_f32.json
// RUN: attn-run %s --entry causal_dropout_f32 --check --seed 5 | FileCheck %s --check-prefix=NO-NAN
func.func @causal_dropout_f32(%q: tensor<3x5x16xf32>, %k: tensor<3x5x16xf32>, %v: tensor<3x5x24xf32>, %pad: tensor<3x5x5xi1>) -> tensor<3x5x24xf32> {
  %causal = arith.constant dense<[[false, true, true, true, true], [false, false, true, true, true], [false, false, false, true, true], [false, false, false, false, true], [false, false, false, false, false]]> : tensor<5x5xi1>
  %kt = attn.transpose %k dims(1, 2) : tensor<3x5x16xf32> -> tensor<3x16x5xf32>
  %s = attn.matmul %q, %kt : (tensor<3x5x16xf32>, tensor<3x16x5xf32>) -> tensor<3x5x5xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<3x5x5xf32>, tensor<f32>) -> tensor<3x5x5xf32>
  %m1 = attn.masked_fill %ss, %causal value(0xFFF0000000000000) : (tensor<3x5x5xf32>, tensor<5x5xi1>) -> tensor<3x5x5xf32>
  %m2 = attn.masked_fill %m1, %pad value(0xFFF0000000000000) : (tensor<3x5x5xf32>, tensor<3x5x5xi1>) -> tensor<3x5x5xf32>
  %p = attn.safe_softmax %m2 dim(-1) : tensor<3x5x5xf32>
  %d = attn.dropout %p p(2.500000e-01) train(true) {seed = 11 : i64} : tensor<3x5x5xf32>
  %o = attn.matmul %d, %v : (tensor<3x5x5xf32>, tensor<3x5x24xf32>) -> tensor<3x5x24xf32>
  return %o : tensor<3x5x24xf32>
}

// NaN rows: masked_fill(-inf) as above, then a NaN in key column 0 of every
// row (score_mod form). Every row is NaN: the fully masked ones hold -inf
// and one NaN, which is not a fully masked row. 1 x 2 x 13 rows x 8 = 208.
// RUN: attn-run %s --entry nan_rows_f32 --check --backend=flash --trace %t.nan_rows_f32.json | FileCheck %s --check-prefix=ALL-NAN
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.nan_rows_f32.json
// RUN: attn-run %s --entry nan_rows_f32 --check --backend=math | FileCheck %s --check-prefix=ALL-NAN
// ALL-NAN: result 0: 1x2x13x8xf32 {{.*}} nan=208
// ALL-NAN: check: {{.*}} ok
func.func @nan_rows_f32(%q: tensor<1x2x13x8xf32>, %k: tensor<1x2x19x8xf32>, %v: tensor<1x2x19x8xf32>, %mask: tensor<13x19xi1>) -> tensor<1x2x13x8xf32> {
  %col0 = arith.constant dense<[true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]> : tensor<19xi1>
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x19x8xf32> -> tensor<1x2x8x19xf32>
  %s = attn.matmul %q, %kt : (tensor<1x2x13x8xf32>, tensor<1x2x8x19xf32>) -> tensor<1x2x13x19xf32>
  %f = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<1x2x13x19xf32>, tensor<13x19xi1>) -> tensor<1x2x13x19xf32>
  %n = attn.masked_fill %f, %col0 value(0x7FF8000000000000) : (tensor<1x2x13x19xf32>, tensor<19xi1>) -> tensor<1x2x13x19xf32>
  %p = attn.safe_softmax %n dim(-1) : tensor<1x2x13x19xf32>
  %o = attn.matmul %p, %v : (tensor<1x2x13x19xf32>, tensor<1x2x19x8xf32>) -> tensor<1x2x13x8xf32>
  return %o : tensor<1x2x13x8xf32>
}

// Many key blocks (S = 300): fully masked rows span every block and give 0;
// f16, and a NaN only in key column 250 (a late block, after blocks whose
// scores were all -inf for the fully masked rows) makes every row NaN:
// 1 x 2 x 9 rows x 8 = 144.
// RUN: attn-run %s --entry wide_f16 --check --backend=flash | FileCheck %s --check-prefix=NO-NAN
// RUN: attn-run %s --entry wide_f16 --check --backend=math | FileCheck %s --check-prefix=NO-NAN
// RUN: attn-run %s --entry wide_nan_f16 --check --backend=flash | FileCheck %s --check-prefix=WIDE-NAN
// RUN: attn-run %s --entry wide_nan_f16 --check --backend=math | FileCheck %s --check-prefix=WIDE-NAN
// WIDE-NAN: result 0: 1x2x9x8xf16 {{.*}} nan=144
// WIDE-NAN: check: {{.*}} ok
func.func @wide_f16(%q: tensor<1x2x9x8xf16>, %k: tensor<1x2x300x8xf16>, %v: tensor<1x2x300x8xf16>, %mask: tensor<9x300xi1>) -> tensor<1x2x9x8xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x300x8xf16> -> tensor<1x2x8x300xf16>
  %s = attn.matmul %q, %kt : (tensor<1x2x9x8xf16>, tensor<1x2x8x300xf16>) -> tensor<1x2x9x300xf16>
  %f = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<1x2x9x300xf16>, tensor<9x300xi1>) -> tensor<1x2x9x300xf16>
  %p = attn.safe_softmax %f dim(-1) : tensor<1x2x9x300xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x9x300xf16>, tensor<1x2x300x8xf16>) -> tensor<1x2x9x8xf16>
  return %o : tensor<1x2x9x8xf16>
}

func.func @wide_nan_f16(%q: tensor<1x2x9x8xf16>, %k: tensor<1x2x300x8xf16>, %v: tensor<1x2x300x8xf16>, %mask: tensor<9x300xi1>) -> tensor<1x2x9x8xf16> {
  %late = arith.constant dense<[false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]> : tensor<300xi1>
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x300x8xf16> -> tensor<1x2x8x300xf16>
  %s = attn.matmul %q, %kt : (tensor<1x2x9x8xf16>, tensor<1x2x8x300xf16>) -> tensor<1x2x9x300xf16>
  %f = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<1x2x9x300xf16>, tensor<9x300xi1>) -> tensor<1x2x9x300xf16>
  %n = attn.masked_fill %f, %late value(0x7FF8000000000000) : (tensor<1x2x9x300xf16>, tensor<300xi1>) -> tensor<1x2x9x300xf16>
  %p = attn.safe_softmax %n dim(-1) : tensor<1x2x9x300xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x9x300xf16>, tensor<1x2x300x8xf16>) -> tensor<1x2x9x8xf16>
  return %o : tensor<1x2x9x8xf16>
}

// Decode (3 query rows: the flash backend takes the decode path, keys split
// across work items): row 1 of the mask is fully masked and gives 0; with a
// NaN in key column 250 every row is NaN (1 x 4 x 3 rows x 16 = 192).
// RUN: attn-run %s --entry decode_f32 --check --backend=flash | FileCheck %s --check-prefix=NO-NAN
// RUN: attn-run %s --entry decode_nan_f32 --check --backend=flash | FileCheck %s --check-prefix=DECODE-NAN
// RUN: attn-run %s --entry decode_nan_f32 --check --backend=math | FileCheck %s --check-prefix=DECODE-NAN
// DECODE-NAN: result 0: 1x4x3x16xf32 {{.*}} nan=192
// DECODE-NAN: check: {{.*}} ok
func.func @decode_f32(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x300x16xf32>, %v: tensor<1x4x300x16xf32>, %mask: tensor<3x300xi1>) -> tensor<1x4x3x16xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x4x300x16xf32> -> tensor<1x4x16x300xf32>
  %s = attn.matmul %q, %kt : (tensor<1x4x3x16xf32>, tensor<1x4x16x300xf32>) -> tensor<1x4x3x300xf32>
  %f = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<1x4x3x300xf32>, tensor<3x300xi1>) -> tensor<1x4x3x300xf32>
  %p = attn.safe_softmax %f dim(-1) : tensor<1x4x3x300xf32>
  %o = attn.matmul %p, %v : (tensor<1x4x3x300xf32>, tensor<1x4x300x16xf32>) -> tensor<1x4x3x16xf32>
  return %o : tensor<1x4x3x16xf32>
}

func.func @decode_nan_f32(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x300x16xf32>, %v: tensor<1x4x300x16xf32>, %mask: tensor<3x300xi1>) -> tensor<1x4x3x16xf32> {
  %late = arith.constant dense<[false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]> : tensor<300xi1>
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x4x300x16xf32> -> tensor<1x4x16x300xf32>
  %s = attn.matmul %q, %kt : (tensor<1x4x3x16xf32>, tensor<1x4x16x300xf32>) -> tensor<1x4x3x300xf32>
  %f = attn.masked_fill %s, %mask value(0xFFF0000000000000) : (tensor<1x4x3x300xf32>, tensor<3x300xi1>) -> tensor<1x4x3x300xf32>
  %n = attn.masked_fill %f, %late value(0x7FF8000000000000) : (tensor<1x4x3x300xf32>, tensor<300xi1>) -> tensor<1x4x3x300xf32>
  %p = attn.safe_softmax %n dim(-1) : tensor<1x4x3x300xf32>
  %o = attn.matmul %p, %v : (tensor<1x4x3x300xf32>, tensor<1x4x300x16xf32>) -> tensor<1x4x3x16xf32>
  return %o : tensor<1x4x3x16xf32>
}

// A lagged window from positions (key j takes part iff j <= i - 100): rows
// i < 100 have an empty band and give 0; the fused op carries the window,
// and the flash path skips the key blocks outside it. f16, L = S = 200.
// RUN: attn-run %s --entry lagged_window_f16 --check --backend=flash --trace %t.lagged_window_f16.json | FileCheck %s --check-prefix=NO-NAN
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.lagged_window_f16.json
// RUN: attn-run %s --entry lagged_window_f16 --check --backend=math | FileCheck %s --check-prefix=NO-NAN
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s --check-prefix=LAGGED-IR
// LAGGED-IR-LABEL: func.func @lagged_window_f16(
// LAGGED-IR: attn.sdpa {{.*}}safe_softmax = true{{.*}}window_right = -100
func.func @lagged_window_f16(%q: tensor<1x2x200x32xf16>, %k: tensor<1x2x200x32xf16>, %v: tensor<1x2x200x32xf16>) -> tensor<1x2x200x32xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x2x200x32xf16> -> tensor<1x2x32x200xf16>
  %s = attn.matmul %q, %kt : (tensor<1x2x200x32xf16>, tensor<1x2x32x200xf16>) -> tensor<1x2x200x200xf16>
  %i = attn.iota 0 : tensor<200x1xf32>
  %j = attn.iota 1 : tensor<1x200xf32>
  %c = arith.constant dense<100.0> : tensor<f32>
  %lo = attn.sub %i, %c : (tensor<200x1xf32>, tensor<f32>) -> tensor<200x1xf32>
  %late = attn.cmp gt, %j, %lo : (tensor<1x200xf32>, tensor<200x1xf32>) -> tensor<200x200xi1>
  %f = attn.masked_fill %s, %late value(0xFFF0000000000000) : (tensor<1x2x200x200xf16>, tensor<200x200xi1>) -> tensor<1x2x200x200xf16>
  %p = attn.safe_softmax %f dim(-1) : tensor<1x2x200x200xf16>
  %o = attn.matmul %p, %v : (tensor<1x2x200x200xf16>, tensor<1x2x200x32xf16>) -> tensor<1x2x200x32xf16>
  return %o : tensor<1x2x200x32xf16>
}
