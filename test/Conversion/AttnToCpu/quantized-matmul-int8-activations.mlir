// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 vnni=true quantized-activations=int8" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 vnni=true quantized-activations=int8" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 vnni=true avx-vnni=true quantized-activations=int8" --split-input-file | FileCheck %s --check-prefix=VEX
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=256 vnni=true quantized-activations=int8 num-threads=2" | FileCheck %s --check-prefix=LLVM
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 vnni=true vnni-512=true quantized-activations=int8" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=WIDE
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 avx2=true quantized-activations=int8" --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=256 avx2=true quantized-activations=int8 num-threads=2" | FileCheck %s --check-prefix=AVX2LLVM
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="vector-bits=512 vnni=true vnni-512=true quantized-activations=int8 num-threads=2" | FileCheck %s --check-prefix=WIDELLVM

// quantized-activations=int8 on a target with vpdpbusd (vnni): the decode
// GEMV quantizes each input row to int8 per block of 32 once per call
// (max |x| / 127 as the block's scale, codes rounded to nearest even, the
// block's code sum), then per unit of the weight loads its 32 codes as
// bytes and multiplies them in integers (vpdpbusd as inline assembly,
// AVX512-VNNI's EVEX form, or with avx-vnni AVX-VNNI's VEX form, started
// from -offset * sum in lane 0), converts the i32 lanes to f32
// and accumulates them times weight scale * row scale. Vectors of 8 i32
// at every vector width.
//
// With vnni-512 (AVX512-VNNI and AVX512-BW on 512-bit vectors), a weight
// of units of 32 with one scale (q8_0, q4_0, the int schemes) whose rows
// have an even number of units steps through two units at a
// time: 64 codes (each unit's 16 bytes of nibbles spread over two 128-bit
// lanes, the odd lanes shifted right by 4, the low nibbles kept) times 64
// activations in one vpdpbusd on zmm ("v" operands), started from the
// row's vector of both blocks' -offset * sum (xinit, written once with
// the quantized rows beside the per-lane row scales), and the two units'
// scales in lanes 0-7 and 8-15. The asymmetric schemes' steps start from
// the rows' block sums times the units' negated zero points (vpmaddwd).
// Odd unit counts (q4_0 of K = 96) keep the ymm step.
//
// With avx2 and no vnni, the same steps multiply with vpmaddubsw (u8 x s8
// pairs into saturating i16) and vpmaddwd by ones (pairs into i32 lanes),
// added to the accumulator: exact for codes below 128, so the weights of
// 8-bit codes (q8_0, int8_*) stay on the f32 path.

// q4_0: nibbles (offset 8), the f16 scale.
// CHECK-LABEL: func.func @decode_q4_0(
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<2x96xi8>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<2x3xi32>
// CHECK: vector.reduction <maxnumf>, %{{.*}} : vector<32xf32> into f32
// CHECK: math.roundeven %{{.*}} : vector<32xf32>
// CHECK: arith.fptosi %{{.*}} : vector<32xf32> to vector<32xi32>
// CHECK: vector.reduction <add>, %{{.*}} : vector<32xi32> into i32
// CHECK: arith.trunci %{{.*}} : vector<32xi32> to vector<32xi8>
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<1998xi8, strided<[1], offset: ?>>, vector<16xi8>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] : vector<16xi8>, vector<16xi8>
// CHECK: vector.load %{{.*}} : memref<2x96xi8>, vector<32xi8>
// CHECK: llvm.inline_asm "vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}}, %{{.*}}, %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma %{{.*}} : vector<8xf32>
// CHECK-NOT: vector.fma %{{.*}} : vector<16xf32>
// CHECK: return

// VEX-LABEL: func.func @decode_q4_0(
// VEX: llvm.inline_asm "{vex} vpdpbusd $2, $1, $0", "=x,x,x,0"
// AVX2-LABEL: func.func @decode_q4_0(
// AVX2: %[[PAIRS:.*]] = llvm.inline_asm "vpmaddubsw $2, $1, $0", "=x,x,x" %{{.*}}, %{{.*}} : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// AVX2: %[[QUADS:.*]] = llvm.inline_asm "vpmaddwd $2, $1, $0", "=x,x,x" %[[PAIRS]], %{{.*}} : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// AVX2: arith.addi %{{.*}}, %[[QUADS]] : vector<8xi32>
// AVX2: return
// WIDE-LABEL: func.func @decode_q4_0(
// WIDE-NOT: vector<16xi32>
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// WIDE-NOT: vector<16xi32>
// WIDE: return
func.func @decode_q4_0(%x: tensor<2x96xf32>, %w: tensor<1998xi8>) -> tensor<2x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>}
      : (tensor<2x96xf32>, tensor<1998xi8>) -> tensor<2x37xf32>
  return %y : tensor<2x37xf32>
}

