// RUN: attn-opt %s --attn-cpu-prepack-weights=vector-bits=512 --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-prepack-weights=vector-bits=256 --split-input-file | FileCheck %s --check-prefix=YMM
// RUN: attn-opt %s --attn-cpu-prepack-weights=vector-bits=512 --split-input-file | attn-opt --attn-lower-to-cpu=vector-bits=512 --split-input-file | FileCheck %s --check-prefix=GEMM
// bf16 weights in pairs of k, for a target whose bf16 GEMMs use vdpbf16ps:
// RUN: attn-opt %s --attn-cpu-prepack-weights="vector-bits=512 bf16-pairs=true" --split-input-file | FileCheck %s --check-prefix=PAIRS
// RUN: attn-opt %s --attn-cpu-prepack-weights="vector-bits=256 bf16-pairs=true" --split-input-file | FileCheck %s --check-prefix=PAIRS256
// RUN: attn-opt %s --attn-cpu-prepack-weights="vector-bits=512 bf16-pairs=true" --split-input-file | attn-opt --attn-lower-to-cpu="vector-bits=512 bf16-dot=true" --split-input-file | FileCheck %s --check-prefix=PGEMM
// and for an AMX target, in whole tiles read by the tiles and by the
// vdpbf16ps fallback:
// RUN: attn-opt %s --attn-cpu-prepack-weights="vector-bits=512 bf16-pairs=true amx-tiles=true" --split-input-file | FileCheck %s --check-prefix=AMX
// RUN: attn-opt %s --attn-cpu-prepack-weights="vector-bits=512 bf16-pairs=true amx-tiles=true" --split-input-file | attn-opt --attn-lower-to-cpu="vector-bits=512 bf16-dot=true amx=true" --split-input-file | FileCheck %s --check-prefix=AGEMM

// nn.Linear's [N, K] weight through a transpose: the argument becomes the
// [N / nc, K / kc, kc, nc] panels (kc = 256, nc = 128 for both widths),
// the GEMM reads them through attn.unpack_weight, and @linear_pack_1 packs
// a raw weight.

// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %[[X:.+]]: tensor<?x768xf32>, %[[P:.+]]: tensor<48x3x256x64xf32> {attn.packed = {entry = "linear_pack_1", transposed}, attn.weight}
// CHECK: %[[W:.+]] = attn.unpack_weight %[[P]] : tensor<48x3x256x64xf32> -> tensor<768x3072xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<?x768xf32>, tensor<768x3072xf32>)
// CHECK-LABEL: func.func @linear_pack_1(
// CHECK-SAME: %[[R:.+]]: tensor<3072x768xf32>) -> tensor<48x3x256x64xf32>
// CHECK: attn.pack_weight %[[R]] transposed : tensor<3072x768xf32> -> tensor<48x3x256x64xf32>
// YMM-LABEL: func.func @linear(
// YMM-SAME: tensor<48x3x256x64xf32> {attn.packed

// The GEMM reads each kc x nc panel of the argument in place: no panel is
// allocated or packed per call.
// GEMM-LABEL: func.func @linear(
// GEMM: %[[PB:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<48x3x256x64xf32> to memref<48x3x256x64xf32{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// GEMM-NOT: memref<256x64xf32>
// Each row tile of 6 rows prefetches into L2 its share of the panel after
// this one (the next k block's, or the next column block's first): of its
// 1024 cache lines, tile i those from 64 i on, one every 4 k steps.
// GEMM: %[[TILE:.+]] = arith.divui %{{.+}}, %c6 : index
// GEMM: scf.for %[[K:[^ ]+]] =
// GEMM: %[[FIRST:.+]] = arith.muli %[[TILE]], %c64 : index
// GEMM: %[[STEP:.+]] = arith.divui %[[K]], %c4 : index
// GEMM: %[[LINE:.+]] = arith.addi %[[FIRST]], %[[STEP]] : index
// GEMM: arith.cmpi ult, %[[LINE]], %c1024 : index
// GEMM: %[[REM:.+]] = arith.remui %[[K]], %c4 : index
// GEMM: arith.cmpi eq, %[[REM]], %c0 : index
// GEMM: scf.if
// GEMM: %[[ROW:.+]] = arith.divui %[[LINE]], %c4 : index
// GEMM: memref.prefetch %[[PB]][%{{.+}}, %{{.+}}, %[[ROW]], %{{.+}}], read, locality<2>, data : memref<48x3x256x64xf32
// GEMM: vector.load %[[PB]][%{{.+}}, %{{.+}}, %[[K]], %{{.+}}] : memref<48x3x256x64xf32{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, vector<16xf32>
// GEMM: vector.fma
// GEMM-LABEL: func.func @linear_pack_1(
// GEMM: scf.forall (%[[J:.+]], %[[KB:.+]]) in (48, 3)
// GEMM: memref.subview %{{.+}}[%[[J]], %[[KB]], 0, 0] [1, 1, 256, 64] [1, 1, 1, 1]
// GEMM: vector.shuffle
func.func @linear(%x: tensor<?x768xf32>, %w: tensor<3072x768xf32> {attn.weight}) -> tensor<?x3072xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x768xf32>
  %e = tensor.empty() : tensor<768x3072xf32>
  %wt = linalg.transpose ins(%w : tensor<3072x768xf32>) outs(%e : tensor<768x3072xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %a = tensor.empty(%m) : tensor<?x3072xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<?x3072xf32>) -> tensor<?x3072xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<?x768xf32>, tensor<768x3072xf32>) outs(%f : tensor<?x3072xf32>) -> tensor<?x3072xf32>
  return %y : tensor<?x3072xf32>
}

