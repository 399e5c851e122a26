// Sequence lengths on the CUDA path (cuda-lengths.test): left padding with
// i32 lengths, and the packed layout of a [H, T, E] query with i64 lengths.
func.func @padded_attention(%q: tensor<2x4x64x64xf16>, %k: tensor<2x4x96x64xf16>, %v: tensor<2x4x96x64xf16>,
                            %nq: tensor<2xi32>, %nk: tensor<2xi32>) -> tensor<2x4x64x64xf16> {
  %0 = attn.sdpa %q, %k, %v q_lengths(%nq) kv_lengths(%nk) {is_causal = true, padding_side = #attn.padding_side<left>}
      : (tensor<2x4x64x64xf16>, tensor<2x4x96x64xf16>, tensor<2x4x96x64xf16>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x4x64x64xf16>
  return %0 : tensor<2x4x64x64xf16>
}

func.func @packed_attention(%q: tensor<4x100x128xbf16>, %nq: tensor<3xi64>, %nk: tensor<3xi64>) -> tensor<4x100x128xbf16> {
  %0 = attn.sdpa %q, %q, %q q_lengths(%nq) kv_lengths(%nk) {is_causal = true, padding_side = #attn.padding_side<packed>}
      : (tensor<4x100x128xbf16>, tensor<4x100x128xbf16>, tensor<4x100x128xbf16>, tensor<3xi64>, tensor<3xi64>) -> tensor<4x100x128xbf16>
  return %0 : tensor<4x100x128xbf16>
}