// -----

// q8_0: 32 signed codes with their sign bit flipped (xor 0x80, offset
// 128); bf16 rows are widened, then quantized.
// CHECK-LABEL: func.func @decode_q8_0(
// CHECK: vector.load %{{.*}} : memref<{{[0-9]+}}xi8, strided<[1], offset: ?>>, vector<32xi8>
// CHECK: arith.xori %{{.*}} : vector<32xi8>
// CHECK: llvm.inline_asm "vpdpbusd $2, $1, $0"
// CHECK: return
// Two units per row: the wide step. The per-lane row scales and starting
// dots (-128 * the block's code sum in its first lane) are written with
// the quantized rows; each step loads both units' 32 codes and f16 scales.
// AVX2-LABEL: func.func @decode_q8_0(
// AVX2-NOT: inline_asm
// AVX2: vector.fma
// AVX2-NOT: inline_asm
// AVX2: return
// WIDE-LABEL: func.func @decode_q8_0(
// WIDE-DAG: %[[XDW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
// WIDE-DAG: %[[XINIT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xi32>
// WIDE: arith.muli %{{.*}}, %c-128_i32 : i32
// WIDE: vector.store %{{.*}}, %[[XINIT]][%{{.*}}] : memref<1x16xi32>, vector<8xi32>
// WIDE: vector.broadcast %{{.*}} : vector<1xf16> to vector<8xf16>
// WIDE: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// WIDE: vector.shuffle %{{.*}}, %{{.*}} [0, 1, {{.*}}, 63] : vector<32xi8>, vector<32xi8>
// WIDE: arith.xori %{{.*}} : vector<64xi8>
// WIDE: %[[X:.*]] = vector.load %{{.*}} : memref<1x64xi8>, vector<64xi8>
// WIDE: %[[INIT:.*]] = vector.load %[[XINIT]][%{{.*}}] : memref<1x16xi32>, vector<16xi32>
// WIDE: %[[D:.*]] = vector.load %[[XDW]][%{{.*}}] : memref<1x16xf32>, vector<16xf32>
// WIDE: %[[S:.*]] = arith.mulf %{{.*}}, %[[D]] : vector<16xf32>
// WIDE: %[[DOT:.*]] = llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}}, %[[X]], %[[INIT]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: %[[F:.*]] = arith.sitofp %[[DOT]] : vector<16xi32> to vector<16xf32>
// WIDE: vector.fma %[[F]], %[[S]], %{{.*}} : vector<16xf32>
// WIDE: return
func.func @decode_q8_0(%x: tensor<1x64xbf16>, %w: tensor<340xi8>) -> tensor<1x5xbf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q8_0>}
      : (tensor<1x64xbf16>, tensor<340xi8>) -> tensor<1x5xbf16>
  return %y : tensor<1x5xbf16>
}

// -----

