// The key comes in already transposed ([B, H, D, S]): no attn.transpose.
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x4x64x32xf32
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<2x4x64x32xf32>, %kt: tensor<2x4x32x64xf32>,
             %v: tensor<2x4x64x32xf32>) -> tensor<2x4x64x32xf32> {
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x4x64x32xf32>, tensor<2x4x32x64xf32>) -> tensor<2x4x64x64xf32>
  %c  = arith.constant dense<0.17677669529663687> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<2x4x64x64xf32>, tensor<f32>) -> tensor<2x4x64x64xf32>
  %p  = "attn.softmax"(%ss) {dim = -1 : i64} : (tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x4x64x64xf32>, tensor<2x4x64x32xf32>) -> tensor<2x4x64x32xf32>
  return %o : tensor<2x4x64x32xf32>
}
