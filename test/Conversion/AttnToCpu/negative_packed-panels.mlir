// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-lower-to-cpu=vector-bits=512

// Panels that do not cover their operand.
func.func @wrong_blocks(%w: tensor<100x70xf32>) -> tensor<2x1x70x112xf32> {
  // expected-error @below {{packed panels 2x1x70x112 do not cover a [K, N] = 70x100 operand in blocks of kc = 70 and nc = 112 (expected 1x1x70x112)}}
  %p = attn.pack_weight %w transposed : tensor<100x70xf32> -> tensor<2x1x70x112xf32>
  return %p : tensor<2x1x70x112xf32>
}

// -----

func.func @not_panels(%p: tensor<70x112xf32>) -> tensor<70x100xf32> {
  // expected-error @below {{packed panels must be a static [NB, KB, kc, nc] tensor with kc, nc >= 1, got 70x112}}
  %w = attn.unpack_weight %p : tensor<70x112xf32> -> tensor<70x100xf32>
  return %w : tensor<70x100xf32>
}

// -----

// Panels read by anything but a GEMM cannot be lowered.
func.func @returned(%p: tensor<1x1x70x112xf32>) -> tensor<70x100xf32> {
  // expected-error @below {{cannot be lowered to CPU code: its only users must be 2-D linalg.matmul ops with an f32 result that take it as their right operand}}
  %w = attn.unpack_weight %p : tensor<1x1x70x112xf32> -> tensor<70x100xf32>
  return %w : tensor<70x100xf32>
}

// -----

// Columns that are not whole 512-bit vectors (packed for another target).
func.func @partial_vectors(%w: tensor<100x70xf32>) -> tensor<1x1x70x104xf32> {
  // expected-error @below {{cannot be lowered to CPU code: the panels' nc = 104 is not a whole number of 512-bit vectors}}
  %p = attn.pack_weight %w transposed : tensor<100x70xf32> -> tensor<1x1x70x104xf32>
  return %p : tensor<1x1x70x104xf32>
}

// -----

// bf16 pairs on a target whose GEMMs do not multiply pairs (this RUN line
// has no bf16-dot; negative_packed-pairs.mlir has it).
func.func @pairs_without_dot(%w: tensor<100x70xbf16>) -> tensor<1x1x35x256xbf16> {
  // expected-error @below {{cannot be lowered to CPU code: bf16 panels are packed in pairs for AVX512-BF16's vdpbf16ps, which the target does not use for GEMMs (pack the weight for this target, or not at all)}}
  %p = attn.pack_weight %w transposed : tensor<100x70xbf16> -> tensor<1x1x35x256xbf16>
  return %p : tensor<1x1x35x256xbf16>
}