// int8_asym per channel: unsigned codes as stored, the zero point as the
// offset (a byte widened to i32).
// CHECK-LABEL: func.func @decode_int8_asym(
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: llvm.inline_asm "vpdpbusd $2, $1, $0"
// CHECK: return
// The wide step: each pair's negated row sums (xinit, as pairs of i16:
// -sum truncated and zero-extended) times the weight row's zero points
// (one per unit, in lanes 0-7 and 8-15) in one vpmaddwd, the dot started
// from that; one group per row, so the steps scale by the input rows'
// scales only and the weight row's scale multiplies each sum once.
// WIDE-LABEL: func.func @decode_int8_asym(
// WIDE: %[[NEGSUM:.*]] = arith.subi %c0_i32, %{{.*}} : i32
// WIDE: %[[SUM16:.*]] = arith.trunci %[[NEGSUM]] : i32 to i16
// WIDE: arith.extui %[[SUM16]] : i16 to i32
// WIDE: %[[ZP:.*]] = arith.extui %{{.*}} : i8 to i32
// WIDE: %[[ZPS:.*]] = vector.broadcast %[[ZP]] : i32 to vector<8xi32>
// WIDE: %[[PAIR:.*]] = vector.shuffle %[[ZPS]], %[[ZPS]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// WIDE: %[[CODES:.*]] = vector.load %{{.*}} : memref<389xi8, strided<[1], offset: ?>>, vector<64xi8>
// WIDE: %[[X:.*]] = vector.load %{{.*}} : memref<3x64xi8>, vector<64xi8>
// WIDE: %[[ZPPAIRS:.*]] = vector.bitcast %[[PAIR]] : vector<16xi32> to vector<32xi16>
// WIDE: %[[START:.*]] = llvm.inline_asm "vpmaddwd $2, $1, $0", "=v,v,v" %{{.*}}, %[[ZPPAIRS]] : (vector<32xi16>, vector<32xi16>) -> vector<16xi32>
// WIDE: %[[DOT:.*]] = llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %[[CODES]], %[[X]], %[[START]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: %[[F:.*]] = arith.sitofp %[[DOT]] : vector<16xi32> to vector<16xf32>
// WIDE-NOT: arith.mulf %{{.*}} : vector<16xf32>
// WIDE: vector.fma %[[F]], %{{.*}} : vector<16xf32>
// WIDE: %[[RED:.*]] = vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
// WIDE: arith.mulf %[[RED]], %{{.*}} : f32
// WIDE: return
func.func @decode_int8_asym(%x: tensor<3x64xf32>, %w: tensor<389xi8>) -> tensor<3x5xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_asym, group = 64, scale = f32>}
      : (tensor<3x64xf32>, tensor<389xi8>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

// A weight of 64 KiB or more: blocks of rows in parallel. Lowered to the
// LLVM dialect, the inline assembly (no memory effects) stays in the
// OpenMP loop's body, and no memref.alloca_scope is left around it (a
// call there would keep one, which the loops' conversion to blocks
// breaks).
// CHECK-LABEL: func.func @decode_parallel(
// CHECK: scf.forall
// CHECK: llvm.inline_asm "vpdpbusd $2, $1, $0"
// LLVM-LABEL: llvm.func @decode_parallel(
// LLVM-NOT: alloca_scope
// LLVM: omp.wsloop
// LLVM-NOT: alloca_scope
// LLVM: llvm.inline_asm "vpdpbusd $2, $1, $0"
// LLVM-NOT: alloca_scope
// int4_sym in groups of 128 (K and group multiples of 128): four units
// per wide step. Each quantized block's codes are also written to xq4,
// its first 16 codes at 128q + 16j and its last 16 at 128q + 64 + 16j
// (block 4q + j), beside its scale over 4 lanes (xd4) and -8 * its code
// sum in its first lane of 4 (xinit4). A step reads a row's 64 bytes of
// nibbles once: the low nibbles (each unit's codes 0-15) times the first
// 64 bytes of xq4, the high nibbles (16-31) times the next 64, both dots
// into one i32 vector whose lanes 4j .. 4j + 3 are unit j's, then one
// conversion and one FMA with the group's scale times xd4.
// AVX2LLVM-LABEL: llvm.func @decode_parallel(
// AVX2LLVM-NOT: alloca_scope
// AVX2LLVM: omp.wsloop
// AVX2LLVM: llvm.inline_asm "vpmaddubsw $2, $1, $0"
// WIDE-LABEL: func.func @decode_parallel(
// WIDE-DAG: %[[XD4:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
// WIDE-DAG: %[[XINIT4:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xi32>
// WIDE: vector.extract_strided_slice %{{.*}} {offsets = [0], sizes = [16], strides = [1]} : vector<32xi8> to vector<16xi8>
// WIDE: vector.store %{{.*}}, %[[XQ4:[a-z0-9_]+]][%{{.*}}] : memref<1x128xi8>, vector<16xi8>
// WIDE: vector.extract_strided_slice %{{.*}} {offsets = [16], sizes = [16], strides = [1]} : vector<32xi8> to vector<16xi8>
// WIDE: vector.store %{{.*}}, %[[XQ4]][%{{.*}}] : memref<1x128xi8>, vector<16xi8>
// WIDE: vector.store %{{.*}}, %[[XD4]][%{{.*}}] : memref<1x16xf32>, vector<4xf32>
// WIDE: arith.muli %{{.*}}, %c-8_i32 : i32
// WIDE: vector.store %{{.*}}, %[[XINIT4]][%{{.*}}] : memref<1x16xi32>, vector<4xi32>
// WIDE: scf.forall
// WIDE-NOT: vector<32xi16>
// WIDE: %[[CODES:.*]] = vector.load %{{.*}} : memref<66000xi8, strided<[1], offset: ?>>, vector<64xi8>
// WIDE-DAG: %[[LOW:.*]] = arith.andi %[[CODES]], %{{.*}} : vector<64xi8>
// WIDE-DAG: %[[HIGH:.*]] = arith.shrui %[[CODES]], %{{.*}} : vector<64xi8>
// WIDE-DAG: %[[XLOW:.*]] = vector.load %[[XQ4]][%{{.*}}, %c0] : memref<1x128xi8>, vector<64xi8>
// WIDE-DAG: %[[XHIGH:.*]] = vector.load %[[XQ4]][%{{.*}}, %c64] : memref<1x128xi8>, vector<64xi8>
// WIDE-DAG: %[[INIT:.*]] = vector.load %[[XINIT4]][%{{.*}}] : memref<1x16xi32>, vector<16xi32>
// WIDE: %[[D1:.*]] = llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %[[LOW]], %[[XLOW]], %[[INIT]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: %[[D2:.*]] = llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %[[HIGH]], %[[XHIGH]], %[[D1]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: arith.sitofp %[[D2]] : vector<16xi32> to vector<16xf32>
// WIDE: vector.fma
// WIDE: return
// WIDELLVM-LABEL: llvm.func @decode_parallel(
// WIDELLVM-NOT: alloca_scope
// WIDELLVM: omp.wsloop
// WIDELLVM: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" {{.*}} -> vector<16xi32>
func.func @decode_parallel(%x: tensor<1x128xf32>, %w: tensor<66000xi8>) -> tensor<1x1000xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, group = 128, scale = f16>}
      : (tensor<1x128xf32>, tensor<66000xi8>) -> tensor<1x1000xf32>
  return %y : tensor<1x1000xf32>
}

