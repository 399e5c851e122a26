// Cross attention: L (48) != S (131), value width Ev (80) != E (32).
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x4x48x80xf32
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<2x4x48x32xf32>, %k: tensor<2x4x131x32xf32>,
             %v: tensor<2x4x131x80xf32>) -> tensor<2x4x48x80xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x4x131x32xf32>) -> tensor<2x4x32x131xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x4x48x32xf32>, tensor<2x4x32x131xf32>) -> tensor<2x4x48x131xf32>
  %c  = arith.constant dense<0.17677669529663687> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<2x4x48x131xf32>, tensor<f32>) -> tensor<2x4x48x131xf32>
  %p  = "attn.softmax"(%ss) {dim = -1 : i64} : (tensor<2x4x48x131xf32>) -> tensor<2x4x48x131xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x4x48x131xf32>, tensor<2x4x131x80xf32>) -> tensor<2x4x48x80xf32>
  return %o : tensor<2x4x48x80xf32>
}
