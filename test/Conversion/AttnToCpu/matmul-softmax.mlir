// RUN: attn-opt %s --attn-lower-to-cpu=vector-bits=256 --split-input-file | FileCheck %s

// The register-tiled GEMM (256-bit vectors: 6 rows x 2 vectors of 8
// lanes). Work items over the batch dims x row blocks x column blocks (one
// of each here: 16 rows, 32 columns); the blocks' buffers sized to the
// static product (accumulators 18 x 32, panel 64 x 32, widened lhs 18 x
// 64); the rhs batch dim of size 1 reads index 0; the f16 rhs and lhs are
// widened to f32 once per k block, so the tile broadcasts f32 scalars with
// no conversion; f32 accumulators carried through the k loop; one rounding
// of the result to f16; the 16 rows are 2 tiles of 6, then the rest (4)
// as guarded tiles of its binary digits: 4 (8 accumulators), 2 and 1.
// CHECK-LABEL: func.func @matmul_broadcast_f16
// CHECK-SAME: %[[A:.+]]: tensor<2x8x16x64xf16>, %[[B:.+]]: tensor<2x1x64x32xf16>
// CHECK-DAG: %[[LHS:.+]] = bufferization.to_buffer %[[A]]
// CHECK-DAG: %[[RHS:.+]] = bufferization.to_buffer %[[B]]
// CHECK: %[[OUT:.+]] = memref.alloc() {{.*}} : memref<2x8x16x32xf16>
// CHECK: scf.forall (%[[I0:.+]], %[[I1:.+]], %{{.+}}, %{{.+}}) in (2, 8, 1, 1)
// CHECK:   %[[ACC:.+]] = memref.alloc() {{.*}} : memref<18x32xf32>
// CHECK:   %[[PANEL:.+]] = memref.alloc() {{.*}} : memref<64x32xf32>
// CHECK:   %[[WIDE:.+]] = memref.alloc() {{.*}} : memref<18x64xf32>
// CHECK:   vector.load %[[RHS]][%[[I0]], %c0{{.*}}] : memref<2x1x64x32xf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, vector<8xf16>
// CHECK:   arith.extf %{{.+}} : vector<8xf16> to vector<8xf32>
// CHECK:   vector.store %{{.+}}, %[[PANEL]]
// CHECK:   vector.load %[[LHS]][%[[I0]], %[[I1]], {{.+}}] : memref<2x8x16x64xf16{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>, vector<8xf16>
// CHECK:   arith.extf %{{.+}} : vector<8xf16> to vector<8xf32>
// CHECK:   vector.store %{{.+}}, %[[WIDE]]
// CHECK:   scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-2: vector.load %[[PANEL]]
// CHECK-NOT: arith.extf
// CHECK:     memref.load %[[WIDE]]
// CHECK-NEXT: vector.broadcast %{{.+}} : f32 to vector<8xf32>
// CHECK-COUNT-12: vector.fma
// CHECK:   scf.if
// CHECK:     scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:   scf.if
// CHECK:     scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:   scf.if
// CHECK:     scf.for {{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>) {
// CHECK:   arith.truncf %{{.+}} : vector<8xf32> to vector<8xf16>
// CHECK:   vector.store %{{.+}}, %[[OUT]]
func.func @matmul_broadcast_f16(%a: tensor<2x8x16x64xf16>, %b: tensor<2x1x64x32xf16>) -> tensor<2x8x16x32xf16> {
  %r = attn.matmul %a, %b : (tensor<2x8x16x64xf16>, tensor<2x1x64x32xf16>) -> tensor<2x8x16x32xf16>
  return %r : tensor<2x8x16x32xf16>
}

// -----

