// RUN: attn-opt %s --split-input-file --verify-diagnostics --attn-lower-to-cpu="vector-bits=512 bf16-dot=true"

// bf16 pairs ([NB, KB, kc / 2, 2 * nc]) that the op verifiers or the CPU
// lowering reject, on a target whose GEMMs multiply pairs.

// An odd number of pair columns.
func.func @odd_width(%w: tensor<100x70xbf16>) -> tensor<1x1x35x225xbf16> {
  // expected-error @below {{packed bf16 pairs must be a static [NB, KB, kc / 2, 2 * nc] tensor with kc, nc >= 1, got 1x1x35x225}}
  %p = attn.pack_weight %w transposed : tensor<100x70xbf16> -> tensor<1x1x35x225xbf16>
  return %p : tensor<1x1x35x225xbf16>
}

// -----

// Pairs that do not cover the operand: 35 pairs are kc = 70 rows of k, but
// 2 x 256 pair columns are 2 x 128 columns for N = 100.
func.func @wrong_blocks(%w: tensor<100x70xbf16>) -> tensor<2x1x35x256xbf16> {
  // expected-error @below {{packed panels 2x1x35x256 do not cover a [K, N] = 70x100 operand in blocks of kc = 70 and nc = 128 (expected 1x1x35x256)}}
  %p = attn.pack_weight %w transposed : tensor<100x70xbf16> -> tensor<2x1x35x256xbf16>
  return %p : tensor<2x1x35x256xbf16>
}

// -----

// f32 panels of a bf16 weight.
func.func @mixed_types(%w: tensor<100x70xbf16>) -> tensor<1x1x70x128xf32> {
  // expected-error @below {{packed panels of 'f32' hold an operand of 'bf16'}}
  %p = attn.pack_weight %w transposed : tensor<100x70xbf16> -> tensor<1x1x70x128xf32>
  return %p : tensor<1x1x70x128xf32>
}

// -----

// Pair columns that are not whole 512-bit vectors of pairs (16 columns):
// packed for 256-bit vectors (nc = 104).
func.func @partial_vectors(%w: tensor<100x70xbf16>) -> tensor<1x1x35x208xbf16> {
  // expected-error @below {{cannot be lowered to CPU code: the panels' nc = 104 is not a whole number of 512-bit vectors}}
  %p = attn.pack_weight %w transposed : tensor<100x70xbf16> -> tensor<1x1x35x208xbf16>
  return %p : tensor<1x1x35x208xbf16>
}

// -----

// The pair path multiplies bf16 pairs by a bf16 left operand only.
func.func @f32_lhs(%p: tensor<1x1x35x256xbf16>, %x: tensor<4x70xf32>) -> tensor<4x100xf32> {
  // expected-error @below {{cannot be lowered to CPU code: bf16 pairs are multiplied only with a bf16 left operand}}
  %w = attn.unpack_weight %p : tensor<1x1x35x256xbf16> -> tensor<70x100xbf16>
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<4x100xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<4x100xf32>) -> tensor<4x100xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x70xf32>, tensor<70x100xbf16>) outs(%f : tensor<4x100xf32>) -> tensor<4x100xf32>
  return %y : tensor<4x100xf32>
}
