// Head dims of 0 (the hardening issue: the flash lowering built invalid IR).
// E = 0: every score is an empty sum (0), the softmax is uniform, and the
// result is the mean of the value rows; the fused op (flash requested: a
// static zero head dim is lowered by the math path) agrees with the chain.
// RUN: attn-run %s --entry e0_chain --check --backend=flash | FileCheck %s --check-prefix=E0
// E0: result 0: 2x3x5x4xf32 {{.*}} nan=0
// E0: check: {{.*}} ok
func.func @e0_chain(%q: tensor<2x3x5x0xf32>, %k: tensor<2x3x7x0xf32>, %v: tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x3x7x0xf32> -> tensor<2x3x0x7xf32>
  %s = attn.matmul %q, %kt : (tensor<2x3x5x0xf32>, tensor<2x3x0x7xf32>) -> tensor<2x3x5x7xf32>
  %p = attn.softmax %s dim(-1) : tensor<2x3x5x7xf32>
  %o = attn.matmul %p, %v : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// The mean of the value rows, checked against an explicit value: v = 1
// everywhere gives 1 everywhere (sum = 2*3*5*4 = 120).
// RUN: attn-run %s --entry e0_ones --backend=flash | FileCheck %s --check-prefix=ONES
// RUN: attn-run %s --entry e0_ones --backend=math | FileCheck %s --check-prefix=ONES
// ONES: result 0: 2x3x5x4xf32 sum=1.200000e+02 abs_sum=1.200000e+02 nan=0
func.func @e0_ones(%q: tensor<2x3x5x0xf32>, %k: tensor<2x3x7x0xf32>) -> tensor<2x3x5x4xf32> {
  %v = arith.constant dense<1.0> : tensor<2x3x7x4xf32>
  %o = attn.sdpa %q, %k, %v {scale = 1.0 : f64} : (tensor<2x3x5x0xf32>, tensor<2x3x7x0xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// Ev = 0: an empty result.
// RUN: attn-run %s --entry ev0 --backend=flash | FileCheck %s --check-prefix=EV0
// EV0: result 0: 2x5x0xf32 sum=0.000000e+00 abs_sum=0.000000e+00 nan=0
func.func @ev0(%q: tensor<2x5x4xf32>, %k: tensor<2x7x4xf32>, %v: tensor<2x7x0xf32>) -> tensor<2x5x0xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x0xf32>) -> tensor<2x5x0xf32>
  return %o : tensor<2x5x0xf32>
}

// A dynamic head dim that is 0 at run time goes through flash.
// RUN: attn-run %s --entry edyn --backend=flash --shape 0=2x5x0 --shape 1=2x7x0 --shape 2=2x7x4 --check | FileCheck %s --check-prefix=EDYN
// EDYN: result 0: 2x5x4xf32 {{.*}} nan=0
// EDYN: check: {{.*}} ok
func.func @edyn(%q: tensor<2x5x?xf32>, %k: tensor<2x7x?xf32>, %v: tensor<2x7x4xf32>) -> tensor<2x5x4xf32> {
  %o = attn.sdpa %q, %k, %v {scale = 1.0 : f64} : (tensor<2x5x?xf32>, tensor<2x7x?xf32>, tensor<2x7x4xf32>) -> tensor<2x5x4xf32>
  return %o : tensor<2x5x4xf32>
}
