// Soft-capping, ALiBi with captured per-head slopes and a captured key
// padding mask in one score_mod region, for a prefill shape (tensor-core
// kernel, GQA, causal) and a decode shape (split-key kernel): compiled for
// CUDA and for the CPU and compared by score_mod_gpu_vs_cpu.cpp
// (cuda-score-mod-run.test).
func.func @prefill(%q: tensor<2x8x200x64xf16>, %k: tensor<2x4x300x64xf16>, %v: tensor<2x4x300x64xf16>, %slope: tensor<1x8x1x1xf32>, %pad: tensor<2x1x1x300xi1>) -> tensor<2x8x200x64xf16> {
  %o = attn.sdpa %q, %k, %v extras(%slope, %pad) {is_causal = true} : (tensor<2x8x200x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<1x8x1x1xf32>, tensor<2x1x1x300xi1>) -> tensor<2x8x200x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: f32, %p: i1):
    %cap = arith.constant 2.000000e+01 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %d = arith.divf %s, %cap : f32
    %t = math.tanh %d : f32
    %c = arith.mulf %t, %cap : f32
    %ii = arith.index_castui %i : index to i64
    %jj = arith.index_castui %j : index to i64
    %if = arith.uitofp %ii : i64 to f32
    %jf = arith.uitofp %jj : i64 to f32
    %dist = arith.subf %jf, %if : f32
    %bias = arith.mulf %sl, %dist : f32
    %r = arith.addf %c, %bias : f32
    %m = arith.select %p, %ninf, %r : f32
    attn.yield %m : f32
  }
  return %o : tensor<2x8x200x64xf16>
}

func.func @decode(%q: tensor<2x8x4x64xf16>, %k: tensor<2x4x1000x64xf16>, %v: tensor<2x4x1000x64xf16>, %slope: tensor<1x8x1x1xf32>, %pad: tensor<2x1x1x1000xi1>) -> tensor<2x8x4x64xf16> {
  %o = attn.sdpa %q, %k, %v extras(%slope, %pad) : (tensor<2x8x4x64xf16>, tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<1x8x1x1xf32>, tensor<2x1x1x1000xi1>) -> tensor<2x8x4x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: f32, %p: i1):
    %cap = arith.constant 2.000000e+01 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %d = arith.divf %s, %cap : f32
    %t = math.tanh %d : f32
    %c = arith.mulf %t, %cap : f32
    %ii = arith.index_castui %i : index to i64
    %jj = arith.index_castui %j : index to i64
    %if = arith.uitofp %ii : i64 to f32
    %jf = arith.uitofp %jj : i64 to f32
    %dist = arith.subf %jf, %if : f32
    %bias = arith.mulf %sl, %dist : f32
    %r = arith.addf %c, %bias : f32
    %m = arith.select %p, %ninf, %r : f32
    attn.yield %m : f32
  }
  return %o : tensor<2x8x4x64xf16>
}
