// Window bounds at the ends of i64: no index arithmetic overflows (the
// lowerings clamp bounds to +-2^62, the same band for any real size).
// Flash (and, for @h, the decode path) against the math lowering.
// RUN: attn-run %s --entry f --check | FileCheck %s --check-prefix=ALL
// RUN: attn-run %s --entry g --check | FileCheck %s --check-prefix=ALL
// RUN: attn-run %s --entry h --check | FileCheck %s --check-prefix=NONE
// ALL: result 0: 1x70x16xf32 {{.*}} nan=1120
// ALL: check: {{.*}} ok
// NONE: result 0: 1x2x16xf32 {{.*}} nan=0
// NONE: check: {{.*}} ok
func.func @f(%q: tensor<1x70x16xf32>, %k: tensor<1x90x16xf32>, %v: tensor<1x90x16xf32>) -> tensor<1x70x16xf32> {
  %o = attn.sdpa %q, %k, %v {window_left = 9223372036854775807 : i64, window_right = -9223372036854775808 : i64} : (tensor<1x70x16xf32>, tensor<1x90x16xf32>, tensor<1x90x16xf32>) -> tensor<1x70x16xf32>
  return %o : tensor<1x70x16xf32>
}
func.func @g(%q: tensor<1x70x16xf32>, %k: tensor<1x90x16xf32>, %v: tensor<1x90x16xf32>) -> tensor<1x70x16xf32> {
  %o = attn.sdpa %q, %k, %v {window_left = -9223372036854775808 : i64, window_right = 9223372036854775807 : i64} : (tensor<1x70x16xf32>, tensor<1x90x16xf32>, tensor<1x90x16xf32>) -> tensor<1x70x16xf32>
  return %o : tensor<1x70x16xf32>
}
func.func @h(%q: tensor<1x2x16xf32>, %k: tensor<1x90x16xf32>, %v: tensor<1x90x16xf32>) -> tensor<1x2x16xf32> {
  %o = attn.sdpa %q, %k, %v {window_left = 9223372036854775807 : i64, window_right = 9223372036854775807 : i64} : (tensor<1x2x16xf32>, tensor<1x90x16xf32>, tensor<1x90x16xf32>) -> tensor<1x2x16xf32>
  return %o : tensor<1x2x16xf32>
}
