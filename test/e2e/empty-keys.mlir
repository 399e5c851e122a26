// S = 0: no keys at all. The chain's p . v is an empty sum, so the result is
// all zeros (no NaN); flash used to give NaN (a row max that stays -inf).
// RUN: attn-run %s --entry empty_static --backend=flash | FileCheck %s
// RUN: attn-run %s --entry empty_static --backend=math | FileCheck %s
// RUN: attn-run %s --entry empty_dynamic --backend=flash --shape 1=2x0x8 --shape 2=2x0x8 | FileCheck %s
// RUN: attn-run %s --entry empty_dynamic --check --shape 1=2x0x8 --shape 2=2x0x8 | FileCheck %s --check-prefix=CHECK-CHECK
// CHECK: result 0: 2x8x8xf32 sum=0.000000e+00 abs_sum=0.000000e+00 nan=0
// CHECK-CHECK: check: {{.*}} ok
func.func @empty_static(%q: tensor<2x8x8xf32>, %k: tensor<2x0x8xf32>, %v: tensor<2x0x8xf32>) -> tensor<2x8x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x8x8xf32>, tensor<2x0x8xf32>, tensor<2x0x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}
func.func @empty_dynamic(%q: tensor<2x8x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x8xf32>) -> tensor<2x8x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x8x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}
