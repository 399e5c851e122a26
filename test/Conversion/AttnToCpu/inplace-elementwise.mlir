// RUN: attn-opt %s --attn-lower-to-cpu=vector-bits=256 --split-input-file | FileCheck %s

// The unfused chain: the elementwise steps and the softmax's normalisation
// write over the buffer the matmul allocated (its tensor is their init, the
// last use of each intermediate), so one-shot bufferization keeps one
// [L, S] buffer instead of one per step.
// CHECK-LABEL: func.func @chain
// CHECK: %[[S:.+]] = bufferization.to_tensor %{{.+}} restrict writable : memref<1x2x16x16xf32>
// CHECK: %[[SC:.+]] = linalg.generic {{.+}} ins(%{{[^ ]+}} : tensor<f32>) outs(%[[S]] : tensor<1x2x16x16xf32>)
// CHECK: %[[M:.+]] = linalg.generic {{.+}} ins(%{{[^ ]+}} : tensor<16x16xi1>) outs(%[[SC]] : tensor<1x2x16x16xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[M]] : tensor<1x2x16x16xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[M]], %[[MAX]]
// CHECK: linalg.generic {{.+}} ins(%[[MAX]], %[[SUM]] : tensor<1x2x16xf32>, tensor<1x2x16xf32>) outs(%[[M]] : tensor<1x2x16x16xf32>)
func.func @chain(%q: tensor<1x2x16x8xf32>, %kt: tensor<1x2x8x16xf32>, %mask: tensor<16x16xi1>) -> tensor<1x2x16x16xf32> {
  %s = attn.matmul %q, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %c = arith.constant dense<0.5> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<1x2x16x16xf32>, tensor<f32>) -> tensor<1x2x16x16xf32>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<1x2x16x16xf32>, tensor<16x16xi1>) -> tensor<1x2x16x16xf32>
  %p = attn.softmax %m dim(-1) : tensor<1x2x16x16xf32>
  return %p : tensor<1x2x16x16xf32>
}

// -----

// A function argument is never an init (bufferization would write over the
// caller's buffer); neither is a tensor used again later.
// CHECK-LABEL: func.func @negative_argument_and_later_use
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[A:.+]] = linalg.generic {{.+}} ins(%[[X]], %{{.+}} : tensor<4x8xf32>, tensor<f32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: %[[E2:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[B:.+]] = linalg.generic {{.+}} ins(%[[A]], %{{.+}} : tensor<4x8xf32>, tensor<f32>) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK: linalg.generic {{.+}} ins(%[[A]] : tensor<4x8xf32>) outs(%[[B]] : tensor<4x8xf32>)
func.func @negative_argument_and_later_use(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = arith.constant dense<2.0> : tensor<f32>
  %a = attn.mul %x, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %b = attn.mul %a, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %r = attn.add %b, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Writing over %a does not drop the run-time check that the other input's
// dynamic sizes agree with it (%a's sizes are %x's: the lowering reads
// them there).
// CHECK-LABEL: func.func @dynamic_sizes_checked
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?xf32>, %[[Y:[^:]+]]: tensor<?x?xf32>
// CHECK-DAG: %[[DA0:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[DA1:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[A:.+]] = linalg.generic
// CHECK: %[[DY0:.+]] = tensor.dim %[[Y]], %c0
// CHECK: %[[EQ0:.+]] = arith.cmpi eq, %[[DA0]], %[[DY0]]
// CHECK: cf.assert %[[EQ0]], "attn: dynamic dims that broadcast must be equal at run time
// CHECK: %[[DY1:.+]] = tensor.dim %[[Y]], %c1
// CHECK: %[[EQ1:.+]] = arith.cmpi eq, %[[DA1]], %[[DY1]]
// CHECK: cf.assert %[[EQ1]]
// CHECK: linalg.generic {{.+}} ins(%[[Y]] : tensor<?x?xf32>) outs(%[[A]] : tensor<?x?xf32>)
func.func @dynamic_sizes_checked(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = arith.constant dense<2.0> : tensor<f32>
  %a = attn.mul %x, %c : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %r = attn.add %a, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
