// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-outline-kernels="min-uses=1" --split-input-file | FileCheck %s --check-prefix=OUTLINE

// Llama's gate as the exporter writes it: the bf16 projection is reshaped,
// rounded, then SiLU and the product with `up` (attn.mul, lowered to a
// generic that reuses SiLU's tensor as its init) each round to bf16 again.
// The GEMM applies all three in its output loop, on vectors, reading `up`
// (reshaped back to the product's shape) at each result's place: one bf16
// tensor is written, and no loop over the intermediate tensors remains.

// CHECK-LABEL: func.func @gate_silu_up(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<64x128xbf16>, %[[W:[a-z0-9]+]]: tensor<96x128xbf16>, %[[UP:[a-z0-9]+]]: tensor<1x64x96xbf16>
// CHECK: %[[UP2:.+]] = tensor.collapse_shape %[[UP]] {{\[\[}}0, 1], [2]] : tensor<1x64x96xbf16> into tensor<64x96xbf16>
// CHECK: %[[UPBUF:.+]] = bufferization.to_buffer %[[UP2]] read_only
// CHECK: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x96xbf16>
// CHECK: scf.forall
// CHECK: %[[ACC:.+]] = vector.load %{{[a-z_0-9]+}}[%arg{{[0-9]+}}, %arg{{[0-9]+}}] : memref<{{[0-9x]+}}xf32>, vector<16xf32>
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[ACC]] : vector<16xf32> to vector<16xbf16>
// CHECK: %[[R32:.+]] = arith.extf %[[R]] : vector<16xbf16> to vector<16xf32>
// CHECK: math.exp %{{.+}} : vector<16xf32>
// CHECK: %[[S:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: %[[U:.+]] = vector.load %[[UPBUF]][{{.+}}] : memref<64x96xbf16, strided<[?, 1], offset: ?>>, vector<16xbf16>
// CHECK-DAG: %[[S32:.+]] = arith.extf %[[S]]
// CHECK-DAG: %[[U32:.+]] = arith.extf %[[U]]
// CHECK: %[[M:.+]] = arith.mulf %[[S32]], %[[U32]] : vector<16xf32>
// CHECK: %[[MB:.+]] = arith.truncf %[[M]] : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %[[MB]], %[[OUT]]
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[OUT]]
// CHECK: %[[E:.+]] = tensor.expand_shape %[[T]] {{\[\[}}0, 1], [2]] output_shape [1, 64, 96] : tensor<64x96xbf16> into tensor<1x64x96xbf16>
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]]

