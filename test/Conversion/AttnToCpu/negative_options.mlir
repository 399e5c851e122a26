// Options are typed: a value outside the option's list is rejected when the
// pipeline is parsed (exit 1), for the pass and for the whole pipeline.
// RUN: not attn-opt %s --attn-lower-to-cpu=backend=gpu 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not attn-opt %s --attn-cpu-lowering-pipeline=backend=flsh 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not attn-opt %s --attn-lower-to-cpu=backend=flash 2>&1 | FileCheck %s --check-prefix=DROPOUT

// PASS: for the --backend option: Cannot find option named 'gpu'!
// PIPELINE: for the --backend option: Cannot find option named 'flsh'!
// DROPOUT: error: 'attn.sdpa' op cannot be lowered with backend=flash
func.func @negative_unknown_backend(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %q, %q {dropout_p = 1.000000e-01 : f64} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
