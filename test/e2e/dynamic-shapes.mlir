// Dynamic batch and sequence dims, sizes from --shape; two sizes. (The
// fusion leaves dynamic shapes alone for now; dynamic-sdpa.mlir runs the
// flash lowering on dynamic shapes.)
// RUN: attn-run %s --entry f --check --shape 0=2x4x100x32 --shape 1=2x4x100x32 --shape 2=2x4x100x32 | FileCheck %s --check-prefix=SQUARE
// RUN: attn-run %s --entry f --check --shape 0=1x4x33x32 --shape 1=1x4x150x32 --shape 2=1x4x150x32 | FileCheck %s --check-prefix=CROSS
// SQUARE: result 0: 2x4x100x32xf32
// SQUARE: check: {{.*}} ok
// CROSS: result 0: 1x4x33x32xf32
// CROSS: check: {{.*}} ok

func.func @f(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>,
             %v: tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<?x4x?x32xf32>) -> tensor<?x4x32x?xf32>
  %s  = "attn.matmul"(%q, %kt) : (tensor<?x4x?x32xf32>, tensor<?x4x32x?xf32>) -> tensor<?x4x?x?xf32>
  %c  = arith.constant dense<0.17677669529663687> : tensor<f32>
  %ss = "attn.mul"(%s, %c) : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p  = "attn.softmax"(%ss) {dim = -1 : i64} : (tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %o  = "attn.matmul"(%p, %v) : (tensor<?x4x?x?xf32>, tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}