// The outlined kernel takes the consumers with it, `up` as an argument,
// and its call stands where the last consumer was.
// OUTLINE-LABEL: func.func @gate_silu_up(
// OUTLINE-SAME: %[[X:[a-z0-9]+]]: tensor<64x128xbf16>, %[[W:[a-z0-9]+]]: tensor<96x128xbf16>, %[[UP:[a-z0-9]+]]: tensor<1x64x96xbf16>
// OUTLINE: %[[R:.+]] = call @attn_kernel_linalg_matmul(%[[X]], %[[W]], %[[UP]])
// OUTLINE-NOT: linalg.generic
// OUTLINE-NOT: attn.mul
// OUTLINE: return %[[R]]
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_matmul(
// OUTLINE-SAME: -> tensor<1x64x96xbf16>
// OUTLINE: linalg.matmul
// OUTLINE: tensor.expand_shape
// OUTLINE: linalg.generic
// OUTLINE: arith.truncf %{{.+}} : f32 to bf16
// OUTLINE: linalg.generic
// OUTLINE: math.exp
// OUTLINE: %[[M:.+]] = attn.mul
// OUTLINE: return %[[M]]
func.func @gate_silu_up(%x: tensor<64x128xbf16>, %w: tensor<96x128xbf16>, %up: tensor<1x64x96xbf16>) -> tensor<1x64x96xbf16> {
  %t0 = tensor.empty() : tensor<128x96xbf16>
  %wt = linalg.transpose ins(%w : tensor<96x128xbf16>) outs(%t0 : tensor<128x96xbf16>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  %e = tensor.expand_shape %r [[0, 1], [2]] output_shape [1, 64, 96] : tensor<64x96xf32> into tensor<1x64x96xf32>
  %n0 = tensor.empty() : tensor<1x64x96xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : tensor<1x64x96xf32>) outs(%n0 : tensor<1x64x96xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x64x96xbf16>
  %s0 = tensor.empty() : tensor<1x64x96xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%n : tensor<1x64x96xbf16>) outs(%s0 : tensor<1x64x96xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %a32 = arith.extf %a : bf16 to f32
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %a32 : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %y = arith.divf %a32, %den : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  } -> tensor<1x64x96xbf16>
  %m = "attn.mul"(%s, %up) : (tensor<1x64x96xbf16>, tensor<1x64x96xbf16>) -> tensor<1x64x96xbf16>
  return %m : tensor<1x64x96xbf16>
}

// -----

// An f32 product of run-time rows, reshaped with tensor.reshape (the
// dynamic prefill step's form), then a residual added: the residual is
// reshaped back to the product's shape (a shape built from its dims), the
// addition runs in the output loop, and the product's f32 tensor is the
// result.

// CHECK-LABEL: func.func @residual_dynamic_reshape(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x32xf32>, %[[RES:[a-z0-9]+]]: tensor<1x?x32xf32>
// CHECK: %[[SHAPE:.+]] = tensor.from_elements %{{.+}}, %{{.+}} : tensor<2xindex>
// CHECK: %[[RES2:.+]] = tensor.reshape %[[RES]](%[[SHAPE]]) : (tensor<1x?x32xf32>, tensor<2xindex>) -> tensor<?x32xf32>
// CHECK: %[[RESBUF:.+]] = bufferization.to_buffer %[[RES2]] read_only
// CHECK: scf.forall
// CHECK: %[[ACC:.+]] = vector.load %{{[a-z_0-9]+}}[%arg{{[0-9]+}}, %arg{{[0-9]+}}] : memref<{{[0-9x]+}}xf32>, vector<16xf32>
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[B:.+]] = vector.load %[[RESBUF]]
// CHECK: %[[SUM:.+]] = arith.addf %[[B]], %[[ACC]] : vector<16xf32>
// CHECK: vector.store %[[SUM]]
// CHECK: tensor.reshape
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @residual_dynamic_reshape(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %res: tensor<1x?x32xf32>) -> tensor<1x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %rows = tensor.dim %x, %c0 : tensor<?x64xf32>
  %z = arith.constant 0.0 : f32
  %i = tensor.empty(%rows) : tensor<?x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<?x32xf32>) -> tensor<?x32xf32>
  %r = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  %shape = tensor.from_elements %c1, %rows, %c32 : tensor<3xindex>
  %e = tensor.reshape %r(%shape) : (tensor<?x32xf32>, tensor<3xindex>) -> tensor<1x?x32xf32>
  %sum = "attn.add"(%res, %e) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
  return %sum : tensor<1x?x32xf32>
}

// -----

// A decode step's projection (4 rows, nn.Linear's weight read in place as
// dot products) with GELU: the dot products' sums go through the erf
// form as scalars before they are stored, in f32 throughout.

// CHECK-LABEL: func.func @gemv_gelu(
// CHECK: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4x48xf32>
// CHECK: vector.reduction <add>
// CHECK: %[[U:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: math.erf %[[U]] : f32
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @gemv_gelu(%x: tensor<4x64xf32>, %w: tensor<48x64xf32>) -> tensor<4x48xf32> {
  %t0 = tensor.empty() : tensor<64x48xf32>
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%t0 : tensor<64x48xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<4x48xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<4x48xf32>) -> tensor<4x48xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<4x64xf32>, tensor<64x48xf32>) outs(%f : tensor<4x48xf32>) -> tensor<4x48xf32>
  %g0 = tensor.empty() : tensor<4x48xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<4x48xf32>) outs(%g0 : tensor<4x48xf32>) {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %one = arith.constant 1.0 : f32
    %u = arith.mulf %a, %rsqrt2 : f32
    %erf = math.erf %u : f32
    %p = arith.addf %erf, %one : f32
    %h = arith.mulf %a, %half : f32
    %y = arith.mulf %h, %p : f32
    linalg.yield %y : f32
  } -> tensor<4x48xf32>
  return %g : tensor<4x48xf32>
}

// -----

// A generic that does more than round (GELU's erf, then the rounding) is
// not the GEMM's own rounding: the f32 accumulators go through its body in
// the output loop, and the result is bf16.

