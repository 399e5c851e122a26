// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-outline-kernels="min-uses=1" --split-input-file | FileCheck %s --check-prefix=OUTLINE

// A bf16 projection as the exporter writes it: the product accumulates in
// f32 (onto the bias, broadcast into its init), is reshaped, and only then
// rounded to bf16. The GEMM writes bf16 itself: its f32 accumulators are
// rounded once in its output loop, and neither the f32 result nor the
// rounding loop over it remains.

// CHECK-LABEL: func.func @linear_bias_reshaped(
// CHECK-SAME: -> tensor<1x64x96xbf16>
// CHECK: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x96xbf16>
// CHECK: scf.forall
// CHECK: arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK: %[[E:.+]] = tensor.expand_shape %[[T]] {{\[\[}}0, 1], [2]] output_shape [1, 64, 96] : tensor<64x96xbf16> into tensor<1x64x96xbf16>
// CHECK-NOT: linalg.generic
// CHECK-NOT: xf32>
// CHECK: return %[[E]]

// The outlined kernel takes the rounding with it, so that its lowering
// sees it.
// OUTLINE-LABEL: func.func @linear_bias_reshaped(
// OUTLINE: %[[R:.+]] = call @attn_kernel_linalg_matmul(
// OUTLINE-NOT: linalg.generic
// OUTLINE: return %[[R]]
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_matmul(
// OUTLINE-SAME: -> tensor<1x64x96xbf16>
// OUTLINE: linalg.matmul
// OUTLINE: tensor.expand_shape
// OUTLINE: linalg.generic
// OUTLINE: arith.truncf %{{.+}} : f32 to bf16
func.func @linear_bias_reshaped(%x: tensor<64x128xbf16>, %w: tensor<96x128xbf16>, %bias: tensor<64x96xf32>) -> tensor<1x64x96xbf16> {
  %t0 = tensor.empty() : tensor<128x96xbf16>
  %wt = linalg.transpose ins(%w : tensor<96x128xbf16>) outs(%t0 : tensor<128x96xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%bias : tensor<64x96xf32>) -> tensor<64x96xf32>
  %e = tensor.expand_shape %r [[0, 1], [2]] output_shape [1, 64, 96] : tensor<64x96xf32> into tensor<1x64x96xf32>
  %n0 = tensor.empty() : tensor<1x64x96xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : tensor<1x64x96xf32>) outs(%n0 : tensor<1x64x96xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x64x96xbf16>
  return %n : tensor<1x64x96xbf16>
}

// -----

// A batched product rounded to f16 directly, onto a zero fill: f16 out.

// CHECK-LABEL: func.func @batch_f16(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<2x8x40xf16>
// CHECK-NOT: linalg.generic
// CHECK: return
// OUTLINE-LABEL: func.func @batch_f16(
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_batch_matmul(
// OUTLINE-SAME: -> tensor<2x8x40xf16>
func.func @batch_f16(%a: tensor<2x8x24xf16>, %b: tensor<2x24x40xf16>) -> tensor<2x8x40xf16> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<2x8x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x8x40xf32>) -> tensor<2x8x40xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x8x24xf16>, tensor<2x24x40xf16>) outs(%f : tensor<2x8x40xf32>) -> tensor<2x8x40xf32>
  %n0 = tensor.empty() : tensor<2x8x40xf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<2x8x40xf32>) outs(%n0 : tensor<2x8x40xf16>) {
  ^bb0(%a0: f32, %o: f16):
    %t = arith.truncf %a0 : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x8x40xf16>
  return %n : tensor<2x8x40xf16>
}

// -----

// A step of run-time batch and length (the generator's prefill): the
// product is reshaped by tensor.reshape to a shape built at run time, then
// rounded. The reshape is rebuilt on the bf16 result; no f32 tensor and no
// rounding loop remain.
// CHECK-LABEL: func.func @linear_dynamic_reshape(
// CHECK-SAME: -> tensor<?x?x64xbf16>
// CHECK: scf.forall
// CHECK: arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[T:.+]] = bufferization.to_tensor %{{.+}} : memref<?x64xbf16> to tensor<?x64xbf16>
// CHECK: %[[R:.+]] = tensor.reshape %[[T]](%{{.+}}) : (tensor<?x64xbf16>, tensor<3xi64>) -> tensor<?x?x64xbf16>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// OUTLINE-LABEL: func.func @linear_dynamic_reshape(
// OUTLINE: %[[K:.+]] = call @attn_kernel_linalg_matmul{{.*}} -> tensor<?x?x64xbf16>
// OUTLINE: return %[[K]]
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_matmul
// OUTLINE: linalg.matmul
// OUTLINE: tensor.reshape
// OUTLINE: linalg.generic
func.func @linear_dynamic_reshape(%x: tensor<?x96xbf16>, %w: tensor<96x64xbf16>, %b: i64, %t: i64) -> tensor<?x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x96xbf16>
  %i = tensor.empty(%m) : tensor<?x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x96xbf16>, tensor<96x64xbf16>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  %n = arith.constant 64 : i64
  %shape = tensor.from_elements %b, %t, %n : tensor<3xi64>
  %e = tensor.reshape %r(%shape) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x?x64xf32>
  %b0 = arith.index_cast %b : i64 to index
  %t0 = arith.index_cast %t : i64 to index
  %o = tensor.empty(%b0, %t0) : tensor<?x?x64xbf16>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : tensor<?x?x64xf32>) outs(%o : tensor<?x?x64xbf16>) {
  ^bb0(%a: f32, %out: bf16):
    %tr = arith.truncf %a : f32 to bf16
    linalg.yield %tr : bf16
  } -> tensor<?x?x64xbf16>
  return %g : tensor<?x?x64xbf16>
}