// -----

// GPT-2's Conv1D reads its [K, N] weight as stored, here by two GEMMs (one
// onto a bias). Odd sizes: kc = K = 70, nc = N rounded up to whole
// vectors (112 for 16 lanes, 104 for 8).

// CHECK-LABEL: func.func @conv1d(
// CHECK-SAME: %[[P:.+]]: tensor<2x1x70x64xf32> {attn.packed = {entry = "conv1d_pack_0"}, attn.weight}
// CHECK: %[[W:.+]] = attn.unpack_weight %[[P]] : tensor<2x1x70x64xf32> -> tensor<70x100xf32>
// CHECK: linalg.matmul ins(%{{.+}}, %[[W]] :
// CHECK: linalg.matmul ins(%{{.+}}, %[[W]] :
// CHECK-LABEL: func.func @conv1d_pack_0(
// CHECK: attn.pack_weight %{{.+}} : tensor<70x100xf32> -> tensor<2x1x70x64xf32>
// YMM-LABEL: func.func @conv1d(
// YMM-SAME: tensor<2x1x70x64xf32> {attn.packed = {entry = "conv1d_pack_0"}, attn.weight}
// GEMM-LABEL: func.func @conv1d_pack_0(
// GEMM-NOT: vector.shuffle
// GEMM: return
func.func @conv1d(%w: tensor<70x100xf32> {attn.weight}, %x: tensor<8x70xf32>, %bias: tensor<8x100xf32>) -> (tensor<8x100xf32>, tensor<8x100xf32>) {
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<8x100xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<8x100xf32>) -> tensor<8x100xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x70xf32>, tensor<70x100xf32>) outs(%f : tensor<8x100xf32>) -> tensor<8x100xf32>
  %y2 = linalg.matmul ins(%x, %w : tensor<8x70xf32>, tensor<70x100xf32>) outs(%bias : tensor<8x100xf32>) -> tensor<8x100xf32>
  return %y, %y2 : tensor<8x100xf32>, tensor<8x100xf32>
}

// -----

// bf16 weights with bf16-pairs: nn.Linear's [130, 300] weight becomes
// [NB, KB, kc / 2, 2 * nc] = [2, 2, 128, 256] pairs; a [33, 40] weight
// read as stored, with an odd K, one k block of 17 pairs (the last padded)
// and nc = 48 columns for 16 lanes (40 for 8). Without bf16-pairs (the
// first RUN line) they stay as stored (negative_prepack-weights.mlir).

// CHECK-LABEL: func.func @pairs(
// CHECK-SAME: tensor<130x300xbf16> {attn.weight}
// CHECK-NOT: attn.unpack_weight
// PAIRS-LABEL: func.func @pairs(
// PAIRS-SAME: %[[P1:[^:]+]]: tensor<3x2x128x128xbf16> {attn.packed = {entry = "pairs_pack_1", transposed}, attn.weight}, %[[P2:[^:]+]]: tensor<1x1x17x96xbf16> {attn.packed = {entry = "pairs_pack_2"}, attn.weight}
// PAIRS-DAG: attn.unpack_weight %[[P1]] : tensor<3x2x128x128xbf16> -> tensor<300x130xbf16>
// PAIRS-DAG: attn.unpack_weight %[[P2]] : tensor<1x1x17x96xbf16> -> tensor<33x40xbf16>
// PAIRS-NOT: linalg.transpose
// PAIRS-LABEL: func.func @pairs_pack_1(
// PAIRS: attn.pack_weight %{{.+}} transposed : tensor<130x300xbf16> -> tensor<3x2x128x128xbf16>
// PAIRS-LABEL: func.func @pairs_pack_2(
// PAIRS: attn.pack_weight %{{.+}} : tensor<33x40xbf16> -> tensor<1x1x17x96xbf16>
// PAIRS256-LABEL: func.func @pairs(
// PAIRS256-SAME: tensor<3x2x128x128xbf16> {attn.packed = {entry = "pairs_pack_1", transposed}, attn.weight}, %{{[^:]+}}: tensor<1x1x17x80xbf16>

