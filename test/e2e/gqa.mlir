// Grouped-query attention in f16: 8 query heads share 2 key/value heads
// through repeat_interleave(dim=1); softmax in f16.
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x8x64x32xf16
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<2x8x64x32xf16>, %k: tensor<2x2x64x32xf16>,
             %v: tensor<2x2x64x32xf16>) -> tensor<2x8x64x32xf16> {
  %k8 = "attn.repeat_interleave"(%k) {repeats = 4 : i64, dim = 1 : i64} : (tensor<2x2x64x32xf16>) -> tensor<2x8x64x32xf16>
  %v8 = "attn.repeat_interleave"(%v) {repeats = 4 : i64, dim = 1 : i64} : (tensor<2x2x64x32xf16>) -> tensor<2x8x64x32xf16>
  %kt = "attn.transpose"(%k8) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x8x64x32xf16>) -> tensor<2x8x32x64xf16>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x8x64x32xf16>, tensor<2x8x32x64xf16>) -> tensor<2x8x64x64xf16>
  %c  = arith.constant dense<0.17677669529663687> : tensor<f16>
  %ss = "attn.mul"(%s, %c) : (tensor<2x8x64x64xf16>, tensor<f16>) -> tensor<2x8x64x64xf16>
  %p  = "attn.softmax"(%ss) {dim = -1 : i64} : (tensor<2x8x64x64xf16>) -> tensor<2x8x64x64xf16>
  %o  = "attn.matmul"(%p, %v8) : (tensor<2x8x64x64xf16>, tensor<2x8x64x32xf16>) -> tensor<2x8x64x32xf16>
  return %o : tensor<2x8x64x32xf16>
}
