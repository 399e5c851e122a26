// RUN: attn-opt %s --split-input-file --attn-mark-inplace-results | FileCheck %s --check-prefix=MARK
// RUN: attn-opt %s --split-input-file --attn-mark-inplace-results --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --attn-drop-inplace-results --canonicalize | FileCheck %s --check-prefix=DROP

// A KV-cache row written at a run-time position: the insert goes into the
// argument's buffer, the function returns nothing, and nothing is copied
// but the row.
// MARK-LABEL: func.func @append_row
// MARK-SAME: -> (tensor<4x8xf32> {attn.inplace_argument = 0 : i64})
// DROP-LABEL: func.func @append_row
// DROP-SAME: (%[[CACHE:[^:]+]]: memref<4x8xf32>, %[[ROW:[^:]+]]: memref<1x8xf32>, %[[POS:[^:]+]]: index) {
// DROP-NOT: memref.alloc
// DROP: %[[SUB:.+]] = memref.subview %[[CACHE]][%[[POS]], 0] [1, 8] [1, 1]
// DROP-NEXT: memref.copy %[[ROW]], %[[SUB]]
// DROP-NEXT: return{{$}}
func.func @append_row(%cache: tensor<4x8xf32> {bufferization.writable = true}, %row: tensor<1x8xf32>, %pos: index) -> tensor<4x8xf32> {
  %0 = tensor.insert_slice %row into %cache[%pos, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
  %1 = bufferization.materialize_in_destination %0 in %cache : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// x.add_(1) and a second result read from the new value: the state result
// is dropped wherever it is among the results, the other results stay.
// MARK-LABEL: func.func @add_one
// MARK-SAME: -> (tensor<4xf32>, tensor<4xf32> {attn.inplace_argument = 1 : i64})
// DROP-LABEL: func.func @add_one
// DROP-SAME: (%[[Y:[^:]+]]: memref<4xf32>, %[[X:[^:]+]]: memref<4xf32>) -> memref<4xf32> {
// DROP: linalg.generic {{.+}} ins(%[[X]] : memref<4xf32>) outs(%[[NEW:[^ ]+]] : memref<4xf32>)
// DROP: linalg.generic {{.+}} ins(%[[NEW]], %[[Y]] : memref<4xf32>, memref<4xf32>) outs(%[[SUM:[^ ]+]] : memref<4xf32>)
// DROP: memref.copy %[[NEW]], %[[X]]
// DROP: return %[[SUM]] : memref<4xf32>
#map = affine_map<(d0) -> (d0)>
func.func @add_one(%y: tensor<4xf32>, %x: tensor<4xf32> {bufferization.writable = true}) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %new = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %one : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]} ins(%new, %y : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %m = bufferization.materialize_in_destination %new in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %sum, %m : tensor<4xf32>, tensor<4xf32>
}

// -----

// Without writable arguments nothing changes: a returned argument is not a
// state result.
// MARK-LABEL: func.func @negative_identity
// MARK-SAME: (%{{.+}}: tensor<4xf32>) -> tensor<4xf32> {
// DROP-LABEL: func.func @negative_identity
// DROP-SAME: -> memref<4xf32>
// DROP: return %{{.+}} : memref<4xf32>
func.func @negative_identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Private functions are not entry points: left to bufferization as they are.
// MARK-LABEL: func.func private @negative_private
// MARK-NOT: attn.inplace_argument
func.func private @negative_private(%x: tensor<4xf32> {bufferization.writable = true}, %v: tensor<4xf32>) -> tensor<4xf32> {
  %m = bufferization.materialize_in_destination %v in %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}
