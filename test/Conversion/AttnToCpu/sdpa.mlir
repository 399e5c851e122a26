// RUN: attn-opt %s --attn-lower-to-cpu=vector-bits=256 --split-input-file | FileCheck %s --check-prefixes=CHECK,FLASH
// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s --check-prefixes=CHECK,FLASH
// RUN: attn-opt %s --attn-lower-to-cpu=backend=math --split-input-file | FileCheck %s --check-prefixes=CHECK,MATH

// flash (AVX2-sized: 8 lanes, 96-row query blocks): forall over (batch,
// heads, query blocks) on buffers, a loop over key/value blocks, register
// tiles in vector code, only block-sized scratch; never a 128x128 scores
// tensor. math: the [2, 8, 128, 128] scores in f32.
// CHECK-LABEL: func.func @causal_f16
// FLASH-NOT: tensor<2x8x128x128xf32>
// FLASH: %[[QB:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<2x8x128x64xf16> to memref<2x8x128x64xf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// FLASH: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x8x128x64xf16>
// FLASH: scf.forall (%[[B:.+]], %[[H:.+]], %{{.+}}) in (2, 8, 2) {
// FLASH: memref.alloc() {{.*}} : memref<64x96xf32>
// q^T of the block, converted once:
// FLASH: memref.load %[[QB]][%[[B]], %[[H]], %{{.+}}, %{{.+}}] : memref<2x8x128x64xf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// FLASH: arith.extf {{.+}} : f16 to f32
// causal: no key block past the query block's last row (signed bounds,
// clamped to [0, S])
// FLASH: %[[END0:.+]] = arith.maxsi %{{.+}}, %c0
// FLASH: %[[END:.+]] = arith.minsi %[[END0]], %c128
// FLASH: scf.for %{{.+}} = %c0 to %[[END]] step %c64
// q.k^T register tile: 4 keys x 3 vectors of 8 query rows
// FLASH: scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// FLASH-COUNT-12: vector.fma
// score step: scale, causal (global row >= column), running max, exp
// FLASH: arith.mulf %{{.+}}, %{{.+}} : vector<8xf32>
// FLASH: arith.cmpi sle, %{{.+}}, %{{.+}} : vector<8xindex>
// FLASH: arith.cmpf ogt, {{.+}} : vector<8xf32>
// FLASH: arith.cmpf oeq
// FLASH: math.exp {{.+}} : vector<8xf32>
// p.v register tile
// FLASH: vector.fma
// final division, NaN for rows whose max stayed -inf, one rounding:
// FLASH: arith.divf
// FLASH: arith.select
// FLASH: arith.truncf {{.+}} : f32 to f16
// FLASH: memref.store {{.+}}, %[[OUT]]
// FLASH: bufferization.to_tensor %[[OUT]] restrict writable
// FLASH-NOT: tensor<2x8x128x128xf32>
// MATH-NOT: scf.forall (
// MATH: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x8x128x128xf32>)
// MATH: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// MATH-SAME: outs(%{{.+}} : tensor<2x8x128x128xf32>)
// MATH: math.exp
// MATH: iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]
// MATH: arith.truncf {{.+}} : f32 to f16
func.func @causal_f16(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

// Grouped-query heads and a broadcast key/value batch dim: head h reads
// kv head h / 4, batch reads index 0.
// MATH-DAG: #[[$KV:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1 floordiv 4, d3, d4)>
// CHECK-LABEL: func.func @gqa_broadcast
// FLASH: %[[K:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<1x2x32x64xf32>
// FLASH: scf.forall (%[[B:.+]], %[[H:.+]], %{{.+}}) in (2, 8, 1)
// FLASH: %[[KVH:.+]] = arith.divui %[[H]], %{{.+}} : index
// FLASH: memref.load %[[K]][%c0, %[[KVH]], %{{.+}}, %{{.+}}] : memref<1x2x32x64xf32{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// MATH: linalg.generic {indexing_maps = [#{{.+}}, #[[$KV]], #{{.+}}]
func.func @gqa_broadcast(%q: tensor<2x8x16x64xf32>, %k: tensor<1x2x32x64xf32>, %v: tensor<1x2x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>) -> tensor<2x8x16x64xf32>
  return %o : tensor<2x8x16x64xf32>
}

// -----

// Dynamic batch and sequence dims. The mask is shared by the heads and read
// through its transposed copy: query blocks are the outermost work-item dim
// (consecutive items read the same slice of the copy).
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: %[[Q:[^:]+]]: tensor<?x8x?x64xf32>
// FLASH: %[[L:.+]] = tensor.dim %[[Q]], %c2
// FLASH: %[[NQ:.+]] = arith.ceildivui %[[L]], %c96
// FLASH: scf.forall ({{.+}}) in (%[[NQ]], %{{.+}}, 8)
// MATH: linalg.fill {{.+}} -> tensor<?x8x?x?xf32>
func.func @dynamic(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>, %m: tensor<?x1x?x?xf32>) -> tensor<?x8x?x64xf32> {
  %o = attn.sdpa %q, %k, %v, %m : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x1x?x?xf32>) -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// -----

// auto picks math when dropout_p > 0 (flash has no dropout); the math path
// drops out the probabilities with attn.dropout's RNG.
// CHECK-LABEL: func.func @dropout_picks_math
// CHECK-NOT: scf.forall (
// CHECK: linalg.fill {{.+}} -> tensor<1x2x16x16xf32>
// CHECK: arith.cmpf oge
func.func @dropout_picks_math(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = attn.sdpa %q, %k, %v {dropout_p = 1.000000e-01 : f64, "attn.cpu_backend" = "auto"} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// The per-op attribute overrides the pass option.
// CHECK-LABEL: func.func @per_op_backend
// CHECK: scf.forall (
// CHECK: bufferization.to_tensor
// CHECK-NOT: scf.forall (
// CHECK: linalg.fill {{.+}} -> tensor<1x1x8x8xf32>
func.func @per_op_backend(%q: tensor<1x1x8x8xf32>) -> (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) {
  %a = attn.sdpa %q, %q, %q {"attn.cpu_backend" = "flash"} : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b = attn.sdpa %q, %q, %q {"attn.cpu_backend" = "math"} : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  return %a, %b : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
}
