// RUN: attn-opt %s --split-input-file --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s

// Sequence lengths go to the kernels: the `_lengths` entries of the bridge
// take q_lengths then kv_lengths (unranked memrefs over their buffers)
// after the result; SdpaCallAttrs (sdpa-to-cuda.mlir) carries the padding
// side (bytes 36..39: 0 = right, 1 = left, 2 = packed) and which lengths
// are given and their type (bytes 40..43: 1 = q_lengths, 2 = kv_lengths,
// 4 = i64). A side without lengths passes the other side's buffer, which
// the bridge does not read for it.

// CHECK-LABEL: func.func private @attnrt_cuda_sdpa_f16_lengths(memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xi32>, memref<*xi32>, memref<*xi8>) -> i32
// Unbounded window, scale 0.125, -inf, not causal, KEEP, safe_softmax 0 (the
// kernels make it safe with lengths), left padding (1), both lengths, i32 (3).
// CHECK: memref.global "private" constant @[[$ATTRS:__attn_sdpa_call_attrs_[0-9a-f]{16}]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @left
// CHECK-SAME: %[[NQ:[^:]+]]: tensor<2xi32>, %[[NK:[^:]+]]: tensor<2xi32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<2x4x16x64xf16>
// CHECK: %[[OUTU:.+]] = memref.cast %[[OUT]]
// CHECK: %[[NQB:.+]] = bufferization.to_buffer %[[NQ]] read_only
// CHECK: %[[NQU:.+]] = memref.cast %[[NQB]] : memref<2xi32, strided<[?], offset: ?>> to memref<*xi32>
// CHECK: %[[NKB:.+]] = bufferization.to_buffer %[[NK]] read_only
// CHECK: %[[NKU:.+]] = memref.cast %[[NKB]] : memref<2xi32, strided<[?], offset: ?>> to memref<*xi32>
// CHECK: %[[G:.+]] = memref.get_global @[[$ATTRS]] : memref<48xi8>
// CHECK: %[[GU:.+]] = memref.cast %[[G]]
// CHECK: call @attnrt_cuda_sdpa_f16_lengths(%{{.+}}, %{{.+}}, %{{.+}}, %[[OUTU]], %[[NQU]], %[[NKU]], %[[GU]])
// CHECK-NOT: attn.sdpa %
func.func @left(%q: tensor<2x4x16x64xf16>, %nq: tensor<2xi32>, %nk: tensor<2xi32>) -> tensor<2x4x16x64xf16> {
  %0 = attn.sdpa %q, %q, %q q_lengths(%nq) kv_lengths(%nk) {padding_side = #attn.padding_side<left>} : (tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x4x16x64xf16>
  return %0 : tensor<2x4x16x64xf16>
}

// -----

// Key lengths only (i64, right padding) with a boolean mask: the mask's
// `_bool_lengths` entry, the kv_lengths buffer in both places.
// CHECK-LABEL: func.func private @attnrt_cuda_sdpa_bf16_bool_lengths(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xi1>, memref<*xbf16>, memref<*xi64>, memref<*xi64>, memref<*xi8>) -> i32
// Scale 1/sqrt(128), right padding (0), kv_lengths, i64 (2 | 4 = 6).
// CHECK: memref.global "private" constant @[[$ATTRS:__attn_sdpa_call_attrs_[0-9a-f]{16}]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, -13, 4, -75, 61, 0, 0, -128, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @kv_only
// CHECK-SAME: %[[NK:[^:]+]]: tensor<3xi64>
// CHECK: %[[NKB:.+]] = bufferization.to_buffer %[[NK]] read_only
// CHECK: %[[NKU:.+]] = memref.cast %[[NKB]] : memref<3xi64, strided<[?], offset: ?>> to memref<*xi64>
// CHECK: call @attnrt_cuda_sdpa_bf16_bool_lengths(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[NKU]], %[[NKU]], %{{.+}})
func.func @kv_only(%q: tensor<3x8x1x128xbf16>, %k: tensor<3x2x512x128xbf16>, %m: tensor<3x1x1x512xi1>, %nk: tensor<3xi64>) -> tensor<3x8x1x128xbf16> {
  %0 = attn.sdpa %q, %k, %k, %m kv_lengths(%nk) : (tensor<3x8x1x128xbf16>, tensor<3x2x512x128xbf16>, tensor<3x2x512x128xbf16>, tensor<3x1x1x512xi1>, tensor<3xi64>) -> tensor<3x8x1x128xbf16>
  return %0 : tensor<3x8x1x128xbf16>
}

// -----

// The packed layout: sequences back to back along L and S of a rank-3
// [H, T, E] query (any number of sequences; the bridge counts them).
// CHECK-LABEL: func.func private @attnrt_cuda_sdpa_f32_lengths(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xi32>, memref<*xi32>, memref<*xi8>) -> i32
// Causal (window right 0), scale 1/sqrt(80), packed (2), both lengths, i32 (3).
// CHECK: memref.global "private" constant @[[$ATTRS:__attn_sdpa_call_attrs_[0-9a-f]{16}]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 0, 0, 0, 0, 0, 46, -7, -28, 61, 0, 0, -128, -1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @packed
// CHECK: call @attnrt_cuda_sdpa_f32_lengths(
func.func @packed(%q: tensor<4x100x80xf32>, %nq: tensor<?xi32>, %nk: tensor<?xi32>) -> tensor<4x100x80xf32> {
  %0 = attn.sdpa %q, %q, %q q_lengths(%nq) kv_lengths(%nk) {is_causal = true, padding_side = #attn.padding_side<packed>} : (tensor<4x100x80xf32>, tensor<4x100x80xf32>, tensor<4x100x80xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<4x100x80xf32>
  return %0 : tensor<4x100x80xf32>
}
