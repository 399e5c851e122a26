// RUN: attn-opt %s --attn-lower-to-cpu --split-input-file | FileCheck %s --check-prefixes=CHECK,FLASH
// RUN: attn-opt %s --attn-lower-to-cpu=backend=flash --split-input-file | FileCheck %s --check-prefixes=CHECK,FLASH
// RUN: attn-opt %s --attn-lower-to-cpu=backend=math --split-input-file | FileCheck %s --check-prefixes=CHECK,MATH

// flash: forall over (batch, heads, query blocks), a loop over key/value
// blocks, only block-sized scratch; never a 128x128 scores tensor.
// math: the [2, 8, 128, 128] scores in f32.
// CHECK-LABEL: func.func @causal_f16
// FLASH-NOT: tensor<2x8x128x128xf32>
// FLASH: %[[OUT:.+]] = tensor.empty() : tensor<2x8x128x64xf16>
// FLASH: scf.forall (%[[B:.+]], %[[H:.+]], %[[QB:.+]]) in (2, 8, 2) shared_outs(%[[O:.+]] = %[[OUT]])
// FLASH: tensor.extract_slice %{{.+}}[%[[B]], %[[H]], %{{.+}}, 0] [1, 1, %{{.+}}, 64] [1, 1, 1, 1] : tensor<2x8x128x64xf16> to tensor<?x64xf16>
// FLASH: tensor.empty(%{{.+}}) : tensor<?x64xf32>
// FLASH: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(
// FLASH: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
// FLASH-SAME: outs(%{{.+}} : tensor<?x?xf32>)
// causal mask from the global row and column:
// FLASH: arith.cmpi ugt
// running max, safe subtrahend, rescale factor:
// FLASH: arith.maximumf
// FLASH: arith.cmpf oeq
// FLASH: math.exp
// FLASH: linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "parallel"]
// FLASH: scf.yield
// final division, NaN for rows whose max stayed -inf, one rounding:
// FLASH: arith.divf
// FLASH: arith.select
// FLASH: arith.truncf {{.+}} : f32 to f16
// FLASH: scf.forall.in_parallel
// FLASH-NEXT: tensor.parallel_insert_slice
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
// FLASH: scf.forall (%[[B:.+]], %[[H:.+]], %{{.+}}) in (2, 8, 1)
// FLASH: %[[KVH:.+]] = arith.divui %[[H]], %{{.+}} : index
// FLASH: tensor.extract_slice %{{.+}}[%{{.+}}, %[[KVH]], %{{.+}}, 0] [1, 1, %{{.+}}, 64] [1, 1, 1, 1] : tensor<1x2x32x64xf32> to tensor<?x64xf32>
// MATH: linalg.generic {indexing_maps = [#{{.+}}, #[[$KV]], #{{.+}}]
func.func @gqa_broadcast(%q: tensor<2x8x16x64xf32>, %k: tensor<1x2x32x64xf32>, %v: tensor<1x2x32x64xf32>) -> tensor<2x8x16x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>) -> tensor<2x8x16x64xf32>
  return %o : tensor<2x8x16x64xf32>
}

// -----

// Dynamic batch and sequence dims.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: %[[Q:[^:]+]]: tensor<?x8x?x64xf32>
// FLASH: %[[L:.+]] = tensor.dim %[[Q]], %c2
// FLASH: %[[NQ:.+]] = arith.ceildivui %[[L]], %{{.+}}
// FLASH: scf.forall ({{.+}}) in (%{{.+}}, 8, %[[NQ]])
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
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall (
// CHECK: linalg.fill {{.+}} -> tensor<1x1x8x8xf32>
func.func @per_op_backend(%q: tensor<1x1x8x8xf32>) -> (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) {
  %a = attn.sdpa %q, %q, %q {"attn.cpu_backend" = "flash"} : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %b = attn.sdpa %q, %q, %q {"attn.cpu_backend" = "math"} : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  return %a, %b : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>
}
