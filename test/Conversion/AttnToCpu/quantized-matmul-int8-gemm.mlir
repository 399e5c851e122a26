// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 vnni=true vnni-512=true quantized-activations=int8" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=WIDE
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 vnni=true quantized-activations=int8" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=YMM
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 vnni=true avx-vnni=true quantized-activations=int8" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=VEX
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 vnni=true vnni-512=true quantized-activations=int8 num-threads=2" | FileCheck %s --check-prefix=LLVM

// quantized-activations=int8 at prefill (more than 8 rows: the GEMM) on a
// target with vpdpbusd, for a weight of units of 32 codes with one scale
// and a fixed offset (and q4_k and q6_k, below): the rows are quantized once per call as the GEMV
// quantizes them (codes [R, K] i8, scales and code sums [R, K / 32]; the
// rows in parallel, an scf.forall), then per work item and k block the
// weight's codes are packed into an i32 panel [kc / 4, nc] (4
// consecutive k of a column per lane; groups of 8 columns transposed in
// registers, padding columns zero) beside an f32
// panel of their scales [kc / 32, nc], and a tile of mr rows x 2 vectors
// sums each unit of 32 k in i32 (8 vpdpbusd per accumulator, started at
// -offset * the row block's code sum, the row's 4 codes broadcast), then
// converts and accumulates it times weight scales * row scale. Vectors of
// 16 i32 (zmm) with vnni-512, else of 8; tiles of 6 x 2 where the
// target's f32 tile has 24 accumulators (512-bit vectors), 3 x 2 where it
// has 12 (256-bit).

// q4_0 (offset 8), 13 rows, N = 37 (padded to 48 columns), K = 96 (3 units).
// WIDE-LABEL: func.func @prefill_q4_0(
// WIDE-DAG: %[[XQ:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13x96xi8>
// WIDE-DAG: %[[XD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13x3xf32>
// WIDE-DAG: %[[XS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13x3xi32>
// WIDE: scf.forall (%{{.*}}) in (13)
// WIDE: math.roundeven %{{.*}} : vector<32xf32>
// WIDE-DAG: %[[PANEL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<24x48xi32>
// WIDE-DAG: %[[SCALES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<3x48xf32>
// WIDE: arith.cmpi ult, %{{.*}}, %c37 : index
// WIDE: vector.bitcast %{{.*}} : vector<32xi8> to vector<8xi32>
// WIDE: memref.store %{{.*}}, %[[SCALES]][%{{.*}}, %{{.*}}] : memref<3x48xf32>
// WIDE: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 1, 9, 2, 10, 3, 11] : vector<8xi32>, vector<8xi32>
// WIDE: vector.store %{{.*}}, %[[PANEL]][%{{.*}}, %{{.*}}] : memref<24x48xi32>, vector<8xi32>
// WIDE: scf.for %{{.*}} = %c0 to %c12 step %c6
// WIDE: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// WIDE: %[[SUM:.*]] = memref.load %[[XS]][%{{.*}}, %{{.*}}] : memref<13x3xi32>
// WIDE: %[[START:.*]] = arith.muli %[[SUM]], %c-8_i32 : i32
// WIDE: %[[INIT:.*]] = vector.broadcast %[[START]] : i32 to vector<16xi32>
// WIDE: %[[B:.*]] = vector.load %[[PANEL]][%{{.*}}, %c0] : memref<24x48xi32>, vector<16xi32>
// WIDE: %[[BB:.*]] = vector.bitcast %[[B]] : vector<16xi32> to vector<64xi8>
// WIDE: %[[A4:.*]] = vector.load %[[XQ]][%{{.*}}, %{{.*}}] : memref<13x96xi8>, vector<4xi8>
// WIDE: %[[A1:.*]] = vector.bitcast %[[A4]] : vector<4xi8> to vector<1xi32>
// WIDE: %[[A16:.*]] = vector.broadcast %[[A1]] : vector<1xi32> to vector<16xi32>
// WIDE: %[[A:.*]] = vector.bitcast %[[A16]] : vector<16xi32> to vector<64xi8>
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %[[BB]], %[[A]], %[[INIT]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE-COUNT-95: llvm.inline_asm "vpdpbusd
// WIDE-NOT: llvm.inline_asm
// WIDE: %[[WS:.*]] = vector.load %[[SCALES]][%{{.*}}, %c0] : memref<3x48xf32>, vector<16xf32>
// WIDE: %[[D:.*]] = memref.load %[[XD]][%{{.*}}, %{{.*}}] : memref<13x3xf32>
// WIDE: %[[DV:.*]] = vector.broadcast %[[D]] : f32 to vector<16xf32>
// WIDE: %[[F:.*]] = arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// WIDE: %[[S:.*]] = arith.mulf %[[WS]], %[[DV]] : vector<16xf32>
// WIDE: vector.fma %[[F]], %[[S]], %{{.*}} : vector<16xf32>
// WIDE: return

// YMM-LABEL: func.func @prefill_q4_0(
// YMM: memref.alloc() {alignment = 64 : i64} : memref<24x40xi32>
// YMM: scf.for %{{.*}} = %c0 to %c12 step %c3
// YMM: llvm.inline_asm "vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// YMM: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// YMM: return
// VEX-LABEL: func.func @prefill_q4_0(
// VEX: scf.for %{{.*}} = %c0 to %c12 step %c3
// VEX: llvm.inline_asm "{vex} vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// VEX: return
func.func @prefill_q4_0(%x: tensor<13x96xf32>, %w: tensor<1998xi8>) -> tensor<13x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>}
      : (tensor<13x96xf32>, tensor<1998xi8>) -> tensor<13x37xf32>
  return %y : tensor<13x37xf32>
}

