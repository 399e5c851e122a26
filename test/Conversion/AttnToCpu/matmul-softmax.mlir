// RUN: attn-opt %s --attn-lower-to-cpu --split-input-file | FileCheck %s

// Batch broadcast through the maps (rhs batch dim 1 reads index 0), loops
// (b, h, m, k, n) with k the reduction, f32 accumulation, one rounding.
// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d3, d4)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @matmul_broadcast_f16
// CHECK: %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x8x16x32xf32>)
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[ACC]] : tensor<2x8x16x32xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[P]] : tensor<2x8x16x32xf32>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @matmul_broadcast_f16(%a: tensor<2x8x16x64xf16>, %b: tensor<2x1x64x32xf16>) -> tensor<2x8x16x32xf16> {
  %r = attn.matmul %a, %b : (tensor<2x8x16x64xf16>, tensor<2x1x64x32xf16>) -> tensor<2x8x16x32xf16>
  return %r : tensor<2x8x16x32xf16>
}

// -----

// Rank-2 rhs against a rank-3 lhs; dynamic M.
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @matmul_dynamic
// CHECK-SAME: %[[A:.+]]: tensor<?x?x64xf32>
// CHECK: %[[B:.+]] = tensor.dim %[[A]], %{{.+}}
// CHECK: %[[M:.+]] = tensor.dim %[[A]], %{{.+}}
// CHECK: tensor.empty(%[[B]], %[[M]]) : tensor<?x?x32xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$RHS]], #{{.+}}]
// CHECK-NOT: arith.truncf
func.func @matmul_dynamic(%a: tensor<?x?x64xf32>, %b: tensor<64x32xf32>) -> tensor<?x?x32xf32> {
  %r = attn.matmul %a, %b : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x64x128xf32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<2x128x64xf32>) outs(%[[E]] : tensor<2x64x128xf32>) permutation = [0, 2, 1]
func.func @transpose(%x: tensor<2x128x64xf32>) -> tensor<2x64x128xf32> {
  %r = attn.transpose %x dims(-2, -1) : tensor<2x128x64xf32> -> tensor<2x64x128xf32>
  return %r : tensor<2x64x128xf32>
}

// -----

// Softmax over a middle dim: max and sum reductions on f32, then the
// normalisation rounds to bf16.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$RED:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax_dim1_bf16
// CHECK: %[[NEGINF:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[NEGINF]] : tensor<4x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$RED]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %[[MAX]], %[[SUM]]
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @softmax_dim1_bf16(%x: tensor<4x8x16xbf16>) -> tensor<4x8x16xbf16> {
  %r = attn.softmax %x dim(1) : tensor<4x8x16xbf16>
  return %r : tensor<4x8x16xbf16>
}

// -----

// CHECK-LABEL: func.func @softmax_dynamic
// CHECK-SAME: %[[X:.+]]: tensor<?x?xf32>
// CHECK: %[[D0:.+]] = tensor.dim %[[X]], %{{.+}}
// CHECK: tensor.empty(%[[D0]]) : tensor<?xf32>
// CHECK: linalg.generic
func.func @softmax_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = attn.softmax %x dim(-1) : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
