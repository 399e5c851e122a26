// RUN: attn-opt %s --attn-lower-to-cpu=vector-bits=256 --split-input-file | FileCheck %s

// Decode shapes: with L at most half the lanes (8 f32 lanes at 256 bits:
// L <= 4) the flash backend puts the head dim along the lanes and splits
// the keys into splits of 1024 (4096 keys: 4 splits), combined per row.

// CHECK-LABEL: func.func @decode_f16
// Partial results per (batch, head, split, row).
// CHECK: memref.alloc(%{{.+}}) {{.*}} : memref<1x8x?x2xf32>
// CHECK: memref.alloc(%{{.+}}) {{.*}} : memref<1x8x?x2xf32>
// CHECK: memref.alloc(%{{.+}}) {{.*}} : memref<1x8x?x2x128xf32>
// Grouped-query heads folded into the rows: 8 heads read 2 key/value
// heads, so a work item is a group of 4 heads (key/value head g * 4 / 4)
// and its 4 x 2 = 8 rows.
// CHECK: scf.forall (%{{.+}}, %[[G:.+]], %{{.+}}) in (1, 2, %{{.+}}) {
// CHECK: %[[H0:.+]] = arith.muli %[[G]], %c4
// CHECK: arith.divui %[[H0]], %c4
// CHECK: memref.alloc() {{.*}} : memref<8x64xf32>
// CHECK: memref.alloc() {{.*}} : memref<8x3xf32>
// Row r is head g * 4 + r / 2, query row r % 2.
// CHECK: arith.divui %{{.+}}, %c2
// CHECK: arith.remui %{{.+}}, %c2
// causal: the split's keys end at query row 1's diagonal
// CHECK: arith.minsi %{{.+}}, %c2
// q.k: 8 rows x 1 key, eight independent FMA chains; each key vector is
// loaded and widened once for the 8 rows of the 4 heads.
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-9: arith.extf {{.+}} : vector<8xf16> to vector<8xf32>
// CHECK-NOT: arith.extf
// CHECK: scf.yield
// The 8 chains' lanes summed at once, as in a transpose: pairs of vectors
// become one of the halves of their segments, 3 levels, then one lane per
// row.
// CHECK-NOT: vector.reduction
// CHECK: vector.shuffle %[[DOTS:.+]]#0, %[[DOTS]]#1 [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 1, 4, 5, 8, 9, 12, 13]
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [1, 3, 5, 7, 9, 11, 13, 15]
// CHECK: %[[SUMS:.+]] = arith.addf %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK-NOT: vector.reduction
// CHECK: vector.extract %[[SUMS]][7]
// p.v: the 8 rows x 1 vector of value columns (the 12 accumulators of
// 256 bits) in registers across the block's keys; each value vector is
// loaded once.
// CHECK: scf.for {{.+}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-1: arith.extf {{.+}} : vector<8xf16> to vector<8xf32>
// CHECK-NOT: vector<8xf16>
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// The combine: one work item per (batch, head, row).
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 8, 2) {
// CHECK: math.exp
// CHECK: arith.truncf {{.+}} : f32 to f16
func.func @decode_f16(%q: tensor<1x8x2x128xf16>, %k: tensor<1x2x4096x128xf16>, %v: tensor<1x2x4096x128xf16>) -> tensor<1x8x2x128xf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x8x2x128xf16>, tensor<1x2x4096x128xf16>, tensor<1x2x4096x128xf16>) -> tensor<1x8x2x128xf16>
  return %o : tensor<1x8x2x128xf16>
}

// -----

// Five rows are more than half the lanes: the query-row tiled flash path.
// CHECK-LABEL: func.func @negative_five_rows
// CHECK-NOT: vector.reduction
// CHECK: scf.forall
// CHECK-NOT: scf.forall
func.func @negative_five_rows(%q: tensor<1x8x5x64xf32>, %k: tensor<1x8x4096x64xf32>, %v: tensor<1x8x4096x64xf32>) -> tensor<1x8x5x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x5x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>) -> tensor<1x8x5x64xf32>
  return %o : tensor<1x8x5x64xf32>
}

// -----

