// RUN: attn-opt %s --split-input-file --attn-cpu-outline-kernels | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-cpu-outline-kernels=min-uses=1 | FileCheck %s --check-prefix=ONCE
// RUN: attn-opt %s --split-input-file --attn-cpu-outline-kernels=linalg-ops=true | FileCheck %s --check-prefix=LINALG

// Two GEMMs of one form onto zero fills: one private noinline function, with
// the fill cloned into it (the GEMM lowering starts its accumulators at the
// fill value), called twice; the second call takes the first one's result.
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: %[[X:[^:]+]]: tensor<16x64xf32>, %[[W0:[^:]+]]: tensor<64x64xf32>, %[[W1:[^:]+]]: tensor<64x64xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[A:.+]] = call @attn_kernel_linalg_matmul(%[[X]], %[[W0]]) : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT: %[[B:.+]] = call @attn_kernel_linalg_matmul(%[[A]], %[[W1]])
// CHECK-NEXT: return %[[B]]
// CHECK: func.func private @attn_kernel_linalg_matmul(%[[L:.+]]: tensor<16x64xf32>, %[[R:.+]]: tensor<64x64xf32>) -> tensor<16x64xf32>
// CHECK-SAME: attn.kernel
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: %[[E:.+]] = tensor.empty() : tensor<16x64xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]]
// CHECK: %[[M:.+]] = linalg.matmul ins(%[[L]], %[[R]] : {{.+}}) outs(%[[F]] : tensor<16x64xf32>)
// CHECK: return %[[M]]
// CHECK-NOT: func.func private
func.func @two_layers(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %b : tensor<16x64xf32>
}

// -----

