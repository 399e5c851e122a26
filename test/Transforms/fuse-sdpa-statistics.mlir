// Counts: 2 chains fused, 1 softmax that looks like attention not fused, and
// one softmax unrelated to attention (not counted).
//
// -mlir-pass-statistics shows the `num-fused` / `num-missed` statistics only
// on LLVM builds with statistics enabled (assertions or
// LLVM_FORCE_ENABLE_STATS); Debian's LLVM 22 compiles llvm::Statistic out, so
// there the report is empty even for upstream passes (try --cse). The same
// counts are therefore also available as a remark with report-counts=true.
//
// RUN: attn-opt %s --attn-fuse-sdpa=report-counts=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=COUNTS
// COUNTS: remark: attn-fuse-sdpa: fused 2 attention chain(s), 1 softmax(es) that look like attention not fused
//
// RUN: attn-opt %s --attn-fuse-sdpa -mlir-pass-statistics -mlir-pass-statistics-display=list -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: Pass statistics report
// STATS-NOT: error
//
// RUN: attn-opt %s --attn-fuse-sdpa | FileCheck %s
// CHECK-LABEL: func.func @blocks
// CHECK-COUNT-2: attn.sdpa
// CHECK-COUNT-2: attn.softmax

func.func @blocks(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %x: tensor<2x4x4xf32>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %kt = attn.transpose %k dims(1, 2) : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %s0 = attn.matmul %q, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p0 = attn.softmax %s0 dim(-1) : tensor<2x4x4xf32>
  %o0 = attn.matmul %p0, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s1 = attn.matmul %o0, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p1 = attn.softmax %s1 dim(-1) : tensor<2x4x4xf32>
  %o1 = attn.matmul %p1, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // Missed: the weights are also returned.
  %s2 = attn.matmul %o1, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %p2 = attn.softmax %s2 dim(-1) : tensor<2x4x4xf32>
  %o2 = attn.matmul %p2, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // Not attention: not counted.
  %p3 = attn.softmax %x dim(-1) : tensor<2x4x4xf32>
  return %o0, %o1, %o2, %p2, %p3 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>
}
