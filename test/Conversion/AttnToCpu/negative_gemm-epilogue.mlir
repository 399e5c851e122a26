// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --split-input-file | FileCheck %s

// Consumers the GEMM does not apply as it stores: each stays a loop of its
// own over the product's tensor.

// A bias broadcast along the rows reads another index than the result's:
// the rounding is the GEMM's, the addition a generic.
// CHECK-LABEL: func.func @broadcast_operand(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64x96xbf16>
// CHECK: %[[N:.+]] = bufferization.to_tensor
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}} : tensor<96xbf16>) outs(%[[N]] : tensor<64x96xbf16>)
// CHECK: arith.addf
func.func @broadcast_operand(%x: tensor<64x128xbf16>, %w: tensor<128x96xbf16>, %c: tensor<64x96xf32>, %bias: tensor<96xbf16>) -> tensor<64x96xbf16> {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %n0 = tensor.empty() : tensor<64x96xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x96xf32>) outs(%n0 : tensor<64x96xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x96xbf16>
  %b = attn.add %n, %bias : (tensor<64x96xbf16>, tensor<96xbf16>) -> tensor<64x96xbf16>
  return %b : tensor<64x96xbf16>
}

// -----

// The activation is also returned: the GEMM applies it (its result is the
// GEMM's), and the product with `up`, a second reader of that result,
// stays a loop.
// CHECK-LABEL: func.func @intermediate_used_twice(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64x96xf32>
// CHECK: math.tanh %{{.+}} : vector<16xf32>
// CHECK: %[[G:.+]] = bufferization.to_tensor
// CHECK: %[[M:.+]] = linalg.generic
// CHECK-SAME: ins(%[[G]], %{{.+}} : tensor<64x96xf32>, tensor<64x96xf32>)
// CHECK: arith.mulf
// CHECK: return %[[M]], %[[G]]
func.func @intermediate_used_twice(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>, %c: tensor<64x96xf32>, %up: tensor<64x96xf32>) -> (tensor<64x96xf32>, tensor<64x96xf32>) {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %g = attn.tanh %r : tensor<64x96xf32>
  %m = attn.mul %g, %up : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<64x96xf32>
  return %m, %g : tensor<64x96xf32>, tensor<64x96xf32>
}

// -----

// A body that reads its position (linalg.index) is not a function of the
// values alone.
// CHECK-LABEL: func.func @reads_index(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64x96xf32>
// CHECK: linalg.generic
// CHECK: linalg.index 1
func.func @reads_index(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %n0 = tensor.empty() : tensor<64x96xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x96xf32>) outs(%n0 : tensor<64x96xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %s = arith.addf %a, %jf : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  return %n : tensor<64x96xf32>
}

// -----

// The product read twice by one consumer (x * x) is two uses of it.
// CHECK-LABEL: func.func @product_read_twice(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64x96xf32>
// CHECK: linalg.generic
// CHECK: arith.mulf
func.func @product_read_twice(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>, %c: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %sq = attn.mul %r, %r : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<64x96xf32>
  return %sq : tensor<64x96xf32>
}

// -----

// A boolean operand of the result's shape (a mask): the product's output
// loop reads floats only, so masked_fill stays a loop.
// CHECK-LABEL: func.func @boolean_operand(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64x96xf32>
// CHECK: linalg.generic
// CHECK-SAME: tensor<64x96xi1>
// CHECK: arith.select
func.func @boolean_operand(%x: tensor<64x128xf32>, %w: tensor<128x96xf32>, %c: tensor<64x96xf32>, %mask: tensor<64x96xi1>) -> tensor<64x96xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xf32>, tensor<128x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %m = attn.masked_fill %r, %mask value(0.0) : (tensor<64x96xf32>, tensor<64x96xi1>) -> tensor<64x96xf32>
  return %m : tensor<64x96xf32>
}
