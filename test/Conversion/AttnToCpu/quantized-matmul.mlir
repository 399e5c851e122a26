// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --cse --split-input-file | FileCheck %s --check-prefixes=CHECK,ZMM
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256" --canonicalize --cse --split-input-file | FileCheck %s --check-prefixes=CHECK,YMM
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=128" --canonicalize --cse --split-input-file | FileCheck %s --check-prefixes=CHECK,XMM

// attn.quantized_matmul reads the weight's bytes in place: no buffer of its
// [N, K] floats exists. A decode step (up to 8 rows) streams the blocks
// through vector registers; more rows run the GEMM, whose panels of kc x nc
// floats are dequantized from the bytes block by block. Vectors are sized
// from the target (16, 8 or 4 f32).

// q4_0, one row: per block the f16 scale (two bytes, bitcast, widened),
// the 16 bytes of nibbles (low: and 0x0F, elements 0..15; high: shift right
// by 4, elements 16..31), centred on the bytes (u - 8, in -8..7),
// converted signed and scaled ((u - 8) * d, one product), then FMAs with
// the input's row; the
// rows of the tile after next are prefetched. The only buffer is the
// result.
// CHECK-LABEL: func.func @decode_q4_0(
// CHECK-NOT: memref.alloc
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x37xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: memref.prefetch %{{.*}}, read, locality<2>, data : memref<1998xi8, strided<[1], offset: ?>>
// CHECK: vector.load %{{.*}} : memref<1998xi8, strided<[1], offset: ?>>, vector<2xi8>
// CHECK: vector.bitcast %{{.*}} : vector<2xi8> to vector<1xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// ZMM: %[[B:.*]] = vector.load %{{.*}} : memref<1998xi8, strided<[1], offset: ?>>, vector<16xi8>
// YMM: %[[B:.*]] = vector.load %{{.*}} : memref<1998xi8, strided<[1], offset: ?>>, vector<8xi8>
// XMM: %[[B:.*]] = vector.load %{{.*}} : memref<1998xi8, strided<[1], offset: ?>>, vector<4xi8>
// CHECK: %[[U:.*]] = arith.andi %[[B]], %{{.*}}
// CHECK: arith.subi %[[U]], %{{.*}}
// ZMM: arith.sitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// YMM: arith.sitofp %{{.*}} : vector<8xi8> to vector<8xf32>
// XMM: arith.sitofp %{{.*}} : vector<4xi8> to vector<4xf32>
// CHECK: arith.mulf
// CHECK: vector.fma
// CHECK: arith.shrui
// CHECK: vector.reduction <add>
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @decode_q4_0(%x: tensor<1x96xf32>, %w: tensor<1998xi8>) -> tensor<1x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x96xf32>, tensor<1998xi8>) -> tensor<1x37xf32>
  return %y : tensor<1x37xf32>
}

// -----

// 33 rows of a [200, 512] q8_0 weight: the GEMM's work items each
// dequantize one k block of 64 weight rows into a 256 x 64 panel
// (transposed in registers), never the 200 x 512 weight; bf16 rows are
// widened into their own block, the result rounded once.
// CHECK-LABEL: func.func @prefill_q8_0(
// CHECK-NOT: 512x200xf32
// CHECK-NOT: 200x512xf32
// CHECK: scf.forall
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<256x64xf32>
// CHECK-NOT: 512x200xf32
// CHECK-NOT: 200x512xf32
// ZMM: vector.load %{{.*}} : memref<108800xi8, strided<[1], offset: ?>>, vector<16xi8>
// YMM: vector.load %{{.*}} : memref<108800xi8, strided<[1], offset: ?>>, vector<8xi8>
// XMM: vector.load %{{.*}} : memref<108800xi8, strided<[1], offset: ?>>, vector<4xi8>
// CHECK: vector.shuffle
// CHECK: vector.store %{{.*}} : memref<256x64xf32>
// CHECK: arith.truncf
// CHECK-NOT: 512x200xf32
// CHECK-NOT: 200x512xf32
// CHECK: return
func.func @prefill_q8_0(%x: tensor<33x512xbf16>, %w: tensor<108800xi8>) -> tensor<33x200xbf16> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q8_0>} : (tensor<33x512xbf16>, tensor<108800xi8>) -> tensor<33x200xbf16>
  return %y : tensor<33x200xbf16>
}

// -----

// Batch dims and a dynamic M: the rows are one dim; up to 8 run the GEMV,
// more the GEMM, chosen at run time; the result gets its dims back.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK: %[[X:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x?x96xf32> into tensor<?x96xf32>
// CHECK: %[[R:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x96xf32>
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[R]], %{{.*}} : index
// CHECK: scf.if %[[FEW]] -> (tensor<?x37xf32>) {
// CHECK: vector.reduction
// CHECK: } else {
// CHECK: scf.forall
// CHECK: vector.shuffle
// CHECK: }
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, %{{.*}}, 37] : tensor<?x37xf32> into tensor<2x?x37xf32>
func.func @dynamic_rows(%x: tensor<2x?x96xf32>, %w: tensor<1998xi8>) -> tensor<2x?x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<2x?x96xf32>, tensor<1998xi8>) -> tensor<2x?x37xf32>
  return %y : tensor<2x?x37xf32>
}

