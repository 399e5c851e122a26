// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="backend=math vector-bits=256" --split-input-file | FileCheck %s --check-prefix=MATH

// Sequence lengths: every length is checked at run time (in [0, L], [0, S])
// before the work items; each work item reads its sequence's lengths once,
// visits only the key blocks of its real keys (left padding: keys
// [S - n, S)) and none for a block of padded query rows; the score step
// masks what the bounds do not (padded rows, the keys of a block past the
// sequence's).
// CHECK-LABEL: func.func @flash_left
// CHECK-SAME: %[[QL:[^:]+]]: tensor<2xi32>, %[[KL:[^:]+]]: tensor<2xi64>
// CHECK: tensor.extract %[[QL]]
// CHECK: cf.assert %{{.+}}, "attn.sdpa: a q_lengths value is out of range (below 0 or above the padded length)"
// CHECK: tensor.extract %[[KL]]
// CHECK: cf.assert %{{.+}}, "attn.sdpa: a kv_lengths value is out of range (below 0 or above the padded length)"
// CHECK: scf.forall (%[[B:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) in (2, 2, 1)
// CHECK-DAG: %[[KN:.+]] = memref.load %{{.+}}[%[[B]]] : memref<2xi64
// CHECK-DAG: %[[QN:.+]] = memref.load %{{.+}}[%[[B]]] : memref<2xi32
// CHECK: %[[QI:.+]] = arith.index_cast %[[QN]] : i32 to index
// CHECK: %[[QC:.+]] = arith.minsi %{{.+}}, %c40 : index
// CHECK: %[[QBEGIN:.+]] = arith.subi %c40, %[[QC]] : index
// CHECK: %[[KI:.+]] = arith.index_cast %[[KN]] : i64 to index
// CHECK: %[[KC:.+]] = arith.minsi %{{.+}}, %c40 : index
// CHECK: %[[KBEGIN:.+]] = arith.subi %c40, %[[KC]] : index
// CHECK: %[[FIRST:.+]] = arith.maxsi %[[KBEGIN]], %c0 : index
// CHECK: %[[LIVE:.+]] = arith.andi
// CHECK: %[[END:.+]] = arith.select %[[LIVE]], %c40, %[[FIRST]] : index
// CHECK: scf.for %{{.+}} = %[[FIRST]] to %[[END]] step %c64
// CHECK: arith.cmpi sge, %{{.+}}, %{{.+}} : vector<8xindex>
// CHECK: arith.select %{{.+}}, %{{.+}}, %cst{{.*}} : vector<8xi1>, vector<8xf32>
func.func @flash_left(%q: tensor<2x2x40x8xf32>, %ql: tensor<2xi32>, %kl: tensor<2xi64>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %q, %q q_lengths(%ql) kv_lengths(%kl) {padding_side = #attn.padding_side<left>} : (tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>, tensor<2xi32>, tensor<2xi64>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}

// -----

// Decode (one query row): the split's keys end at the sequence's length.
// CHECK-LABEL: func.func @decode_right
// CHECK: cf.assert %{{.+}}, "attn.sdpa: a kv_lengths value is out of range (below 0 or above the padded length)"
// CHECK: scf.forall (%[[B:[^,]+]], %{{[^,]+}}, %{{[^)]+}}) in (2, 2, %c1)
// CHECK: %[[N:.+]] = memref.load %{{.+}}[%[[B]]] : memref<2xi32
// CHECK: %[[I:.+]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[C:.+]] = arith.maxsi %[[I]], %c0 : index
// CHECK: %[[KEND:.+]] = arith.minsi %[[C]], %c40 : index
// CHECK: %[[END:.+]] = arith.minsi %{{.+}}, %[[KEND]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[END]] step %c64
// MATH-LABEL: func.func @decode_right
func.func @decode_right(%q: tensor<2x2x1x8xf32>, %k: tensor<2x2x40x8xf32>, %kl: tensor<2xi32>) -> tensor<2x2x1x8xf32> {
  %o = attn.sdpa %q, %k, %k kv_lengths(%kl) : (tensor<2x2x1x8xf32>, tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>, tensor<2xi32>) -> tensor<2x2x1x8xf32>
  return %o : tensor<2x2x1x8xf32>
}

// -----

// The math path (the reference) reads the lengths of each score's
// sequence (query batch dim 0) in its score step, beside the mask.
// MATH: #[[$BATCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// MATH-LABEL: func.func @math_mask
// MATH-SAME: %[[M:[^:]+]]: tensor<2x1x1x40xi1>, %[[QL:[^:]+]]: tensor<2xi32>
// MATH: linalg.generic {indexing_maps = [#{{.+}}, #[[$BATCH]], #{{.+}}], {{.*}} ins(%[[M]], %[[QL]] : tensor<2x1x1x40xi1>, tensor<2xi32>)
// MATH: arith.index_cast %{{.+}} : i32 to index
// CHECK-LABEL: func.func @math_mask
func.func @math_mask(%q: tensor<2x2x40x8xf32>, %m: tensor<2x1x1x40xi1>, %ql: tensor<2xi32>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %q, %q, %m q_lengths(%ql) {is_causal = true} : (tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>, tensor<2x1x1x40xi1>, tensor<2xi32>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}