// CHECK-LABEL: func.func @erf_then_rounding(
// CHECK: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x96xbf16>
// CHECK: %[[ACC:.+]] = vector.load %{{[a-z_0-9]+}}[%arg{{[0-9]+}}, %arg{{[0-9]+}}] : memref<{{[0-9x]+}}xf32>, vector<16xf32>
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[E:.+]] = math.erf %[[ACC]] : vector<16xf32>
// CHECK-NEXT: %[[T:.+]] = arith.truncf %[[E]] : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT: vector.store %[[T]], %[[OUT]]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @erf_then_rounding(%x: tensor<64x128xbf16>, %w: tensor<128x96xbf16>, %c: tensor<64x96xf32>) -> tensor<64x96xbf16> {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %n0 = tensor.empty() : tensor<64x96xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x96xf32>) outs(%n0 : tensor<64x96xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %e = math.erf %a : f32
    %t = arith.truncf %e : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x96xbf16>
  return %n : tensor<64x96xbf16>
}

// -----

// A rounding downward is not the GEMM's rounding to nearest: it runs as
// written, on the f32 accumulators.

// CHECK-LABEL: func.func @rounding_downward(
// CHECK: %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x96xbf16>
// CHECK: %[[ACC:.+]] = vector.load %{{[a-z_0-9]+}}[%arg{{[0-9]+}}, %arg{{[0-9]+}}] : memref<{{[0-9x]+}}xf32>, vector<16xf32>
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[T:.+]] = arith.truncf %[[ACC]] downward : vector<16xf32> to vector<16xbf16>
// CHECK-NEXT: vector.store %[[T]], %[[OUT]]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @rounding_downward(%x: tensor<64x128xbf16>, %w: tensor<128x96xbf16>, %c: tensor<64x96xf32>) -> tensor<64x96xbf16> {
  %r = linalg.matmul ins(%x, %w : tensor<64x128xbf16>, tensor<128x96xbf16>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  %n0 = tensor.empty() : tensor<64x96xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<64x96xf32>) outs(%n0 : tensor<64x96xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a downward : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x96xbf16>
  return %n : tensor<64x96xbf16>
}

// -----

// GPT-NeoX's parallel residual: one generic reads two products. The first
// product applies it (reading the second's rounded result); the second
// only rounds. Outlined, the first kernel takes the generic and the second
// stops before it.

// CHECK-LABEL: func.func @two_products_one_consumer(
// CHECK: %[[B:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8x16xbf16>
// CHECK: arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<8x16xbf16>
// CHECK: vector.load %[[B]]
// CHECK: arith.addf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
// OUTLINE-LABEL: func.func @two_products_one_consumer(
// OUTLINE: %[[B:.+]] = call @attn_kernel_linalg_matmul_0(
// OUTLINE: %[[S:.+]] = call @attn_kernel_linalg_matmul(%{{.+}}, %{{.+}}, %[[B]])
// OUTLINE: return %[[S]]
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_matmul(
// OUTLINE: linalg.matmul
// OUTLINE: linalg.generic
// OUTLINE: linalg.generic
// OUTLINE: arith.addf
// OUTLINE-LABEL: func.func private @attn_kernel_linalg_matmul_0(
// OUTLINE: linalg.matmul
// OUTLINE: %[[R:.+]] = linalg.generic
// OUTLINE: arith.truncf
// OUTLINE: return %[[R]]
func.func @two_products_one_consumer(%x: tensor<8x32xbf16>, %w1: tensor<32x16xbf16>, %w2: tensor<32x16xbf16>) -> tensor<8x16xbf16> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<8x16xf32>) -> tensor<8x16xf32>
  %p1 = linalg.matmul ins(%x, %w1 : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %n0 = tensor.empty() : tensor<8x16xbf16>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p1 : tensor<8x16xf32>) outs(%n0 : tensor<8x16xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x16xbf16>
  %p2 = linalg.matmul ins(%x, %w2 : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p2 : tensor<8x16xf32>) outs(%n0 : tensor<8x16xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x16xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<8x16xbf16>, tensor<8x16xbf16>) outs(%n0 : tensor<8x16xbf16>) {
  ^bb0(%u: bf16, %v: bf16, %o: bf16):
    %u32 = arith.extf %u : bf16 to f32
    %v32 = arith.extf %v : bf16 to f32
    %r = arith.addf %u32, %v32 : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x16xbf16>
  return %s : tensor<8x16xbf16>
}