// -----

// q6_k: per 32-element group the 6-bit codes (4 bits of ql, 2 of qh,
// offset 32) and a scale per 16 elements, so the offset's term is per i32
// lane: xlane, -32 times each lane's 4 activation codes, written once per
// call; each lane's scale f32(d) * f32(sub-block scale). The ymm step per
// group, or two groups per zmm step with vnni-512.
// CHECK-LABEL: func.func @decode_q6_k(
// CHECK-DAG: %[[XLANE:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x64xi32>
// CHECK: arith.muli %{{.*}}, %{{.*}} : vector<8xi32>
// CHECK: vector.store %{{.*}}, %[[XLANE]][%{{.*}}] : memref<1x64xi32>, vector<8xi32>
// CHECK: arith.ori %{{.*}} : vector<32xi8>
// CHECK: arith.sitofp %{{.*}} : vector<2xi8> to vector<2xf32>
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 0, 0, 0, 1, 1, 1, 1] : vector<2xf32>, vector<2xf32>
// CHECK: %[[INIT:.*]] = vector.load %[[XLANE]][%{{.*}}] : memref<1x64xi32>, vector<8xi32>
// CHECK: llvm.inline_asm "vpdpbusd $2, $1, $0", "=x,x,x,0" %{{.*}}, %{{.*}}, %[[INIT]] : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// CHECK: return
// AVX2-LABEL: func.func @decode_q6_k(
// AVX2: llvm.inline_asm "vpmaddubsw $2, $1, $0"
// WIDE-LABEL: func.func @decode_q6_k(
// WIDE: %[[INIT:.*]] = vector.load %{{.*}} : memref<1x64xi32>, vector<16xi32>
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}}, %{{.*}}, %[[INIT]] : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: return
func.func @decode_q6_k(%x: tensor<1x256xf32>, %w: tensor<1050xi8>) -> tensor<1x5xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q6_k>}
      : (tensor<1x256xf32>, tensor<1050xi8>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

// q4_k: codes without offset (the low or high nibbles of a sub-block
// pair's 32 bytes), a scale and a min per 32 elements. A super-block's 8
// scales and 8 mins are decoded once per weight row, together: the 12
// bytes of 6-bit values shuffled into 8 lanes, shifted and masked. The
// dots start at 0; each sub-block's scale is spread over its lanes by a
// shuffle; the min's term is one FMA per super-block with xsd (each
// block's scale times its code sum, lane j of its super-block's vector,
// written once per call).
// CHECK-LABEL: func.func @decode_q4_k(
// CHECK: %[[SUM:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK-NEXT: %[[TERM:.*]] = arith.mulf %{{.*}}, %[[SUM]] : f32
// CHECK-NEXT: memref.store %[[TERM]], %[[XSD:[a-z_0-9]+]][%{{.*}}] : memref<1x8xf32>
// CHECK: %[[RAW:.*]] = vector.load %{{.*}} : memref<720xi8, strided<[1], offset: ?>>, vector<16xi8>
// CHECK: vector.shuffle %[[RAW]], %[[RAW]] [0, 1, 2, 3, 8, 9, 10, 11]
// CHECK: vector.shuffle %[[RAW]], %[[RAW]] [4, 4, 4, 4, 4, 5, 6, 7]
// CHECK: arith.uitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: %[[NEG:.*]] = arith.negf %{{.*}} : vector<8xf32>
// CHECK: %[[MINS:.*]] = vector.load %[[XSD]][%{{.*}}] : memref<1x8xf32>, vector<8xf32>
// CHECK: vector.fma %[[NEG]], %[[MINS]], %{{.*}} : vector<8xf32>
// CHECK: vector.shuffle %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xf32>, vector<8xf32>
// CHECK: llvm.inline_asm "vpdpbusd $2, $1, $0", "=x,x,x,0" {{.*}} -> vector<8xi32>
// CHECK: return
// WIDE-LABEL: func.func @decode_q4_k(
// WIDE-DAG: %[[XSD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x16xf32>
// WIDE: %[[NEG:.*]] = vector.shuffle %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>, vector<8xf32>
// WIDE: %[[MINS:.*]] = vector.load %[[XSD]][%{{.*}}] : memref<1x16xf32>, vector<16xf32>
// WIDE: vector.fma %[[NEG]], %[[MINS]], %{{.*}} : vector<16xf32>
// WIDE: vector.shuffle %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1] : vector<8xf32>, vector<8xf32>
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" {{.*}} : (vector<64xi8>, vector<64xi8>, vector<16xi32>) -> vector<16xi32>
// WIDE: vector.fma %{{.*}} : vector<16xf32>
// WIDE: return
func.func @decode_q4_k(%x: tensor<1x256xf32>, %w: tensor<720xi8>) -> tensor<1x5xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_k>}
      : (tensor<1x256xf32>, tensor<720xi8>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

// int4_sym in groups of 64: a group does not cover a step of four units,
// so the wide step takes two units (each unit's 16 bytes of nibbles
// spread to 32 codes in a 128-bit lane pair: a shift right by 4 of the
// odd lanes as i16, then the low nibbles), their two scales in lanes 0-7
// and 8-15.
// WIDE-LABEL: func.func @decode_int4_sym_g64(
// WIDE-NOT: vector<4xi32>
// WIDE: arith.shrui %{{.*}}, %{{.*}} : vector<32xi16>
// WIDE: arith.andi %{{.*}} : vector<64xi8>
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" {{.*}} -> vector<16xi32>
// WIDE-NOT: vector<4xi32>
// WIDE: return
func.func @decode_int4_sym_g64(%x: tensor<1x128xbf16>, %w: tensor<2516xi8>) -> tensor<1x37xbf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, group = 64, scale = f16>}
      : (tensor<1x128xbf16>, tensor<2516xi8>) -> tensor<1x37xbf16>
  return %y : tensor<1x37xbf16>
}

// -----

// An asymmetric weight whose wide steps would read more than 96 KiB of
// the input rows' buffers per tile (8 rows x K = 4160 x 3 bytes) keeps the
// ymm step: those rows no longer stay in L1 across the weight rows.
// WIDE-LABEL: func.func @decode_int8_asym_long(
// WIDE-NOT: vpmaddwd
// WIDE: llvm.inline_asm "vpdpbusd $2, $1, $0", "=v,v,v,0" %{{.*}} : (vector<32xi8>, vector<32xi8>, vector<8xi32>) -> vector<8xi32>
// WIDE-NOT: vpmaddwd
// WIDE: return
func.func @decode_int8_asym_long(%x: tensor<8x4160xf32>, %w: tensor<8386xi8>) -> tensor<8x2xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_asym, group = 4160, scale = f32>}
      : (tensor<8x4160xf32>, tensor<8386xi8>) -> tensor<8x2xf32>
  return %y : tensor<8x2xf32>
}
