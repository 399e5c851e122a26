// RUN: attn-opt %s --split-input-file --attn-lower-to-cpu=vector-bits=256 --attn-cpu-fuse-elementwise | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-lower-to-cpu=vector-bits=256 --attn-cpu-fuse-elementwise=max-body-ops=4 | FileCheck %s --check-prefix=CAP

// A chain of elementwise ops becomes one generic whose body computes each
// op in turn (the lowering wrote each op over the previous one's result).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x8xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[E]] : tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// With a cap on the body, the chain is cut into pieces.
// CAP-LABEL: func.func @chain
// CAP-COUNT-2: linalg.generic
// CAP-NOT: linalg.generic
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = attn.exp %x : tensor<4x8xf32>
  %b = attn.exp %a : tensor<4x8xf32>
  %c = attn.tanh %b : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// The matmul's buffer stays the init of the fused scale + mask (the
// lowering's in-place chain), and the softmax's reductions are no
// elementwise producers.
// CHECK-LABEL: func.func @scores
// CAP-LABEL: func.func @scores
// CHECK: %[[S:.+]] = bufferization.to_tensor %{{.+}} restrict writable : memref<1x2x16x16xf32>
// CHECK: %[[M:.+]] = linalg.generic {{.+}} ins(%{{[^ ]+}} : tensor<16x16xi1>) outs(%[[S]] : tensor<1x2x16x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.select
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[M]] : tensor<1x2x16x16xf32>)
func.func @scores(%q: tensor<1x2x16x8xf32>, %kt: tensor<1x2x8x16xf32>, %mask: tensor<16x16xi1>) -> tensor<1x2x16x16xf32> {
  %s = attn.matmul %q, %kt : (tensor<1x2x16x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x16x16xf32>
  %c = arith.constant dense<0.5> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<1x2x16x16xf32>, tensor<f32>) -> tensor<1x2x16x16xf32>
  %m = attn.masked_fill %ss, %mask value(0xFFF0000000000000) : (tensor<1x2x16x16xf32>, tensor<16x16xi1>) -> tensor<1x2x16x16xf32>
  %p = attn.softmax %m dim(-1) : tensor<1x2x16x16xf32>
  return %p : tensor<1x2x16x16xf32>
}

// -----

// A producer with two users stays (fusing would compute it twice); its
// last user writes over it.
// CHECK-LABEL: func.func @negative_shared_producer
// CHECK: %[[A:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.+}} ins(%[[A]]
// CHECK: math.tanh
// CHECK: linalg.generic {{.+}} outs(%[[A]]
// CHECK: math.absf
func.func @negative_shared_producer(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = attn.exp %x : tensor<4x8xf32>
  %b = attn.tanh %a : tensor<4x8xf32>
  %c = attn.abs %a : tensor<4x8xf32>
  return %b, %c : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Both operands of one consumer: the producer is fused once, as one input.
// CHECK-LABEL: func.func @twice_in_one_consumer
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
func.func @twice_in_one_consumer(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = attn.exp %x : tensor<4x8xf32>
  %b = attn.mul %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
