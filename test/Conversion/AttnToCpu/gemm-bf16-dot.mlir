// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 bf16-dot=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 bf16-dot=true" --split-input-file | FileCheck %s --check-prefix=YMM
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 bf16-dot=true num-threads=1" --split-input-file | FileCheck %s --check-prefix=LLVM

// bf16 x bf16 accumulated in f32 with bf16-dot (a target with AVX512-BF16):
// the rhs panel is packed in pairs of k (pack[p, 2n + i] = rhs[2p + i, n]:
// half the rows, twice the columns of the f32 panel), each lhs pair is one
// 32-bit broadcast, and each accumulator takes one x86vector.avx512.dot
// per pair. K = 37 is odd: its last row pairs with zeros in the panel, and
// the lhs's last element with a zero (its neighbour is out of bounds).

// CHECK-LABEL: func.func @matmul_odd_k
// CHECK: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<19x96xbf16>
// The second row of a pair, or zeros past an odd depth.
// CHECK: %[[HI:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : vector<16xbf16>
// CHECK: %[[PAIRS:.+]] = vector.shuffle %{{.+}}, %[[HI]] [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<16xbf16>, vector<16xbf16>
// CHECK: vector.store %[[PAIRS]], %[[PANEL]][%{{.+}}, %{{.+}}] : memref<19x96xbf16>, vector<32xbf16>
// The register tile over the whole pairs (K / 2), 6 rows x 4 vectors.
// CHECK: %[[WHOLE:.+]] = arith.divui %{{.+}}, %c2 : index
// CHECK: %[[ALL:.+]] = arith.ceildivui %{{.+}}, %c2 : index
// CHECK: scf.for %[[P:.+]] = %c0 to %[[WHOLE]] step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: %[[B0:.+]] = vector.load %[[PANEL]][%[[P]], %{{.+}}] : memref<19x96xbf16>, vector<32xbf16>
// CHECK: %[[PAIR:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<8x37xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, vector<2xbf16>
// CHECK: %[[WORD:.+]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[WORDS:.+]] = vector.broadcast %[[WORD]] : vector<1xi32> to vector<16xi32>
// CHECK: %[[A0:.+]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.+}}, %[[A0]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.fma
// The last, odd k: (a[m, K - 1], 0).
// CHECK: scf.for %{{.+}} = %[[WHOLE]] to %[[ALL]] step %c1
// CHECK: %[[LAST:.+]] = memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<8x37xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// CHECK: vector.from_elements %[[LAST]], %{{.+}} : vector<2xbf16>
// CHECK: x86vector.avx512.dot
// CHECK-NOT: vector.fma
// CHECK: return

// 256-bit vectors: 8 f32 lanes, 16 bf16.
// YMM-LABEL: func.func @matmul_odd_k
// YMM: memref.alloc() {alignment = 64 : i64} : memref<19x80xbf16>
// YMM: x86vector.avx512.dot %{{.+}}, %{{.+}}, %{{.+}} : vector<16xbf16> -> vector<8xf32>

// LLVM-LABEL: llvm.func @matmul_odd_k
// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%{{.+}}, %{{.+}}, %{{.+}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
func.func @matmul_odd_k(%a: tensor<8x37xbf16>, %b: tensor<37x40xbf16>) -> tensor<8x40xbf16> {
  %c = attn.matmul %a, %b : (tensor<8x37xbf16>, tensor<37x40xbf16>) -> tensor<8x40xbf16>
  return %c : tensor<8x40xbf16>
}

// -----

// nn.Linear's x . W^T with W [N, K] as stored: a pair is one 32-bit value
// of a row of W, so 16 rows x 16 pairs are transposed in registers as i32
// and stored as 16 rows of pairs; the GEMM branch of a dynamic M uses the
// same pair tile.

// CHECK-LABEL: func.func @linear
// CHECK: scf.forall
// CHECK: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<35x96xbf16>
// CHECK: %[[ROW:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<40x70xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, vector<32xbf16>
// CHECK: vector.bitcast %[[ROW]] : vector<32xbf16> to vector<16xi32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 16, 1, 17, {{.*}}] : vector<16xi32>, vector<16xi32>
// CHECK: %[[OUT:.+]] = vector.bitcast %{{.+}} : vector<16xi32> to vector<32xbf16>
// CHECK: vector.store %[[OUT]], %[[PANEL]][%{{.+}}, %{{.+}}] : memref<35x96xbf16>, vector<32xbf16>
// CHECK: x86vector.avx512.dot %{{.+}}, %{{.+}}, %{{.+}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: return
func.func @linear(%x: tensor<?x70xbf16>, %w: tensor<40x70xbf16>) -> tensor<?x40xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<70x40xbf16>
  %wt = linalg.transpose ins(%w : tensor<40x70xbf16>) outs(%t0 : tensor<70x40xbf16>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x70xbf16>
  %o = tensor.empty(%m) : tensor<?x40xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x40xf32>) -> tensor<?x40xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x70xbf16>, tensor<70x40xbf16>) outs(%c : tensor<?x40xf32>) -> tensor<?x40xf32>
  return %r : tensor<?x40xf32>
}

// -----

// linalg.batch_matmul with dynamic sizes onto an f32 init.

// CHECK-LABEL: func.func @batch_dynamic
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<128x128xbf16>
// CHECK: x86vector.avx512.dot
// CHECK-NOT: vector.fma
// CHECK: return
func.func @batch_dynamic(%a: tensor<?x?x?xbf16>, %b: tensor<?x?x?xbf16>, %c: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<?x?x?xbf16>, tensor<?x?x?xbf16>) outs(%c : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}
