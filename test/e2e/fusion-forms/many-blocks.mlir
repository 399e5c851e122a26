// End-to-end check of a fusion form family (issue 3): attn-run --check runs
// each function fused (default pipeline) and unfused (math lowering) on the
// same seeded random inputs; i1 mask arguments get fully masked rows.
// This file: a 12-block module: twelve chained attention blocks per function,
// every one fused (twelve sdpa spans, no softmax span).
// TWELVE-SDPA-COUNT-12: "name": "sdpa"
// TWELVE-SDPA-NOT: "name": "sdpa"

// 12 attention blocks chained in one function (each block's output is the next block's query), 4 forms in turn, bf16
// RUN: attn-run %s --entry blocks12_bf16 --check --trace %t.blocks12_bf16.json | FileCheck %s --check-prefix=BLOCKS12_BF16
// RUN: FileCheck %s --check-prefix=TWELVE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.blocks12_bf16.json
// BLOCKS12_BF16: result 0: 3x2x17x16xbf16 {{.*}} nan=0
// BLOCKS12_BF16: check: {{.*}} ok
func.func @blocks12_bf16(%x: tensor<3x2x17x16xbf16>, %k: tensor<3x2x17x16xbf16>, %v: tensor<3x2x17x16xbf16>, %pad: tensor<3x1x1x17xi1>) -> tensor<3x2x17x16xbf16> {
  %t1 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<17x17xi1>
  %t2 = arith.constant dense<0.25> : tensor<bf16>
  %t3 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t4 = attn.matmul %x, %t3 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t5 = attn.mul %t4, %t2 : (tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t6 = attn.masked_fill %t5, %t1 value(0xFFF0000000000000) : (tensor<3x2x17x17xbf16>, tensor<17x17xi1>) -> tensor<3x2x17x17xbf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<3x2x17x17xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t9 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t10 = attn.matmul %t8, %t9 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t11 = arith.constant dense<4.0> : tensor<bf16>
  %t12 = attn.div %t10, %t11 : (tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t13 = arith.constant dense<-3.3895313892515355e38> : tensor<bf16>
  %t14 = attn.where %pad, %t12, %t13 : (tensor<3x1x1x17xi1>, tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t15 = attn.softmax %t14 dim(-1) : tensor<3x2x17x17xbf16>
  %t16 = attn.matmul %t15, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t17 = attn.mul %t16, %t2 : (tensor<3x2x17x16xbf16>, tensor<bf16>) -> tensor<3x2x17x16xbf16>
  %t18 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t19 = attn.matmul %t17, %t18 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t20 = attn.masked_fill %t19, %t1 value(-3.3895313892515355e38) : (tensor<3x2x17x17xbf16>, tensor<17x17xi1>) -> tensor<3x2x17x17xbf16>
  %t21 = arith.constant dense<-3.3895313892515355e38> : tensor<bf16>
  %t22 = attn.where %pad, %t20, %t21 : (tensor<3x1x1x17xi1>, tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t23 = attn.softmax %t22 dim(-1) : tensor<3x2x17x17xbf16>
  %t24 = attn.matmul %t23, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t25 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t26 = attn.matmul %t24, %t25 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t27 = attn.mul %t2, %t26 : (tensor<bf16>, tensor<3x2x17x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t28 = attn.softmax %t27 dim(-1) : tensor<3x2x17x17xbf16>
  %t29 = attn.matmul %t28, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t30 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t31 = attn.matmul %t29, %t30 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t32 = attn.mul %t31, %t2 : (tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t33 = attn.masked_fill %t32, %t1 value(0xFFF0000000000000) : (tensor<3x2x17x17xbf16>, tensor<17x17xi1>) -> tensor<3x2x17x17xbf16>
  %t34 = attn.softmax %t33 dim(-1) : tensor<3x2x17x17xbf16>
  %t35 = attn.matmul %t34, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t36 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t37 = attn.matmul %t35, %t36 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t38 = arith.constant dense<4.0> : tensor<bf16>
  %t39 = attn.div %t37, %t38 : (tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t40 = arith.constant dense<-3.3895313892515355e38> : tensor<bf16>
  %t41 = attn.where %pad, %t39, %t40 : (tensor<3x1x1x17xi1>, tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t42 = attn.softmax %t41 dim(-1) : tensor<3x2x17x17xbf16>
  %t43 = attn.matmul %t42, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t44 = attn.mul %t43, %t2 : (tensor<3x2x17x16xbf16>, tensor<bf16>) -> tensor<3x2x17x16xbf16>
  %t45 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t46 = attn.matmul %t44, %t45 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t47 = attn.masked_fill %t46, %t1 value(-3.3895313892515355e38) : (tensor<3x2x17x17xbf16>, tensor<17x17xi1>) -> tensor<3x2x17x17xbf16>
  %t48 = arith.constant dense<-3.3895313892515355e38> : tensor<bf16>
  %t49 = attn.where %pad, %t47, %t48 : (tensor<3x1x1x17xi1>, tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t50 = attn.softmax %t49 dim(-1) : tensor<3x2x17x17xbf16>
  %t51 = attn.matmul %t50, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t52 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t53 = attn.matmul %t51, %t52 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t54 = attn.mul %t2, %t53 : (tensor<bf16>, tensor<3x2x17x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t55 = attn.softmax %t54 dim(-1) : tensor<3x2x17x17xbf16>
  %t56 = attn.matmul %t55, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t57 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t58 = attn.matmul %t56, %t57 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t59 = attn.mul %t58, %t2 : (tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t60 = attn.masked_fill %t59, %t1 value(0xFFF0000000000000) : (tensor<3x2x17x17xbf16>, tensor<17x17xi1>) -> tensor<3x2x17x17xbf16>
  %t61 = attn.softmax %t60 dim(-1) : tensor<3x2x17x17xbf16>
  %t62 = attn.matmul %t61, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t63 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t64 = attn.matmul %t62, %t63 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t65 = arith.constant dense<4.0> : tensor<bf16>
  %t66 = attn.div %t64, %t65 : (tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t67 = arith.constant dense<-3.3895313892515355e38> : tensor<bf16>
  %t68 = attn.where %pad, %t66, %t67 : (tensor<3x1x1x17xi1>, tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t69 = attn.softmax %t68 dim(-1) : tensor<3x2x17x17xbf16>
  %t70 = attn.matmul %t69, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t71 = attn.mul %t70, %t2 : (tensor<3x2x17x16xbf16>, tensor<bf16>) -> tensor<3x2x17x16xbf16>
  %t72 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t73 = attn.matmul %t71, %t72 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t74 = attn.masked_fill %t73, %t1 value(-3.3895313892515355e38) : (tensor<3x2x17x17xbf16>, tensor<17x17xi1>) -> tensor<3x2x17x17xbf16>
  %t75 = arith.constant dense<-3.3895313892515355e38> : tensor<bf16>
  %t76 = attn.where %pad, %t74, %t75 : (tensor<3x1x1x17xi1>, tensor<3x2x17x17xbf16>, tensor<bf16>) -> tensor<3x2x17x17xbf16>
  %t77 = attn.softmax %t76 dim(-1) : tensor<3x2x17x17xbf16>
  %t78 = attn.matmul %t77, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  %t79 = attn.transpose %k dims(-2, -1) : tensor<3x2x17x16xbf16> -> tensor<3x2x16x17xbf16>
  %t80 = attn.matmul %t78, %t79 : (tensor<3x2x17x16xbf16>, tensor<3x2x16x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t81 = attn.mul %t2, %t80 : (tensor<bf16>, tensor<3x2x17x17xbf16>) -> tensor<3x2x17x17xbf16>
  %t82 = attn.softmax %t81 dim(-1) : tensor<3x2x17x17xbf16>
  %t83 = attn.matmul %t82, %v : (tensor<3x2x17x17xbf16>, tensor<3x2x17x16xbf16>) -> tensor<3x2x17x16xbf16>
  return %t83 : tensor<3x2x17x16xbf16>
}
