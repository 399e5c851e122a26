// 3-D layout [B*H, L, D] (as after a reshape), scale on q before the matmul
// is not assumed: scale applied to the scores.
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 8x96x48xf32
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<8x96x48xf32>, %k: tensor<8x96x48xf32>,
             %v: tensor<8x96x48xf32>) -> tensor<8x96x48xf32> {
  %kt = "attn.transpose"(%k) {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<8x96x48xf32>) -> tensor<8x48x96xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<8x96x48xf32>, tensor<8x48x96xf32>) -> tensor<8x96x96xf32>
  %c  = arith.constant dense<0.14433756729740643> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<8x96x96xf32>, tensor<f32>) -> tensor<8x96x96xf32>
  %p  = "attn.softmax"(%ss) {dim = -1 : i64} : (tensor<8x96x96xf32>) -> tensor<8x96x96xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<8x96x96xf32>, tensor<8x96x48xf32>) -> tensor<8x96x48xf32>
  return %o : tensor<8x96x48xf32>
}