// Rank-2 rhs against a rank-3 lhs; dynamic batch and M: one column block,
// so M is split into ceil(M / rows) row blocks, rows at most 258 (43 tiles)
// and whole tiles of 6 for at least 4 work items unless that would go below
// 48 rows; the output buffer takes the dynamic sizes, the accumulators the
// most rows; the rhs has no batch index, no rounding for f32.
// CHECK-LABEL: func.func @matmul_dynamic
// CHECK-SAME: %[[A:.+]]: tensor<?x?x64xf32>, %[[B:.+]]: tensor<64x32xf32>
// CHECK-DAG: %[[RHS:.+]] = bufferization.to_buffer %[[B]]
// CHECK-DAG: %[[D0:.+]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[M:.+]] = tensor.dim %[[A]], %c1
// CHECK: memref.alloc(%[[D0]], %[[M]]) {{.*}} : memref<?x?x32xf32>
// CHECK-DAG: %[[MOST:.+]] = arith.ceildivui %[[M]], %c48
// CHECK-DAG: %[[NEEDED:.+]] = arith.ceildivui %[[M]], %c256
// CHECK: %[[CAPPED:.+]] = arith.minui %[[MOST]], %c4
// CHECK: %[[ATLEAST1:.+]] = arith.maxui %[[CAPPED]], %c1
// CHECK: %[[SPLIT:.+]] = arith.maxui %[[NEEDED]], %[[ATLEAST1]]
// CHECK: %[[PER:.+]] = arith.ceildivui %[[M]], %[[SPLIT]]
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[PER]], %c6
// CHECK: %[[ROWS:.+]] = arith.muli %[[TILES]], %c6
// CHECK: %[[MB:.+]] = arith.maxui %[[ROWS]], %c1
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[M]], %[[MB]]
// CHECK: scf.forall ({{.+}}) in (%[[D0]], %[[BLOCKS]], 1)
// CHECK: memref.alloc() {{.*}} : memref<258x32xf32>
// CHECK: vector.load %[[RHS]][%{{[^,]+}}, %{{[^,]+}}] : memref<64x32xf32{{(, strided<\[[0-9?, ]+\], offset: \?>)?}}>
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @matmul_dynamic(%a: tensor<?x?x64xf32>, %b: tensor<64x32xf32>) -> tensor<?x?x32xf32> {
  %r = attn.matmul %a, %b : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}

// -----

// linalg.matmul with an f32 result: the same GEMM, its init packed into the
// accumulators (accumulate onto it); an f16 result keeps linalg's loops
// (it rounds at every step).
// CHECK-LABEL: func.func @linalg_matmul
// CHECK-SAME: %[[C:[^:]+]]: tensor<19x33xf32>
// CHECK: %[[INIT:.+]] = bufferization.to_buffer %[[C]]
// CHECK-NOT: linalg.matmul
// CHECK: scf.forall
// CHECK: vector.load %[[INIT]]
// CHECK: vector.fma
func.func @linalg_matmul(%a: tensor<19x40xf32>, %b: tensor<40x33xf32>, %c: tensor<19x33xf32>) -> tensor<19x33xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<19x40xf32>, tensor<40x33xf32>) outs(%c : tensor<19x33xf32>) -> tensor<19x33xf32>
  return %r : tensor<19x33xf32>
}

// CHECK-LABEL: func.func @negative_linalg_matmul_f16_result
// CHECK: linalg.matmul
func.func @negative_linalg_matmul_f16_result(%a: tensor<19x40xf16>, %b: tensor<40x33xf16>, %c: tensor<19x33xf16>) -> tensor<19x33xf16> {
  %r = linalg.matmul ins(%a, %b : tensor<19x40xf16>, tensor<40x33xf16>) outs(%c : tensor<19x33xf16>) -> tensor<19x33xf16>
  return %r : tensor<19x33xf16>
}

// CHECK-LABEL: func.func @negative_linalg_matmul_transposed
// CHECK: linalg.matmul
func.func @negative_linalg_matmul_transposed(%a: tensor<40x19xf32>, %b: tensor<40x33xf32>, %c: tensor<19x33xf32>) -> tensor<19x33xf32> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
       ins(%a, %b : tensor<40x19xf32>, tensor<40x33xf32>) outs(%c : tensor<19x33xf32>) -> tensor<19x33xf32>
  return %r : tensor<19x33xf32>
}

