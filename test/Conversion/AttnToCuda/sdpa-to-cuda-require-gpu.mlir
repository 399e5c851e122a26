// RUN: attn-opt %s --split-input-file --attn-lower-sdpa-to-cuda=require-gpu=true --verify-diagnostics

// With require-gpu (attn-compile --target=cuda --backend=flash), an attn.sdpa
// the CUDA kernels cannot run is an error, not a CPU fallback.

func.func @f64(%f: tensor<16x64xf64>) -> tensor<16x64xf64> {
  // expected-error @+1 {{'attn.sdpa' op cannot run on the GPU: element type f64 (the CUDA kernels take f16, bf16 and f32)}}
  %0 = attn.sdpa %f, %f, %f : (tensor<16x64xf64>, tensor<16x64xf64>, tensor<16x64xf64>) -> tensor<16x64xf64>
  return %0 : tensor<16x64xf64>
}

// -----

func.func @head_dim(%h: tensor<16x60xf16>) -> tensor<16x60xf16> {
  // expected-error @+1 {{cannot run on the GPU: head dim 60 (the CUDA kernels need a multiple of 8, at most 256)}}
  %0 = attn.sdpa %h, %h, %h : (tensor<16x60xf16>, tensor<16x60xf16>, tensor<16x60xf16>) -> tensor<16x60xf16>
  return %0 : tensor<16x60xf16>
}

// -----

func.func @dynamic_head_dim(%h: tensor<16x?xf16>) -> tensor<16x?xf16> {
  // expected-error @+1 {{cannot run on the GPU: a dynamic head dim (the kernel is chosen at compile time)}}
  %0 = attn.sdpa %h, %h, %h {scale = 0.125 : f64} : (tensor<16x?xf16>, tensor<16x?xf16>, tensor<16x?xf16>) -> tensor<16x?xf16>
  return %0 : tensor<16x?xf16>
}

// -----

func.func @dropout(%d: tensor<16x64xf16>) -> tensor<16x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: dropout_p > 0 (the CUDA kernels are inference kernels)}}
  %0 = attn.sdpa %d, %d, %d {dropout_p = 0.1 : f64} : (tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<16x64xf16>
  return %0 : tensor<16x64xf16>
}

// -----

func.func @rank5(%r: tensor<1x2x2x16x64xf16>) -> tensor<1x2x2x16x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: rank 5 (the CUDA kernels take [B, H, L, E] at most)}}
  %0 = attn.sdpa %r, %r, %r : (tensor<1x2x2x16x64xf16>, tensor<1x2x2x16x64xf16>, tensor<1x2x2x16x64xf16>) -> tensor<1x2x2x16x64xf16>
  return %0 : tensor<1x2x2x16x64xf16>
}

// -----

func.func @lengths_rank3(%q: tensor<2x16x64xf16>, %n: tensor<2xi32>) -> tensor<2x16x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: sequence lengths on a rank-3 query (the CUDA kernels index them by the B of [B, H, L, E])}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) kv_lengths(%n) : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x16x64xf16>
  return %0 : tensor<2x16x64xf16>
}

// -----

func.func @sinks(%q: tensor<2x4x16x64xf16>, %s: tensor<4xf32>) -> tensor<2x4x16x64xf16> {
  // expected-error @+1 {{cannot run on the GPU: attention sinks (the CUDA kernels take no sinks)}}
  %0 = attn.sdpa %q, %q, %q sinks(%s) : (tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<4xf32>) -> tensor<2x4x16x64xf16>
  return %0 : tensor<2x4x16x64xf16>
}
