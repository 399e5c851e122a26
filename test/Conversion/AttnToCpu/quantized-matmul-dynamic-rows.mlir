// RUN: attn-opt %s --attn-lower-to-cpu | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline | FileCheck %s --check-prefix=LLVM

// A quantized product whose input has a dynamic batch and a dynamic
// sequence (a generator's prefill step, [?, ?, K]): its rows [B * T] go
// back to [B, T] through tensor.reshape, not tensor.expand_shape (MLIR 22's
// expand-strided-metadata crashes on a memref.expand_shape that splits one
// dim into two dynamic ones). One dynamic dim keeps expand_shape.

// CHECK-LABEL: func.func @batch_and_tokens(
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xindex>
// CHECK: tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<?x48xf32>, tensor<3xindex>) -> tensor<?x?x48xf32>
// CHECK-NOT: tensor.expand_shape
// LLVM-LABEL: llvm.func @batch_and_tokens(
func.func @batch_and_tokens(%x: tensor<?x?x64xf32>, %w: tensor<1728xi8>) -> tensor<?x?x48xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, group = 32, scale = f16>} : (tensor<?x?x64xf32>, tensor<1728xi8>) -> tensor<?x?x48xf32>
  return %y : tensor<?x?x48xf32>
}

// CHECK-LABEL: func.func @tokens(
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, %{{.*}}, 48] : tensor<?x48xf32> into tensor<2x?x48xf32>
// CHECK-NOT: tensor.reshape
// LLVM-LABEL: llvm.func @tokens(
func.func @tokens(%x: tensor<2x?x64xf32>, %w: tensor<1728xi8>) -> tensor<2x?x48xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, group = 32, scale = f16>} : (tensor<2x?x64xf32>, tensor<1728xi8>) -> tensor<2x?x48xf32>
  return %y : tensor<2x?x48xf32>
}