// CHECK-LABEL: func.func @linalg_batch_matmul
// CHECK-NOT: linalg.batch_matmul
// CHECK: scf.forall ({{.+}}) in (2, 3, 1)
func.func @linalg_batch_matmul(%a: tensor<2x100x20xf32>, %b: tensor<2x20x49xf32>, %c: tensor<2x100x49xf32>) -> tensor<2x100x49xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x100x20xf32>, tensor<2x20x49xf32>) outs(%c : tensor<2x100x49xf32>) -> tensor<2x100x49xf32>
  return %r : tensor<2x100x49xf32>
}

// Onto a linalg.fill: the accumulators start at the fill value (broadcast
// once), and the filled tensor is never made.
// CHECK-LABEL: func.func @linalg_matmul_onto_fill
// CHECK-SAME: %{{[^:]+}}: tensor<19x40xf32>, %{{[^:]+}}: tensor<40x33xf32>, %[[X:[^:]+]]: f32
// CHECK-NOT: linalg.fill
// CHECK: scf.forall
// CHECK: %[[START:.+]] = vector.broadcast %[[X]] : f32 to vector<8xf32>
// CHECK: vector.store %[[START]]
// CHECK: vector.fma
func.func @linalg_matmul_onto_fill(%a: tensor<19x40xf32>, %b: tensor<40x33xf32>, %x: f32) -> tensor<19x33xf32> {
  %e = tensor.empty() : tensor<19x33xf32>
  %c = linalg.fill ins(%x : f32) outs(%e : tensor<19x33xf32>) -> tensor<19x33xf32>
  %r = linalg.matmul ins(%a, %b : tensor<19x40xf32>, tensor<40x33xf32>) outs(%c : tensor<19x33xf32>) -> tensor<19x33xf32>
  return %r : tensor<19x33xf32>
}

// nn.Linear's x . W^T (the weight [N, K] transposed by linalg.transpose)
// with one row: dot products along the weight's rows, read in place (no
// transpose, no packed panel). A weight under 64K elements: its two blocks
// of 32 rows in order, no parallel region.
// CHECK-LABEL: func.func @linear_one_row
// CHECK-SAME: %{{[^:]+}}: tensor<1x64xf32>, %[[W:[^:]+]]: tensor<48x64xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: scf.forall
// CHECK: %[[WB:.+]] = bufferization.to_buffer %[[W]]
// CHECK-NOT: linalg.transpose
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1
// CHECK: vector.load %[[WB]]
// CHECK: vector.fma
// CHECK: vector.reduction <add>
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @linear_one_row(%x: tensor<1x64xf32>, %w: tensor<48x64xf32>) -> tensor<1x48xf32> {
  %zero = arith.constant 0.0 : f32
  %t = tensor.empty() : tensor<64x48xf32>
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%t : tensor<64x48xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<1x48xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<1x48xf32>) -> tensor<1x48xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x64xf32>, tensor<64x48xf32>) outs(%c : tensor<1x48xf32>) -> tensor<1x48xf32>
  return %r : tensor<1x48xf32>
}

// A weight of 64K elements or more: blocks of 32 of its rows in parallel.
// CHECK-LABEL: func.func @linear_large_weight
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall ({{.+}}) in (%c8)
// CHECK: vector.reduction <add>
func.func @linear_large_weight(%x: tensor<1x256xf32>, %w: tensor<256x256xf32>) -> tensor<1x256xf32> {
  %zero = arith.constant 0.0 : f32
  %t = tensor.empty() : tensor<256x256xf32>
  %wt = linalg.transpose ins(%w : tensor<256x256xf32>) outs(%t : tensor<256x256xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<1x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<1x256xf32>) -> tensor<1x256xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x256xf32>, tensor<256x256xf32>) outs(%c : tensor<1x256xf32>) -> tensor<1x256xf32>
  return %r : tensor<1x256xf32>
}

