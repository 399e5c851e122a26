// RUN: attn-opt %s --split-input-file --attn-cpu-tile-and-fuse | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-cpu-tile-and-fuse="min-elements=0 tile-elements=1024" | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s --split-input-file --attn-cpu-tile-and-fuse="tile-elements=0" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: attn-cpu-tile-and-fuse: min-elements must be >= 0 and tile-elements >= 1

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// RMSNorm as the exporter writes it after the elementwise fusion: squares,
// their sum per row, the normalised rows. The last op is tiled in blocks
// of 8 rows of 1024 (8192 iterations, 64 blocks); the sum and the squares
// are computed per block inside the loop, from the block's rows only.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: %[[X:[^:]+]]: tensor<512x1024xf32>
// CHECK: scf.forall (%[[I:.+]]) = (0) to (512) step (8) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<512x1024xf32>)
// CHECK: tensor.extract_slice %[[X]][%{{.+}}, 0] [8, 1024] [1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK: arith.mulf
// CHECK: } -> tensor<8x1024xf32>
// CHECK: linalg.fill {{.*}} -> tensor<8xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK: } -> tensor<8xf32>
// CHECK: linalg.generic
// CHECK: math.rsqrt
// CHECK: } -> tensor<8x1024xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @rms_norm(%x: tensor<512x1024xf32>, %w: tensor<1024xf32>) -> tensor<512x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<512x1024xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<512x1024xf32>) outs(%e0 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<512x1024xf32>
  %e1 = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<512x1024xf32>) outs(%f : tensor<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<512xf32>
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %w : tensor<512x1024xf32>, tensor<512xf32>, tensor<1024xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %s: f32, %ww: f32, %o: f32):
    %n = arith.constant 1024.0 : f32
    %mean = arith.divf %s, %n : f32
    %rs = math.rsqrt %mean : f32
    %y = arith.mulf %a, %rs : f32
    %yy = arith.mulf %y, %ww : f32
    linalg.yield %yy : f32
  } -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A producer with another user stays whole before the loop (fusing it
// would compute it twice), and so does one that every tile reads whole
// (a cast of the weight).
// The shared producer is large: it is tiled on its own.
// CHECK-LABEL: func.func @negative_shared_and_whole_producers
// CHECK: %[[SQ:.+]] = scf.forall
// CHECK: %[[W:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<1024xf16>)
// CHECK: %[[R:.+]] = scf.forall
// CHECK: tensor.extract_slice %[[SQ]]
// CHECK: tensor.extract_slice %[[W]][0] [1024] [1]
// CHECK: return %[[R]], %[[SQ]]
func.func @negative_shared_and_whole_producers(%x: tensor<512x1024xf32>, %wh: tensor<1024xf16>) -> (tensor<512x1024xf32>, tensor<512x1024xf32>) {
  %e0 = tensor.empty() : tensor<512x1024xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<512x1024xf32>) outs(%e0 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<512x1024xf32>
  %ew = tensor.empty() : tensor<1024xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%wh : tensor<1024xf16>) outs(%ew : tensor<1024xf32>) {
  ^bb0(%a: f16, %o: f32):
    %c = arith.extf %a : f16 to f32
    linalg.yield %c : f32
  } -> tensor<1024xf32>
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%sq, %w : tensor<512x1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %ww: f32, %o: f32):
    %y = arith.mulf %a, %ww : f32
    linalg.yield %y : f32
  } -> tensor<512x1024xf32>
  return %r, %sq : tensor<512x1024xf32>, tensor<512x1024xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Below min-elements (a decode step's row), dynamic sizes, and a
// reduction over the leading loop stay as they are; with min-elements=0
// the small op is tiled in blocks of whole rows (SMALL).
// CHECK-LABEL: func.func @negative_small
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// SMALL-LABEL: func.func @negative_small
// SMALL: scf.forall (%{{.+}}) in (4) {{.*}} -> (tensor<4x1024xf32>)
func.func @negative_small(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %e = tensor.empty() : tensor<4x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x1024xf32>) outs(%e : tensor<4x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x1024xf32>
  return %r : tensor<4x1024xf32>
}

// A dynamic number of rows (a prefill's sequence, a decode step's batch):
// blocks of 8 rows of 1024, as many as the run-time size needs (the last
// one shorter), with the norm's sum fused into each block. How many
// blocks there are is known only at run time; the CPU pipeline runs a
// loop of one block without forking (attn-cpu-omp-fork-guard).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x1024xf32>
// CHECK: scf.forall (%[[I:.+]]) = (0) to (%[[N:.+]]) step (8) shared_outs(%{{.+}}) -> (tensor<?x1024xf32>)
// CHECK: %[[ROWS:.+]] = affine.min #{{.+}}(%[[I]])[%[[N]]]
// CHECK: tensor.extract_slice %[[X]][%[[I]], 0] [%[[ROWS]], 1024] [1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK: } -> tensor<?xf32>
// CHECK: math.rsqrt
// CHECK: } -> tensor<?x1024xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dynamic_rows(%x: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %d = tensor.dim %x, %c0 : tensor<?x1024xf32>
  %e1 = tensor.empty(%d) : tensor<?xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<?xf32>) -> tensor<?xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x1024xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %e = tensor.empty(%d) : tensor<?x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<?x1024xf32>, tensor<?xf32>) outs(%e : tensor<?x1024xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %rs = math.rsqrt %s : f32
    %y = arith.mulf %a, %rs : f32
    linalg.yield %y : f32
  } -> tensor<?x1024xf32>
  return %r : tensor<?x1024xf32>
}

