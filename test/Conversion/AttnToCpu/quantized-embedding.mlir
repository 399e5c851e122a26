// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,ZMM
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256" --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,YMM
// RUN: attn-opt %s --attn-cpu-lowering-pipeline | FileCheck %s --check-prefix=LLVM

// attn.quantized_embedding reads the table's bytes in place at the rows
// looked up: per index a run-time check (0 <= i < N, "index out of
// range"), then the row's blocks dequantized in vector registers (16 or 8
// f32) and stored; no buffer but the result's. Indices of several dims
// are one dim of rows, and the result goes back to their shape (a dynamic
// batch and sequence through tensor.reshape).

// CHECK-LABEL: func.func @q8_0_rows(
// CHECK-NOT: memref.alloc
// CHECK: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x64xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: tensor.extract %{{.*}} : tensor<?xi64>
// CHECK-DAG: arith.cmpi sge
// CHECK-DAG: arith.cmpi slt
// CHECK: cf.assert %{{.*}}, "index out of range"
// CHECK: arith.select
// CHECK: scf.for
// CHECK: vector.bitcast %{{.*}} : vector<2xi8> to vector<1xf16>
// ZMM: vector.store %{{.*}} : memref<?x64xf32>, vector<16xf32>
// YMM: vector.store %{{.*}} : memref<?x64xf32>, vector<8xf32>
// CHECK: tensor.reshape
// LLVM-LABEL: llvm.func @q8_0_rows(
func.func @q8_0_rows(%ids: tensor<?x?xi64>, %w: tensor<680xi8>) -> tensor<?x?x64xf32> {
  %e = attn.quantized_embedding %ids, %w {format = #attn.quant<q8_0>, num_rows = 10} : (tensor<?x?xi64>, tensor<680xi8>) -> tensor<?x?x64xf32>
  return %e : tensor<?x?x64xf32>
}

// An int8 row of 40 elements: one unit of 32 decoded as vectors, the last
// 8 one by one; bf16 results rounded from the f32 values.
// CHECK-LABEL: func.func @int8_tail(
// CHECK: cf.assert %{{.*}}, "index out of range"
// CHECK: arith.truncf %{{.*}} : vector<{{16|8}}xf32> to vector<{{16|8}}xbf16>
// CHECK-COUNT-8: memref.store %{{.*}} : memref<1x40xbf16>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x40xbf16> into tensor<40xbf16>
// LLVM-LABEL: llvm.func @int8_tail(
func.func @int8_tail(%id: tensor<i32>, %w: tensor<522xi8>) -> tensor<40xbf16> {
  %e = attn.quantized_embedding %id, %w {format = #attn.quant<int8_asym, group = 40, scale = f32>, num_rows = 10} : (tensor<i32>, tensor<522xi8>) -> tensor<40xbf16>
  return %e : tensor<40xbf16>
}
