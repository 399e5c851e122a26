// attn-to-llvm's options are checked: the target is cpu or cuda, and the
// CPU lowering's values are checked by the passes that take them.
// RUN: not attn-opt %s --attn-to-llvm=target=gpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not attn-opt %s --attn-to-llvm=vector-bits=64 2>&1 | FileCheck %s --check-prefix=BITS

// TARGET: for the --target option: Cannot find option named 'gpu'!
// BITS: error: attn-lower-to-cpu: vector-bits must be 128, 256 or 512, not 64
func.func @negative_attn_to_llvm(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
