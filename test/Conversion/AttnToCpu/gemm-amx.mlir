// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 amx=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 amx=true num-threads=1" --split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 amx=true" --canonicalize --split-input-file | FileCheck %s --check-prefix=CANON

// bf16 x bf16 accumulated in f32 with amx (a target with AMX-BF16): the
// product asks the runtime once whether the process may use the tiles and
// runs either the AMX work items or the vector ones. On the AMX side the
// blocks are padded to whole tiles: M = 8 and N = 40 to 32 x 64 f32 of
// acc, K = 37 to two 32-k steps (a 32 x 64 bf16 lhs block, a panel of 32
// pairs x 64 columns, the pairs past K zeroed), 2 x 2 C tiles per step.
// The panel is grouped: its 4 groups of 16 columns (32 bf16 per pair row)
// one after the other, 32 rows each, so that a B tile is 16 consecutive
// 64-byte rows.

// The AMX side is a noinline function of its own: LLVM configures the
// tiles (ldtilecfg) at the entry of a function that uses them, and the
// fallback must not run even that.
// CHECK: func.func private @attnrt_amx_available() -> i32
// CHECK-LABEL: func.func private @matmul_odd_amx(%{{.+}}: memref<37x40xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, %{{.+}}: memref<8x37xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, %{{.+}}: memref<8x40xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>) attributes {passthrough = ["noinline"]}
// CHECK: scf.forall
// CHECK-DAG: %[[ACC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
// CHECK-DAG: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<128x32xbf16>
// CHECK-DAG: %[[LHS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x64xbf16>
// The pairs past the depth, zeroed.
// CHECK: vector.store %{{.+}}, %[[PANEL]][%{{.+}}, %{{.+}}] : memref<128x32xbf16>, vector<32xbf16>
// The product starts at zero: its first steps update tile_zero's tiles
// (the A tiles read in place where the rows are whole tiles, else from the
// packed block), later chunks load theirs from acc.
// CHECK: %[[Z:.+]] = amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: %[[A0:.+]] = amx.tile_load %{{.+}} : memref<{{.+}}xbf16{{.*}}> into !amx.tile<16x32xbf16>
// CHECK: %[[B0:.+]] = amx.tile_load %[[PANEL]][%{{.+}}, %{{.+}}] : memref<128x32xbf16> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_mulf %[[A0]], %[[B0]], %[[Z]] : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK: amx.tile_store %[[ACC]][%{{.+}}, %{{.+}}], %{{.+}} : memref<32x64xf32>, !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[ACC]][%{{.+}}, %{{.+}}] : memref<32x64xf32> into !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[LHS]][%{{.+}}, %{{.+}}] : memref<32x64xbf16> into !amx.tile<16x32xbf16>
// A panel packed per call is in cache already: nothing to prefetch.
// CHECK-NOT: memref.prefetch
// CHECK-NOT: vector.fma
// CHECK-LABEL: func.func @matmul_odd(
// CHECK: %[[GRANTED:.+]] = call @attnrt_amx_available() : () -> i32
// CHECK: %[[AMX:.+]] = arith.cmpi ne, %[[GRANTED]], %{{.+}} : i32
// CHECK: scf.if %[[AMX]] {
// CHECK-NEXT: func.call @matmul_odd_amx(
// CHECK-NEXT: } else {
// CHECK-NOT: amx.
// CHECK: vector.fma
// CHECK-NOT: amx.
// CHECK: return

// k steps short of a group of 8 run in chunks of 4, 2 and 1 steps (the
// bits of their count), each between one load (none for the first chunk
// of a product from zero) and one store of the C tiles. With a static K
// the chunks' conditions fold: K = 37 is one chunk of 2 steps from zero
// tiles, no load of the C tiles.
// CANON-LABEL: func.func private @matmul_odd_amx(
// CANON: %[[ACC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<32x64xf32>
// CANON-NOT: amx.tile_load %[[ACC]][
// CANON: %[[Z:.+]] = amx.tile_zero
// CANON: %[[S1:.+]] = amx.tile_mulf %{{.+}}, %{{.+}}, %[[Z]]
// CANON: amx.tile_mulf %{{.+}}, %{{.+}}, %[[S1]]
// CANON: amx.tile_store %[[ACC]][
// CANON-NOT: amx.tile_load %[[ACC]][
// CANON-NOT: amx.tile_mulf
// CANON-LABEL: func.func @matmul_odd(

