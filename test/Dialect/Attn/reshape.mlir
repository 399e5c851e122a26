// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s
// RUN: attn-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

// Round trip of attn.reshape (torch view/reshape); a reshape to its own type
// folds away.

// CHECK-LABEL: func.func @reshape
// CHECK: attn.reshape %{{.*}} : tensor<6x5x7xf16> -> tensor<2x3x5x7xf16>
// CHECK: attn.reshape %{{.*}} : tensor<2x3x5x7xf16> -> tensor<210xf16>
// CHECK: attn.reshape %{{.*}} : tensor<5x7xi1> -> tensor<7x5xi1>
// CHECK: attn.reshape %{{.*}} : tensor<1x1xf32> -> tensor<f32>
// FOLD-LABEL: func.func @reshape
// FOLD-COUNT-4: attn.reshape
// FOLD-NOT: attn.reshape
func.func @reshape(%x: tensor<6x5x7xf16>, %m: tensor<5x7xi1>, %s: tensor<1x1xf32>) -> (tensor<210xf16>, tensor<7x5xi1>, tensor<f32>, tensor<6x5x7xf16>) {
  %0 = attn.reshape %x : tensor<6x5x7xf16> -> tensor<2x3x5x7xf16>
  %1 = attn.reshape %0 : tensor<2x3x5x7xf16> -> tensor<210xf16>
  %2 = attn.reshape %m : tensor<5x7xi1> -> tensor<7x5xi1>
  %3 = attn.reshape %s : tensor<1x1xf32> -> tensor<f32>
  %4 = attn.reshape %x : tensor<6x5x7xf16> -> tensor<6x5x7xf16>
  return %1, %2, %3, %4 : tensor<210xf16>, tensor<7x5xi1>, tensor<f32>, tensor<6x5x7xf16>
}
