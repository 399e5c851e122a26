// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --canonicalize --split-input-file | FileCheck %s --check-prefix=FOLD

// A mask that varies along the query rows is transposed once, before the
// work items, into [S, L rounded up to the 8 lanes + one 64-byte cache
// line] (i8 for a boolean mask: 24 + 64), so that the score step reads the
// mask of 8 rows with one vector load, and rows of a power-of-two L do not
// all map to one L1 set.
// CHECK-LABEL: func.func @bool_rows
// CHECK: %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<20x88xi8>
// CHECK: arith.extui %{{.+}} : i1 to i8
// CHECK: memref.store %{{.+}}, %[[T]][%[[C:.+]], %[[R:.+]]] : memref<20x88xi8>
// The copy is shared by the heads: query blocks are the outer work-item dim.
// CHECK: scf.forall ({{.+}}) in (1, 1, 2)
// CHECK: %[[M:.+]] = vector.load %[[T]][%{{.+}}, %{{.+}}] : memref<20x88xi8>, vector<8xi8>
// CHECK: arith.cmpi ne, %[[M]], %{{.+}} : vector<8xi8>
func.func @bool_rows(%q: tensor<1x2x20x8xf32>, %m: tensor<20x20xi1>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q, %m : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<20x20xi1>) -> tensor<1x2x20x8xf32>
  return %o : tensor<1x2x20x8xf32>
}

// -----

// A masked_fill mask as the fusion passes it (`mask_polarity = drop`): the
// copy holds %m as it is, and the score step puts the masked value where it
// is true; no inverted tensor is made (canonicalize-sdpa.mlir: an
// inversion `arith.xori %m, true` becomes the same op).
// CHECK-LABEL: func.func @drop_bool_rows
// CHECK-SAME: %{{[^:]+}}: tensor<1x2x20x8xf32>, %[[M:[^:]+]]: tensor<20x20xi1>
// CHECK-DAG: %[[NEGINF:.+]] = arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: %[[SRC:.+]] = bufferization.to_buffer %[[M]]
// CHECK: %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<20x88xi8>
// CHECK: %[[X:.+]] = memref.load %[[SRC]]
// CHECK-NEXT: arith.extui %[[X]] : i1 to i8
// CHECK: scf.forall
// The key block's tile scan (flash-masked-tiles.mlir) reads the copy too:
// kept where it is clear.
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : vector<8xi8>
// CHECK: scf.if
// CHECK: %[[V:.+]] = vector.load %[[T]][
// CHECK: %[[DROP:.+]] = arith.cmpi ne, %[[V]], %{{.+}} : vector<8xi8>
// CHECK: arith.select %[[DROP]], %[[NEGINF]], %{{.+}} : vector<8xi1>, vector<8xf32>
// CHECK-NOT: arith.xori
// FOLD-LABEL: func.func @drop_bool_rows
// FOLD-NOT: arith.xori
// FOLD: return
func.func @drop_bool_rows(%q: tensor<1x2x20x8xf32>, %m: tensor<20x20xi1>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q, %m {mask_polarity = #attn.mask_polarity<drop>} : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<20x20xi1>) -> tensor<1x2x20x8xf32>
  return %o : tensor<1x2x20x8xf32>
}

// -----

// An additive f16 mask per batch and head: transposed to f32 (the compute
// type; rows of 24 + 16 elements), batch dims kept.
// CHECK-LABEL: func.func @additive_rows
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x2x20x40xf32>
// CHECK: arith.extf %{{.+}} : f16 to f32
// One mask per head: heads stay outer.
// CHECK: scf.forall ({{.+}}) in (1, 2, 1)
// CHECK: vector.load %{{.+}} : memref<1x2x20x40xf32>, vector<8xf32>
func.func @additive_rows(%q: tensor<1x2x20x8xf16>, %m: tensor<1x2x20x20xf16>) -> tensor<1x2x20x8xf16> {
  %o = attn.sdpa %q, %q, %q, %m : (tensor<1x2x20x8xf16>, tensor<1x2x20x8xf16>, tensor<1x2x20x8xf16>, tensor<1x2x20x20xf16>) -> tensor<1x2x20x8xf16>
  return %o : tensor<1x2x20x8xf16>
}

// -----

// A mask constant along the rows ([B, 1, 1, S]) is not copied: one scalar
// load per key, broadcast to the 8 rows.
// CHECK-LABEL: func.func @key_padding
// CHECK-NOT: memref<1x1x20x8xf32>
// CHECK: scf.forall
// CHECK: %[[X:.+]] = memref.load %{{.+}} : memref<1x1x1x20xf32{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// CHECK: vector.broadcast %[[X]] : f32 to vector<8xf32>
func.func @key_padding(%q: tensor<1x2x20x8xf32>, %m: tensor<1x1x1x20xf32>) -> tensor<1x2x20x8xf32> {
  %o = attn.sdpa %q, %q, %q, %m : (tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x2x20x8xf32>, tensor<1x1x1x20xf32>) -> tensor<1x2x20x8xf32>
  return %o : tensor<1x2x20x8xf32>
}
