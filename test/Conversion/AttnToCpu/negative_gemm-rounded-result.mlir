// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --split-input-file | FileCheck %s

// The GEMM keeps its f32 (f64) result, and the rounding stays a loop of its
// own, where the f32 values are read by anything other than one rounding,
// or where the result's type would change the accumulation.

// The f32 result is returned too.
// CHECK-LABEL: func.func @two_uses(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64x96xf32>
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @two_uses(%x: tensor<64x128xbf16>, %w: tensor<128x96xbf16>, %c: tensor<64x96xf32>) -> (tensor<64x96xbf16>, tensor<64x96xf32>) {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %n0 = tensor.empty() : tensor<64x96xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x96xf32>) outs(%n0 : tensor<64x96xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x96xbf16>
  return %n, %r : tensor<64x96xbf16>, tensor<64x96xf32>
}

// -----

// An f64 product rounded to f32 keeps its f64 accumulation.
// CHECK-LABEL: func.func @f64_to_f32(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<8x16xf64>
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @f64_to_f32(%x: tensor<8x32xf64>, %w: tensor<32x16xf64>, %c: tensor<8x16xf64>) -> tensor<8x16xf32> {
  %r = linalg.matmul ins(%x, %w : tensor<8x32xf64>, tensor<32x16xf64>) outs(%c : tensor<8x16xf64>) -> tensor<8x16xf64>
  %n0 = tensor.empty() : tensor<8x16xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<8x16xf64>) outs(%n0 : tensor<8x16xf32>) {
  ^bb0(%a: f64, %o: f32):
    %t = arith.truncf %a : f64 to f32
    linalg.yield %t : f32
  } -> tensor<8x16xf32>
  return %n : tensor<8x16xf32>
}
