// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 bf16-dot=true amx=true" | FileCheck %s

// bf16 pairs prepacked for the pair path alone (attn-cpu-prepack-weights
// with bf16-pairs and without amx-tiles): the [33, 40] weight's panels
// hold 17 pairs x 48 columns, not whole AMX tiles (16-pair steps, 32
// columns), so with amx the product stays on the vdpbf16ps path, which
// reads them in place: no runtime check, no tiles, no tile past the
// panels. prepack-weights.mlir (AGEMM) has the panels in whole tiles.

// CHECK-LABEL: func.func @packed_pairs(
// CHECK-NOT: amx
// CHECK: vector.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x1x17x96xbf16{{.*}}>, vector<32xbf16>
// CHECK: x86vector.avx512.dot
// CHECK-NOT: amx
// CHECK: return
func.func @packed_pairs(%p: tensor<1x1x17x96xbf16>, %u: tensor<8x33xbf16>) -> tensor<8x40xf32> {
  %w = attn.unpack_weight %p : tensor<1x1x17x96xbf16> -> tensor<33x40xbf16>
  %z = arith.constant 0.0 : f32
  %b = tensor.empty() : tensor<8x40xf32>
  %g = linalg.fill ins(%z : f32) outs(%b : tensor<8x40xf32>) -> tensor<8x40xf32>
  %y = linalg.matmul ins(%u, %w : tensor<8x33xbf16>, tensor<33x40xbf16>) outs(%g : tensor<8x40xf32>) -> tensor<8x40xf32>
  return %y : tensor<8x40xf32>
}
