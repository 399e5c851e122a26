// Key padding mask [B, 1, 1, S] with masked_fill(-inf): in attn-run's random
// masks row 1 is all true, so batch 1 is fully masked and its outputs are
// NaN in both the fused and the unfused run (torch.softmax semantics).
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x4x72x32xf32 {{.*}} nan=9216
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<2x4x72x32xf32>, %k: tensor<2x4x72x32xf32>,
             %v: tensor<2x4x72x32xf32>, %pad: tensor<2x1x1x72xi1>) -> tensor<2x4x72x32xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x4x72x32xf32>) -> tensor<2x4x32x72xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x4x72x32xf32>, tensor<2x4x32x72xf32>) -> tensor<2x4x72x72xf32>
  %c  = arith.constant dense<0.17677669529663687> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<2x4x72x72xf32>, tensor<f32>) -> tensor<2x4x72x72xf32>
  %m  = "attn.masked_fill"(%ss, %pad) {value = 0xFFF0000000000000 : f64} : (tensor<2x4x72x72xf32>, tensor<2x1x1x72xi1>) -> tensor<2x4x72x72xf32>
  %p  = "attn.softmax"(%m) {dim = -1 : i64} : (tensor<2x4x72x72xf32>) -> tensor<2x4x72x72xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<2x4x72x72xf32>, tensor<2x4x72x32xf32>) -> tensor<2x4x72x32xf32>
  return %o : tensor<2x4x72x32xf32>
}