// Keys of run-time length (a KV cache's filled prefix): with one split (at
// most 1024 keys) the partial pass writes the output rows itself, with the
// combine's operations on its one part; the combine's loop runs only for
// several splits (or none: no keys).
// CHECK-LABEL: func.func @decode_cache_prefix
// CHECK: %[[SPLITS:.+]] = arith.ceildivui %{{.+}}, %c1024
// CHECK: %[[ONE:.+]] = arith.cmpi eq, %[[SPLITS]], %c1
// (4 heads on 2 key/value heads: items of 2 heads.)
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 2, %[[SPLITS]]) {
// CHECK: scf.if %[[ONE]] {
// CHECK: math.exp
// CHECK: math.fma
// CHECK: arith.divf
// CHECK: memref.store %{{.+}}, %[[OUT:.+]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x4x1x64xf32>
// CHECK: } else {
// CHECK: memref.store {{.+}} : memref<1x4x?x1xf32>
// CHECK: %[[SEVERAL:.+]] = arith.cmpi ne, %[[SPLITS]], %c1
// CHECK-NEXT: scf.if %[[SEVERAL]] {
// CHECK-NEXT: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 4, 1) {
// CHECK: memref.store %{{.+}}, %[[OUT]]
func.func @decode_cache_prefix(%q: tensor<1x4x1x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x4x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x4x1x64xf32>
  return %o : tensor<1x4x1x64xf32>
}

// -----

// One key/value head for 6 query heads (a broadcast head dim): one work
// item per batch row holds the 6 heads' rows; each row reads its own
// head's mask.
// CHECK-LABEL: func.func @decode_fold_broadcast_head
// CHECK: %[[MASK:.+]] = bufferization.to_buffer %arg3
// CHECK: scf.forall (%[[B:.+]], %[[G:.+]], %{{.+}}) in (2, 1, %{{.+}}) {
// CHECK-DAG: %[[H0:.+]] = arith.muli %[[G]], %c6
// CHECK-DAG: %[[H5:.+]] = arith.addi %{{.+}}, %c5
// CHECK: memref.alloc() {{.*}} : memref<6x64xf32>
// CHECK-DAG: memref.load %[[MASK]][%[[B]], %[[H0]], %c0, %{{.+}}]
// CHECK-DAG: memref.load %[[MASK]][%[[B]], %[[H5]], %c0, %{{.+}}]
// CHECK: scf.for {{.+}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-7: arith.extf {{.+}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT: arith.extf
// CHECK: scf.yield
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (2, 6, 1) {
func.func @decode_fold_broadcast_head(%q: tensor<2x6x1x64xbf16>, %k: tensor<2x1x?x64xbf16>, %v: tensor<2x1x?x64xbf16>, %m: tensor<2x6x1x?xi1>) -> tensor<2x6x1x64xbf16> {
  %o = attn.sdpa %q, %k, %v, %m : (tensor<2x6x1x64xbf16>, tensor<2x1x?x64xbf16>, tensor<2x1x?x64xbf16>, tensor<2x6x1x?xi1>) -> tensor<2x6x1x64xbf16>
  return %o : tensor<2x6x1x64xbf16>
}

// -----

// A group of 8 heads with 2 query rows: folded by 4 (8 rows at most).
// CHECK-LABEL: func.func @decode_fold_part_of_group
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 2, %{{.+}}) {
// CHECK: memref.alloc() {{.*}} : memref<8x64xf32>
func.func @decode_fold_part_of_group(%q: tensor<1x8x2x64xf32>, %k: tensor<1x1x?x64xf32>, %v: tensor<1x1x?x64xf32>) -> tensor<1x8x2x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x8x2x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>) -> tensor<1x8x2x64xf32>
  return %o : tensor<1x8x2x64xf32>
}

// -----

// A group of 5 heads with 2 query rows: no divisor of 5 keeps 8 rows or
// fewer, so each head is its own work item.
// CHECK-LABEL: func.func @negative_fold_group_of_five
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 10, %{{.+}}) {
// CHECK: memref.alloc() {{.*}} : memref<2x64xf32>
func.func @negative_fold_group_of_five(%q: tensor<1x10x2x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x10x2x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x10x2x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x10x2x64xf32>
  return %o : tensor<1x10x2x64xf32>
}

// -----

// A key/value batch of 1 for 3 query batch rows folds them (rank 3, no
// lengths)...
// CHECK-LABEL: func.func @decode_fold_batch
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (1, %{{.+}}) {
// CHECK: memref.alloc() {{.*}} : memref<3x64xf32>
func.func @decode_fold_batch(%q: tensor<3x1x32xf32>, %k: tensor<1x?x32xf32>, %v: tensor<1x?x32xf32>) -> tensor<3x1x32xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<3x1x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<3x1x32xf32>
  return %o : tensor<3x1x32xf32>
}

// -----

// ... but not with sequence lengths, which are per batch row.
// CHECK-LABEL: func.func @negative_fold_batch_lengths
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (3, %{{.+}}) {
// CHECK: memref.alloc() {{.*}} : memref<1x64xf32>
func.func @negative_fold_batch_lengths(%q: tensor<3x1x32xf32>, %k: tensor<1x?x32xf32>, %v: tensor<1x?x32xf32>, %kl: tensor<3xi32>) -> tensor<3x1x32xf32> {
  %o = attn.sdpa %q, %k, %v kv_lengths(%kl) : (tensor<3x1x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<3xi32>) -> tensor<3x1x32xf32>
  return %o : tensor<3x1x32xf32>
}
