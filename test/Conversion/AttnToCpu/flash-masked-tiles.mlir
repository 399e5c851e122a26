// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="backend=auto vector-bits=256" --split-input-file | FileCheck %s --check-prefix=DECODE

// A boolean [B, 1, 1, S] padding mask with the default -inf: before each
// key block the work item scans the block's mask elements (one i1 per key,
// stopping at the first kept one) and computes the block only when one is
// kept.
// CHECK-LABEL: func.func @flash_padding_mask
// CHECK: scf.forall
// CHECK: scf.for %[[KV0:.+]] = %{{.+}} to %{{.+}} step %c64
// CHECK: %[[END:.+]] = arith.minui %{{.+}}, %c130
// CHECK: %[[SCAN:.+]]:2 = scf.while (%[[J:[^ ]+]] = %[[KV0]], %[[ANY:[^ ]+]] = %false)
// CHECK: %[[MORE:.+]] = arith.cmpi ult, %[[J]], %[[END]]
// CHECK: scf.condition(%[[MORE]])
// CHECK: } do {
// CHECK: ^bb0(%[[K:[^:]+]]: index
// CHECK: %[[KEEP:.+]] = memref.load %{{.+}}[%{{.+}}, %c0, %c0, %[[K]]] : memref<2x1x1x130xi1
// CHECK: %[[NEXT:.+]] = arith.select %[[KEEP]], %[[END]], %{{.+}} : index
// CHECK: scf.yield %[[NEXT]], %[[KEEP]] : index, i1
// CHECK: scf.if %[[SCAN]]#1 {
// CHECK: vector.fma
// CHECK: math.exp
func.func @flash_padding_mask(%q: tensor<2x2x40x8xf32>, %k: tensor<2x2x130x8xf32>, %m: tensor<2x1x1x130xi1>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %k, %k, %m {safe_softmax = true} : (tensor<2x2x40x8xf32>, tensor<2x2x130x8xf32>, tensor<2x2x130x8xf32>, tensor<2x1x1x130xi1>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}

// -----

// A mask that varies along the rows: the scan ORs the item's vectors of
// rows from the transposed copy, lanes past the item's rows ignored, and a
// masked_fill mask (mask_polarity = drop) keeps where it is false.
// CHECK-LABEL: func.func @flash_rows_drop
// CHECK: %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<130x104xi8>
// CHECK: scf.forall
// CHECK: scf.while
// CHECK: } do {
// CHECK: %[[ROWS:.+]] = scf.for %{{.+}} = %c0 to %{{.+}} step %c8 iter_args(%[[ACC:.+]] = %{{.+}}) -> (vector<8xi1>)
// CHECK: %[[V:.+]] = vector.load %[[T]][%{{.+}}, %{{.+}}] : memref<130x104xi8>, vector<8xi8>
// CHECK: %[[KEEP:.+]] = arith.cmpi eq, %[[V]], %{{.+}} : vector<8xi8>
// CHECK: %[[REAL:.+]] = arith.cmpi ult, %{{.+}}, %{{.+}} : vector<8xindex>
// CHECK: %[[K:.+]] = arith.andi %[[KEEP]], %[[REAL]] : vector<8xi1>
// CHECK: arith.ori %[[ACC]], %[[K]] : vector<8xi1>
// CHECK: vector.reduction <or>, %[[ROWS]] : vector<8xi1> into i1
// CHECK: scf.if
func.func @flash_rows_drop(%q: tensor<2x2x40x8xf32>, %k: tensor<2x2x130x8xf32>, %m: tensor<40x130xi1>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %k, %k, %m {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x2x40x8xf32>, tensor<2x2x130x8xf32>, tensor<2x2x130x8xf32>, tensor<40x130xi1>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}

// -----

// Decode (one query row) over a left-padded cache: the split's key blocks
// are scanned the same way.
// DECODE-LABEL: func.func @decode_padding_mask
// DECODE: scf.forall
// DECODE: %[[SCAN:.+]]:2 = scf.while
// DECODE: memref.load %{{.+}} : memref<2x1x1x130xi1
// DECODE: scf.if %[[SCAN]]#1 {
// DECODE: math.exp
func.func @decode_padding_mask(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x130x8xf32>, %m: tensor<2x1x1x130xi1>) -> tensor<2x2x1x8xf32> {
  %o = attn.sdpa %q, %k, %k, %m {safe_softmax = true} : (tensor<2x2x1x8xf32>, tensor<2x2x130x8xf32>, tensor<2x2x130x8xf32>, tensor<2x1x1x130xi1>) -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}
