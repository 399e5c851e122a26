// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --split-input-file | FileCheck %s

// Inits that are not one vector repeated in every row: the product
// accumulates onto the init tensor as it is (no view with stride 0).

// A vector broadcast along the columns: each row holds its own value.
// CHECK-LABEL: func.func @column_vector(
// CHECK: linalg.generic
// CHECK-NOT: strides: [0, 1]
// CHECK: return
func.func @column_vector(%x: tensor<37x70xf32>, %w: tensor<70x29xf32>, %col: tensor<37xf32>) -> tensor<37x29xf32> {
  %e = tensor.empty() : tensor<37x29xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%col : tensor<37xf32>) outs(%e : tensor<37x29xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %w : tensor<37x70xf32>, tensor<70x29xf32>) outs(%b : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// -----

// The generic computes on the vector (not a cast): its tensor stays.
// CHECK-LABEL: func.func @negated(
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK-NOT: strides: [0, 1]
// CHECK: return
func.func @negated(%x: tensor<37x70xf32>, %w: tensor<70x29xf32>, %bias: tensor<29xf32>) -> tensor<37x29xf32> {
  %e = tensor.empty() : tensor<37x29xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<29xf32>) outs(%e : tensor<37x29xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %w : tensor<37x70xf32>, tensor<70x29xf32>) outs(%b : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// -----

// The generic yields its init (the broadcast reads `%acc` too): the rows
// differ.
// CHECK-LABEL: func.func @yields_init(
// CHECK: linalg.generic
// CHECK-NOT: strides: [0, 1]
// CHECK: return
func.func @yields_init(%x: tensor<37x70xf32>, %w: tensor<70x29xf32>, %bias: tensor<29xf32>, %acc: tensor<37x29xf32>) -> tensor<37x29xf32> {
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<29xf32>) outs(%acc : tensor<37x29xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %o : f32
  } -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %w : tensor<37x70xf32>, tensor<70x29xf32>) outs(%b : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// -----

// A reshape that splits the broadcast's last dim: a row of the product is
// part of a row of the broadcast, so rows need not be equal.
// CHECK-LABEL: func.func @split_last_dim(
// CHECK: linalg.generic
// CHECK-NOT: strides: [0, 1]
// CHECK: return
func.func @split_last_dim(%x: tensor<8x70xf32>, %w: tensor<70x6xf32>, %bias: tensor<12xf32>) -> tensor<8x6xf32> {
  %e = tensor.empty() : tensor<4x12xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<12xf32>) outs(%e : tensor<4x12xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<4x12xf32>
  %b2 = tensor.expand_shape %b [[0], [1, 2]] output_shape [4, 2, 6] : tensor<4x12xf32> into tensor<4x2x6xf32>
  %b3 = tensor.collapse_shape %b2 [[0, 1], [2]] : tensor<4x2x6xf32> into tensor<8x6xf32>
  %r = linalg.matmul ins(%x, %w : tensor<8x70xf32>, tensor<70x6xf32>) outs(%b3 : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}

// -----

// A broadcast along the last dim (each row one value repeated).
// CHECK-LABEL: func.func @broadcast_last_dim(
// CHECK: linalg.broadcast
// CHECK-NOT: strides: [0, 1]
// CHECK: return
func.func @broadcast_last_dim(%x: tensor<37x70xf32>, %w: tensor<70x29xf32>, %col: tensor<37xf32>) -> tensor<37x29xf32> {
  %e = tensor.empty() : tensor<37x29xf32>
  %b = linalg.broadcast ins(%col : tensor<37xf32>) outs(%e : tensor<37x29xf32>) dimensions = [1]
  %r = linalg.matmul ins(%x, %w : tensor<37x70xf32>, tensor<70x29xf32>) outs(%b : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}
