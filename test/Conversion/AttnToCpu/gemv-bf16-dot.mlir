// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 bf16-dot=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --split-input-file | FileCheck %s --check-prefix=WIDEN
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 bf16-dot=true num-threads=1" --split-input-file | FileCheck %s --check-prefix=LLVM

// A decode step's product (one row times nn.Linear's [N, K] weight) with
// bf16-dot: the dot products along the weight's rows load 32 bf16 of a
// weight row and of the lhs row as stored and add their pair products
// with one x86vector.avx512.dot (no widening: the weight streams at the
// memory's rate). A tile of 2 weight rows x 1 lhs row keeps two chains per
// product: steps of 64 k; K = 301 leaves 45 products, one by one. Each
// step also prefetches the next tile's weight rows into L2.
// Without bf16-dot both rows are widened to f32 for vector.fma.

// CHECK-LABEL: func.func @decode_row
// CHECK: %[[SUMS:.+]]:4 = scf.for %[[K0:.+]] = %c0 to %c256 step %c64 iter_args(
// CHECK: %[[W:.+]] = vector.load %{{.+}}[%{{.+}}, %[[K0]]] : memref<45x301xbf16, strided<[?, 1], offset: ?>>, vector<32xbf16>
// The next tile's weight rows (two rows on) prefetched into L2 at the same k.
// CHECK: memref.prefetch %{{.+}}[%{{.+}}, %[[K0]]], read, locality<2>, data : memref<45x301xbf16, strided<[?, 1], offset: ?>>
// CHECK: %[[X:.+]] = vector.load %{{.+}}[%c0, %[[K0]]] : memref<1x301xbf16, strided<[?, 1], offset: ?>>, vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.+}}, %[[X]], %[[W]] : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: arith.extf
// CHECK: scf.yield
// CHECK: vector.reduction <add>
// CHECK: scf.for %{{.+}} = %c256 to %c301 step %c1
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: return

// WIDEN-LABEL: func.func @decode_row
// WIDEN-NOT: x86vector.avx512.dot
// WIDEN: arith.extf %{{.+}} : vector<16xbf16> to vector<16xf32>
// WIDEN: vector.fma
// WIDEN-NOT: x86vector.avx512.dot
// WIDEN: return

// LLVM-LABEL: llvm.func @decode_row
// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// LLVM: llvm.return
func.func @decode_row(%x: tensor<1x301xbf16>, %w: tensor<45x301xbf16>) -> tensor<1x45xf32> {
  %t0 = tensor.empty() : tensor<301x45xbf16>
  %wt = linalg.transpose ins(%w : tensor<45x301xbf16>) outs(%t0 : tensor<301x45xbf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<1x45xf32>
  %zero = arith.constant 0.0 : f32
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x45xf32>) -> tensor<1x45xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x301xbf16>, tensor<301x45xbf16>) outs(%c : tensor<1x45xf32>) -> tensor<1x45xf32>
  return %r : tensor<1x45xf32>
}

// -----

// f16 has no pair dot: widened, with or without bf16-dot.
// CHECK-LABEL: func.func @decode_row_f16
// CHECK-NOT: x86vector.avx512.dot
// CHECK: vector.fma
// CHECK-NOT: x86vector.avx512.dot
// CHECK: return
func.func @decode_row_f16(%x: tensor<1x64xf16>, %w: tensor<40x64xf16>) -> tensor<1x40xf32> {
  %t0 = tensor.empty() : tensor<64x40xf16>
  %wt = linalg.transpose ins(%w : tensor<40x64xf16>) outs(%t0 : tensor<64x40xf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<1x40xf32>
  %zero = arith.constant 0.0 : f32
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x40xf32>) -> tensor<1x40xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x64xf16>, tensor<64x40xf16>) outs(%c : tensor<1x40xf32>) -> tensor<1x40xf32>
  return %r : tensor<1x40xf32>
}