// -----

// q8_0 (sign bits flipped, offset 128), a dynamic row count of bf16 rows:
// the GEMV's branch and the GEMM's both quantize the rows, the GEMM's in
// its parallel work items' integer tiles.
// WIDE-LABEL: func.func @prefill_dynamic_q8_0(
// WIDE: scf.if
// WIDE: } else {
// WIDE: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x64xi8>
// WIDE: arith.extf %{{.*}} : vector<32xbf16> to vector<32xf32>
// WIDE: math.roundeven %{{.*}} : vector<32xf32>
// WIDE: scf.forall
// WIDE: arith.xori %{{.*}} : vector<32xi8>
// WIDE: arith.muli %{{.*}}, %c-128_i32 : i32
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}} : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: vector.fma %{{.*}} : vector<16xf32>
// WIDE: return
// LLVM-LABEL: llvm.func @prefill_dynamic_q8_0(
// LLVM-NOT: alloca_scope
// LLVM: omp.wsloop
// LLVM: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" {{.*}} : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// LLVM-NOT: alloca_scope
func.func @prefill_dynamic_q8_0(%x: tensor<?x64xbf16>, %w: tensor<340xi8>) -> tensor<?x5xbf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q8_0>}
      : (tensor<?x64xbf16>, tensor<340xi8>) -> tensor<?x5xbf16>
  return %y : tensor<?x5xbf16>
}

// -----

