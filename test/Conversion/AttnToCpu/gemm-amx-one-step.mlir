// RUN: attn-opt %s --attn-cpu-prepack-weights="vector-bits=512 bf16-pairs=true amx-tiles=true" --split-input-file | attn-opt --attn-lower-to-cpu="vector-bits=512 bf16-dot=true amx=true" --split-input-file | FileCheck %s

// nn.Linear with a bias and K <= 32 on AMX tiles, prepacked: the panel's
// k block is one 32-k step (kc = 32), so the block's steps form whole
// groups of one step and no remainder. The product starts from acc (the
// bias), not from tile_zero: each C tile pair is loaded, updated by the
// step's tile_mulf and stored. (These products returned the bias alone
// when the whole groups of one step were skipped.)
// CHECK-LABEL: func.func private @linear_k32_amx(
// CHECK-SAME: memref<2x1x64x32xbf16
// CHECK-NOT: amx.tile_zero
// CHECK: amx.tile_load %[[ACC:[a-z0-9_]+]][%{{.+}}, %{{.+}}] : memref<{{[0-9]+}}x64xf32> into !amx.tile<16x16xf32>
// CHECK: amx.tile_load %{{.+}} into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf
// CHECK: amx.tile_store %[[ACC]]
func.func @linear_k32(%x: tensor<?x32xbf16>, %w: tensor<96x32xbf16> {attn.weight}, %bias: tensor<96xbf16>) -> tensor<?x96xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x32xbf16>
  %t0 = tensor.empty() : tensor<32x96xbf16>
  %wt = linalg.transpose ins(%w : tensor<96x32xbf16>) outs(%t0 : tensor<32x96xbf16>) permutation = [1, 0]
  %e = tensor.empty(%m) : tensor<?x96xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<96xbf16>) outs(%e : tensor<?x96xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %y = arith.extf %a : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<?x96xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x32xbf16>, tensor<32x96xbf16>) outs(%b : tensor<?x96xf32>) -> tensor<?x96xf32>
  return %r : tensor<?x96xf32>
}

// -----

// K = 8: one step of 32 k, the pairs past K zeroed by the pack.
// CHECK-LABEL: func.func private @linear_k8_amx(
// CHECK-NOT: amx.tile_zero
// CHECK: amx.tile_mulf
// CHECK: amx.tile_store
func.func @linear_k8(%x: tensor<?x8xbf16>, %w: tensor<64x8xbf16> {attn.weight}, %bias: tensor<64xbf16>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x8xbf16>
  %t0 = tensor.empty() : tensor<8x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x8xbf16>) outs(%t0 : tensor<8x64xbf16>) permutation = [1, 0]
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<64xbf16>) outs(%e : tensor<?x64xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %y = arith.extf %a : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<?x64xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x8xbf16>, tensor<8x64xbf16>) outs(%b : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
