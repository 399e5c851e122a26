// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256 position-bound=40" --split-input-file | FileCheck %s --check-prefix=SMALL

// A score_mod region that reads positions (ALiBi's j - i), dynamic L and
// S: the score step has two versions. When both lengths are at most the
// bound (2^30), the first row of the work item and the first key of the
// block are clamped to it (no change of value there), so that
// arith-int-range-narrowing can compute the positions in 32 bits; longer
// lengths run the unclamped 64-bit code.
// CHECK-LABEL: func.func @alibi_dynamic
// CHECK-DAG: %[[LIMIT:.+]] = arith.constant 1073741824 : index
// CHECK-DAG: %[[L:.+]] = tensor.dim %arg0, %c2 : tensor<1x2x?x8xf32>
// CHECK-DAG: %[[LFITS:.+]] = arith.cmpi ule, %[[L]], %[[LIMIT]] : index
// CHECK-DAG: %[[SFITS:.+]] = arith.cmpi ule, %{{.+}}, %[[LIMIT]] : index
// CHECK: %[[FITS:.+]] = arith.andi %[[LFITS]], %[[SFITS]] : i1
// CHECK: scf.forall
// CHECK: scf.for %[[KV0:[^ ]+]] =
// CHECK: scf.if %[[FITS]] {
// CHECK-NEXT: %[[ROW0:.+]] = arith.minui %{{.+}}, %[[LIMIT]] : index
// CHECK-NEXT: arith.minui %[[KV0]], %[[LIMIT]] : index
// CHECK: arith.addi %[[ROW0]], %{{.+}} : index
// CHECK: arith.sitofp %{{.+}} : vector<8xi64> to vector<8xf32>
// CHECK: } else {
// CHECK-NOT: arith.minui %{{.+}}, %[[LIMIT]]
// CHECK: arith.sitofp %{{.+}} : vector<8xi64> to vector<8xf32>
// The softmax step, after the two versions.
// CHECK: math.exp
// SMALL-LABEL: func.func @alibi_dynamic
// SMALL: %[[B40:.+]] = arith.constant 40 : index
// SMALL: arith.cmpi ule, %{{.+}}, %[[B40]] : index
// SMALL: scf.if
// SMALL-NEXT: arith.minui %{{.+}}, %[[B40]] : index
func.func @alibi_dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %m: tensor<1x2x1x1xf32>) -> tensor<1x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %k extras(%m) {is_causal = true} : (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x?x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %slope: f32):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = math.fma %slope, %df, %s : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x?x8xf32>
}

// -----

// Only the dynamic length is checked (S is static here); the region reads
// only i.
// CHECK-LABEL: func.func @row_only_dynamic_l
// CHECK: %[[FITS:.+]] = arith.cmpi ule, %{{.+}}, %{{.+}} : index
// CHECK-NOT: arith.andi %[[FITS]]
// CHECK: scf.if %[[FITS]] {
func.func @row_only_dynamic_l(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<1x2x?x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x?x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %r = arith.addf %s, %f : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x?x8xf32>
}
