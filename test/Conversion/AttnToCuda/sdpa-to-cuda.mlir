// RUN: attn-opt %s --split-input-file --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s

// attn.sdpa -> a call of the kernels' runtime bridge on unranked memrefs:
// the tensors, then the op's attributes, the bytes of one
// attn::cuda::SdpaCallAttrs (kernels/include/attn/kernels/sdpa_contract.h)
// in a constant global, little-endian: window_left, window_right (i64,
// 9223372036854775807 = unbounded), scale, masked_value (f32), is_causal,
// mask_polarity (0 = KEEP, 1 = DROP), safe_softmax, padding_side (0 =
// right, 1 = left, 2 = packed), lengths (bits: 1 = q_lengths, 2 =
// kv_lengths, 4 = i64; sdpa-lengths-to-cuda.mlir), reserved (i32).

// CHECK-LABEL: func.func private @attnrt_cuda_sdpa_f16(memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xi8>) -> i32
// Unbounded left, right 0, scale 0.125, -inf, causal, KEEP, not safe.
// CHECK: memref.global "private" constant @[[$ATTRS:__attn_sdpa_call_attrs_[0-9a-f]{16}]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 62, 0, 0, -128, -1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]> {alignment = 8 : i64}
// CHECK-LABEL: func.func @causal_f16
// CHECK-SAME: (%[[Q:.+]]: tensor<2x8x128x64xf16>, %[[K:.+]]: tensor<2x8x128x64xf16>, %[[V:.+]]: tensor<2x8x128x64xf16>)
// CHECK-DAG: %[[QB:.+]] = bufferization.to_buffer %[[Q]] read_only
// CHECK-DAG: %[[QU:.+]] = memref.cast %[[QB]] : memref<2x8x128x64xf16, strided<[?, ?, ?, ?], offset: ?>> to memref<*xf16>
// CHECK-DAG: %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG: %[[VB:.+]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<2x8x128x64xf16>
// CHECK: %[[OUTU:.+]] = memref.cast %[[OUT]] : memref<2x8x128x64xf16> to memref<*xf16>
// CHECK: %[[G:.+]] = memref.get_global @[[$ATTRS]] : memref<48xi8>
// CHECK: %[[GU:.+]] = memref.cast %[[G]] : memref<48xi8> to memref<*xi8>
// CHECK: %[[STATUS:.+]] = call @attnrt_cuda_sdpa_f16(%[[QU]], %{{.+}}, %{{.+}}, %[[OUTU]], %[[GU]])
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[STATUS]], %{{.+}} : i32
// CHECK: cf.assert %[[OK]], "attn.sdpa: the CUDA kernel call failed (its message is on stderr)"
// CHECK: %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
func.func @causal_f16(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

// Masks pick the bridge entry; masked_value and scale pass through; the
// result's dynamic sizes come from q (L) and v (Ev).

// CHECK-DAG: func.func private @attnrt_cuda_sdpa_bf16_bool(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xi1>, memref<*xbf16>, memref<*xi8>) -> i32
// CHECK-DAG: func.func private @attnrt_cuda_sdpa_bf16_add(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xi8>) -> i32
// Scale 0.5, masked_value -1e9 (not yet rounded to bf16); then the
// default scale 1/sqrt(128) and -inf.
// CHECK-DAG: memref.global "private" constant @[[$BOOL:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 63, 40, 107, 110, -50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[$ADD:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, -13, 4, -75, 61, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @masks_bf16
// CHECK: %[[L:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<4x?x128xbf16>
// CHECK: memref.alloc(%[[L]]) : memref<4x?x96xbf16>
// CHECK: memref.get_global @[[$BOOL]]
// CHECK: call @attnrt_cuda_sdpa_bf16_bool(
// CHECK: memref.get_global @[[$ADD]]
// CHECK: call @attnrt_cuda_sdpa_bf16_add(
func.func @masks_bf16(%q: tensor<4x?x128xbf16>, %k: tensor<4x64x128xbf16>, %v: tensor<4x64x96xbf16>,
                      %pad: tensor<4x1x64xi1>, %bias: tensor<?x64xbf16>) -> (tensor<4x?x96xbf16>, tensor<4x?x96xbf16>) {
  %0 = attn.sdpa %q, %k, %v, %pad {scale = 0.5 : f64, masked_value = -1.0e9 : f64}
      : (tensor<4x?x128xbf16>, tensor<4x64x128xbf16>, tensor<4x64x96xbf16>, tensor<4x1x64xi1>) -> tensor<4x?x96xbf16>
  %1 = attn.sdpa %q, %k, %v, %bias : (tensor<4x?x128xbf16>, tensor<4x64x128xbf16>, tensor<4x64x96xbf16>, tensor<?x64xbf16>) -> tensor<4x?x96xbf16>
  return %0, %1 : tensor<4x?x96xbf16>, tensor<4x?x96xbf16>
}

// -----

// The boolean mask's polarity goes to the kernels as it is: a masked_fill
// mask (`mask_polarity = drop`, as the fusion passes it) is read with DROP
// (1), so nothing inverts it on the host; a keep mask with KEEP (0).

// CHECK-DAG: memref.global "private" constant @[[$DROP:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[$KEEP:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @mask_polarity
// CHECK-SAME: (%{{.+}}: tensor<1x2x64x64xf16>, %[[M:.+]]: tensor<64x64xi1>, %[[N:.+]]: tensor<64x64xi1>)
// CHECK: %[[MB:.+]] = bufferization.to_buffer %[[M]] read_only
// CHECK: %[[MU:.+]] = memref.cast %[[MB]]
// CHECK: %[[DG:.+]] = memref.get_global @[[$DROP]]
// CHECK-NEXT: %[[DU:.+]] = memref.cast %[[DG]]
// CHECK: call @attnrt_cuda_sdpa_f16_bool(%{{.+}}, %{{.+}}, %{{.+}}, %[[MU]], %{{.+}}, %[[DU]])
// CHECK: %[[X:.+]] = arith.xori %[[M]], %[[N]]
// CHECK: %[[XB:.+]] = bufferization.to_buffer %[[X]] read_only
// CHECK: %[[XU:.+]] = memref.cast %[[XB]]
// CHECK: %[[KG:.+]] = memref.get_global @[[$KEEP]]
// CHECK-NEXT: %[[KU:.+]] = memref.cast %[[KG]]
// CHECK: call @attnrt_cuda_sdpa_f16_bool(%{{.+}}, %{{.+}}, %{{.+}}, %[[XU]], %{{.+}}, %[[KU]])
func.func @mask_polarity(%q: tensor<1x2x64x64xf16>, %m: tensor<64x64xi1>, %n: tensor<64x64xi1>) -> (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) {
  %0 = attn.sdpa %q, %q, %q, %m {mask_polarity = #attn.mask_polarity<drop>} : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<64x64xi1>) -> tensor<1x2x64x64xf16>
  %x = arith.xori %m, %n : tensor<64x64xi1>
  %1 = attn.sdpa %q, %q, %q, %x : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<64x64xi1>) -> tensor<1x2x64x64xf16>
  return %0, %1 : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
}

// -----

// f32 goes to the GPU too (the kernels' generic kernel, in f32 precision),
// with an f32 additive mask; head dims that are not 64/128 are fine there.

// CHECK-DAG: func.func private @attnrt_cuda_sdpa_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi8>) -> i32
// CHECK-DAG: func.func private @attnrt_cuda_sdpa_f32_add(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi8>) -> i32
// CHECK-LABEL: func.func @f32_inputs
// CHECK: call @attnrt_cuda_sdpa_f32(
// CHECK: call @attnrt_cuda_sdpa_f32_add(
func.func @f32_inputs(%q: tensor<2x4x100x80xf32>, %bias: tensor<100x100xf32>) -> (tensor<2x4x100x80xf32>, tensor<2x4x100x80xf32>) {
  %0 = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<2x4x100x80xf32>, tensor<2x4x100x80xf32>, tensor<2x4x100x80xf32>) -> tensor<2x4x100x80xf32>
  %1 = attn.sdpa %q, %q, %q, %bias : (tensor<2x4x100x80xf32>, tensor<2x4x100x80xf32>, tensor<2x4x100x80xf32>, tensor<100x100xf32>) -> tensor<2x4x100x80xf32>
  return %0, %1 : tensor<2x4x100x80xf32>, tensor<2x4x100x80xf32>
}