// nn.Linear's x . W^T in a decode step: the transpose of each weight, used
// only by its matmul, goes into the kernel with it, so the kernel takes the
// weight as stored and the lowering reads it in place (dot products along
// its rows) instead of a transposed copy; the transposes left without
// users go. A transpose with another user is passed to the kernel as it is.
// CHECK-LABEL: func.func @linear_weights
// CHECK-SAME: %[[X:[^:]+]]: tensor<1x64xf32>, %[[W0:[^:]+]]: tensor<128x64xf32>, %[[W1:[^:]+]]: tensor<128x64xf32>
// CHECK-NOT: linalg.transpose
// CHECK: call @attn_kernel_linalg_matmul(%[[X]], %[[W0]]) : (tensor<1x64xf32>, tensor<128x64xf32>) -> tensor<1x128xf32>
// CHECK: call @attn_kernel_linalg_matmul(%[[X]], %[[W1]])
// CHECK: func.func private @attn_kernel_linalg_matmul(%[[L:.+]]: tensor<1x64xf32>, %[[R:.+]]: tensor<128x64xf32>) -> tensor<1x128xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[R]] : tensor<128x64xf32>)
// CHECK: linalg.matmul ins(%[[L]], %[[T]] : tensor<1x64xf32>, tensor<64x128xf32>)
func.func @linear_weights(%x: tensor<1x64xf32>, %w0: tensor<128x64xf32>, %w1: tensor<128x64xf32>) -> (tensor<1x128xf32>, tensor<1x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %t0 = linalg.transpose ins(%w0 : tensor<128x64xf32>) outs(%e : tensor<64x128xf32>) permutation = [1, 0]
  %t1 = linalg.transpose ins(%w1 : tensor<128x64xf32>) outs(%e : tensor<64x128xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<1x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x128xf32>) -> tensor<1x128xf32>
  %a = linalg.matmul ins(%x, %t0 : tensor<1x64xf32>, tensor<64x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  %b = linalg.matmul ins(%x, %t1 : tensor<1x64xf32>, tensor<64x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %a, %b : tensor<1x128xf32>, tensor<1x128xf32>
}

// -----

// CHECK-LABEL: func.func @negative_shared_transpose
// CHECK: %[[T:.+]] = linalg.transpose
// CHECK: call @attn_kernel_linalg_matmul(%{{[^,]+}}, %[[T]]) : (tensor<1x64xf32>, tensor<64x128xf32>)
// CHECK: call @attn_kernel_linalg_matmul(%{{[^,]+}}, %[[T]])
func.func @negative_shared_transpose(%x: tensor<1x64xf32>, %y: tensor<1x64xf32>, %w: tensor<128x64xf32>) -> (tensor<1x128xf32>, tensor<1x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %t = linalg.transpose ins(%w : tensor<128x64xf32>) outs(%e : tensor<64x128xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<1x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x128xf32>) -> tensor<1x128xf32>
  %a = linalg.matmul ins(%x, %t : tensor<1x64xf32>, tensor<64x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  %b = linalg.matmul ins(%y, %t : tensor<1x64xf32>, tensor<64x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %a, %b : tensor<1x128xf32>, tensor<1x128xf32>
}

// -----

// Attention with the same attributes and score_mod body in two layers, and
// batched attn.matmuls, across two public functions: one function each.
// CHECK-LABEL: func.func @attention_a
// CHECK: call @attn_kernel_attn_sdpa(%{{[^,]+}}, %{{[^,]+}}, %{{[^,)]+}}) :
// CHECK: call @attn_kernel_attn_matmul(
// CHECK-LABEL: func.func @attention_b
// CHECK: call @attn_kernel_attn_sdpa(
// CHECK: call @attn_kernel_attn_matmul(
// CHECK: func.func private @attn_kernel_attn_sdpa
// CHECK: attn.sdpa {{.+}} {is_causal = true, scale = 1.250000e-01 : f64}
// CHECK: arith.addf
// CHECK: func.func private @attn_kernel_attn_matmul
// CHECK-NOT: func.func private
func.func @attention_a(%q: tensor<2x4x8xf16>, %m: tensor<4x4xi1>, %b: tensor<1x4x4xf16>, %w: tensor<2x8x8xf16>) -> tensor<2x4x8xf16> {
  %0 = attn.sdpa %q, %q, %q, %m extras(%b) {is_causal = true, scale = 0.125 : f64} : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<4x4xi1>, tensor<1x4x4xf16>) -> tensor<2x4x8xf16> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f16):
    %x = arith.extf %e : f16 to f32
    %r = arith.addf %s, %x : f32
    attn.yield %r : f32
  }
  %1 = attn.matmul %0, %w : (tensor<2x4x8xf16>, tensor<2x8x8xf16>) -> tensor<2x4x8xf16>
  return %1 : tensor<2x4x8xf16>
}
func.func @attention_b(%q: tensor<2x4x8xf16>, %m: tensor<4x4xi1>, %b: tensor<1x4x4xf16>, %w: tensor<2x8x8xf16>) -> tensor<2x4x8xf16> {
  %0 = attn.sdpa %q, %q, %q, %m extras(%b) {is_causal = true, scale = 0.125 : f64} : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<4x4xi1>, tensor<1x4x4xf16>) -> tensor<2x4x8xf16> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f16):
    %x = arith.extf %e : f16 to f32
    %r = arith.addf %s, %x : f32
    attn.yield %r : f32
  }
  %1 = attn.matmul %0, %w : (tensor<2x4x8xf16>, tensor<2x8x8xf16>) -> tensor<2x4x8xf16>
  return %1 : tensor<2x4x8xf16>
}

// -----

