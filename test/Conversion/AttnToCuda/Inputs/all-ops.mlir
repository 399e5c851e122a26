// One region with every op the score_mod generator translates (and every
// kind of extra operand), for score-mod-source.test (compiled as host C++
// against the emulator's Ops) and test/e2e/cuda-score-mod.test (compiled
// with nvcc).
func.func @all_ops(%q: tensor<1x2x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>, %e16: tensor<16x16xf16>, %eb: tensor<1x2x1x1xbf16>, %e32: tensor<16xf32>, %ei1: tensor<1x1x16x16xi1>) -> tensor<1x2x16x64xf16> {
  %o = attn.sdpa %q, %k, %v extras(%e16, %eb, %e32, %ei1) : (tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<16x16xf16>, tensor<1x2x1x1xbf16>, tensor<16xf32>, tensor<1x1x16x16xi1>) -> tensor<1x2x16x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x16: f16, %xb: bf16, %x32: f32, %p: i1):
    %a1 = arith.addf %s, %x32 : f32
    %a2 = arith.subf %a1, %x32 : f32
    %a3 = arith.mulf %a2, %x32 : f32
    %a4 = arith.divf %a3, %x32 : f32
    %a5 = arith.remf %a4, %x32 : f32
    %a6 = arith.maximumf %a5, %s : f32
    %a7 = arith.minimumf %a6, %s : f32
    %a8 = arith.maxnumf %a7, %s : f32
    %a9 = arith.minnumf %a8, %s : f32
    %a10 = arith.negf %a9 : f32
    %h1 = arith.addf %x16, %x16 : f16
    %h2 = math.tanh %h1 : f16
    %h3 = arith.extf %h2 : f16 to f32
    %bb1 = arith.mulf %xb, %xb : bf16
    %bb2 = arith.extf %bb1 : bf16 to f32
    %d1 = arith.extf %a10 : f32 to f64
    %d2 = arith.addf %d1, %d1 : f64
    %d3 = math.sqrt %d2 : f64
    %d4 = math.exp %d3 : f64
    %d5 = arith.truncf %d4 : f64 to f32
    %m1 = math.absf %d5 : f32
    %m2 = math.copysign %m1, %s : f32
    %m3 = math.floor %m2 : f32
    %m4 = math.ceil %m3 : f32
    %m5 = math.trunc %m4 : f32
    %m6 = math.round %m5 : f32
    %m7 = math.roundeven %m6 : f32
    %m8 = math.sqrt %m7 : f32
    %m9 = math.rsqrt %m8 : f32
    %m10 = math.fma %m9, %m8, %m7 : f32
    %m11 = math.exp %m10 : f32
    %m12 = math.exp2 %m11 : f32
    %m13 = math.expm1 %m12 : f32
    %m14 = math.log %m13 : f32
    %m15 = math.log2 %m14 : f32
    %m16 = math.log10 %m15 : f32
    %m17 = math.log1p %m16 : f32
    %m18 = math.sin %m17 : f32
    %m19 = math.cos %m18 : f32
    %m20 = math.tan %m19 : f32
    %m21 = math.atan %m20 : f32
    %m22 = math.atan2 %m21, %m20 : f32
    %m23 = math.erf %m22 : f32
    %m24 = math.cbrt %m23 : f32
    %m25 = math.powf %m24, %m23 : f32
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_castui %j : index to i32
    %c3 = arith.constant 3 : i32
    %i1 = arith.addi %ii, %jj : i32
    %i2 = arith.subi %i1, %c3 : i32
    %i3 = arith.muli %i2, %c3 : i32
    %i4 = arith.divsi %i3, %c3 : i32
    %i5 = arith.divui %i4, %c3 : i32
    %i6 = arith.remsi %i5, %c3 : i32
    %i7 = arith.remui %i6, %c3 : i32
    %i8 = arith.floordivsi %i7, %c3 : i32
    %i9 = arith.ceildivsi %i8, %c3 : i32
    %i10 = arith.ceildivui %i9, %c3 : i32
    %i11 = arith.shli %i10, %c3 : i32
    %i12 = arith.shrui %i11, %c3 : i32
    %i13 = arith.shrsi %i12, %c3 : i32
    %i14 = arith.maxsi %i13, %ii : i32
    %i15 = arith.minsi %i14, %ii : i32
    %i16 = arith.maxui %i15, %ii : i32
    %i17 = arith.minui %i16, %ii : i32
    %i18 = arith.andi %i17, %ii : i32
    %i19 = arith.ori %i18, %ii : i32
    %i20 = arith.xori %i19, %ii : i32
    %i21 = arith.extsi %i20 : i32 to i64
    %i22 = arith.extui %i20 : i32 to i64
    %i23 = arith.trunci %i22 : i64 to i16
    %i24 = arith.index_cast %i23 : i16 to index
    %f1 = arith.sitofp %i21 : i64 to f32
    %f2 = arith.uitofp %i22 : i64 to f64
    %f3 = arith.fptosi %f1 : f32 to i32
    %f4 = arith.fptoui %f2 : f64 to i16
    %cmp1 = arith.cmpf ult, %m25, %f1 : f32
    %cmp2 = arith.cmpf one, %m25, %a10 : f32
    %cmp3 = arith.cmpi ule, %i24, %h : index
    %cmp4 = arith.cmpi slt, %f3, %ii : i32
    %cmp5 = arith.cmpi eq, %f4, %i23 : i16
    %o1 = arith.ori %cmp1, %cmp2 : i1
    %o2 = arith.andi %o1, %cmp3 : i1
    %o3 = arith.xori %o2, %cmp4 : i1
    %o4 = arith.ori %o3, %cmp5 : i1
    %o5 = arith.ori %o4, %p : i1
    %t1 = arith.addf %h3, %bb2 : f32
    %t2 = arith.truncf %t1 : f32 to bf16
    %t3 = arith.extf %t2 : bf16 to f32
    %r = arith.select %o5, %t3, %m25 : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x16x64xf16>
}