// q4_k (a Q4_K_M file's projections), 13 rows, N = 37, K = 256 (one
// super-block: 8 units): the pack decodes each unit with the GEMV's
// decodeQ4KGroups (the low or high nibbles of its 32 bytes, no offset)
// and stores its scale d1 and min m1 as two rows of the scale panel [8 x
// 2, 48]; the tile's dots start at 0 (no offset term), and after each
// unit's scaling one more FMA per accumulator adds -m1 * (the row's scale
// * f32(its block's code sum)).
// WIDE-LABEL: func.func @prefill_q4_k(
// WIDE-DAG: %[[XD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13x8xf32>
// WIDE-DAG: %[[XS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13x8xi32>
// WIDE: scf.forall (%{{.*}}) in (13)
// WIDE-DAG: %[[PANEL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x48xi32>
// WIDE-DAG: %[[SCALES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x48xf32>
// WIDE: arith.muli %{{.*}}, %c144 : index
// WIDE: arith.andi %{{.*}} : vector<32xi8>
// WIDE: memref.store %{{.*}}, %[[SCALES]][%c0, %{{.*}}] : memref<16x48xf32>
// WIDE: memref.store %{{.*}}, %[[SCALES]][%c1, %{{.*}}] : memref<16x48xf32>
// WIDE: arith.shrui %{{.*}} : vector<32xi8>
// WIDE: memref.store %{{.*}}, %[[SCALES]][%c15, %{{.*}}] : memref<16x48xf32>
// WIDE: scf.for %{{.*}} = %c0 to %c12 step %c6
// WIDE: scf.for %[[U:.*]] = %c0 to %c8 step %c1 iter_args
// WIDE-NOT: arith.muli %{{.*}} : i32
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}}, %{{.*}}, %{{.*}} : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE-COUNT-95: llvm.inline_asm "vpdpbusd
// WIDE-NOT: llvm.inline_asm
// WIDE: %[[ROW:.*]] = arith.muli %[[U]], %c2 : index
// WIDE: %[[WS:.*]] = vector.load %[[SCALES]][%[[ROW]], %c0] : memref<16x48xf32>, vector<16xf32>
// WIDE: %[[D:.*]] = memref.load %[[XD]][%{{.*}}, %[[U]]] : memref<13x8xf32>
// WIDE: %[[F:.*]] = arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// WIDE: %[[S:.*]] = arith.mulf %[[WS]], %{{.*}} : vector<16xf32>
// WIDE: %[[ACC:.*]] = vector.fma %[[F]], %[[S]], %{{.*}} : vector<16xf32>
// WIDE: %[[MROW:.*]] = arith.addi %[[ROW]], %c1 : index
// WIDE: %[[M:.*]] = vector.load %[[SCALES]][%[[MROW]], %c0] : memref<16x48xf32>, vector<16xf32>
// WIDE: %[[NEGM:.*]] = arith.negf %[[M]] : vector<16xf32>
// WIDE: %[[SUM:.*]] = memref.load %[[XS]][%{{.*}}, %[[U]]] : memref<13x8xi32>
// WIDE: %[[FSUM:.*]] = arith.sitofp %[[SUM]] : i32 to f32
// WIDE: %[[DS:.*]] = arith.mulf %[[D]], %[[FSUM]] : f32
// WIDE: %[[DSV:.*]] = vector.broadcast %[[DS]] : f32 to vector<16xf32>
// WIDE: vector.fma %[[NEGM]], %[[DSV]], %[[ACC]] : vector<16xf32>
// WIDE: return
// YMM-LABEL: func.func @prefill_q4_k(
// YMM: memref.alloc() {alignment = 64 : i64} : memref<16x40xf32>
// YMM: scf.for %{{.*}} = %c0 to %c12 step %c3
// YMM: llvm.inline_asm "vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// YMM: arith.negf %{{.*}} : vector<8xf32>
// YMM: return
// VEX-LABEL: func.func @prefill_q4_k(
// VEX: llvm.inline_asm "{vex} vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// VEX: return
func.func @prefill_q4_k(%x: tensor<13x256xf32>, %w: tensor<5328xi8>) -> tensor<13x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_k>}
      : (tensor<13x256xf32>, tensor<5328xi8>) -> tensor<13x37xf32>
  return %y : tensor<13x37xf32>
}

// -----