// Dynamic shapes: the kernel keeps the `?` dims; the tensor.empty's size
// is an argument.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-COUNT-2: call @attn_kernel_linalg_matmul(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<?x64xf32>, tensor<64x32xf32>, index) -> tensor<?x32xf32>
// CHECK: func.func private @attn_kernel_linalg_matmul(%{{.+}}: tensor<?x64xf32>, %{{.+}}: tensor<64x32xf32>, %[[N:.+]]: index)
// CHECK: tensor.empty(%[[N]]) : tensor<?x32xf32>
func.func @dynamic_rows(%x: tensor<?x64xf32>, %w0: tensor<64x32xf32>, %w1: tensor<64x32xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<?x64xf32>, tensor<64x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  %b = linalg.matmul ins(%x, %w1 : tensor<?x64xf32>, tensor<64x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %a, %b : tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Attention over the filled prefix of a cache (a slice of dynamic length)
// stays in place: the call would take a dense copy of the slice.
// CHECK-LABEL: func.func @negative_dynamic_slice
// CHECK-COUNT-2: attn.sdpa
// CHECK-NOT: call
func.func @negative_dynamic_slice(%q: tensor<1x2x1x8xf32>, %k: tensor<1x2x32x8xf32>, %v: tensor<1x2x32x8xf32>, %n: index) -> (tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>) {
  %ks = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, %n, 8] [1, 1, 1, 1] : tensor<1x2x32x8xf32> to tensor<1x2x?x8xf32>
  %vs = tensor.extract_slice %v[0, 0, 0, 0] [1, 2, %n, 8] [1, 1, 1, 1] : tensor<1x2x32x8xf32> to tensor<1x2x?x8xf32>
  %a = attn.sdpa %q, %ks, %vs {scale = 0.125 : f64} : (tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x1x8xf32>
  %b = attn.sdpa %a, %ks, %vs {scale = 0.125 : f64} : (tensor<1x2x1x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x1x8xf32>
  return %a, %b : tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>
}

// -----

// Elementwise generics are outlined only with linalg-ops (the pipeline's
// second run, after the fusion); their bodies are part of the form.
// CHECK-LABEL: func.func @generics
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: call
// LINALG-LABEL: func.func @generics
// LINALG-COUNT-2: call @attn_kernel_linalg_generic(
// LINALG: func.func private @attn_kernel_linalg_generic
// LINALG: math.exp
#id = affine_map<(d0) -> (d0)>
func.func @generics(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

// Different shapes are different kernels: nothing repeats, nothing is
// outlined; with min-uses=1, one function per form.
// CHECK-LABEL: func.func @negative_different_shapes
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: call
// ONCE-LABEL: func.func @negative_different_shapes
// ONCE: call @attn_kernel_linalg_matmul(
// ONCE: call @attn_kernel_linalg_matmul_0(
// ONCE: func.func private @attn_kernel_linalg_matmul(%{{.+}}: tensor<16x64xf32>, %{{.+}}: tensor<64x64xf32>)
// ONCE: func.func private @attn_kernel_linalg_matmul_0(%{{.+}}: tensor<16x64xf32>, %{{.+}}: tensor<64x32xf32>)
func.func @negative_different_shapes(%x: tensor<16x64xf32>, %w0: tensor<64x64xf32>, %w1: tensor<64x32xf32>) -> (tensor<16x64xf32>, tensor<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x64xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e1 = tensor.empty() : tensor<16x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<16x64xf32>, tensor<64x64xf32>) outs(%f0 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %b = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f1 : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %a, %b : tensor<16x64xf32>, tensor<16x32xf32>
}

// -----

// Attributes, the fill value and the repeated operand are part of the form.
// CHECK-LABEL: func.func @negative_different_attributes
// CHECK-COUNT-2: attn.sdpa
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: call
// ONCE-LABEL: func.func @negative_different_attributes
// ONCE-COUNT-2: call @attn_kernel_attn_sdpa
// ONCE-COUNT-2: call @attn_kernel_linalg_matmul
// ONCE: call @attn_kernel_attn_sdpa_2(
func.func @negative_different_attributes(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<1x2x16x8xf32>) {
  %a = attn.sdpa %q, %k, %k {is_causal = true} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %b = attn.sdpa %q, %k, %k : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %f1 = linalg.fill ins(%one : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %c = linalg.matmul ins(%x, %w : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f0 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %d = linalg.matmul ins(%x, %w : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f1 : tensor<16x16xf32>) -> tensor<16x16xf32>
  // The same value as key and value: another form than distinct k and v.
  %g = attn.sdpa %q, %q, %k {is_causal = true} : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %a, %b, %c, %d, %g : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<1x2x16x8xf32>
}

// -----

// score_mod bodies that differ (a bias added, a bias subtracted) are not
// merged.
// CHECK-LABEL: func.func @negative_different_regions
// CHECK-COUNT-2: attn.sdpa
// CHECK-NOT: call
// ONCE-LABEL: func.func @negative_different_regions
// ONCE: call @attn_kernel_attn_sdpa(
// ONCE: call @attn_kernel_attn_sdpa_0(
// ONCE: func.func private @attn_kernel_attn_sdpa(
// ONCE: arith.addf
// ONCE: func.func private @attn_kernel_attn_sdpa_0(
// ONCE: arith.subf
func.func @negative_different_regions(%q: tensor<2x4x8xf32>, %b: tensor<1x4x4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %0 = attn.sdpa %q, %q, %q extras(%b) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x4x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f32):
    %r = arith.addf %s, %e : f32
    attn.yield %r : f32
  }
  %1 = attn.sdpa %q, %q, %q extras(%b) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<1x4x4xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %i0: index, %i1: index, %i2: index, %e: f32):
    %r = arith.subf %s, %e : f32
    attn.yield %r : f32
  }
  return %0, %1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Private functions and kernels nested in loops stay as they are.
// CHECK-LABEL: func.func private @negative_private
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: call
func.func private @negative_private(%x: tensor<16x16xf32>, %e: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %a = linalg.matmul ins(%x, %x : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %b = linalg.matmul ins(%x, %x : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %a, %b : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Attention over heads of a fused QKV projection: each transpose of
// [B, T, H, D] to [B, H, T, D] whose one user is the attention goes into
// the kernel (the lowering reads its input through a permuted view), and
// the kernel takes q, k and v at any row stride: the caller passes the
// slices as they are, no copy.
// CHECK-LABEL: func.func @fused_qkv
// CHECK-NOT: attn.transpose
// CHECK: call @attn_kernel_attn_sdpa(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x13x3x8xf32>, tensor<1x13x3x8xf32>, tensor<1x13x3x8xf32>)
// CHECK: call @attn_kernel_attn_sdpa(
// CHECK: func.func private @attn_kernel_attn_sdpa(
// CHECK-SAME: tensor<1x13x3x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>}
// CHECK-SAME: tensor<1x13x3x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>}
// CHECK-SAME: tensor<1x13x3x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>}
// CHECK-COUNT-3: attn.transpose %{{.+}} dims(1, 2)
// CHECK: attn.sdpa
func.func @fused_qkv(%qkv0: tensor<1x13x72xf32>, %qkv1: tensor<1x13x72xf32>) -> (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) {
  %qs0 = tensor.extract_slice %qkv0[0, 0, 0] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %ks0 = tensor.extract_slice %qkv0[0, 0, 24] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %vs0 = tensor.extract_slice %qkv0[0, 0, 48] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %q40 = tensor.expand_shape %qs0 [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %k40 = tensor.expand_shape %ks0 [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %v40 = tensor.expand_shape %vs0 [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %q0 = attn.transpose %q40 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %k0 = attn.transpose %k40 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %v0 = attn.transpose %v40 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %o0 = attn.sdpa %q0, %k0, %v0 {is_causal = true} : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) -> tensor<1x3x13x8xf32>
  %qs1 = tensor.extract_slice %qkv1[0, 0, 0] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %ks1 = tensor.extract_slice %qkv1[0, 0, 24] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %vs1 = tensor.extract_slice %qkv1[0, 0, 48] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %q41 = tensor.expand_shape %qs1 [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %k41 = tensor.expand_shape %ks1 [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %v41 = tensor.expand_shape %vs1 [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %q1 = attn.transpose %q41 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %k1 = attn.transpose %k41 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %v1 = attn.transpose %v41 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %o1 = attn.sdpa %q1, %k1, %v1 {is_causal = true} : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) -> tensor<1x3x13x8xf32>
  return %o0, %o1 : tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>
}

// -----

// Not through a transpose that moves the last dim (its rows would not be
// contiguous), nor one with another user: the caller transposes. An
// argument that attention reads as q, k or v still takes any row stride;
// the mask keeps the identity layout.
// CHECK-LABEL: func.func @negative_transposes
// CHECK-DAG: %[[KT:.+]] = attn.transpose %{{.+}} dims(2, 3)
// CHECK-DAG: %[[Q:.+]] = attn.transpose %{{.+}} dims(1, 2)
// CHECK: call @attn_kernel_attn_sdpa(%[[Q]], %[[KT]]
// CHECK: call @attn_kernel_attn_sdpa(%[[Q]], %[[KT]]
// CHECK: func.func private @attn_kernel_attn_sdpa(
// CHECK-SAME: tensor<1x3x13x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>}
// CHECK-SAME: tensor<1x3x13x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>}
// CHECK-SAME: tensor<1x3x13x8xf32> {bufferization.buffer_layout = strided<[?, ?, ?, 1], offset: ?>}
// CHECK-SAME: tensor<1x1x13x13xi1>)
// CHECK-NOT: attn.transpose
// CHECK: attn.sdpa
func.func @negative_transposes(%x: tensor<1x13x3x8xf32>, %y: tensor<1x3x8x13xf32>, %w: tensor<1x3x13x8xf32>, %m: tensor<1x1x13x13xi1>) -> (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) {
  %kt = attn.transpose %y dims(2, 3) : tensor<1x3x8x13xf32> -> tensor<1x3x13x8xf32>
  %q = attn.transpose %x dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %o0 = attn.sdpa %q, %kt, %w, %m : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x1x13x13xi1>) -> tensor<1x3x13x8xf32>
  %o1 = attn.sdpa %q, %kt, %w, %m : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x1x13x13xi1>) -> tensor<1x3x13x8xf32>
  return %o0, %o1, %q : tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>
}

// -----

// Quantized products of one form (input type, weight size, format) are one
// kernel, called once per layer; a form that occurs once stays where it is
// (with min-uses=1 it is a kernel of its own).
// CHECK-LABEL: func.func @quantized_layers
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x64xf32>, %[[W0:[^:]+]]: tensor<2304xi8>, %[[W1:[^:]+]]: tensor<2304xi8>, %[[W2:[^:]+]]: tensor<4352xi8>
// CHECK: %[[A:.+]] = call @attn_kernel_attn_quantized_matmul(%[[X]], %[[W0]]) : (tensor<?x64xf32>, tensor<2304xi8>) -> tensor<?x64xf32>
// CHECK-NEXT: %[[B:.+]] = call @attn_kernel_attn_quantized_matmul(%[[A]], %[[W1]])
// CHECK-NEXT: attn.quantized_matmul %[[B]], %[[W2]] {format = #attn.quant<q8_0>}
// CHECK: func.func private @attn_kernel_attn_quantized_matmul(%[[L:.+]]: tensor<?x64xf32>, %[[R:.+]]: tensor<2304xi8>) -> tensor<?x64xf32>
// CHECK-SAME: attn.kernel
// CHECK-NEXT: attn.quantized_matmul %[[L]], %[[R]] {format = #attn.quant<int4_sym, group = 32, scale = f16>}
// CHECK-NOT: func.func private
// ONCE-LABEL: func.func @quantized_layers
// ONCE-COUNT-2: call @attn_kernel_attn_quantized_matmul(
// ONCE-NEXT: call @attn_kernel_attn_quantized_matmul_
// ONCE-NOT: attn.quantized_matmul %
// ONCE-COUNT-2: func.func private @attn_kernel_attn_quantized_matmul
func.func @quantized_layers(%x: tensor<?x64xf32>, %w0: tensor<2304xi8>, %w1: tensor<2304xi8>, %w2: tensor<4352xi8>) -> tensor<?x64xf32> {
  %a = attn.quantized_matmul %x, %w0 {format = #attn.quant<int4_sym, group = 32, scale = f16>} : (tensor<?x64xf32>, tensor<2304xi8>) -> tensor<?x64xf32>
  %b = attn.quantized_matmul %a, %w1 {format = #attn.quant<int4_sym, group = 32, scale = f16>} : (tensor<?x64xf32>, tensor<2304xi8>) -> tensor<?x64xf32>
  %c = attn.quantized_matmul %b, %w2 {format = #attn.quant<q8_0>} : (tensor<?x64xf32>, tensor<4352xi8>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}