// The pair GEMM reads 32 bf16 (16 pairs) of a panel in place per vector
// and multiplies with vdpbf16ps; no panel buffer is allocated per call.
// Panels of whole AMX tiles (128 pair rows, 256 bf16 wide) are grouped:
// viewed as [2, 2, 8 * 128, 32], the 8 groups of 16 columns one after the
// other, the pack writing and the GEMM reading the same grouped view.
// PGEMM-LABEL: func.func @pairs(
// PGEMM: %[[PB:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<3x2x128x128xbf16> to memref<3x2x128x128xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// PGEMM: %[[FLAT:.+]] = memref.collapse_shape %[[PB]] {{\[\[}}0], [1], [2, 3]]
// PGEMM: %[[GROUPED:.+]] = memref.expand_shape %[[FLAT]] {{\[\[}}0], [1], [2, 3]] output_shape [3, 2, 512, 32]
// PGEMM-NOT: memref.alloc() {{.*}} : memref<{{[0-9]+}}x{{[0-9]+}}xbf16>
// Each row tile prefetches its share of the next panel as the f32 GEMM
// does, a step being a pair of k: of the panel's 512 lines (128 pair rows
// of 4 lines), tile i those from 32 i on, one every 4 pair steps; a line is
// one 32-bf16 group.
// PGEMM: %[[TILE:.+]] = arith.divui %{{.+}}, %c6 : index
// PGEMM: scf.for %[[P:[^ ]+]] =
// PGEMM: %[[FIRST:.+]] = arith.muli %[[TILE]], %c32 : index
// PGEMM: %[[STEP:.+]] = arith.divui %[[P]], %c4 : index
// PGEMM: %[[LINE:.+]] = arith.addi %[[FIRST]], %[[STEP]] : index
// PGEMM: arith.cmpi ult, %[[LINE]], %c512 : index
// PGEMM: scf.if
// PGEMM: memref.prefetch %[[GROUPED]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}], read, locality<2>, data : memref<3x2x512x32xbf16
// PGEMM: vector.load %[[GROUPED]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<3x2x512x32xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, vector<32xbf16>
// PGEMM: x86vector.avx512.dot
// PGEMM-LABEL: func.func @pairs_pack_1(
// PGEMM: memref.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3]] output_shape [3, 2, 512, 32]
// PGEMM: scf.forall (%[[J:.+]], %[[KB:.+]]) in (3, 2)
// PGEMM: memref.subview %{{.+}}[%[[J]], %[[KB]], 0, 0] [1, 1, 512, 32] [1, 1, 1, 1]
// PGEMM-LABEL: func.func @pairs_pack_2(
// PGEMM: memref.subview %{{.+}}[%{{.+}}, %{{.+}}, 0, 0] [1, 1, 17, 96] [1, 1, 1, 1]

// With amx-tiles the blocks are whole AMX tiles: kc and nc rounded up to
// 32, so the [33, 40] weight's single block is 64 x 64 (32 pairs x 128);
// the [130, 300] weight's 256 x 128 blocks are whole tiles already.
// AMX-LABEL: func.func @pairs(
// AMX-SAME: tensor<3x2x128x128xbf16> {attn.packed = {entry = "pairs_pack_1", transposed}, attn.weight}, %{{[^:]+}}: tensor<1x1x32x128xbf16> {attn.packed = {entry = "pairs_pack_2"}, attn.weight}
// AMX-LABEL: func.func @pairs_pack_2(
// AMX: attn.pack_weight %{{.+}} : tensor<33x40xbf16> -> tensor<1x1x32x128xbf16>

