// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 bf16-dot=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 bf16-dot=true" --split-input-file | FileCheck %s --check-prefix=YMM
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 bf16-dot=true num-threads=1" --split-input-file | FileCheck %s --check-prefix=LLVM

// bf16 attention on a target that multiplies bf16 pairs (bf16-dot: the
// GEMMs use AVX512-BF16's vdpbf16ps): q.k^T and p.v of the flash nest run
// on x86vector.avx512.dot instead of f32 FMAs of widened operands, with the
// vector nest's register tiles (4 keys x up to 6 vectors of rows, 6 rows x
// 4 vectors of columns at 512 bits) on blocks of 64 query rows and 64 keys:
//   - the queries packed once per work item in bf16 pairs of e
//     ([E / 2, 2 x 64]: 16 x 16 transposes of 32-bit words);
//   - per pair of e, 4 vectors of query pairs (the block's 64 rows) and one
//     32-bit broadcast per key, read from the key row in place (no f32 copy
//     of the key block);
//   - the score step and the online softmax on f32 vectors, as before;
//   - p rounded to bf16 query-major ([64, 64]), after the rows past the
//     block's keys are zeroed (S = 130: a last block of 2 keys);
//   - V packed in bf16 pairs of keys ([32, 2 x 48]), then per pair of keys
//     the value pairs (Ev = 48: 3 vectors) and one 32-bit broadcast of a p
//     pair per query row.

// CHECK-LABEL: func.func @causal(
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %{{.+}}) in (2, 4, 4)
// CHECK-DAG: %[[ST:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK-DAG: %[[ACC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
// CHECK-DAG: %[[QP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x128xbf16>
// CHECK-DAG: %[[PR:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xbf16>
// CHECK-DAG: %[[VP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x96xbf16>
// CHECK-NOT: memref.alloc
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xi32>, vector<16xi32>
// CHECK: vector.store %{{.+}}, %[[QP]][%{{.+}}, %{{.+}}] : memref<32x128xbf16>, vector<32xbf16>
// CHECK: scf.for %[[KV0:.+]] = %c0 to %{{.+}} step %c64 {
// The scores: per pair of e, 4 vectors of query pairs, a key pair broadcast.
// CHECK: scf.for %[[E:.+]] = %c0 to %c32 step %c1 iter_args(
// CHECK-COUNT-4: vector.load %[[QP]][%[[E]], %{{.+}}] : memref<32x128xbf16>, vector<32xbf16>
// CHECK: %[[KPAIR:.+]] = vector.load %{{.+}}[%[[B]], %[[H]], %{{.+}}, %{{.+}}] : memref<2x4x130x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, vector<2xbf16>
// CHECK: %[[KWORD:.+]] = vector.bitcast %[[KPAIR]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[KWORDS:.+]] = vector.broadcast %[[KWORD]] : vector<1xi32> to vector<16xi32>
// CHECK: %[[KB:.+]] = vector.bitcast %[[KWORDS]] : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-4: x86vector.avx512.dot %{{.+}}, %[[KB]], %{{.+}} : vector<32xbf16> -> vector<16xf32>
// The score step (causal), stored key-major, and the softmax.
// CHECK: arith.cmpi sle, %{{.+}}, %{{.+}} : vector<16xindex>
// CHECK: vector.store %{{.+}}, %[[ST]][%{{.+}}, %{{.+}}] : memref<64x64xf32>, vector<16xf32>
// CHECK: math.exp
// Rows past the block's keys zeroed, p query-major in bf16.
// CHECK: vector.store %{{.+}}, %[[ST]][%{{.+}}, %{{.+}}] : memref<64x64xf32>, vector<16xf32>
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xi32>, vector<16xi32>
// CHECK: %[[P16:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %[[P16]], %[[PR]][%{{.+}}, %{{.+}}] : memref<64x64xbf16>, vector<16xbf16>
// V in pairs of keys: two rows interleaved.
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<16xbf16>, vector<16xbf16>
// CHECK: vector.store %{{.+}}, %[[VP]][%{{.+}}, %{{.+}}] : memref<32x96xbf16>, vector<32xbf16>
// acc = acc * alpha, then per pair of keys (ceil(keys / 2) of them) 3
// vectors of value pairs and a p pair broadcast per row.
// CHECK: %[[PAIRS:.+]] = arith.ceildivui %{{.+}}, %c2 : index
// CHECK: arith.mulf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: scf.for %[[J:.+]] = %c0 to %[[PAIRS]] step %c1 iter_args(
// CHECK-COUNT-3: vector.load %[[VP]][%[[J]], %{{.+}}] : memref<32x96xbf16>, vector<32xbf16>
// CHECK: vector.load %[[PR]][%{{.+}}, %{{.+}}] : memref<64x64xbf16>, vector<2xbf16>
// CHECK-COUNT-3: x86vector.avx512.dot
// CHECK: vector.store %{{.+}}, %[[ACC]][%{{.+}}, %{{.+}}] : memref<64x48xf32>, vector<16xf32>
// CHECK: return

// At 256 bits (lanes of 8 f32, AVX512-BF16 with VL): the same nest on
// 8 x 8 transposes and vector<16xbf16> pairs.
// YMM-LABEL: func.func @causal(
// YMM: memref.alloc() {alignment = 64 : i64} : memref<32x128xbf16>
// YMM: x86vector.avx512.dot %{{.+}}, %{{.+}}, %{{.+}} : vector<16xbf16> -> vector<8xf32>
// YMM: return

// LLVM-LABEL: llvm.func @causal(
// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// LLVM: llvm.return
func.func @causal(%q: tensor<2x4x200x64xbf16>, %k: tensor<2x4x130x64xbf16>, %v: tensor<2x4x130x48xbf16>) -> tensor<2x4x200x48xbf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<2x4x200x64xbf16>, tensor<2x4x130x64xbf16>, tensor<2x4x130x48xbf16>) -> tensor<2x4x200x48xbf16>
  return %o : tensor<2x4x200x48xbf16>
}

// -----

// An odd head dim (E = 33): 16 whole pairs of e, then the last element
// paired with zero (its key element loaded alone, so that the load stays
// in the key row), the queries' last pair row zero-padded (L = 20: one
// block of 32 rows, [17, 2 x 32]).
// CHECK-LABEL: func.func @odd_e(
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<17x64xbf16>
// CHECK: scf.for %{{.+}} = %c0 to %c16 step %c1 iter_args(
// CHECK: x86vector.avx512.dot
// CHECK: scf.for %{{.+}} = %c16 to %c17 step %c1 iter_args(
// CHECK: %[[LASTK:.+]] = memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<3x40x33xbf16, strided<[?, ?, 1], offset: ?>>
// CHECK: vector.from_elements %[[LASTK]], %{{.+}} : vector<2xbf16>
// CHECK: x86vector.avx512.dot
// CHECK: return
func.func @odd_e(%q: tensor<3x20x33xbf16>, %k: tensor<3x40x33xbf16>, %v: tensor<3x40x16xbf16>) -> tensor<3x20x16xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<3x20x33xbf16>, tensor<3x40x33xbf16>, tensor<3x40x16xbf16>) -> tensor<3x20x16xbf16>
  return %o : tensor<3x20x16xbf16>
}
