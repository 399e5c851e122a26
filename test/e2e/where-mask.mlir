// torch.where(mask, scores, -1e9): true keeps a position; fully masked rows
// (mask row all false) average v uniformly instead of giving NaN.
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x4x80x64xf32 {{.*}} nan=0
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<2x4x80x64xf32>, %k: tensor<2x4x80x64xf32>,
             %v: tensor<2x4x80x64xf32>, %mask: tensor<2x1x80x80xi1>) -> tensor<2x4x80x64xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x4x80x64xf32>) -> tensor<2x4x64x80xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x4x80x64xf32>, tensor<2x4x64x80xf32>) -> tensor<2x4x80x80xf32>
  %c  = arith.constant dense<0.125> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<2x4x80x80xf32>, tensor<f32>) -> tensor<2x4x80x80xf32>
  %n  = arith.constant dense<-1.0e9> : tensor<f32>
  %m  = "attn.where"(%mask, %ss, %n) : (tensor<2x1x80x80xi1>, tensor<2x4x80x80xf32>, tensor<f32>) -> tensor<2x4x80x80xf32>
  %p  = "attn.softmax"(%m) {dim = -1 : i64} : (tensor<2x4x80x80xf32>) -> tensor<2x4x80x80xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x4x80x80xf32>, tensor<2x4x80x64xf32>) -> tensor<2x4x80x64xf32>
  return %o : tensor<2x4x80x64xf32>
}
