// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="backend=math vector-bits=256" | FileCheck %s --check-prefix=MATH

// The packed layout: the lengths are checked at run time (none below 0,
// each side summing to its length); the work items are (batch dims,
// sequence, query block of the longest sequence); each sums the lengths
// before its sequence, does nothing past the sequence's rows, and runs on
// subviews of the sequence's rows, keys and output (so that causal sees
// positions within the sequence), its keys ending at the sequence's.
// CHECK-LABEL: func.func @flash_packed
// CHECK: cf.assert %{{.+}}, "attn.sdpa: a q_lengths value is below 0"
// CHECK: cf.assert %{{.+}}, "attn.sdpa: a kv_lengths value is below 0"
// CHECK: cf.assert %{{.+}}, "attn.sdpa: the packed q_lengths must sum to the query's length"
// CHECK: cf.assert %{{.+}}, "attn.sdpa: the packed kv_lengths must sum to the key's length"
// CHECK: %[[LONGEST:.+]] = scf.for
// CHECK: arith.maxsi
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[LONGEST]], %c40
// CHECK: scf.forall (%[[B:[^,]+]], %[[H:[^,]+]], %[[SEQ:[^,]+]], %[[BLK:[^)]+]]) in (1, 2, 3, %[[BLOCKS]])
// CHECK: %[[SUMS:.+]]:2 = scf.for %{{.+}} = %c0 to %[[SEQ]] step %c1 iter_args
// CHECK: %[[QBEGIN:.+]] = arith.minsi %[[SUMS]]#0, %c40 : index
// CHECK: %[[KBEGIN:.+]] = arith.minsi %[[SUMS]]#1, %c50 : index
// CHECK: memref.load %{{.+}}[%[[SEQ]]] : memref<3xi32
// CHECK: %[[ROWS:.+]] = arith.minsi
// CHECK: memref.load %{{.+}}[%[[SEQ]]] : memref<3xi64
// CHECK: %[[KEYS:.+]] = arith.minsi
// CHECK: %[[ROW0:.+]] = arith.muli %[[BLK]], %c40
// CHECK: %[[LIVE:.+]] = arith.cmpi slt, %[[ROW0]], %[[ROWS]] : index
// CHECK: scf.if %[[LIVE]] {
// CHECK: %[[Q:.+]] = memref.subview %{{.+}}[0, 0, %[[QBEGIN]], 0] [1, 2, %[[ROWS]], 8] [1, 1, 1, 1]
// CHECK: %[[OUT:.+]] = memref.subview %alloc[0, 0, %[[QBEGIN]], 0] [1, 2, %[[ROWS]], 8] [1, 1, 1, 1]
// CHECK: memref.subview %{{.+}}[0, 0, %[[KBEGIN]], 0] [1, 1, %[[KEYS]], 8] [1, 1, 1, 1]
// CHECK: memref.subview %{{.+}}[0, 0, %[[KBEGIN]], 0] [1, 1, %[[KEYS]], 8] [1, 1, 1, 1]
// CHECK: memref.load %[[Q]][%[[B]], %[[H]],
// CHECK: %[[KEND:.+]] = arith.minsi %[[KEYS]], %{{.+}} : index
// CHECK: scf.for %{{.+}} = %c0 to %[[KEND]] step %c64
// CHECK: memref.store %{{.+}}, %[[OUT]][%[[B]], %[[H]],

// The math path (the reference) finds each score's sequences by scanning
// the lengths: the score takes part when row and key are of one sequence,
// causal on the positions within it.
// MATH-LABEL: func.func @flash_packed
// MATH: linalg.generic
// MATH: %[[ROW:.+]] = linalg.index 2 : index
// MATH: %[[COL:.+]] = linalg.index 3 : index
// MATH: %[[SCAN:.+]]:6 = scf.for %{{.+}} = %c0 to %c3 step %c1 iter_args(%{{.+}} = %c0, %{{.+}} = %c0, %{{.+}} = %c-1, %{{.+}} = %c0, %{{.+}} = %c-2, %{{.+}} = %c0)
// MATH: tensor.extract %{{.+}} : tensor<3xi32>
// MATH: tensor.extract %{{.+}} : tensor<3xi64>
// MATH: %[[SAME:.+]] = arith.cmpi eq, %[[SCAN]]#2, %[[SCAN]]#4 : index
// MATH: %[[CAUSAL:.+]] = arith.cmpi sle, %[[SCAN]]#5, %[[SCAN]]#3 : index
// MATH: arith.andi %[[CAUSAL]], %[[SAME]] : i1
func.func @flash_packed(%q: tensor<1x2x40x8xf32>, %k: tensor<1x1x50x8xf32>, %ql: tensor<3xi32>, %kl: tensor<3xi64>) -> tensor<1x2x40x8xf32> {
  %o = attn.sdpa %q, %k, %k q_lengths(%ql) kv_lengths(%kl) {is_causal = true, padding_side = #attn.padding_side<packed>} : (tensor<1x2x40x8xf32>, tensor<1x1x50x8xf32>, tensor<1x1x50x8xf32>, tensor<3xi32>, tensor<3xi64>) -> tensor<1x2x40x8xf32>
  return %o : tensor<1x2x40x8xf32>
}
