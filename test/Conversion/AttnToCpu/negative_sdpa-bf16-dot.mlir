// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 bf16-dot=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --split-input-file | FileCheck %s --check-prefix=NODOT

// What bf16-dot leaves to the f32 FMAs of the flash nest: attention whose
// operands are not bf16 (f16 has no pair dot; f32 needs none) or whose
// head dim E is dynamic (the queries' pair pack is sized per work item);
// and, without bf16-dot (a target whose vdpbf16ps is slower than FMAs of
// widened operands, or that has none), every attention: the keys widened
// to f32 per block, q.k^T on vector.fma.

// CHECK-LABEL: func.func @f16
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.fma
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @f16(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// CHECK-LABEL: func.func @f32
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.fma
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @f32(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_e
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.fma
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @dynamic_e(%q: tensor<1x2x64x?xbf16>, %k: tensor<1x2x64x?xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x?xbf16>, tensor<1x2x64x?xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

// Pairs with bf16-dot (the control of the NODOT run below).
// CHECK-LABEL: func.func @bf16
// CHECK: x86vector.avx512.dot
// NODOT-LABEL: func.func @bf16
// NODOT: memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// NODOT-NOT: x86vector.avx512.dot
// NODOT: vector.fma
// NODOT-NOT: x86vector.avx512.dot
// NODOT: return
func.func @bf16(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}
