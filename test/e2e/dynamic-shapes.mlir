// Dynamic batch and sequence dims, sizes from --shape; two sizes. The chain
// fuses (a `?` dim never broadcasts at run time, in the chain and in
// attn.sdpa alike): the trace shows one sdpa span.
// RUN: attn-run %s --entry f --check --shape 0=2x4x100x32 --shape 1=2x4x100x32 --shape 2=2x4x100x32 --trace %t.square.json | FileCheck %s --check-prefix=SQUARE
// RUN: FileCheck %s --check-prefix=FUSED --implicit-check-not='"name": "softmax"' --input-file %t.square.json
// RUN: attn-run %s --entry f --check --shape 0=1x4x33x32 --shape 1=1x4x150x32 --shape 2=1x4x150x32 | FileCheck %s --check-prefix=CROSS
// RUN: attn-run %s --entry f16_masked --check --shape 0=3x2x37x40 --shape 1=3x2x37x40 --shape 2=3x2x37x40 --shape 3=37x37 --trace %t.f16.json | FileCheck %s --check-prefix=F16
// RUN: FileCheck %s --check-prefix=FUSED --implicit-check-not='"name": "softmax"' --input-file %t.f16.json
// FUSED: "name": "sdpa"
// F16: result 0: 3x2x37x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// F16: check: {{.*}} ok
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

// f16 with a dynamic keep-mask (where: true keeps), fully masked rows NaN.
func.func @f16_masked(%q: tensor<?x2x?x40xf16>, %k: tensor<?x2x?x40xf16>,
                      %v: tensor<?x2x?x40xf16>, %keep: tensor<?x?xi1>) -> tensor<?x2x?x40xf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<?x2x?x40xf16> -> tensor<?x2x40x?xf16>
  %s  = attn.matmul %q, %kt : (tensor<?x2x?x40xf16>, tensor<?x2x40x?xf16>) -> tensor<?x2x?x?xf16>
  %c  = arith.constant dense<0.158> : tensor<f16>
  %ss = attn.mul %s, %c : (tensor<?x2x?x?xf16>, tensor<f16>) -> tensor<?x2x?x?xf16>
  %ninf = arith.constant dense<0xFC00> : tensor<f16>
  %m  = attn.where %keep, %ss, %ninf : (tensor<?x?xi1>, tensor<?x2x?x?xf16>, tensor<f16>) -> tensor<?x2x?x?xf16>
  %p  = attn.softmax %m dim(-1) : tensor<?x2x?x?xf16>
  %o  = attn.matmul %p, %v : (tensor<?x2x?x?xf16>, tensor<?x2x?x40xf16>) -> tensor<?x2x?x40xf16>
  return %o : tensor<?x2x?x40xf16>
}