// int4_asym in groups of 32 (NNCF's INT4_ASYM), 9 rows, N = 37, K = 64:
// the pack reads each unit's codes without offset (the nibbles as
// stored) and stores two rows of the scale panel [2 x 2, 48]: the scale
// and scale * f32(the unit's zero point), its min; the tile's dots start
// at 0, and each unit ends with the min's FMA: -(scale * zero point) *
// (the row's scale * f32(its block's code sum)).
// WIDE-LABEL: func.func @prefill_int4_asym(
// WIDE-DAG: %[[XD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<9x2xf32>
// WIDE-DAG: %[[XS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<9x2xi32>
// WIDE-DAG: %[[SCALES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x48xf32>
// WIDE: %[[SCALE:.*]] = arith.extf %{{.*}} : f16 to f32
// WIDE: arith.andi %{{.*}} : vector<16xi8>
// WIDE-NOT: arith.xori
// WIDE: %[[ZP:.*]] = arith.extui %{{.*}} : i8 to i32
// WIDE: %[[FZP:.*]] = arith.uitofp %[[ZP]] : i32 to f32
// WIDE: %[[MIN:.*]] = arith.mulf %[[SCALE]], %[[FZP]] : f32
// WIDE-DAG: %[[S:.*]] = arith.select %{{.*}}, %[[SCALE]], %{{.*}} : f32
// WIDE-DAG: %[[M:.*]] = arith.select %{{.*}}, %[[MIN]], %{{.*}} : f32
// WIDE-DAG: memref.store %[[S]], %[[SCALES]][%[[ROW:.*]], %{{.*}}] : memref<4x48xf32>
// WIDE-DAG: %[[MROW:.*]] = arith.addi %[[ROW]], %c1 : index
// WIDE-DAG: memref.store %[[M]], %[[SCALES]][%[[MROW]], %{{.*}}] : memref<4x48xf32>
// WIDE: scf.for %[[U:.*]] = %c0 to %c2 step %c1 iter_args
// WIDE-NOT: arith.muli %{{.*}} : i32
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}}, %{{.*}}, %[[ZERO:cst.*]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// WIDE: %[[NEGM:.*]] = arith.negf %{{.*}} : vector<16xf32>
// WIDE: %[[SUM:.*]] = memref.load %[[XS]][%{{.*}}, %{{.*}}] : memref<9x2xi32>
// WIDE: %[[FSUM:.*]] = arith.sitofp %[[SUM]] : i32 to f32
// WIDE: %[[DS:.*]] = arith.mulf %{{.*}}, %[[FSUM]] : f32
// WIDE: %[[DSV:.*]] = vector.broadcast %[[DS]] : f32 to vector<16xf32>
// WIDE: vector.fma %[[NEGM]], %[[DSV]], %{{.*}} : vector<16xf32>
// WIDE: return
// YMM-LABEL: func.func @prefill_int4_asym(
// YMM: llvm.inline_asm "vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// YMM: arith.negf %{{.*}} : vector<8xf32>
// YMM: return
func.func @prefill_int4_asym(%x: tensor<9x64xf32>, %w: tensor<1482xi8>) -> tensor<9x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_asym, group = 32, scale = f16>}
      : (tensor<9x64xf32>, tensor<1482xi8>) -> tensor<9x37xf32>
  return %y : tensor<9x37xf32>
}

// -----

