// One attn.sdpa with a score_mod region (soft-capping), for the attn-compile
// --target=cuda tests of generated kernels.
func.func @softcap(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x64x64xf16>
}
