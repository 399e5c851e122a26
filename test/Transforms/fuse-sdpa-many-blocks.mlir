// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s

// Form 8: one function with 12 chained attention blocks (each block's output
// is the next block's query), in mixed forms: every block fuses.

// CHECK-LABEL: func.func @twelve_blocks
// CHECK-COUNT-12: attn.sdpa
// CHECK-NOT: attn.sdpa
// CHECK-NOT: attn.softmax
// CHECK-NOT: attn.matmul
// CHECK: return
func.func @twelve_blocks(%x: tensor<2x4x8xf32>, %kin: tensor<2x4x8xf32>, %vin: tensor<2x4x8xf32>, %mask: tensor<4x4xi1>, %bias: tensor<4x4xf32>) -> tensor<2x4x8xf32> {
  %c = arith.constant dense<0.125> : tensor<f32>
  %c8 = arith.constant dense<8.0> : tensor<f32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %splat = arith.constant dense<0.125> : tensor<4x4xf32>
  %triu = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %kt0 = attn.transpose %kin dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b0kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b0s = attn.matmul %x, %b0kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b0t8 = attn.mul %b0s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b0p = attn.softmax %b0t8 dim(-1) : tensor<2x4x4xf32>
  %b0o = attn.matmul %b0p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b1kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b1s = attn.matmul %b0o, %b1kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b1t13 = attn.div %b1s, %c8 : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b1p = attn.softmax %b1t13 dim(-1) : tensor<2x4x4xf32>
  %b1o = attn.matmul %b1p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b2q = attn.mul %b1o, %c : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %b2kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b2s = attn.matmul %b2q, %b2kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b2p = attn.softmax %b2s dim(-1) : tensor<2x4x4xf32>
  %b2o = attn.matmul %b2p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b3kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b3s = attn.matmul %b2o, %b3kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b3t23 = attn.mul %b3s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b3t24 = attn.where %mask, %b3t23, %ninf : (tensor<4x4xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b3p = attn.softmax %b3t24 dim(-1) : tensor<2x4x4xf32>
  %b3o = attn.matmul %b3p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b4kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b4s = attn.matmul %b3o, %b4kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b4t29 = attn.mul %b4s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b4t30 = attn.masked_fill %b4t29, %triu value(0xFFF0000000000000) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %b4p = attn.softmax %b4t30 dim(-1) : tensor<2x4x4xf32>
  %b4o = attn.matmul %b4p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b5kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b5s = attn.matmul %b4o, %b5kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b5t35 = attn.mul %b5s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b5t36 = attn.add %b5t35, %bias : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
  %b5p = attn.softmax %b5t36 dim(-1) : tensor<2x4x4xf32>
  %b5o = attn.matmul %b5p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b6kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b6s = attn.matmul %b5o, %b6kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b6t41 = attn.mul %b6s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b6up = attn.cast %b6t41 : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  %b6p = attn.softmax %b6up dim(-1) : tensor<2x4x4xf32>
  %b6o = attn.matmul %b6p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b7kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b7s = attn.matmul %b6o, %b7kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b7t47 = attn.mul %b7s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b7p = attn.softmax %b7t47 dim(-1) : tensor<2x4x4xf32>
  %b7d = attn.dropout %b7p p(0.25) train(true) : tensor<2x4x4xf32>
  %b7o = attn.matmul %b7d, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b8s = attn.matmul %b7o, %kt0 : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b8t52 = attn.mul %b8s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b8p = attn.softmax %b8t52 dim(-1) : tensor<2x4x4xf32>
  %b8o = attn.matmul %b8p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b9kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b9s = attn.matmul %b8o, %b9kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b9t57 = attn.mul %b9s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %b9t58 = attn.masked_fill %b9t57, %mask value(-1.0e9) : (tensor<2x4x4xf32>, tensor<4x4xi1>) -> tensor<2x4x4xf32>
  %b9p = attn.softmax %b9t58 dim(-1) : tensor<2x4x4xf32>
  %b9o = attn.matmul %b9p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b10kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b10s = attn.matmul %b9o, %b10kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b10t63 = attn.mul %splat, %b10s : (tensor<4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %b10p = attn.softmax %b10t63 dim(-1) : tensor<2x4x4xf32>
  %b10o = attn.matmul %b10p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %b11kt = attn.transpose %kin dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b11s = attn.matmul %b10o, %b11kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %b11p = attn.softmax %b11s dim(-1) : tensor<2x4x4xf32>
  %b11o = attn.matmul %b11p, %vin : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %b11o : tensor<2x4x8xf32>
}