// q6_k (a scale per 16 elements, offset 32), 13 bf16 rows, N = 5 (one
// vector of 16 columns, 11 of them padding), K = 256: the quantizer also
// writes each half block's code sum ([13, 16]: the first half reduced,
// the second the block's sum minus it); the pack decodes each unit with
// decodeQ6Groups and stores its two scales as two rows of the scale panel
// [8 x 2, 16]; the tile runs a unit as two groups of 16 k, each 4
// vpdpbusd started at -32 * the row's half block sum, converted and
// accumulated times its own scale.
// WIDE-LABEL: func.func @prefill_q6_k(
// WIDE-DAG: %[[XD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13x8xf32>
// WIDE-DAG: %[[HALF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13x16xi32>
// WIDE: scf.forall (%{{.*}}) in (13)
// WIDE: %[[SUM:.*]] = vector.reduction <add>, %[[CODES:.*]] : vector<32xi32> into i32
// WIDE: %[[FIRST:.*]] = vector.extract_strided_slice %[[CODES]] {offsets = [0], sizes = [16], strides = [1]} : vector<32xi32> to vector<16xi32>
// WIDE: %[[S0:.*]] = vector.reduction <add>, %[[FIRST]] : vector<16xi32> into i32
// WIDE: memref.store %[[S0]], %[[HALF]]
// WIDE: %[[S1:.*]] = arith.subi %[[SUM]], %[[S0]] : i32
// WIDE: memref.store %[[S1]], %[[HALF]]
// WIDE-DAG: %[[PANEL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64x16xi32>
// WIDE-DAG: %[[SCALES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
// WIDE: arith.cmpi ult, %{{.*}}, %c5 : index
// WIDE: arith.muli %{{.*}}, %c210 : index
// WIDE: memref.store %{{.*}}, %[[SCALES]][%c0, %{{.*}}] : memref<16x16xf32>
// WIDE: memref.store %{{.*}}, %[[SCALES]][%c1, %{{.*}}] : memref<16x16xf32>
// WIDE: scf.for %[[U:.*]] = %c0 to %c8 step %c1 iter_args
// WIDE: %[[H0:.*]] = arith.muli %[[U]], %c2 : index
// WIDE: %[[HS0:.*]] = memref.load %[[HALF]][%{{.*}}, %[[H0]]] : memref<13x16xi32>
// WIDE: %[[START0:.*]] = arith.muli %[[HS0]], %c-32_i32 : i32
// WIDE: %[[INIT0:.*]] = vector.broadcast %[[START0]] : i32 to vector<16xi32>
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}}, %{{.*}}, %[[INIT0]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE-COUNT-23: llvm.inline_asm "vpdpbusd
// WIDE-NOT: llvm.inline_asm
// WIDE: %[[WS0:.*]] = vector.load %[[SCALES]][%[[H0]], %c0] : memref<16x16xf32>, vector<16xf32>
// WIDE: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// WIDE: arith.mulf %[[WS0]], %{{.*}} : vector<16xf32>
// WIDE: vector.fma
// WIDE: %[[H1:.*]] = arith.addi %[[H0]], %c1 : index
// WIDE: %[[HS1:.*]] = memref.load %[[HALF]][%{{.*}}, %[[H1]]] : memref<13x16xi32>
// WIDE: %[[START1:.*]] = arith.muli %[[HS1]], %c-32_i32 : i32
// WIDE: %[[INIT1:.*]] = vector.broadcast %[[START1]] : i32 to vector<16xi32>
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}}, %{{.*}}, %[[INIT1]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE-COUNT-23: llvm.inline_asm "vpdpbusd
// WIDE-NOT: llvm.inline_asm
// WIDE: %[[WS1:.*]] = vector.load %[[SCALES]][%[[H1]], %c0] : memref<16x16xf32>, vector<16xf32>
// WIDE: arith.mulf %[[WS1]], %{{.*}} : vector<16xf32>
// WIDE: vector.fma
// WIDE-NOT: arith.negf
// WIDE: return
// YMM-LABEL: func.func @prefill_q6_k(
// YMM: memref.alloc() {alignment = 64 : i64} : memref<13x16xi32>
// YMM: memref.alloc() {alignment = 64 : i64} : memref<16x8xf32>
// YMM: arith.muli %{{.*}}, %c-32_i32 : i32
// YMM: llvm.inline_asm "vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// YMM: return
// VEX-LABEL: func.func @prefill_q6_k(
// VEX: llvm.inline_asm "{vex} vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// VEX: return
func.func @prefill_q6_k(%x: tensor<13x256xbf16>, %w: tensor<1050xi8>) -> tensor<13x5xbf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q6_k>}
      : (tensor<13x256xbf16>, tensor<1050xi8>) -> tensor<13x5xbf16>
  return %y : tensor<13x5xbf16>
}
