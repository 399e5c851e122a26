// The flash options are checked before anything is lowered: block sizes
// >= 0 (0: chosen for the target), vector widths the tiling knows, a
// position bound that keeps score_mod positions within 32 bits.
// RUN: not attn-opt %s --attn-lower-to-cpu=block-q=-1 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attn-opt %s --attn-lower-to-cpu=block-kv=-8 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not attn-opt %s --attn-lower-to-cpu=vector-bits=384 2>&1 | FileCheck %s --check-prefix=BITS
// RUN: not attn-opt %s --attn-cpu-lowering-pipeline=vector-bits=64 2>&1 | FileCheck %s --check-prefix=BITS64
// RUN: not attn-opt %s --attn-lower-to-cpu=position-bound=0 2>&1 | FileCheck %s --check-prefix=POS0
// RUN: not attn-opt %s --attn-cpu-lowering-pipeline=position-bound=1073741825 2>&1 | FileCheck %s --check-prefix=POSBIG

// BLOCK: error: attn-lower-to-cpu: block sizes must be >= 0 (0: chosen for the target)
// BITS: error: attn-lower-to-cpu: vector-bits must be 128, 256 or 512, not 384
// BITS64: error: attn-lower-to-cpu: vector-bits must be 128, 256 or 512, not 64
// POS0: error: attn-lower-to-cpu: position-bound must be in [1, 1073741824], not 0
// POSBIG: error: attn-lower-to-cpu: position-bound must be in [1, 1073741824], not 1073741825
func.func @negative_flash_options(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