// The tiles load their B tiles from the panels in place (no panel buffer
// per call, nothing packed but the lhs block); where the process may not
// use the tiles, vdpbf16ps reads the same panels.
// The first row pair of a k block prefetches into L2 the panel after
// this one in memory, 2 cache lines per pair row a step reads: for the
// first k block of column block J that is panel (J, 1); for the k block at
// k0, (J, k0 / 256 + 1) while there is one, else (min(J + 1, 2), 0).
// AGEMM-LABEL: func.func private @pairs_amx(
// AGEMM-NOT: memref.alloc() {{.*}} : memref<512x32xbf16>
// AGEMM: scf.forall (%{{.+}}, %[[J:.+]]) in (%{{.+}}, 3)
// AGEMM: %[[FIRST:.+]] = arith.minui %{{.+}}, %c32 : index
// AGEMM-NEXT: scf.for %{{.+}} = %c0 to %[[FIRST]] step %c32
// AGEMM: amx.tile_load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<3x2x512x32xbf16{{.*}}> into !amx.tile<16x32xbf16>
// AGEMM: amx.tile_mulf
// Pair row 0 of the groups of element x and x + 32 (the next 16 columns).
// AGEMM: %[[G:.+]] = arith.divui %[[X:[a-z0-9_%]+]], %c32 : index
// AGEMM-NEXT: %[[ROW:.+]] = arith.muli %[[G]], %c128 : index
// AGEMM-NEXT: %[[C:.+]] = arith.remui %[[X]], %c32 : index
// AGEMM-NEXT: memref.prefetch %{{.+}}[%[[J]], %c1, %[[ROW]], %[[C]]], read, locality<2>, data : memref<3x2x512x32xbf16{{.*}}>
// AGEMM-NEXT: %[[X2:.+]] = arith.addi %[[X]], %c32 : index
// AGEMM-NEXT: %[[G2:.+]] = arith.divui %[[X2]], %c32 : index
// AGEMM-NEXT: %[[ROW2:.+]] = arith.muli %[[G2]], %c128 : index
// AGEMM-NEXT: %[[C2:.+]] = arith.remui %[[X2]], %c32 : index
// AGEMM-NEXT: memref.prefetch %{{.+}}[%[[J]], %c1, %[[ROW2]], %[[C2]]]
// AGEMM-COUNT-30: memref.prefetch
// The other row pairs read the panel from L2 without prefetching.
// AGEMM: scf.for %{{.+}} = %[[FIRST]] to %{{.+}} step %c32
// AGEMM: amx.tile_mulf
// AGEMM-NOT: memref.prefetch
// AGEMM: amx.tile_store
// The last k block (k0 = 256; K = 300 has no k blocks between the first
// and the last) prefetches the next column block's first panel,
// (min(J + 1, 2), 0), and writes each 32 x 32 block of the output as soon
// as its C tiles are stored.
// AGEMM: %[[J1:.+]] = arith.addi %[[J]], %c1 : index
// AGEMM-NEXT: %[[JN:.+]] = arith.minui %[[J1]], %c2 : index
// AGEMM: memref.prefetch %{{.+}}[%[[JN]], %c0, %{{.+}}, %{{.+}}], read, locality<2>, data
// AGEMM: amx.tile_store %[[ACC:.+]][%{{.+}}, %{{.+}}], %{{.+}} : memref<256x64xf32>
// AGEMM: %[[BLOCK:.+]] = memref.subview %[[ACC]][%{{.+}}, %{{.+}}] [32, 32] [1, 1] : memref<256x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
// AGEMM: vector.load %[[BLOCK]][%{{.+}}, %{{.+}}] : memref<32x32xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
// AGEMM: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x130xf32>, vector<16xf32>
// AGEMM: amx.tile_mulf
// AGEMM-LABEL: func.func private @pairs_amx0(
// AGEMM-NOT: memref.alloc() {{.*}} : memref<128x32xbf16>
// AGEMM: amx.tile_load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x1x128x32xbf16{{.*}}> into !amx.tile<16x32xbf16>
// AGEMM-LABEL: func.func @pairs(
// AGEMM: call @attnrt_amx_available()
// AGEMM: func.call @pairs_amx(
// AGEMM: } else {
// AGEMM: vector.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<3x2x512x32xbf16{{.*}}>, vector<32xbf16>
// AGEMM: x86vector.avx512.dot
func.func @pairs(%x: tensor<?x300xbf16>, %w1: tensor<130x300xbf16> {attn.weight}, %w2: tensor<33x40xbf16> {attn.weight}, %u: tensor<8x33xbf16>) -> (tensor<?x130xf32>, tensor<8x40xf32>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x300xbf16>
  %e = tensor.empty() : tensor<300x130xbf16>
  %w1t = linalg.transpose ins(%w1 : tensor<130x300xbf16>) outs(%e : tensor<300x130xbf16>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %a = tensor.empty(%m) : tensor<?x130xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<?x130xf32>) -> tensor<?x130xf32>
  %h = linalg.matmul ins(%x, %w1t : tensor<?x300xbf16>, tensor<300x130xbf16>) outs(%f : tensor<?x130xf32>) -> tensor<?x130xf32>
  %b = tensor.empty() : tensor<8x40xf32>
  %g = linalg.fill ins(%z : f32) outs(%b : tensor<8x40xf32>) -> tensor<8x40xf32>
  %y = linalg.matmul ins(%u, %w2 : tensor<8x33xbf16>, tensor<33x40xbf16>) outs(%g : tensor<8x40xf32>) -> tensor<8x40xf32>
  return %h, %y : tensor<?x130xf32>, tensor<8x40xf32>
}
