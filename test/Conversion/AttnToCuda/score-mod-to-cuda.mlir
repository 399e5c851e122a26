// RUN: attn-opt %s --attn-lower-sdpa-to-cuda | FileCheck %s

// An attn.sdpa with a score_mod region becomes a call of the entry point
// generated for its region, attnrt_cuda_sdpa_mod_<hash of the generated
// code>: the bridge's q, k, v, [mask,] result, then one unranked memref per
// extra operand, then the attributes' memref (sdpa-to-cuda.mlir). The generated CUDA source is left
// in the module's attn.cuda_sources dictionary (entry point -> source) for
// attn-compile; identical regions share one entry point.

// CHECK: module attributes {attn.cuda_sources = {
// (The dictionary is sorted by name, i.e. by hash: a change of the
// generated code can reorder these three lines.)
// CHECK-SAME: attnrt_cuda_sdpa_mod_[[$MASKS:[0-9a-f]{16}]] = "{{.*}}in @anded_masks{{.*}}struct ScoreMod_[[$MASKS]]
// CHECK-SAME: attnrt_cuda_sdpa_mod_[[$CAP:[0-9a-f]{16}]] = "{{.*}}in @softcap_twice{{.*}}struct ScoreMod_[[$CAP]]
// CHECK-SAME: attnrt_cuda_sdpa_mod_[[$ALIBI:[0-9a-f]{16}]] = "{{.*}}in @alibi_with_mask{{.*}}struct ScoreMod_[[$ALIBI]]

// Three entry points for three regions and a folded mask.
// CHECK-DAG: func.func private @attnrt_cuda_sdpa_mod_[[$ALIBI]](memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xi1>, memref<*xbf16>, memref<*xf32>, memref<*xi8>) -> i32
// CHECK-DAG: func.func private @attnrt_cuda_sdpa_mod_[[$CAP]](memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xi8>) -> i32
// CHECK-DAG: func.func private @attnrt_cuda_sdpa_mod_[[$MASKS]](memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xi1>, memref<*xi1>, memref<*xi8>) -> i32
// The ALiBi call's attributes: scale 1/sqrt(64), -inf, DROP.
// CHECK-DAG: memref.global "private" constant @[[$ALIBI_ATTRS:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-NOT: func.func private

// Soft-capping, twice: one entry point.
// CHECK-LABEL: func.func @softcap_twice
// CHECK: call @attnrt_cuda_sdpa_mod_[[$CAP]](
// CHECK: call @attnrt_cuda_sdpa_mod_[[$CAP]](
// CHECK-NOT: = attn.sdpa
func.func @softcap_twice(%q: tensor<2x4x64x64xf16>, %k: tensor<2x4x64x64xf16>, %v: tensor<2x4x64x64xf16>) -> (tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>) {
  %0 = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>) -> tensor<2x4x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 5.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  %1 = attn.sdpa %k, %q, %v : (tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>) -> tensor<2x4x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 5.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %0, %1 : tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>
}

// ALiBi with a captured slope tensor and a masked_fill mask (drop
// polarity): the slopes are passed as an extra memref after the result, the
// mask as it is with the DROP polarity.
// CHECK-LABEL: func.func @alibi_with_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x64x64xbf16>, %[[K:.+]]: tensor<2x4x64x64xbf16>, %[[V:.+]]: tensor<2x4x64x64xbf16>, %[[M:.+]]: tensor<64x64xi1>, %[[SL:.+]]: tensor<1x4x1x1xf32>)
// CHECK-NOT: arith.xori
// CHECK-DAG: %[[MB:.+]] = bufferization.to_buffer %[[M]] read_only
// CHECK-DAG: %[[SB:.+]] = bufferization.to_buffer %[[SL]] read_only
// CHECK-DAG: %[[SU:.+]] = memref.cast %[[SB]] : memref<1x4x1x1xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<*xf32>
// CHECK-DAG: %[[OUT:.+]] = memref.alloc() : memref<2x4x64x64xbf16>
// CHECK-DAG: %[[A:.+]] = memref.get_global @[[$ALIBI_ATTRS]]
// CHECK-DAG: %[[AU:.+]] = memref.cast %[[A]]
// CHECK: call @attnrt_cuda_sdpa_mod_[[$ALIBI]](%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[SU]], %[[AU]])
// CHECK-NOT: = attn.sdpa
func.func @alibi_with_mask(%q: tensor<2x4x64x64xbf16>, %k: tensor<2x4x64x64xbf16>, %v: tensor<2x4x64x64xbf16>, %m: tensor<64x64xi1>, %slope: tensor<1x4x1x1xf32>) -> tensor<2x4x64x64xbf16> {
  %0 = attn.sdpa %q, %k, %v, %m extras(%slope) {mask_polarity = #attn.mask_polarity<drop>} : (tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<64x64xi1>, tensor<1x4x1x1xf32>) -> tensor<2x4x64x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %sl: f32):
    %ii = arith.index_castui %i : index to i64
    %jj = arith.index_castui %j : index to i64
    %if = arith.uitofp %ii : i64 to f32
    %jf = arith.uitofp %jj : i64 to f32
    %d = arith.subf %jf, %if : f32
    %bias = arith.mulf %sl, %d : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x4x64x64xbf16>
}

// Two boolean masks combined as the fusion combines a masked_fill mask and a
// keep mask (drop polarity: the masked_fill mask or-ed with the inverted
// keep mask): instead of an ori and an xori on the host, the masks become
// the extra operands of a region that sets masked_value (rounded to bf16:
// -1e9 is 0xCE6E) where one drops the position, and the generated kernel
// reads them as they are (score-mod-source.test checks the region's code).
// No mask operand is left; the or/xor tree and its constant are gone.
// CHECK-LABEL: func.func @anded_masks
// CHECK-SAME: %[[PAD:[^:]+]]: tensor<2x1x64x64xi1>, %[[KEEP:[^:]+]]: tensor<2x1x64x64xi1>)
// CHECK-NOT: arith.ori
// CHECK-NOT: arith.xori
// CHECK-NOT: dense<true>
// CHECK-DAG: %[[PB:.+]] = bufferization.to_buffer %[[PAD]] read_only
// CHECK-DAG: %[[PU:.+]] = memref.cast %[[PB]] {{.*}} to memref<*xi1>
// CHECK-DAG: %[[KB:.+]] = bufferization.to_buffer %[[KEEP]] read_only
// CHECK-DAG: %[[KU:.+]] = memref.cast %[[KB]] {{.*}} to memref<*xi1>
// CHECK: call @attnrt_cuda_sdpa_mod_[[$MASKS]](%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[PU]], %[[KU]],
// CHECK-NOT: arith.ori
func.func @anded_masks(%q: tensor<2x4x64x64xbf16>, %k: tensor<2x4x64x64xbf16>, %v: tensor<2x4x64x64xbf16>, %pad: tensor<2x1x64x64xi1>, %keep: tensor<2x1x64x64xi1>) -> tensor<2x4x64x64xbf16> {
  %true = arith.constant dense<true> : tensor<2x1x64x64xi1>
  %notkeep = arith.xori %keep, %true : tensor<2x1x64x64xi1>
  %either = arith.ori %pad, %notkeep : tensor<2x1x64x64xi1>
  %0 = attn.sdpa %q, %k, %v, %either {is_causal = true, mask_polarity = #attn.mask_polarity<drop>, masked_value = -1.000000e+09 : f64} : (tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<2x4x64x64xbf16>, tensor<2x1x64x64xi1>) -> tensor<2x4x64x64xbf16>
  return %0 : tensor<2x4x64x64xbf16>
}
