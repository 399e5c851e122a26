// Results that share one buffer (`return %p, %p`, or two chains that CSE
// merges) are all copied before attn-run frees anything, and the buffer is
// freed once: each result line is the same as the first. The 256 KiB buffer
// is above glibc's mmap threshold, so reading it after a free would fault.

// RUN: attn-run %s --entry twice --check | FileCheck %s --check-prefix=TWICE
// TWICE: result 0: 4x128x128xf32 sum=[[SUM:[^ ]+]] abs_sum=[[ABS:[^ ]+]] nan=0
// TWICE-NEXT: result 1: 4x128x128xf32 sum=[[SUM]] abs_sum=[[ABS]] nan=0
// TWICE-NEXT: check: {{.*}} ok
func.func @twice(%x: tensor<4x128x128xf32>) -> (tensor<4x128x128xf32>, tensor<4x128x128xf32>) {
  %p = attn.softmax %x dim(-1) : tensor<4x128x128xf32>
  return %p, %p : tensor<4x128x128xf32>, tensor<4x128x128xf32>
}

// Two identical chains (dropout in inference or with p = 0 is the identity)
// fuse into two identical attn.sdpa ops, which CSE merges into one buffer
// (test/Transforms/fuse-sdpa-dtype-dropout.mlir).
// RUN: attn-run %s --entry dropout_inference --check | FileCheck %s --check-prefix=CHAINS
// CHAINS: result 0: 2x4x8xf32 sum=[[SUM:[^ ]+]] abs_sum=[[ABS:[^ ]+]] nan=0
// CHAINS-NEXT: result 1: 2x4x8xf32 sum=[[SUM]] abs_sum=[[ABS]] nan=0
// CHAINS-NEXT: check: {{.*}} ok
func.func @dropout_inference(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %c = arith.constant dense<0.125> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = attn.softmax %ss dim(-1) : tensor<2x4x4xf32>
  %d = attn.dropout %p p(0.1) train(false) : tensor<2x4x4xf32>
  %o = attn.matmul %d, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s2 = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %ss2 = attn.mul %s2, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p2 = attn.softmax %ss2 dim(-1) : tensor<2x4x4xf32>
  %d2 = attn.dropout %p2 p(0.0) train(true) : tensor<2x4x4xf32>
  %o2 = attn.matmul %d2, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o, %o2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
