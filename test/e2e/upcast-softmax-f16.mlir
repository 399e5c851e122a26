// f16 attention with the softmax upcast to f32 (scores.float().softmax(-1)
// .to(f16)), causal-style boolean mask with fully masked rows.
// RUN: attn-run %s --entry f --check --trace %t.json | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x4x64x32xf16
// CHECK: check: {{.*}} ok
// The chain was fused into one attn.sdpa:
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<2x4x64x32xf16>, %k: tensor<2x4x64x32xf16>,
             %v: tensor<2x4x64x32xf16>, %mask: tensor<64x64xi1>) -> tensor<2x4x64x32xf16> {
  %kt = "attn.transpose"(%k) {dim0 = -2 : i64, dim1 = -1 : i64} : (tensor<2x4x64x32xf16>) -> tensor<2x4x32x64xf16>
  %s  = "attn.matmul"(%q, %kt) : (tensor<2x4x64x32xf16>, tensor<2x4x32x64xf16>) -> tensor<2x4x64x64xf16>
  %c  = arith.constant dense<0.17677669529663687> : tensor<f16>
  %ss = "attn.mul"(%s, %c) : (tensor<2x4x64x64xf16>, tensor<f16>) -> tensor<2x4x64x64xf16>
  %m  = "attn.masked_fill"(%ss, %mask) {value = 0xFFF0000000000000 : f64} : (tensor<2x4x64x64xf16>, tensor<64x64xi1>) -> tensor<2x4x64x64xf16>
  %f  = "attn.cast"(%m) : (tensor<2x4x64x64xf16>) -> tensor<2x4x64x64xf32>
  %p  = "attn.softmax"(%f) {dim = -1 : i64} : (tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf32>
  %ph = "attn.cast"(%p) : (tensor<2x4x64x64xf32>) -> tensor<2x4x64x64xf16>
  %o  = "attn.matmul"(%ph, %v) : (tensor<2x4x64x64xf16>, tensor<2x4x64x32xf16>) -> tensor<2x4x64x32xf16>
  return %o : tensor<2x4x64x32xf16>
}
