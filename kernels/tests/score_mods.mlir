// Score modifiers that the CUDA kernels run as code generated from the
// regions (attn-compile --target=cuda --cuda-source). The emulator test
// test_generated_score_mod.cpp runs the generated modifiers in every kernel
// against its double reference of these functions (keep the two in step);
// test/Conversion/AttnToCuda/score-mod-source.test checks the source.

// Gemma-2 soft-capping, cap * tanh(s / cap), f16 with a causal mask.
func.func @softcap(%q: tensor<1x4x70x64xf16>, %k: tensor<1x4x100x64xf16>, %v: tensor<1x4x100x64xf16>) -> tensor<1x4x70x64xf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x4x70x64xf16>, tensor<1x4x100x64xf16>, tensor<1x4x100x64xf16>) -> tensor<1x4x70x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 5.000000e+00 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x4x70x64xf16>
}

// ALiBi: s + slope[h] * (j - i), the slopes a captured [1, H, 1, 1] tensor.
func.func @alibi(%q: tensor<2x4x40x128xbf16>, %k: tensor<2x2x130x128xbf16>, %v: tensor<2x2x130x128xbf16>, %slope: tensor<1x4x1x1xf32>) -> tensor<2x4x40x128xbf16> {
  %o = attn.sdpa %q, %k, %v extras(%slope) : (tensor<2x4x40x128xbf16>, tensor<2x2x130x128xbf16>, tensor<2x2x130x128xbf16>, tensor<1x4x1x1xf32>) -> tensor<2x4x40x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %m: f32):
    %ii = arith.index_castui %i : index to i64
    %jj = arith.index_castui %j : index to i64
    %if = arith.uitofp %ii : i64 to f32
    %jf = arith.uitofp %jj : i64 to f32
    %d = arith.subf %jf, %if : f32
    %bias = arith.mulf %m, %d : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return %o : tensor<2x4x40x128xbf16>
}

// A position mask computed from the indices (keys within 8 of the query, and
// never key 0 of an odd head), a boolean padding mask [B, 1, 1, S] captured
// as an i1 tensor, and an f16 bias added in f16 as a Hugging Face chain does.
func.func @position_mask(%q: tensor<2x2x30x80xf16>, %k: tensor<2x2x70x80xf16>, %v: tensor<2x2x70x32xf16>, %pad: tensor<2x1x1x70xi1>, %bias: tensor<30x70xf16>) -> tensor<2x2x30x32xf16> {
  %o = attn.sdpa %q, %k, %v extras(%pad, %bias) : (tensor<2x2x30x80xf16>, tensor<2x2x70x80xf16>, tensor<2x2x70x32xf16>, tensor<2x1x1x70xi1>, tensor<30x70xf16>) -> tensor<2x2x30x32xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %p: i1, %e: f16):
    %ninf = arith.constant 0xFF800000 : f32
    %c8 = arith.constant 8 : i64
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %ii = arith.index_cast %i : index to i64
    %jj = arith.index_cast %j : index to i64
    %dist = arith.subi %ii, %jj : i64
    %neg = arith.subi %jj, %ii : i64
    %abs = arith.maxsi %dist, %neg : i64
    %far = arith.cmpi sgt, %abs, %c8 : i64
    %odd = arith.andi %h, %c1 : index
    %isodd = arith.cmpi ne, %odd, %c0 : index
    %first = arith.cmpi eq, %j, %c0 : index
    %drop0 = arith.andi %isodd, %first : i1
    %drop1 = arith.ori %far, %drop0 : i1
    %drop = arith.ori %drop1, %p : i1
    %s16 = arith.truncf %s : f32 to f16
    %sum = arith.addf %s16, %e : f16
    %w = arith.extf %sum : f16 to f32
    %r = arith.select %drop, %ninf, %w : f32
    attn.yield %r : f32
  }
  return %o : tensor<2x2x30x32xf16>
}

// Hugging Face's fill with finfo(f32).min where a [1, 1, L, S] i1 mask is
// set, f32: masked scores are finite, so a fully masked row averages v
// uniformly, as on the CPU (the kernels keep -FLT_MAX finite in their log2
// domain).
func.func @finfo_min_fill(%q: tensor<2x2x33x64xf32>, %k: tensor<2x2x90x64xf32>, %v: tensor<2x2x90x64xf32>, %m: tensor<1x1x33x90xi1>) -> tensor<2x2x33x64xf32> {
  %o = attn.sdpa %q, %k, %v extras(%m) : (tensor<2x2x33x64xf32>, tensor<2x2x90x64xf32>, tensor<2x2x90x64xf32>, tensor<1x1x33x90xi1>) -> tensor<2x2x33x64xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %p: i1):
    %min = arith.constant -3.40282347E+38 : f32
    %r = arith.select %p, %min, %s : f32
    attn.yield %r : f32
  }
  return %o : tensor<2x2x33x64xf32>
}

// No region: two boolean masks as the fusion combines a masked_fill mask
// and a keep mask (drop polarity: the first or-ed with the inverted second),
// which attn-lower-sdpa-to-cuda moves into a generated region so that no
// host op combines them; bf16, causal, with the finite masked value -1e9
// (rounded to bf16).
func.func @two_masks(%q: tensor<2x4x64x64xbf16>, %k: tensor<2x4x64x64xbf16>, %v: tensor<2x4x64x64xbf16>, %pad: tensor<2x1x64x64xi1>, %keep: tensor<2x1x64x64xi1>) -> tensor<2x4x64x64xbf16> {
  %true = arith.constant dense<true> : tensor<2x1x64x64xi1>
  %notkeep = arith.xori %keep, %true : tensor<2x1x64x64xi1>
  %either = arith.ori %pad, %notkeep : tensor<2x1x64x64xi1>
  %0 = attn.sdpa %q, %k, %v, %either {is_causal = true, mask_polarity = #attn.mask_polarity<drop>, masked_value = -1.000000e+09 : f64} : (tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<2x1x64x64xi1>) -> tensor<2x4x64x64xbf16>
  return %0 : tensor<2x4x64x64xbf16>
}
