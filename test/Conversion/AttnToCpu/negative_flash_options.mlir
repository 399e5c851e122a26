// The flash options are checked before anything is lowered: block sizes
// >= 0 (0: chosen for the target), vector widths the tiling knows.
// RUN: not attn-opt %s --attn-lower-to-cpu=block-q=-1 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attn-opt %s --attn-lower-to-cpu=block-kv=-8 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attn-opt %s --attn-lower-to-cpu=vector-bits=384 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not attn-opt %s --attn-cpu-lowering-pipeline=vector-bits=64 2>&1 | FileCheck %s --check-prefix=BITS64

// BLOCK: error: attn-lower-to-cpu: block sizes must be >= 0 (0: chosen for the target)
// BITS: error: attn-lower-to-cpu: vector-bits must be 128, 256 or 512, not 384
// BITS64: error: attn-lower-to-cpu: vector-bits must be 128, 256 or 512, not 64
func.func @negative_flash_options(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
