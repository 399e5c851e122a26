// A score_mod region the CUDA generator does not translate (a bit cast), for
// cuda-score-mod-errors.test: the op runs on the CPU, no nvcc needed.
func.func @bitcast_mod(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %x = arith.bitcast %s : f32 to i32
    %c = arith.constant 2147483647 : i32
    %a = arith.andi %x, %c : i32
    %y = arith.bitcast %a : i32 to f32
    attn.yield %y : f32
  }
  return %o : tensor<1x2x64x64xf16>
}