// A run-time row count (a decode step's batch): the dot products up to 16
// rows, else the GEMM that packs the weight's rows transposed; no branch
// makes the transpose.
// CHECK-LABEL: func.func @linear_dynamic_rows
// CHECK-SAME: %{{[^:]+}}: tensor<?x64xbf16>, %[[W:[^:]+]]: tensor<48x64xbf16>
// CHECK-NOT: linalg.transpose
// CHECK: %[[FEW:.+]] = arith.cmpi ule, %{{.+}}, %c16
// CHECK-NEXT: scf.if %[[FEW]]
// CHECK: vector.reduction <add>
// CHECK: } else {
// CHECK: %[[WB:.+]] = bufferization.to_buffer %[[W]]
// CHECK: scf.forall
// CHECK: vector.load %[[WB]][{{.+}}] : memref<48x64xbf16{{.*}}>, vector<8xbf16>
// CHECK: vector.shuffle
// CHECK: vector.fma
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @linear_dynamic_rows(%x: tensor<?x64xbf16>, %w: tensor<48x64xbf16>, %c: tensor<?x48xf32>) -> tensor<?x48xf32> {
  %t = tensor.empty() : tensor<64x48xbf16>
  %wt = linalg.transpose ins(%w : tensor<48x64xbf16>) outs(%t : tensor<64x48xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<?x64xbf16>, tensor<64x48xbf16>) outs(%c : tensor<?x48xf32>) -> tensor<?x48xf32>
  return %r : tensor<?x48xf32>
}

// More than 16 static rows: the GEMM, no branch, no transposed copy: each
// panel is packed from the weight's rows (8 vector loads along K, three
// rounds of 8 interleaving shuffles, 8 vector stores of panel rows).
// CHECK-LABEL: func.func @linear_many_rows
// CHECK-SAME: %{{[^:]+}}: tensor<17x64xf32>, %[[W:[^:]+]]: tensor<48x64xf32>
// CHECK-NOT: linalg.transpose
// CHECK-NOT: scf.if
// CHECK-NOT: vector.reduction
// CHECK: %[[WB:.+]] = bufferization.to_buffer %[[W]]
// CHECK: scf.forall
// CHECK: %[[PANEL:.+]] = memref.alloc() {alignment = 64 : i64} : memref<64x48xf32>
// CHECK-COUNT-8: vector.load %[[WB]][{{.+}}] : memref<48x64xf32{{.*}}>, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.store %{{.+}}, %[[PANEL]]
// CHECK: vector.fma
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @linear_many_rows(%x: tensor<17x64xf32>, %w: tensor<48x64xf32>, %c: tensor<17x48xf32>) -> tensor<17x48xf32> {
  %t = tensor.empty() : tensor<64x48xf32>
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%t : tensor<64x48xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<17x64xf32>, tensor<64x48xf32>) outs(%c : tensor<17x48xf32>) -> tensor<17x48xf32>
  return %r : tensor<17x48xf32>
}

// A transpose that something else also uses stays for that user; the
// product still reads the weight in place.
// CHECK-LABEL: func.func @negative_linear_transpose_used
// CHECK-SAME: %{{[^:]+}}: tensor<17x64xf32>, %[[W:[^:]+]]: tensor<48x64xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[W]]
// CHECK: %[[WB:.+]] = bufferization.to_buffer %[[W]]
// CHECK: vector.load %[[WB]]
// CHECK: vector.shuffle
// CHECK: return %{{.+}}, %[[T]]
func.func @negative_linear_transpose_used(%x: tensor<17x64xf32>, %w: tensor<48x64xf32>, %c: tensor<17x48xf32>) -> (tensor<17x48xf32>, tensor<64x48xf32>) {
  %t = tensor.empty() : tensor<64x48xf32>
  %wt = linalg.transpose ins(%w : tensor<48x64xf32>) outs(%t : tensor<64x48xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<17x64xf32>, tensor<64x48xf32>) outs(%c : tensor<17x48xf32>) -> tensor<17x48xf32>
  return %r, %wt : tensor<17x48xf32>, tensor<64x48xf32>
}

