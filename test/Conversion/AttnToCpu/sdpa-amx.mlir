// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 amx=true" | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 amx=true num-threads=1" | FileCheck %s --check-prefix=LLVM

// bf16 attention with amx (a target with AMX-BF16), E and Ev whole 32-k
// steps: the flash lowering asks the runtime once whether the process may
// use the tiles and runs either the AMX work items (in a noinline function
// of their own) or the vector ones. On the AMX side, per block of 128 keys
// and 128 query rows (L = 200: two blocks; S = 130: a whole block and one
// of 2 keys, zero-padded to a 32-key tile):
//   - S^T = K Q^T on tiles: the key block read in place as A tiles (a whole
//     block) or from a zero-padded copy, the queries packed once per work
//     item in bf16 pairs of e ([32, 256]) as B tiles, C tiles from zero
//     stored into the f32 scores [128, 128];
//   - the score step and the online softmax on f32 vectors;
//   - p rounded to bf16 query-major [128, 128] (16 x 16 transposes);
//   - acc [128, 64] f32 += P V on tiles, V packed in bf16 pairs of keys
//     ([64, 128]), 4 steps per C tile load and store.

// CHECK: func.func private @attnrt_amx_available() -> i32
// CHECK-LABEL: func.func private @causal_amx(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %{{.+}}) in (2, 4, 2)
// CHECK-DAG: %[[ST:.+]] = memref.alloc() {alignment = 64 : i64} : memref<128x128xf32>
// CHECK-DAG: %[[ACC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xf32>
// CHECK-DAG: %[[QP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x256xbf16>
// CHECK-DAG: %[[PR:.+]] = memref.alloc() {alignment = 64 : i64} : memref<128x128xbf16>
// CHECK-DAG: %[[KP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<128x64xbf16>
// CHECK-DAG: %[[VP:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x128xbf16>
// The queries in pairs of e: 32-bit words transposed in registers.
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xi32>, vector<16xi32>
// CHECK: vector.store %{{.+}}, %[[QP]][%{{.+}}, %{{.+}}] : memref<32x256xbf16>, vector<32xbf16>
// CHECK: scf.for %[[KV0:.+]] = %c0 to %{{.+}} step %c128 {
// CHECK: %[[KEYS:.+]] = arith.minui %{{.+}}, %c128 : index
// CHECK: %[[WHOLE:.+]] = arith.cmpi eq, %[[KEYS]], %c128 : index
// CHECK: scf.if %[[WHOLE]] {
// CHECK: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: amx.tile_load %arg1[%[[B]], %[[H]], %{{.+}}, %c0] : memref<2x4x130x64xbf16{{.*}}> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_load %[[QP]][%c0, %{{.+}}] : memref<32x256xbf16> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf
// CHECK: amx.tile_store %[[ST]][%{{.+}}, %{{.+}}], %{{.+}} : memref<128x128xf32>, !amx.tile<16x16xf32>
// CHECK: } else {
// CHECK: vector.store %{{.+}}, %[[KP]][%{{.+}}, %{{.+}}] : memref<128x64xbf16>, vector<16xbf16>
// CHECK: amx.tile_load %[[KP]][%{{.+}}, %c0] : memref<128x64xbf16> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_store %[[ST]]
// The score step (causal) and the block max, then p = exp(s - m).
// CHECK: %[[SCALED:.+]] = arith.mulf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: %[[IN:.+]] = arith.cmpi sle, %{{.+}}, %{{.+}} : vector<16xindex>
// CHECK: %[[S:.+]] = arith.select %[[IN]], %[[SCALED]], %{{.+}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.store %[[S]], %[[ST]][%{{.+}}, %{{.+}}] : memref<128x128xf32>, vector<16xf32>
// CHECK: arith.cmpf ogt, %[[S]], %{{.+}} : vector<16xf32>
// CHECK: math.exp
// p query-major in bf16.
// CHECK: vector.shuffle %{{.+}}, %{{.+}} [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23] : vector<16xi32>, vector<16xi32>
// CHECK: %[[P16:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// CHECK: vector.store %[[P16]], %[[PR]][%{{.+}}, %{{.+}}] : memref<128x128xbf16>, vector<16xbf16>
// V in pairs of keys, then acc = acc * alpha and acc += P V.
// CHECK: vector.store %{{.+}}, %[[VP]][%{{.+}}, %{{.+}}] : memref<64x128xbf16>, vector<32xbf16>
// CHECK: arith.mulf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: amx.tile_load %[[ACC]][%{{.+}}, %{{.+}}] : memref<128x64xf32> into !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[PR]][%{{.+}}, %{{.+}}] : memref<128x128xbf16> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_load %[[VP]][%{{.+}}, %{{.+}}] : memref<64x128xbf16> into !amx.tile<16x32xbf16>
// CHECK-COUNT-4: amx.tile_mulf
// CHECK: amx.tile_store %[[ACC]]
// CHECK-LABEL: func.func @causal(
// CHECK: %[[GRANTED:.+]] = call @attnrt_amx_available() : () -> i32
// CHECK: %[[AMX:.+]] = arith.cmpi ne, %[[GRANTED]], %{{.+}} : i32
// CHECK: scf.if %[[AMX]] {
// CHECK-NEXT: func.call @causal_amx(
// CHECK-NEXT: } else {
// CHECK-NOT: amx.
// CHECK: vector.fma
// CHECK-NOT: amx.
// CHECK: return

// LLVM: llvm.func @attnrt_amx_available() -> i32
// LLVM-LABEL: llvm.func @causal_amx(
// LLVM: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// LLVM-LABEL: llvm.func @causal(
// LLVM-NOT: llvm.x86.t
// LLVM: llvm.call @attnrt_amx_available() : () -> i32
func.func @causal(%q: tensor<2x4x200x64xbf16>, %k: tensor<2x4x130x64xbf16>, %v: tensor<2x4x130x64xbf16>) -> tensor<2x4x200x64xbf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<2x4x200x64xbf16>, tensor<2x4x130x64xbf16>, tensor<2x4x130x64xbf16>) -> tensor<2x4x200x64xbf16>
  return %o : tensor<2x4x200x64xbf16>
}