// -----

// A sliding window goes to the kernels as (left, right), intersected with
// is_causal; an absent side is ATTN_WINDOW_UNBOUNDED (INT64_MAX).

// (128, 0), then (unbounded, 3); scale 1/sqrt(64).
// CHECK-DAG: memref.global "private" constant @[[$W1:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 62, 0, 0, -128, -1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[$W2:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @window
// CHECK: memref.get_global @[[$W1]]
// CHECK: call @attnrt_cuda_sdpa_bf16(
// CHECK: memref.get_global @[[$W2]]
// CHECK: call @attnrt_cuda_sdpa_bf16(
func.func @window(%q: tensor<1x2x300x64xbf16>) -> (tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>) {
  %0 = attn.sdpa %q, %q, %q {is_causal = true, window_left = 128 : i64, window_right = 5 : i64} : (tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>) -> tensor<1x2x300x64xbf16>
  %1 = attn.sdpa %q, %q, %q {window_right = 3 : i64} : (tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>) -> tensor<1x2x300x64xbf16>
  return %0, %1 : tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>
}

// -----

// nanoGPT layout: q/k/v = x.transpose(1, 2) of [B, L, H, E]. The kernels take
// any row strides, so the transposes become views of the inputs' buffers and
// disappear; nothing is copied, nothing is left for the CPU.