// The one other 2-D permutation, the identity, is no transpose (it folds
// away): the GEMM packs the operand as it is, with no shuffles.
// CHECK-LABEL: func.func @negative_linear_identity_permutation
// CHECK-NOT: vector.shuffle
// CHECK: vector.load %{{.+}} : memref<64x48xf32>, vector<8xf32>
// CHECK-NOT: vector.shuffle
// CHECK: vector.fma
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @negative_linear_identity_permutation(%x: tensor<17x64xf32>, %b: tensor<64x48xf32>, %c: tensor<17x48xf32>) -> tensor<17x48xf32> {
  %t = tensor.empty() : tensor<64x48xf32>
  %bt = linalg.transpose ins(%b : tensor<64x48xf32>) outs(%t : tensor<64x48xf32>) permutation = [0, 1]
  %r = linalg.matmul ins(%x, %bt : tensor<17x64xf32>, tensor<64x48xf32>) outs(%c : tensor<17x48xf32>) -> tensor<17x48xf32>
  return %r : tensor<17x48xf32>
}

// A 3-D transpose under linalg.batch_matmul (no front end emits it for a
// weight): the transpose stays and the GEMM packs its result.
// CHECK-LABEL: func.func @negative_linear_batched
// CHECK: %[[T:.+]] = linalg.transpose
// CHECK-SAME: permutation = [0, 2, 1]
// CHECK: bufferization.to_buffer %[[T]]
// CHECK-NOT: vector.shuffle
// CHECK: vector.fma
func.func @negative_linear_batched(%x: tensor<2x17x64xf32>, %w: tensor<2x48x64xf32>, %c: tensor<2x17x48xf32>) -> tensor<2x17x48xf32> {
  %t = tensor.empty() : tensor<2x64x48xf32>
  %wt = linalg.transpose ins(%w : tensor<2x48x64xf32>) outs(%t : tensor<2x64x48xf32>) permutation = [0, 2, 1]
  %r = linalg.batch_matmul ins(%x, %wt : tensor<2x17x64xf32>, tensor<2x64x48xf32>) outs(%c : tensor<2x17x48xf32>) -> tensor<2x17x48xf32>
  return %r : tensor<2x17x48xf32>
}

// An rhs that is not a transpose: the GEMM, whatever the row count.
// CHECK-LABEL: func.func @negative_linear_plain_rhs
// CHECK-NOT: vector.reduction
// CHECK: scf.forall
// CHECK: vector.fma
func.func @negative_linear_plain_rhs(%x: tensor<1x64xf32>, %b: tensor<64x48xf32>, %c: tensor<1x48xf32>) -> tensor<1x48xf32> {
  %r = linalg.matmul ins(%x, %b : tensor<1x64xf32>, tensor<64x48xf32>) outs(%c : tensor<1x48xf32>) -> tensor<1x48xf32>
  return %r : tensor<1x48xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x64x128xf32>
// CHECK: linalg.transpose ins(%{{.+}} : tensor<2x128x64xf32>) outs(%[[E]] : tensor<2x64x128xf32>) permutation = [0, 2, 1]
func.func @transpose(%x: tensor<2x128x64xf32>) -> tensor<2x64x128xf32> {
  %r = attn.transpose %x dims(-2, -1) : tensor<2x128x64xf32> -> tensor<2x64x128xf32>
  return %r : tensor<2x64x128xf32>
}

// -----

// Softmax over a middle dim: max and sum reductions on f32, then the
// normalisation rounds to bf16.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$RED:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax_dim1_bf16
// CHECK: %[[NEGINF:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[NEGINF]] : tensor<4x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$RED]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %[[MAX]], %[[SUM]]
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @softmax_dim1_bf16(%x: tensor<4x8x16xbf16>) -> tensor<4x8x16xbf16> {
  %r = attn.softmax %x dim(1) : tensor<4x8x16xbf16>
  return %r : tensor<4x8x16xbf16>
}

// -----

// CHECK-LABEL: func.func @softmax_dynamic
// CHECK-SAME: %[[X:.+]]: tensor<?x?xf32>
// CHECK: %[[D0:.+]] = tensor.dim %[[X]], %{{.+}}
// CHECK: tensor.empty(%[[D0]]) : tensor<?xf32>
// CHECK: linalg.generic
func.func @softmax_dynamic(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = attn.softmax %x dim(-1) : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
