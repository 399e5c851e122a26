// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-outline-kernels="min-uses=1" --split-input-file | FileCheck %s --check-prefix=OUTLINE

// nn.Linear's bias as the exporter writes it: the product accumulates onto
// the bias broadcast to every row. The GEMM (or, for a few rows, the dot
// products along W's rows) starts its accumulators at the bias, read in
// place through a view with stride 0 along the rows: no broadcast tensor
// is written and read again.

// bf16 bias extended to f32 in a rank-3 generic, collapsed to the
// product's rows (BERT's form).
// CHECK-LABEL: func.func @bias_bf16(
// CHECK-SAME: %{{.+}}: tensor<1x64x128xbf16>, %{{.+}}: tensor<96x128xbf16>, %[[BIAS:.+]]: tensor<96xbf16>
// CHECK: %[[BUF:.+]] = bufferization.to_buffer %[[BIAS]] read_only : tensor<96xbf16> to memref<96xbf16, strided<[1], offset: ?>>
// CHECK: %[[ROWS:.+]] = memref.reinterpret_cast %[[BUF]] to offset: [%{{.+}}], sizes: [64, 96], strides: [0, 1] : memref<96xbf16, strided<[1], offset: ?>> to memref<64x96xbf16, strided<[0, 1], offset: ?>>
// CHECK: scf.forall
// CHECK: %[[B:.+]] = vector.load %[[ROWS]][%{{.+}}, %{{.+}}] : memref<64x96xbf16, strided<[0, 1], offset: ?>>, vector<16xbf16>
// CHECK: arith.extf %[[B]] : vector<16xbf16> to vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return

// The outlined product takes the broadcast (and the reshape after it) with
// it and the bias as its argument, so that its lowering sees the bias.
// OUTLINE-LABEL: func.func @bias_bf16(
// OUTLINE-SAME: %[[BIAS:[a-z0-9]+]]: tensor<96xbf16>
// OUTLINE-NOT: linalg.generic
// OUTLINE: call @attn_kernel_linalg_matmul(%{{.+}}, %{{.+}}, %[[BIAS]])
// OUTLINE-NOT: linalg.generic
// OUTLINE: return
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_matmul(
// OUTLINE-SAME: %[[KBIAS:arg[0-9]+]]: tensor<96xbf16>
// OUTLINE: %[[B:.+]] = linalg.generic {{.+}} ins(%[[KBIAS]] : tensor<96xbf16>)
// OUTLINE: %[[B2:.+]] = tensor.collapse_shape %[[B]]
// OUTLINE: linalg.matmul {{.+}} outs(%[[B2]] : tensor<64x96xf32>)
func.func @bias_bf16(%x: tensor<1x64x128xbf16>, %w: tensor<96x128xbf16>, %bias: tensor<96xbf16>) -> tensor<64x96xf32> {
  %t0 = tensor.empty() : tensor<128x96xbf16>
  %wt = linalg.transpose ins(%w : tensor<96x128xbf16>) outs(%t0 : tensor<128x96xbf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<1x64x96xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : tensor<96xbf16>) outs(%e : tensor<1x64x96xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %y = arith.extf %a : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<1x64x96xf32>
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x64x128xbf16> into tensor<64x128xbf16>
  %b2 = tensor.collapse_shape %b [[0, 1], [2]] : tensor<1x64x96xf32> into tensor<64x96xf32>
  %r = linalg.matmul ins(%x2, %wt : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%b2 : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// -----

// An f32 bias yielded as it is, under a dynamic row count: both the dot
// products (few rows) and the GEMM start at it.
// CHECK-LABEL: func.func @bias_f32_dynamic(
// CHECK-SAME: %[[BIAS:[a-z0-9]+]]: tensor<45xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.if
// CHECK: %[[BUF:.+]] = bufferization.to_buffer %[[BIAS]] read_only
// CHECK: memref.reinterpret_cast %[[BUF]] to offset: [%{{.+}}], sizes: [%{{.+}}, 45], strides: [0, 1] : memref<45xf32, strided<[1], offset: ?>> to memref<?x45xf32, strided<[0, 1], offset: ?>>
// CHECK: } else {
// CHECK: %[[BUF2:.+]] = bufferization.to_buffer %[[BIAS]] read_only
// CHECK: memref.reinterpret_cast %[[BUF2]] to offset: [%{{.+}}], sizes: [%{{.+}}, 45], strides: [0, 1]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bias_f32_dynamic(%x: tensor<?x257xf32>, %w: tensor<45x257xf32>, %bias: tensor<45xf32>) -> tensor<?x45xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x257xf32>
  %t0 = tensor.empty() : tensor<257x45xf32>
  %wt = linalg.transpose ins(%w : tensor<45x257xf32>) outs(%t0 : tensor<257x45xf32>) permutation = [1, 0]
  %e = tensor.empty(%m) : tensor<?x45xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<45xf32>) outs(%e : tensor<?x45xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x45xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x257xf32>, tensor<257x45xf32>) outs(%b : tensor<?x45xf32>) -> tensor<?x45xf32>
  return %r : tensor<?x45xf32>
}

// -----

// linalg.broadcast of the bias over a batch of products.
// CHECK-LABEL: func.func @bias_broadcast_batch(
// CHECK-SAME: %[[BIAS:[a-z0-9]+]]: tensor<40xf32>
// CHECK: %[[BUF:.+]] = bufferization.to_buffer %[[BIAS]] read_only
// CHECK: memref.reinterpret_cast %[[BUF]] to offset: [%{{.+}}], sizes: [2, 30, 40], strides: [0, 0, 1]
// CHECK-NOT: linalg.broadcast
// CHECK: return
// OUTLINE-LABEL: func.func @bias_broadcast_batch(
// OUTLINE-NOT: linalg.broadcast
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_batch_matmul(
// OUTLINE: %[[BC:.+]] = linalg.broadcast
// OUTLINE: linalg.batch_matmul {{.+}} outs(%[[BC]] : tensor<2x30x40xf32>)
func.func @bias_broadcast_batch(%a: tensor<2x30x45xf32>, %b: tensor<2x45x40xf32>, %bias: tensor<40xf32>) -> tensor<2x30x40xf32> {
  %e = tensor.empty() : tensor<2x30x40xf32>
  %c = linalg.broadcast ins(%bias : tensor<40xf32>) outs(%e : tensor<2x30x40xf32>) dimensions = [0, 1]
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x30x45xf32>, tensor<2x45x40xf32>) outs(%c : tensor<2x30x40xf32>) -> tensor<2x30x40xf32>
  return %r : tensor<2x30x40xf32>
}
