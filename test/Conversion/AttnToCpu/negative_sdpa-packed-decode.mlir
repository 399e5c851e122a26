// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" | FileCheck %s

// Two packed rows are not a decode step: L holds every sequence's rows
// (here one each), so the op is not given to the decode lowering (which
// would read the lengths as those of a padded batch over the query's dim
// 0); flash runs each sequence on its own rows and keys.
// CHECK-LABEL: func.func @packed_two_rows
// CHECK: scf.forall (%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^)]+}}) in (1, 2, 2, %{{.+}})
// CHECK: scf.if
// CHECK: memref.subview %{{.+}}[0, 0, %{{.+}}, 0] [1, 2, %{{.+}}, 8] [1, 1, 1, 1]
func.func @packed_two_rows(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x90x8xf32>, %ql: tensor<2xi32>, %kl: tensor<2xi32>) -> tensor<1x2x2x8xf32> {
  %o = attn.sdpa %q, %k, %k q_lengths(%ql) kv_lengths(%kl) {padding_side = #attn.padding_side<packed>} : (tensor<1x2x2x8xf32>, tensor<1x2x90x8xf32>, tensor<1x2x90x8xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}
