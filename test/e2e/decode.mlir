// Decode shapes (L <= half the vector lanes against a long KV cache): the flash
// backend runs the decode lowering (head dim along the lanes, keys split
// across work items in splits of 1024, combined at the end). Each function
// runs with --backend=flash and is checked against the math lowering of the
// same attn.sdpa; the sizes give several splits, a partial last split,
// head dims that are no multiple of the vector width, and fully masked
// rows (NaN in both).

// One query row, 3000 keys (3 splits), GQA heads, f32.
// RUN: attn-run %s --entry gqa_f32 --backend=flash --check | FileCheck %s --check-prefix=GQA
// GQA: result 0: 1x8x1x128xf32 {{.*}} nan=0
// GQA: check: {{.*}} ok
func.func @gqa_f32(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x3000x128xf32>, %v: tensor<1x2x3000x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x1x128xf32>, tensor<1x2x3000x128xf32>, tensor<1x2x3000x128xf32>) -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// Four rows, f16 cache, a [B, 1, 1, S] padding mask (fully masked rows
// where a batch masks every key), Ev = 40.
// RUN: attn-run %s --entry pad_f16 --backend=flash --check | FileCheck %s --check-prefix=PAD
// PAD: result 0: 2x4x4x40xf16
// PAD: check: {{.*}} ok
func.func @pad_f16(%q: tensor<2x4x4x72xf16>, %k: tensor<2x4x2100x72xf16>, %v: tensor<2x4x2100x40xf16>, %m: tensor<2x1x1x2100xi1>) -> tensor<2x4x4x40xf16> {
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x4x4x72xf16>, tensor<2x4x2100x72xf16>, tensor<2x4x2100x40xf16>, tensor<2x1x1x2100xi1>) -> tensor<2x4x4x40xf16>
  return %o : tensor<2x4x4x40xf16>
}

// A causal sliding window over the last keys (only the keys inside the band
// are visited), 4 rows, bf16, soft-capping region.
// RUN: attn-run %s --entry window_bf16 --backend=flash --check | FileCheck %s --check-prefix=WIN
// WIN: result 0: 1x2x4x64xbf16 {{.*}} nan=0
// WIN: check: {{.*}} ok
func.func @window_bf16(%q: tensor<1x2x4x64xbf16>, %k: tensor<1x2x2500x64xbf16>, %v: tensor<1x2x2500x64xbf16>) -> tensor<1x2x4x64xbf16> {
  %o = attn.sdpa %q, %k, %v {window_left = 1100 : i64, window_right = 2000 : i64} : (tensor<1x2x4x64xbf16>, tensor<1x2x2500x64xbf16>, tensor<1x2x2500x64xbf16>) -> tensor<1x2x4x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 2.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x4x64xbf16>
}

// Rows with an empty band (window_right = -1: row 0 sees no key) are NaN;
// dynamic S.
// RUN: attn-run %s --entry strict_dyn --backend=flash --shape 1=1x1200x32 --shape 2=1x1200x32 --check | FileCheck %s --check-prefix=STRICT
// STRICT: result 0: 1x3x32xf32 {{.*}} nan=32
// STRICT: check: {{.*}} ok
func.func @strict_dyn(%q: tensor<1x3x32xf32>, %k: tensor<1x?x32xf32>, %v: tensor<1x?x32xf32>) -> tensor<1x3x32xf32> {
  %o = attn.sdpa %q, %k, %v {window_right = -1 : i64} : (tensor<1x3x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x3x32xf32>
  return %o : tensor<1x3x32xf32>
}

// Sixteen heads on 2 key/value heads, one query row: groups of 8 heads are
// one work item of 8 rows, each row with its head's mask (fully masked
// rows included); on SSE (4 lanes) the 8 rows' q.k lanes are summed in two
// trees of 4. On the host and on the 128- and 256-bit targets (the
// sanitize build skips the 256-bit run: sdpa-decode.mlir lowers it).
// RUN: attn-run %s --entry fold8_f32 --backend=flash --check | FileCheck %s --check-prefix=FOLD
// RUN: attn-run %s --entry fold8_f32 --backend=flash --check --mcpu=x86-64 | FileCheck %s --check-prefix=FOLD
// RUN: %if !sanitized %{ attn-run %s --entry fold8_f32 --backend=flash --check --mcpu=x86-64-v3 | FileCheck %s --check-prefix=FOLD %}
// FOLD: result 0: 2x16x1x24xf32 {{.*}} nan=120
// FOLD: check: {{.*}} ok
func.func @fold8_f32(%q: tensor<2x16x1x40xf32>, %k: tensor<2x2x1500x40xf32>, %v: tensor<2x2x1500x24xf32>, %m: tensor<2x16x1x1500xi1>) -> tensor<2x16x1x24xf32> {
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x16x1x40xf32>, tensor<2x2x1500x40xf32>, tensor<2x2x1500x24xf32>, tensor<2x16x1x1500xi1>) -> tensor<2x16x1x24xf32>
  return %o : tensor<2x16x1x24xf32>
}