// CHECK-LABEL: func.func @nanogpt_layout
// CHECK-SAME: (%[[X:.+]]: tensor<2x128x8x64xf16>)
// CHECK-NOT: attn.transpose
// CHECK: %[[XB:.+]] = bufferization.to_buffer %[[X]] read_only
// CHECK: memref.transpose %[[XB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: call @attnrt_cuda_sdpa_f16(
// CHECK-NOT: attn.transpose
func.func @nanogpt_layout(%x: tensor<2x128x8x64xf16>) -> tensor<2x8x128x64xf16> {
  %q = attn.transpose %x dims(1, 2) : tensor<2x128x8x64xf16> -> tensor<2x8x128x64xf16>
  %o = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

// A transpose that is used elsewhere too stays for its other user.

// CHECK-LABEL: func.func @negative_transpose_kept
// CHECK: %[[T:.+]] = attn.transpose
// CHECK: call @attnrt_cuda_sdpa_f16(
// CHECK: return %{{.+}}, %[[T]]
func.func @negative_transpose_kept(%x: tensor<2x128x8x64xf16>) -> (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) {
  %q = attn.transpose %x dims(1, 2) : tensor<2x128x8x64xf16> -> tensor<2x8x128x64xf16>
  %o = attn.sdpa %q, %q, %q : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
  return %o, %q : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>
}

// -----

// What the kernels cannot run stays for the CPU lowering, with a remark
// (sdpa-to-cuda-require-gpu.mlir: with require-gpu it is an error).

// CHECK-LABEL: func.func @negative_unsupported
// CHECK-COUNT-5: attn.sdpa
// CHECK-NOT: call
func.func @negative_unsupported(%f: tensor<16x64xf64>, %h: tensor<16x60xf16>, %w: tensor<16x512xf16>,
                                %d: tensor<16x64xf16>, %r: tensor<1x2x2x16x64xf16>) {
  // expected-remark @+1 {{attn.sdpa stays on the CPU: element type f64 (the CUDA kernels take f16, bf16 and f32)}}
  %0 = attn.sdpa %f, %f, %f : (tensor<16x64xf64>, tensor<16x64xf64>, tensor<16x64xf64>) -> tensor<16x64xf64>
  // expected-remark @+1 {{stays on the CPU: head dim 60 (the CUDA kernels need a multiple of 8, at most 256)}}
  %1 = attn.sdpa %h, %h, %h : (tensor<16x60xf16>, tensor<16x60xf16>, tensor<16x60xf16>) -> tensor<16x60xf16>
  // expected-remark @+1 {{stays on the CPU: head dim 512}}
  %2 = attn.sdpa %w, %w, %w : (tensor<16x512xf16>, tensor<16x512xf16>, tensor<16x512xf16>) -> tensor<16x512xf16>
  // expected-remark @+1 {{stays on the CPU: dropout_p > 0 (the CUDA kernels are inference kernels)}}
  %3 = attn.sdpa %d, %d, %d {dropout_p = 0.1 : f64} : (tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<16x64xf16>
  // expected-remark @+1 {{stays on the CPU: rank 5 (the CUDA kernels take [B, H, L, E] at most)}}
  %4 = attn.sdpa %r, %r, %r : (tensor<1x2x2x16x64xf16>, tensor<1x2x2x16x64xf16>, tensor<1x2x2x16x64xf16>) -> tensor<1x2x2x16x64xf16>
  return
}

// -----

// An additive mask of another float type stays on the CPU (the kernels read
// masks in the input type). Regions: score-mod-to-cuda.mlir and
// negative_score-mod-to-cuda.mlir.
// CHECK-LABEL: func.func @negative_mask_type
// CHECK: attn.sdpa
// CHECK-NOT: call
func.func @negative_mask_type(%d: tensor<2x16x64xf16>, %m: tensor<16x16xf32>) {
  // expected-remark @+1 {{stays on the CPU: an additive mask whose element type differs from the query's (the CUDA kernels read it in the input type)}}
  %1 = attn.sdpa %d, %d, %d, %m : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<16x16xf32>) -> tensor<2x16x64xf16>
  return
}
