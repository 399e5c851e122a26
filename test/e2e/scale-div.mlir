// Scale by division (scores / sqrt(d)), no mask, odd lengths.
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x4x97x40xf32
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<2x4x97x40xf32>, %k: tensor<2x4x97x40xf32>,
             %v: tensor<2x4x97x40xf32>) -> tensor<2x4x97x40xf32> {
  %kt = "attn.transpose"(%k) {dim0 = 2 : i64, dim1 = 3 : i64} : (tensor<2x4x97x40xf32>) -> tensor<2x4x40x97xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x4x97x40xf32>, tensor<2x4x40x97xf32>) -> tensor<2x4x97x97xf32>
  %c  = arith.constant dense<6.324555320336759> : tensor<f32>
  %ss = "attn.div"(%s, %c) : (tensor<2x4x97x97xf32>, tensor<f32>) -> tensor<2x4x97x97xf32>
  %p  = "attn.softmax"(%ss) {dim = 3 : i64} : (tensor<2x4x97x97xf32>) -> tensor<2x4x97x97xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x4x97x97xf32>, tensor<2x4x97x40xf32>) -> tensor<2x4x97x40xf32>
  return %o : tensor<2x4x97x40xf32>
}
