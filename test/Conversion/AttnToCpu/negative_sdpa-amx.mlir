// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 amx=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 amx=true" --split-input-file | FileCheck %s --check-prefix=YMM

// What amx leaves to the vector flash code: attention whose operands are
// not bf16, whose E or Ev is not a whole number of 32-element steps, or is
// dynamic (no runtime check, no tiles); and, with 256-bit vectors, every
// attention (the probabilities are transposed in 16 x 16 blocks).

// CHECK-LABEL: func.func @f16
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @f16(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// CHECK-LABEL: func.func @f32
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @f32(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}

// -----

// E = 80: two and a half steps.
// CHECK-LABEL: func.func @e80
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @e80(%q: tensor<1x2x64x80xbf16>, %k: tensor<1x2x64x80xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x80xbf16>, tensor<1x2x64x80xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// Ev = 48: C tiles come in pairs of 16 columns.
// CHECK-LABEL: func.func @ev48
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @ev48(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x48xbf16>) -> tensor<1x2x64x48xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x48xbf16>) -> tensor<1x2x64x48xbf16>
  return %o : tensor<1x2x64x48xbf16>
}

// -----

// A dynamic head dim.
// CHECK-LABEL: func.func @dynamic_e
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @dynamic_e(%q: tensor<1x2x64x?xbf16>, %k: tensor<1x2x64x?xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x?xbf16>, tensor<1x2x64x?xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// 256-bit vectors: no tiles even where 512 would have them.
// CHECK-LABEL: func.func @ymm
// CHECK: call @attnrt_amx_available
// YMM-LABEL: func.func @ymm
// YMM-NOT: amx
// YMM: vector.fma
// YMM-NOT: amx
// YMM: return
func.func @ymm(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}