// Rows of dynamic size with short static rows inside (each tile would be
// a few hundred iterations: a decode step's per-head rows) and an inner
// row of dynamic size stay as they are.
// CHECK-LABEL: func.func @negative_dynamic
// CHECK-NOT: scf.forall
// CHECK: return
// SMALL-LABEL: func.func @negative_dynamic
// SMALL-NOT: scf.forall
// SMALL: return
func.func @negative_dynamic(%x: tensor<?x4x64xf32>, %y: tensor<8x?xf32>) -> (tensor<?x4x64xf32>, tensor<8x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = tensor.dim %x, %c0 : tensor<?x4x64xf32>
  %e = tensor.empty(%d) : tensor<?x4x64xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x4x64xf32>) outs(%e : tensor<?x4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?x4x64xf32>
  %d1 = tensor.dim %y, %c1 : tensor<8x?xf32>
  %e1 = tensor.empty(%d1) : tensor<8x?xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x?xf32>) outs(%e1 : tensor<8x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x?xf32>
  return %r, %r1 : tensor<?x4x64xf32>, tensor<8x?xf32>
}

// CHECK-LABEL: func.func @negative_column_sums
// CHECK-NOT: scf.forall
// SMALL-LABEL: func.func @negative_column_sums
// SMALL-NOT: scf.forall
func.func @negative_column_sums(%x: tensor<512x1024xf32>) -> tensor<1024xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<512x1024xf32>) outs(%f : tensor<1024xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// PyTorch's keepdim: the row sums [512] read as [512, 1] through an
// expand_shape that only inserts a unit dim. The consumer reads the sums
// themselves (map (d0, d1) -> (d0)), so the reduction is fused per block.
// CHECK-LABEL: func.func @keepdim_statistics
// SMALL-LABEL: func.func @keepdim_statistics
// CHECK-NOT: tensor.expand_shape
// CHECK: scf.forall
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[ROW:.+]], #{{.+}}], iterator_types = ["parallel", "parallel"]}
// CHECK: scf.forall.in_parallel
func.func @keepdim_statistics(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<512x1024xf32>) outs(%f : tensor<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a : f32
    linalg.yield %t : f32
  } -> tensor<512xf32>
  %k = tensor.expand_shape %s [[0, 1]] output_shape [512, 1] : tensor<512xf32> into tensor<512x1xf32>
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %r = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0, 0)>, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %k : tensor<512x1024xf32>, tensor<512x1xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// An expand_shape that splits a dim is a real reshape: the consumer keeps
// reading through it, and the producer is not fused.
// CHECK-LABEL: func.func @negative_splitting_reshape
// CHECK: %[[P:.+]] = scf.forall
// CHECK: %[[R:.+]] = tensor.expand_shape %[[P]]
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[R]]
func.func @negative_splitting_reshape(%x: tensor<512x1024xf32>) -> tensor<512x2x512xf32> {
  %e0 = tensor.empty() : tensor<512x1024xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<512x1024xf32>) outs(%e0 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<512x1024xf32>
  %k = tensor.expand_shape %n [[0], [1, 2]] output_shape [512, 2, 512] : tensor<512x1024xf32> into tensor<512x2x512xf32>
  %e2 = tensor.empty() : tensor<512x2x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<512x2x512xf32>) outs(%e2 : tensor<512x2x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<512x2x512xf32>
  return %r : tensor<512x2x512xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A layer norm's mean has two readers, both fused (the centred squares and
// the normalised rows): each block computes it once.
// CHECK-LABEL: func.func @two_readers_of_the_mean
// CHECK: scf.forall
// CHECK-COUNT-2: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: scf.forall.in_parallel
func.func @two_readers_of_the_mean(%x: tensor<512x1024xf32>) -> tensor<512x1024xf32> {
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  %mean = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<512x1024xf32>) outs(%f : tensor<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %t : f32
  } -> tensor<512xf32>
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %sq = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<512x1024xf32>, tensor<512xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %s = arith.mulf %d, %d : f32
    linalg.yield %s : f32
  } -> tensor<512x1024xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  %var = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<512x1024xf32>) outs(%f2 : tensor<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %t : f32
  } -> tensor<512xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %var : tensor<512x1024xf32>, tensor<512xf32>, tensor<512xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %m: f32, %v: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %q = math.rsqrt %v : f32
    %y = arith.mulf %d, %q : f32
    linalg.yield %y : f32
  } -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// An index check without results (the exporter's bounds assert of an
// advanced-indexing read whose values are unused) over a unit-dim
// expand_shape: its one operand bounds all four loops, so it keeps reading
// the expanded tensor: reading the source would leave three loops without
// a size, which the verifier rejects.
// CHECK-LABEL: func.func @negative_expand_bounds_the_loops
// CHECK: %[[E:.+]] = tensor.expand_shape
// CHECK: linalg.generic {{.+}} ins(%[[E]] : tensor<1x1x?x1xi64>)
// SMALL-LABEL: func.func @negative_expand_bounds_the_loops
// SMALL: linalg.generic {{.+}} ins(%{{.+}} : tensor<1x1x?x1xi64>)
func.func @negative_expand_bounds_the_loops(%x: tensor<?xi64>, %n: i64) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xi64>
  %e = tensor.expand_shape %x [[0, 1, 2, 3]] output_shape [1, 1, %d, 1] : tensor<?xi64> into tensor<1x1x?x1xi64>
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e : tensor<1x1x?x1xi64>) {
  ^bb0(%a: i64):
    %ok = arith.cmpi slt, %a, %n : i64
    cf.assert %ok, "index out of range"
    linalg.yield
  }
  return
}
