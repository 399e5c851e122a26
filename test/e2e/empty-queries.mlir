// L = 0: no query rows. The result is empty, as in PyTorch, on every
// backend; the decode lowering (chosen for a static L of at most half the
// vector lanes) used to divide by the row count at compile time (SIGFPE).
// RUN: attn-run %s --entry empty_static --backend=flash --check | FileCheck %s
// RUN: attn-run %s --entry empty_static --backend=math | FileCheck %s
// RUN: attn-run %s --entry empty_static --check --num-threads=1 --mcpu=x86-64-v3 | FileCheck %s
// RUN: attn-run %s --entry empty_dynamic --backend=flash --check --shape 0=2x4x0x64 | FileCheck %s
// CHECK: result 0: 2x4x0x64xf32 sum=0.000000e+00 abs_sum=0.000000e+00 nan=0
// CHECK-NOT: FAIL
// RUN: attn-opt %s --attn-lower-to-cpu --split-input-file | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @empty_static
// IR-NOT: attn.sdpa
func.func @empty_static(%q: tensor<2x4x0x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>) -> tensor<2x4x0x64xf32> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<2x4x0x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) -> tensor<2x4x0x64xf32>
  return %o : tensor<2x4x0x64xf32>
}
func.func @empty_dynamic(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>) -> tensor<2x4x?x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x4x?x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>) -> tensor<2x4x?x64xf32>
  return %o : tensor<2x4x?x64xf32>
}