// The AMX intrinsics, each tile value within one block.
// LLVM: llvm.func @attnrt_amx_available() -> i32
// LLVM-LABEL: llvm.func @matmul_odd_amx(
// LLVM: llvm.call_intrinsic "llvm.x86.tileloadd64.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tdpbf16ps.internal"
// LLVM: llvm.call_intrinsic "llvm.x86.tilestored64.internal"
// LLVM-LABEL: llvm.func @matmul_odd(
// LLVM-NOT: llvm.x86.t
// LLVM: llvm.call @attnrt_amx_available() : () -> i32
// LLVM-NOT: llvm.x86.t
// LLVM: llvm.call @matmul_odd_amx(
// LLVM-NOT: llvm.x86.t
// LLVM: llvm.return
func.func @matmul_odd(%a: tensor<8x37xbf16>, %b: tensor<37x40xbf16>) -> tensor<8x40xbf16> {
  %c = attn.matmul %a, %b : (tensor<8x37xbf16>, tensor<37x40xbf16>) -> tensor<8x40xbf16>
  return %c : tensor<8x40xbf16>
}

// -----

// nn.Linear's x . W^T with W [N, K] bf16 and a dynamic M onto an f32
// bias: the weight's rows are pair-packed as on the pair path, and the k
// steps of a full block (256 = 8 steps) run unrolled between one load and
// one store of the C tiles.

// CHECK-LABEL: func.func private @linear_amx(
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<256x64xf32>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<512x32xbf16>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<256x256xbf16>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c8 {
// CHECK-COUNT-32: amx.tile_mulf
// CHECK: amx.tile_store
// CHECK-LABEL: func.func @linear(
// CHECK: call @attnrt_amx_available() : () -> i32
// CHECK: scf.if
// CHECK-NEXT: func.call @linear_amx(
// CHECK-NEXT: } else {
// CHECK-NOT: amx.
// CHECK: return
func.func @linear(%x: tensor<?x600xbf16>, %w: tensor<300x600xbf16>, %c: tensor<?x300xf32>) -> tensor<?x300xf32> {
  %t0 = tensor.empty() : tensor<600x300xbf16>
  %wt = linalg.transpose ins(%w : tensor<300x600xbf16>) outs(%t0 : tensor<600x300xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<?x600xbf16>, tensor<600x300xbf16>) outs(%c : tensor<?x300xf32>) -> tensor<?x300xf32>
  return %r : tensor<?x300xf32>
}

// -----

// Whole tiles (M = 64, K = 512) onto a zero fill. Each work item's first
// k block starts its C tiles at zero (acc is not zero-filled first: its
// only writers are the tile stores); where a row block and a k block are
// whole tiles (a run-time test) the A tiles are loaded from the operand in
// place, otherwise from the lhs block packed with zero padding. Row pairs
// are the outer loop: their A tiles stay in L1 across the column pairs.

// CHECK-LABEL: func.func private @whole_amx(
// CHECK-SAME: %{{[^:]+}}: memref<512x64xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, %[[A:[^:]+]]: memref<64x512xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// CHECK: %[[ACC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
// CHECK: %[[LHS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x256xbf16>
// CHECK-NOT: vector.store %{{.+}}, %[[ACC]][
// CHECK: scf.if
// CHECK-NEXT: scf.for %[[I0:[^ ]+]] = %{{.+}} to %{{.+}} step %c32 {
// CHECK-NEXT: scf.for %[[J0:[^ ]+]] = %{{.+}} to %{{.+}} step %c32 {
// CHECK: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK: amx.tile_load %[[A]][%{{.+}}, %{{.+}}] : memref<64x512xbf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}> into !amx.tile<16x32xbf16>
// CHECK: amx.tile_store %[[ACC]][%[[I0]], %[[J0]]]
// CHECK: } else {
// CHECK: vector.store %{{.+}}, %[[LHS]][
// CHECK: amx.tile_load %[[LHS]][%{{.+}}, %{{.+}}] : memref<64x256xbf16> into !amx.tile<16x32xbf16>
// The second k block adds to the C tiles the first one stored.
// CHECK: amx.tile_load %[[ACC]][
// CHECK-LABEL: func.func @whole(
func.func @whole(%a: tensor<64x512xbf16>, %b: tensor<512x64xbf16>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x512xbf16>, tensor<512x64xbf16>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
