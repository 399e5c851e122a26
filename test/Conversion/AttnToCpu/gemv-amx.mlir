// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 amx=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 amx=true num-threads=1" --split-input-file | FileCheck %s --check-prefix=LLVM

// A decode step's x . W^T (at most 16 rows, W [N, K] bf16 as stored) with
// amx: behind the runtime's permission, the transposed product on tiles.
// The 4 lhs rows are packed once into pairs of k (48 pair rows x 16
// columns of pairs, zero past row 4); each block of 32 weight rows (2 here)
// reads the weight in place as A tiles (16 rows x 32 k, the weight's row
// stride), one B tile of pairs per 32-k step (3 steps) for both C tiles,
// and writes acc[j, r] transposed, onto the init, to out[r, n0 + j]. The
// vector dot products are the fallback.
// CHECK: func.func private @attnrt_amx_available() -> i32
// CHECK-LABEL: func.func private @decode_proj_amx(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: %[[PAIRS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<48x32xbf16>
// CHECK: vector.store %{{.+}}, %[[PAIRS]][%{{.+}}, %{{.+}}] : memref<48x32xbf16>, vector<32xbf16>
// CHECK: %[[PAIR:.+]] = vector.load %{{.+}} : memref<4x96xbf16, {{.+}}>, vector<2xbf16>
// CHECK: vector.store %[[PAIR]], %[[PAIRS]][%{{.+}}, %{{.+}}] : memref<48x32xbf16>, vector<2xbf16>
// CHECK: scf.for %[[ITEM:.+]] = %{{.+}} to %c2 step
// CHECK: %[[ACC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
// CHECK: %[[Z0:.+]] = amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: %[[Z1:.+]] = amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: %[[X0:.+]] = amx.tile_load %[[PAIRS]][%{{.+}}, %{{.+}}] : memref<48x32xbf16> into !amx.tile<16x32xbf16>
// CHECK: %[[W0:.+]] = amx.tile_load %{{.+}} : memref<64x96xbf16, {{.+}}> into !amx.tile<16x32xbf16>
// CHECK: %[[C0:.+]] = amx.tile_mulf %[[W0]], %[[X0]], %[[Z0]]
// CHECK: %[[W1:.+]] = amx.tile_load %{{.+}} : memref<64x96xbf16, {{.+}}> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf %[[W1]], %[[X0]], %[[Z1]]
// CHECK-COUNT-4: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK: amx.tile_store %[[ACC]]
// CHECK: amx.tile_store %[[ACC]]
// CHECK: scf.for %[[R:.+]] = %{{.+}} to %c4
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %c32
// CHECK: %[[COL:.+]] = arith.addi %{{.+}}, %[[J]] : index
// CHECK: %[[INIT:.+]] = memref.load %{{.+}}[%[[R]], %[[COL]]]
// CHECK: %[[V:.+]] = memref.load %[[ACC]][%[[J]], %[[R]]] : memref<32x16xf32>
// CHECK: %[[S:.+]] = arith.addf %[[INIT]], %[[V]] : f32
// CHECK: memref.store %[[S]], %{{.+}}[%[[R]], %[[COL]]] : memref<4x64xf32>
// CHECK-LABEL: func.func @decode_proj(
// CHECK: call @attnrt_amx_available()
// CHECK: scf.if
// CHECK: func.call @decode_proj_amx(
// CHECK: } else {
// CHECK: vector.fma
// LLVM: llvm.func @decode_proj_amx(
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
func.func @decode_proj(%x: tensor<4x96xbf16>, %w: tensor<64x96xbf16>, %b: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %t0 = tensor.empty() : tensor<96x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x96xbf16>) outs(%t0 : tensor<96x64xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<4x96xbf16>, tensor<96x64xbf16>) outs(%b : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// 40 steps of K: a first block of 16 steps from zero tiles, a loop of
// whole blocks of 16 (one more) that load and store the C tiles, then the
// last 8 steps; a weight of 128 x 1280 (over 64K elements) splits its 4
// blocks of rows across threads. The dynamic M (at most 16 at run time:
// the GEMM takes more rows) packs as many rows.
// CHECK-LABEL: func.func private @decode_long_amx(
// CHECK: scf.forall
// CHECK-COUNT-2: amx.tile_zero
// CHECK-COUNT-32: amx.tile_mulf
// CHECK: scf.for %{{.+}} = %c16 to %c32 step %c16
// CHECK-COUNT-2: amx.tile_load %{{.+}} : memref<32x16xf32> into !amx.tile<16x16xf32>
// CHECK-COUNT-32: amx.tile_mulf
// CHECK-COUNT-2: amx.tile_store
// CHECK: }
// CHECK-COUNT-2: amx.tile_load %{{.+}} : memref<32x16xf32> into !amx.tile<16x16xf32>
// CHECK-COUNT-16: amx.tile_mulf
// CHECK-NOT: amx.tile_mulf
// CHECK-COUNT-2: amx.tile_store
func.func @decode_long(%x: tensor<?x1280xbf16>, %w: tensor<128x1280xbf16>) -> tensor<?x128xbf16> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x1280xbf16>
  %t0 = tensor.empty() : tensor<1280x128xbf16>
  %wt = linalg.transpose ins(%w : tensor<128x1280xbf16>) outs(%t0 : tensor<1280x128xbf16>) permutation = [1, 0]
  %i = tensor.empty(%m) : tensor<?x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<?x128xf32>) -> tensor<?x128xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x1280xbf16>, tensor<1280x128xbf16>) outs(%f : tensor<?x128xf32>) -> tensor<?x128xf32>
  %n0 = tensor.empty(%m) : tensor<?x128xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<?x128xf32>) outs(%n0 : tensor<?x128xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x128xbf16>
  return %n : tensor<?x128xbf16>
}

// -----

// 40 weight rows: one block of 32 on tiles, then the last 8 rows as the
// vector code's work item of the same index (rows 32 .. 40), in the AMX
// function after the tile blocks.
// CHECK-LABEL: func.func private @decode_tail_amx(
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1 step
// CHECK: amx.tile_mulf
// CHECK: memref.store %{{.+}} : memref<4x40xf32>
// CHECK: }
// CHECK: scf.for %{{.+}} = %c32 to %c40 step %c2
// CHECK: vector.fma
// CHECK-LABEL: func.func @decode_tail(
func.func @decode_tail(%x: tensor<4x96xbf16>, %w: tensor<40x96xbf16>, %b: tensor<4x40xf32>) -> tensor<4x40xf32> {
  %t0 = tensor.empty() : tensor<96x40xbf16>
  %wt = linalg.transpose ins(%w : tensor<40x96xbf16>) outs(%t0 : tensor<96x40xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<4x96xbf16>, tensor<96x40xbf16>) outs(%b : tensor<4x40xf32>) -> tensor<4x40xf32>
  return %r : tensor<4x40xf32>
}
