// nanoGPT's causal self-attention core in f16, with q/k/v in the [B, L, H, E]
// layout the projections produce. `attn-compile --target=cuda` turns the
// attn.sdpa into one call of the CUDA flash kernel and the three transposes
// into strided views: nothing is copied and nothing runs on the CPU, so the
// inputs may be plain cudaMalloc'ed device memory.
func.func @causal_attention(%xq: tensor<2x256x8x64xf16>, %xk: tensor<2x256x8x64xf16>,
                            %xv: tensor<2x256x8x64xf16>) -> tensor<2x8x256x64xf16> {
  %q = attn.transpose %xq dims(1, 2) : tensor<2x256x8x64xf16> -> tensor<2x8x256x64xf16>
  %k = attn.transpose %xk dims(1, 2) : tensor<2x256x8x64xf16> -> tensor<2x8x256x64xf16>
  %v = attn.transpose %xv dims(1, 2) : tensor<2x256x8x64xf16> -> tensor<2x8x256x64xf16>
  %o = attn.sdpa %q, %k, %v {is_causal = true}
      : (tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>) -> tensor<2x8x256x64xf16>
  return %o : tensor<2x8x256x64xf16>
}