// -----

// A weight of 64 KiB or more: blocks of its rows in parallel.
// CHECK-LABEL: func.func @decode_parallel(
// CHECK: scf.forall (%{{.*}}) in (7)
// CHECK: vector.fma
// CHECK: memref.store %{{.*}} : memref<2x200xf32>
func.func @decode_parallel(%x: tensor<2x512xf32>, %w: tensor<108800xi8>) -> tensor<2x200xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q8_0>} : (tensor<2x512xf32>, tensor<108800xi8>) -> tensor<2x200xf32>
  return %y : tensor<2x200xf32>
}

// -----

// q4_k: a super-block's 8 scales and 8 mins decoded once per weight row
// from their 12 packed bytes (QuantDecoder::decodeQ4KScales: one 16-byte
// load, byte shuffles, masks and shifts on 8 lanes, times d and dmin),
// sub-block s's d1 and m1 their lane s, and w = d1 * q - m1. The vectors
// of the super-block's later sub-blocks extract from the same decode.
// CHECK-LABEL: func.func @decode_q4_k(
// CHECK: %[[RAW:.*]] = vector.load %{{.*}} : memref<5328xi8, strided<[1], offset: ?>>, vector<16xi8>
// CHECK: vector.shuffle %[[RAW]], %[[RAW]] [0, 1, 2, 3, 8, 9, 10, 11] : vector<16xi8>, vector<16xi8>
// CHECK: %[[SCALES:.*]] = arith.mulf %{{.*}} : vector<8xf32>
// CHECK: %[[MINS:.*]] = arith.mulf %{{.*}} : vector<8xf32>
// CHECK: %[[D1:.*]] = vector.extract %[[SCALES]][0] : f32 from vector<8xf32>
// CHECK: %[[M1:.*]] = vector.extract %[[MINS]][0] : f32 from vector<8xf32>
// CHECK: arith.uitofp %{{.*}} : vector<{{.*}}xi8> to vector<{{.*}}xf32>
// CHECK: arith.mulf
// CHECK: arith.subf
// CHECK: vector.fma
// CHECK: vector.extract %[[SCALES]][7] : f32 from vector<8xf32>
// CHECK: vector.extract %[[MINS]][7] : f32 from vector<8xf32>
// CHECK: return
func.func @decode_q4_k(%x: tensor<1x256xf32>, %w: tensor<5328xi8>) -> tensor<1x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_k>} : (tensor<1x256xf32>, tensor<5328xi8>) -> tensor<1x37xf32>
  return %y : tensor<1x37xf32>
}

// -----

// q6_k: 4 bits from ql and 2 from qh per code, minus 32, times d times the
// signed sub-block scale.
// CHECK-LABEL: func.func @decode_q6_k(
// CHECK: arith.ori %{{.*}} : vector<{{.*}}xi8>
// CHECK: arith.subi %{{.*}} : vector<{{.*}}xi8>
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: vector.fma
// CHECK: return
func.func @decode_q6_k(%x: tensor<1x256xf32>, %w: tensor<7770xi8>) -> tensor<1x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q6_k>} : (tensor<1x256xf32>, tensor<7770xi8>) -> tensor<1x37xf32>
  return %y : tensor<1x37xf32>
}

// -----

// int4 with f16 group scales and zero points in their own sections (at
// bytes 1792 and 2048 of this layout): codes minus the group's zero point,
// times its scale.
// CHECK-LABEL: func.func @decode_int4_asym(
// CHECK: arith.addi %{{.*}}, %c1792 : index
// CHECK: arith.addi %{{.*}}, %c2048 : index
// CHECK: arith.uitofp %{{.*}} : vector<{{.*}}xi8> to vector<{{.*}}xf32>
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: vector.fma
func.func @decode_int4_asym(%x: tensor<1x96xf32>, %w: tensor<2159xi8>) -> tensor<1x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_asym, group = 32, scale = f16>} : (tensor<1x96xf32>, tensor<2159xi8>) -> tensor<1x37xf32>
  return %y : tensor<1x37xf32>
}

// -----

// int8 rows of K = 100 end with 4 elements past the last chunk of 32, read
// one by one; groups of 10 elements span the lanes of a vector, whose
// scales and zero points are then gathered lane by lane.
// CHECK-LABEL: func.func @decode_int8_tail(
// CHECK: vector.from_elements
// CHECK: vector.reduction <add>
// CHECK: scf.for %{{.*}} = %c96 to %c100 step %c1
// CHECK: tensor.extract %{{.*}} : tensor<5618xi8>
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: return
func.func @decode_int8_tail(%x: tensor<1x100xf32>, %w: tensor<5618xi8>) -> tensor<1x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_asym, group = 10, scale = f32>} : (tensor<1x100xf32>, tensor<5618xi8>) -> tensor<1x37xf32>
  return %y : tensor<1x37xf32>
}
