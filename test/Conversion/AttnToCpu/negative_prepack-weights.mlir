// RUN: attn-opt %s --attn-cpu-prepack-weights=vector-bits=512 --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-cpu-prepack-weights=vector-bits=100 2>&1 | FileCheck %s --check-prefix=BITS
// With bf16-pairs, @bf16 is packed (prepack-weights.mlir) and @mixed gets
// its own remark; the others keep theirs (@taken fails as before).
// RUN: not attn-opt %s --split-input-file --attn-cpu-prepack-weights="vector-bits=512 bf16-pairs=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=PAIRS
// PAIRS-NOT: @bf16 is not prepacked
// PAIRS: weight argument #1 of @f16 is not prepacked: only f32 and bf16 matrices are prepacked
// PAIRS: weight argument #1 of @dynamic is not prepacked: its shape is dynamic
// PAIRS: weight argument #1 of @mixed is not prepacked: a GEMM multiplies it by a left operand that is not bf16

// BITS: vector-bits must be 128, 256 or 512, not 100

// Weights that are not packed keep their type, with a remark when a GEMM
// reads them: bf16 without bf16-pairs (a target that does not multiply
// bf16 pairs), a bf16 weight multiplied by an f32 left operand, f16,
// dynamic shapes, a weight with another use
// (an embedding tied to the output projection), one read both as stored
// and transposed. A parameter no GEMM reads (a norm's weight) and an
// argument not marked attn.weight are left alone silently.

// CHECK-LABEL: func.func @bf16(
// CHECK-SAME: tensor<64x32xbf16> {attn.weight}
// CHECK-NOT: attn.unpack_weight
// CHECK-NOT: @bf16_pack
func.func @bf16(%x: tensor<8x32xbf16>,
                // expected-remark @below {{weight argument #1 of @bf16 is not prepacked: bf16 weights are prepacked only for targets whose bf16 GEMMs multiply pairs with vdpbf16ps (Cooper Lake, Zen 4, AMX targets), not for targets that widen bf16 to f32}}
                %w: tensor<64x32xbf16> {attn.weight}) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<32x64xbf16>
  %wt = linalg.transpose ins(%w : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<8x32xbf16>, tensor<32x64xbf16>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// CHECK-LABEL: func.func @f16(
// CHECK-SAME: tensor<64x32xf16> {attn.weight}
// CHECK-NOT: attn.unpack_weight
func.func @f16(%x: tensor<8x32xf16>,
               // expected-remark @below {{weight argument #1 of @f16 is not prepacked: only f32 and bf16 matrices are prepacked}}
               %w: tensor<64x32xf16> {attn.weight}) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<32x64xf16>
  %wt = linalg.transpose ins(%w : tensor<64x32xf16>) outs(%e : tensor<32x64xf16>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<8x32xf16>, tensor<32x64xf16>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: tensor<?x32xf32> {attn.weight}
// CHECK-NOT: attn.unpack_weight
func.func @dynamic(%x: tensor<8x?xf32>,
                   // expected-remark @below {{weight argument #1 of @dynamic is not prepacked: its shape is dynamic}}
                   %w: tensor<?x32xf32> {attn.weight}) -> tensor<8x32xf32> {
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x?xf32>, tensor<?x32xf32>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// CHECK-LABEL: func.func @tied(
// CHECK-SAME: tensor<50x16xf32> {attn.weight}
// CHECK: linalg.transpose
// CHECK-NOT: attn.unpack_weight
func.func @tied(%ids: tensor<4xindex>, %x: tensor<4x16xf32>,
                // expected-remark @below {{weight argument #2 of @tied is not prepacked: it has uses other than as a GEMM's right operand}}
                %w: tensor<50x16xf32> {attn.weight}) -> (tensor<4x50xf32>, tensor<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %id = tensor.extract %ids[%c0] : tensor<4xindex>
  %row = tensor.extract_slice %w[%id, 0] [4, 16] [1, 1] : tensor<50x16xf32> to tensor<4x16xf32>
  %e = tensor.empty() : tensor<16x50xf32>
  %wt = linalg.transpose ins(%w : tensor<50x16xf32>) outs(%e : tensor<16x50xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<4x50xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<4x50xf32>) -> tensor<4x50xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x16xf32>, tensor<16x50xf32>) outs(%f : tensor<4x50xf32>) -> tensor<4x50xf32>
  return %y, %row : tensor<4x50xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @both_forms(
// CHECK-SAME: tensor<16x16xf32> {attn.weight}
// CHECK-NOT: attn.unpack_weight
func.func @both_forms(%x: tensor<4x16xf32>,
                      // expected-remark @below {{weight argument #1 of @both_forms is not prepacked: GEMMs read it both as stored and transposed}}
                      %w: tensor<16x16xf32> {attn.weight}) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<16x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y2 = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %y2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @unmarked_and_norm(
// CHECK-SAME: %{{.+}}: tensor<16x16xf32>, %{{.+}}: tensor<16xf32> {attn.weight})
// CHECK: linalg.matmul
// CHECK-NOT: attn.unpack_weight
// CHECK-NOT: @unmarked_and_norm_pack
func.func @unmarked_and_norm(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %g: tensor<16xf32> {attn.weight}) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %g : tensor<4x16xf32>, tensor<16xf32>
}

// -----

// The pack entry's name is taken.
// expected-error @below {{attn-cpu-prepack-weights: the pack entry point @taken_pack_1 exists already}}
func.func @taken(%x: tensor<4x16xf32>, %w: tensor<16x16xf32> {attn.weight}) -> tensor<4x16xf32> {
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
func.func @taken_pack_1() {
  return
}

// -----

// A bf16 weight that a GEMM multiplies by an f32 left operand: the pair
// path multiplies bf16 by bf16 only (see the PAIRS RUN line).
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME: tensor<32x64xbf16> {attn.weight}
// CHECK-NOT: attn.unpack_weight
func.func @mixed(%x: tensor<8x32xf32>,
                 // expected-remark @below {{weight argument #1 of @mixed is not prepacked}}
                 %w: tensor<32x64xbf16> {attn.weight}) -> tensor<8x64xf32> {
  %z = arith.constant 0.0 : f32
  %a = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x32xf32>, tensor<32x64xbf16>) outs(%f : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
