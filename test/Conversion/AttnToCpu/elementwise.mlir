// RUN: attn-opt %s --attn-lower-to-cpu --split-input-file | FileCheck %s

// Broadcasting: the rank-0 scalar reads through a () map, the 1-sized dim
// through a constant 0; f16 math runs in f32 and rounds once.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @mul_scalar
// CHECK-SAME: %[[X:.+]]: tensor<2x4x8xf16>, %[[C:.+]]: tensor<f32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x4x8xf16>
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[C]] : tensor<2x4x8xf16>, tensor<f32>) outs(%[[E]] : tensor<2x4x8xf16>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK-NOT: attn.
func.func @mul_scalar(%x: tensor<2x4x8xf16>, %c: tensor<f32>) -> tensor<2x4x8xf16> {
  %r = attn.mul %x, %c : (tensor<2x4x8xf16>, tensor<f32>) -> tensor<2x4x8xf16>
  return %r : tensor<2x4x8xf16>
}

// -----

// CHECK-DAG: #[[$BC:.+]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$BC]], #[[$ID]]]
// CHECK: arith.addf
func.func @add_broadcast(%x: tensor<2x4x8xf32>, %y: tensor<1x8xf32>) -> tensor<2x4x8xf32> {
  %r = attn.add %x, %y : (tensor<2x4x8xf32>, tensor<1x8xf32>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @sub_div
// CHECK: linalg.generic
// CHECK: arith.subf
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @sub_div(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = attn.sub %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = attn.div %a, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

// Dynamic dims: the result size comes from tensor.dim.
// CHECK-LABEL: func.func @add_dynamic
// CHECK-SAME: %[[X:.+]]: tensor<?x?xf32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[D1:.+]] = tensor.dim %[[X]], %[[C1]]
// CHECK: tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?xf32>
// CHECK: linalg.generic
func.func @add_dynamic(%x: tensor<?x?xf32>, %y: tensor<f32>) -> tensor<?x?xf32> {
  %r = attn.add %x, %y : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// The fill value is rounded to the element type: -1e5 is -inf in f16.
// CHECK-LABEL: func.func @masked_fill_f16
// CHECK: %[[NEG:.+]] = arith.constant 0xFC00 : f16
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.+]]: f16, %[[M:.+]]: i1, %{{.+}}: f16):
// CHECK: arith.select %[[M]], %[[NEG]], %[[IN]] : f16
func.func @masked_fill_f16(%x: tensor<2x8x8xf16>, %m: tensor<8x8xi1>) -> tensor<2x8x8xf16> {
  %r = attn.masked_fill %x, %m value(-1.000000e+05) : (tensor<2x8x8xf16>, tensor<8x8xi1>) -> tensor<2x8x8xf16>
  return %r : tensor<2x8x8xf16>
}

// -----

// CHECK-LABEL: func.func @where
// CHECK: linalg.generic
// CHECK: ^bb0(%[[C:.+]]: i1, %[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK: arith.select %[[C]], %[[A]], %[[B]] : f32
func.func @where(%c: tensor<8x8xi1>, %a: tensor<2x8x8xf32>, %b: tensor<f32>) -> tensor<2x8x8xf32> {
  %r = attn.where %c, %a, %b : (tensor<8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  return %r : tensor<2x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @cast(%x: tensor<4xf32>, %y: tensor<4xf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %a = attn.cast %x : tensor<4xf32> -> tensor<4xbf16>
  %b = attn.cast %y : tensor<4xf16> -> tensor<4xbf16>
  return %a, %b : tensor<4xbf16>, tensor<4xbf16>
}

// -----

// Dropout: a hash of the row-major index and the seed.
// CHECK-LABEL: func.func @dropout
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.xori
// CHECK: arith.cmpf oge
// CHECK: arith.select
func.func @dropout(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = attn.dropout %x p(2.500000e-01) train(true) {seed = 7 : i64} : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// CHECK-DAG: #[[$REP:.+]] = affine_map<(d0, d1, d2) -> (d0, d1 floordiv 4, d2)>
// CHECK-LABEL: func.func @repeat_interleave
// CHECK: linalg.generic {indexing_maps = [#[[$REP]], #{{.+}}]
func.func @repeat_interleave(%x: tensor<2x2x16xf32>) -> tensor<2x8x16xf32> {
  %r = attn.repeat_interleave %x repeats(4) dim(1) : tensor<2x2x16xf32> -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

// A dynamic attn.iota takes its sizes from its operands.
// CHECK-LABEL: func.func @iota_dynamic
// CHECK-SAME: %[[L:.+]]: index
// CHECK: %[[E:.+]] = tensor.empty(%[[L]]) : tensor<1x?xf64>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<1x?xf64>)
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: arith.index_castui %[[I]] : index to i64
// CHECK: arith.uitofp %{{.+}} : i64 to f64
func.func @iota_dynamic(%l: index) -> tensor<1x?xf64> {
  %r = attn.iota 1 (%l) : tensor<1x?xf64>
  return %r : tensor<1x?xf64>
}
