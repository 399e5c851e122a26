// RUN: attn-opt %s --attn-lower-to-cpu=vector-bits=256 --split-input-file | FileCheck %s

// Decode shapes: with L at most half the lanes (8 f32 lanes at 256 bits:
// L <= 4) the flash backend puts the head dim along the lanes and splits
// the keys into splits of 1024 (4096 keys: 4 splits), combined per row.

// CHECK-LABEL: func.func @decode_f16
// Partial results per (batch, head, split, row).
// CHECK: memref.alloc(%{{.+}}) {{.*}} : memref<1x8x?x2xf32>
// CHECK: memref.alloc(%{{.+}}) {{.*}} : memref<1x8x?x2xf32>
// CHECK: memref.alloc(%{{.+}}) {{.*}} : memref<1x8x?x2x128xf32>
// CHECK: scf.forall (%{{.+}}, %[[H:.+]], %{{.+}}) in (1, 8, %{{.+}}) {
// Grouped-query heads: key/value head h / 4.
// CHECK: arith.divui %[[H]], %c4
// causal: the split's keys end at row 1's diagonal
// CHECK: arith.minsi %{{.+}}, %c2
// q.k: 2 rows x 2 keys, four independent FMA chains; each key vector is
// loaded once for both rows, each query vector once for both keys.
// CHECK: scf.for {{.+}} step %c2 {
// CHECK: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: arith.extf {{.+}} : vector<8xf16> to vector<8xf32>
// CHECK-COUNT-4: vector.fma
// CHECK-NEXT: scf.yield
// CHECK-COUNT-4: vector.reduction <add>
// p.v: both rows x 4 vectors of value columns (8 accumulators) in
// registers across the block's keys; each value vector is loaded once.
// CHECK: scf.for {{.+}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-4: arith.extf {{.+}} : vector<8xf16> to vector<8xf32>
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
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (1, 4, %[[SPLITS]]) {
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
