// Matrix products for test/e2e/matmul-gemm.test: each function's result is
// compared with a double-precision reference by check_matmul.py.

// Row and column remainders (37 = 6*6 + 1 rows, 29 columns), K = 53.
func.func @odd(%a: tensor<3x37x53xf32>, %b: tensor<3x53x29xf32>) -> tensor<3x37x29xf32> {
  %c = attn.matmul %a, %b : (tensor<3x37x53xf32>, tensor<3x53x29xf32>) -> tensor<3x37x29xf32>
  return %c : tensor<3x37x29xf32>
}

// NumPy broadcast of batch dims, K = 300 (two k blocks), 70 columns.
func.func @broadcast(%a: tensor<2x1x13x300xf32>, %b: tensor<1x3x300x70xf32>) -> tensor<2x3x13x70xf32> {
  %c = attn.matmul %a, %b : (tensor<2x1x13x300xf32>, tensor<1x3x300x70xf32>) -> tensor<2x3x13x70xf32>
  return %c : tensor<2x3x13x70xf32>
}

// More rows than one work item takes (263 > 258) and four column blocks
// of 128, the last with 5 columns: two row blocks that each read every
// packed panel once.
func.func @tall(%a: tensor<263x20xf32>, %b: tensor<20x389xf32>) -> tensor<263x389xf32> {
  %c = attn.matmul %a, %b : (tensor<263x20xf32>, tensor<20x389xf32>) -> tensor<263x389xf32>
  return %c : tensor<263x389xf32>
}

// Rank-2 rhs under a batched lhs; 100 rows, one column block: split into
// three row blocks so that the threads share the product.
func.func @rank2rhs(%a: tensor<2x100x24xf32>, %b: tensor<24x40xf32>) -> tensor<2x100x40xf32> {
  %c = attn.matmul %a, %b : (tensor<2x100x24xf32>, tensor<24x40xf32>) -> tensor<2x100x40xf32>
  return %c : tensor<2x100x40xf32>
}

// f16 and bf16: f32 accumulation, one rounding of the result.
func.func @f16(%a: tensor<5x9x33xf16>, %b: tensor<33x17xf16>) -> tensor<5x9x17xf16> {
  %c = attn.matmul %a, %b : (tensor<5x9x33xf16>, tensor<33x17xf16>) -> tensor<5x9x17xf16>
  return %c : tensor<5x9x17xf16>
}

func.func @bf16(%a: tensor<5x9x33xbf16>, %b: tensor<33x17xbf16>) -> tensor<5x9x17xbf16> {
  %c = attn.matmul %a, %b : (tensor<5x9x33xbf16>, tensor<33x17xbf16>) -> tensor<5x9x17xbf16>
  return %c : tensor<5x9x17xbf16>
}

// f64 accumulates in f64.
func.func @f64(%a: tensor<7x300xf64>, %b: tensor<300x11xf64>) -> tensor<7x11xf64> {
  %c = attn.matmul %a, %b : (tensor<7x300xf64>, tensor<300x11xf64>) -> tensor<7x11xf64>
  return %c : tensor<7x11xf64>
}

// Dynamic sizes (from the .npy inputs): 270 columns = two column blocks.
func.func @dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = attn.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}

// An empty contraction gives zeros.
func.func @empty_k(%a: tensor<4x0xf32>, %b: tensor<0x5xf32>) -> tensor<4x5xf32> {
  %c = attn.matmul %a, %b : (tensor<4x0xf32>, tensor<0x5xf32>) -> tensor<4x5xf32>
  return %c : tensor<4x5xf32>
}

// linalg.matmul accumulates onto its init (here an argument); f16 operands
// are extended to the f32 result type.
func.func @linalg_init(%a: tensor<19x40xf16>, %b: tensor<40x33xf32>, %c: tensor<19x33xf32>) -> tensor<19x33xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<19x40xf16>, tensor<40x33xf32>) outs(%c : tensor<19x33xf32>) -> tensor<19x33xf32>
  return %r : tensor<19x33xf32>
}

// linalg.batch_matmul onto a fill (its value starts every accumulator).
func.func @linalg_batch(%a: tensor<2x100x20xf32>, %b: tensor<2x20x49xf32>) -> tensor<2x100x49xf32> {
  %zero = arith.constant 0.75 : f32
  %e = tensor.empty() : tensor<2x100x49xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x100x49xf32>) -> tensor<2x100x49xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x100x20xf32>, tensor<2x20x49xf32>) outs(%c : tensor<2x100x49xf32>) -> tensor<2x100x49xf32>
  return %r : tensor<2x100x49xf32>
}

// nn.Linear's form, x . W^T with W [N, K] transposed by linalg.transpose:
// up to 16 rows are dot products along W's rows, more rows the GEMM that
// transposes W's blocks while packing them (no transposed copy either
// way); a dynamic row count picks at run time.
// One static row onto zeros, K = 70 (a tail after whole vectors), N = 45
// (a partial block of weight rows).
func.func @linear_row(%x: tensor<1x70xf32>, %w: tensor<45x70xf32>) -> tensor<1x45xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<70x45xf32>
  %wt = linalg.transpose ins(%w : tensor<45x70xf32>) outs(%t0 : tensor<70x45xf32>) permutation = [1, 0]
  %o = tensor.empty() : tensor<1x45xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<1x45xf32>) -> tensor<1x45xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x70xf32>, tensor<70x45xf32>) outs(%c : tensor<1x45xf32>) -> tensor<1x45xf32>
  return %r : tensor<1x45xf32>
}

// bf16 operands onto an f32 init (a bias), 7 rows at run time (a group of
// four and a remainder of three), K = 100.
func.func @linear_few_bf16(%x: tensor<?x100xbf16>, %w: tensor<40x100xbf16>, %c: tensor<?x40xf32>) -> tensor<?x40xf32> {
  %t0 = tensor.empty() : tensor<100x40xbf16>
  %wt = linalg.transpose ins(%w : tensor<40x100xbf16>) outs(%t0 : tensor<100x40xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<?x100xbf16>, tensor<100x40xbf16>) outs(%c : tensor<?x40xf32>) -> tensor<?x40xf32>
  return %r : tensor<?x40xf32>
}

// One row at run time (a tile of two dot products, two chains each) and
// an odd K = 301: with bf16 pairs 4 steps of 64 k, then 45 products one by
// one.
func.func @linear_gemv_odd_k_bf16(%x: tensor<?x301xbf16>, %w: tensor<45x301xbf16>) -> tensor<?x45xf32> {
  %t0 = tensor.empty() : tensor<301x45xbf16>
  %wt = linalg.transpose ins(%w : tensor<45x301xbf16>) outs(%t0 : tensor<301x45xbf16>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x301xbf16>
  %e = tensor.empty(%m) : tensor<?x45xf32>
  %zero = arith.constant 0.0 : f32
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x45xf32>) -> tensor<?x45xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x301xbf16>, tensor<301x45xbf16>) outs(%c : tensor<?x45xf32>) -> tensor<?x45xf32>
  return %r : tensor<?x45xf32>
}

// 16 and 17 rows at run time: the last row count of the dot products and
// the first of the GEMM.
func.func @linear_16(%x: tensor<?x33xf32>, %w: tensor<70x33xf32>) -> tensor<?x70xf32> {
  %zero = arith.constant 0.5 : f32
  %t0 = tensor.empty() : tensor<33x70xf32>
  %wt = linalg.transpose ins(%w : tensor<70x33xf32>) outs(%t0 : tensor<33x70xf32>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x33xf32>
  %o = tensor.empty(%m) : tensor<?x70xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x70xf32>) -> tensor<?x70xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x33xf32>, tensor<33x70xf32>) outs(%c : tensor<?x70xf32>) -> tensor<?x70xf32>
  return %r : tensor<?x70xf32>
}

func.func @linear_17(%x: tensor<?x33xf32>, %w: tensor<70x33xf32>) -> tensor<?x70xf32> {
  %zero = arith.constant 0.5 : f32
  %t0 = tensor.empty() : tensor<33x70xf32>
  %wt = linalg.transpose ins(%w : tensor<70x33xf32>) outs(%t0 : tensor<33x70xf32>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x33xf32>
  %o = tensor.empty(%m) : tensor<?x70xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x70xf32>) -> tensor<?x70xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x33xf32>, tensor<33x70xf32>) outs(%c : tensor<?x70xf32>) -> tensor<?x70xf32>
  return %r : tensor<?x70xf32>
}

// A weight of 64K elements or more (260 x 257): its blocks of rows in
// parallel; 3 rows at run time, K = 257.
func.func @linear_parallel(%x: tensor<?x257xf32>, %w: tensor<260x257xf32>, %c: tensor<?x260xf32>) -> tensor<?x260xf32> {
  %t0 = tensor.empty() : tensor<257x260xf32>
  %wt = linalg.transpose ins(%w : tensor<260x257xf32>) outs(%t0 : tensor<257x260xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<?x257xf32>, tensor<257x260xf32>) outs(%c : tensor<?x260xf32>) -> tensor<?x260xf32>
  return %r : tensor<?x260xf32>
}

// The GEMM of a weight read in place: 37 rows (6 groups of 6 and one),
// N = 29 (three whole 8 x 8 transposed blocks, five columns one by one and
// padding), K = 70 (six lanes past the whole blocks), onto a bias.
func.func @linear_gemm_odd(%x: tensor<37x70xf32>, %w: tensor<29x70xf32>, %c: tensor<37x29xf32>) -> tensor<37x29xf32> {
  %t0 = tensor.empty() : tensor<70x29xf32>
  %wt = linalg.transpose ins(%w : tensor<29x70xf32>) outs(%t0 : tensor<70x29xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<37x70xf32>, tensor<70x29xf32>) outs(%c : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// bf16 and f16 weights (converted to f32 on load, before the transpose in
// registers) onto a fill; every block edge: 49 rows at run time (two row
// blocks of 48), N = 259 and K = 258 (two column blocks and two k blocks of
// 256, partial vectors in both).
func.func @linear_gemm_bf16(%x: tensor<?x258xbf16>, %w: tensor<259x258xbf16>) -> tensor<?x259xf32> {
  %zero = arith.constant 0.25 : f32
  %t0 = tensor.empty() : tensor<258x259xbf16>
  %wt = linalg.transpose ins(%w : tensor<259x258xbf16>) outs(%t0 : tensor<258x259xbf16>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x258xbf16>
  %o = tensor.empty(%m) : tensor<?x259xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x259xf32>) -> tensor<?x259xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x258xbf16>, tensor<258x259xbf16>) outs(%c : tensor<?x259xf32>) -> tensor<?x259xf32>
  return %r : tensor<?x259xf32>
}

// A widened bf16 lhs (packed to f32 per k block) over two row blocks of
// a dynamic M (263 rows against four column blocks of W's 389 rows).
func.func @linear_gemm_tall_bf16(%x: tensor<?x24xbf16>, %w: tensor<389x24xbf16>) -> tensor<?x389xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<24x389xbf16>
  %wt = linalg.transpose ins(%w : tensor<389x24xbf16>) outs(%t0 : tensor<24x389xbf16>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x24xbf16>
  %o = tensor.empty(%m) : tensor<?x389xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x389xf32>) -> tensor<?x389xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x24xbf16>, tensor<24x389xbf16>) outs(%c : tensor<?x389xf32>) -> tensor<?x389xf32>
  return %r : tensor<?x389xf32>
}

func.func @linear_gemm_f16(%x: tensor<37x70xf16>, %w: tensor<29x70xf16>) -> tensor<37x29xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<70x29xf16>
  %wt = linalg.transpose ins(%w : tensor<29x70xf16>) outs(%t0 : tensor<70x29xf16>) permutation = [1, 0]
  %o = tensor.empty() : tensor<37x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<37x70xf16>, tensor<70x29xf16>) outs(%c : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// bf16 x bf16 accumulated in f32, the products a target with AVX512-BF16
// multiplies in pairs of k (vdpbf16ps on pair-packed panels; other
// targets widen them). An odd K = 53 (the last pair padded with zero),
// three column blocks (290 = 2 * 128 + 34, partial vectors), a batched lhs
// on a rank-2 rhs, a bf16 result.
func.func @bf16_odd_k(%a: tensor<2x19x53xbf16>, %b: tensor<53x290xbf16>) -> tensor<2x19x290xbf16> {
  %c = attn.matmul %a, %b : (tensor<2x19x53xbf16>, tensor<53x290xbf16>) -> tensor<2x19x290xbf16>
  return %c : tensor<2x19x290xbf16>
}

// Every size dynamic: M = 13, K = 261 (a whole k block of 256, then 5: an
// odd depth in the second), N = 133 (two column blocks).
func.func @bf16_dynamic(%a: tensor<?x?xbf16>, %b: tensor<?x?xbf16>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xbf16>
  %n = tensor.dim %b, %c1 : tensor<?x?xbf16>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty(%m, %n) : tensor<?x?xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xbf16>, tensor<?x?xbf16>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// A dynamic K that is 0 at run time onto an init argument: no k block;
// the result is the init (the AMX path writes its output after the last k
// block, and here there is none).
func.func @bf16_empty_k(%a: tensor<?x?xbf16>, %b: tensor<?x?xbf16>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xbf16>, tensor<?x?xbf16>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// linalg.batch_matmul on bf16 onto an f32 init argument, K = 45.
func.func @bf16_batch(%a: tensor<2x30x45xbf16>, %b: tensor<2x45x40xbf16>, %c: tensor<2x30x40xf32>) -> tensor<2x30x40xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x30x45xbf16>, tensor<2x45x40xbf16>) outs(%c : tensor<2x30x40xf32>) -> tensor<2x30x40xf32>
  return %r : tensor<2x30x40xf32>
}

// nn.Linear's bf16 weight [N, K] with an odd K = 301 (k blocks of 256 and
// 45: whole 16 x 16 blocks of pairs transposed in registers, then single
// pairs and the zero-padded last one), N = 270 (three column blocks), 20
// rows at run time (the GEMM, not the dot products).
func.func @linear_bf16_odd_k(%x: tensor<?x301xbf16>, %w: tensor<270x301xbf16>) -> tensor<?x270xf32> {
  %zero = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<301x270xbf16>
  %wt = linalg.transpose ins(%w : tensor<270x301xbf16>) outs(%t0 : tensor<301x270xbf16>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x301xbf16>
  %o = tensor.empty(%m) : tensor<?x270xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x270xf32>) -> tensor<?x270xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x301xbf16>, tensor<301x270xbf16>) outs(%c : tensor<?x270xf32>) -> tensor<?x270xf32>
  return %r : tensor<?x270xf32>
}

// bf16 operands whose row blocks and k steps are whole AMX tiles (M = 96
// per batch, K = 320 = 256 + 64): the AMX path reads the lhs in place as
// A tiles and starts its C tiles at zero (no init); a batched lhs on a
// rank-2 rhs, a bf16 result.
func.func @bf16_whole_blocks(%a: tensor<2x96x320xbf16>, %b: tensor<320x100xbf16>) -> tensor<2x96x100xbf16> {
  %c = attn.matmul %a, %b : (tensor<2x96x320xbf16>, tensor<320x100xbf16>) -> tensor<2x96x100xbf16>
  return %c : tensor<2x96x100xbf16>
}

// k steps that are not a whole group of 8 (the AMX path runs them in
// chunks of 4, 2 and 1 steps, each between one load and one store of the
// C tiles): K = 200 is 7 steps, the first chunk from zero tiles; K = 480
// is a group of 8, then 7 steps onto the init's value.
func.func @bf16_seven_steps(%a: tensor<64x200xbf16>, %b: tensor<200x40xbf16>) -> tensor<64x40xbf16> {
  %c = attn.matmul %a, %b : (tensor<64x200xbf16>, tensor<200x40xbf16>) -> tensor<64x40xbf16>
  return %c : tensor<64x40xbf16>
}

func.func @linear_fifteen_steps_bf16(%x: tensor<?x480xbf16>, %w: tensor<70x480xbf16>) -> tensor<?x70xf32> {
  %q = arith.constant 0.25 : f32
  %t0 = tensor.empty() : tensor<480x70xbf16>
  %wt = linalg.transpose ins(%w : tensor<70x480xbf16>) outs(%t0 : tensor<480x70xbf16>) permutation = [1, 0]
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x480xbf16>
  %o = tensor.empty(%m) : tensor<?x70xf32>
  %f = linalg.fill ins(%q : f32) outs(%o : tensor<?x70xf32>) -> tensor<?x70xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x480xbf16>, tensor<480x70xbf16>) outs(%f : tensor<?x70xf32>) -> tensor<?x70xf32>
  return %r : tensor<?x70xf32>
}

// nn.Linear's bf16 weight onto an f32 init argument (a bias added before
// the product) with K = 512 and 70 rows at run time: whole 32-row blocks
// read in place, the rest packed with padding rows; the C tiles start from
// the init.
func.func @linear_whole_bf16(%x: tensor<?x512xbf16>, %w: tensor<96x512xbf16>, %c: tensor<?x96xf32>) -> tensor<?x96xf32> {
  %t0 = tensor.empty() : tensor<512x96xbf16>
  %wt = linalg.transpose ins(%w : tensor<96x512xbf16>) outs(%t0 : tensor<512x96xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<?x512xbf16>, tensor<512x96xbf16>) outs(%c : tensor<?x96xf32>) -> tensor<?x96xf32>
  return %r : tensor<?x96xf32>
}

// The f32 accumulators rounded to bf16/f16 by the GEMM itself (the
// rounding that follows the product folded into it): nn.Linear's bf16
// weight onto an f32 bias init, reshaped before the rounding (70 rows at
// run time: the AMX or vector GEMM); 5 rows onto a fill (the dot
// products); a batched f16 product.
func.func @linear_rounded_bf16(%x: tensor<?x512xbf16>, %w: tensor<96x512xbf16>, %c: tensor<?x96xf32>) -> tensor<1x?x96xbf16> {
  %c0 = arith.constant 0 : index
  %t0 = tensor.empty() : tensor<512x96xbf16>
  %wt = linalg.transpose ins(%w : tensor<96x512xbf16>) outs(%t0 : tensor<512x96xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<?x512xbf16>, tensor<512x96xbf16>) outs(%c : tensor<?x96xf32>) -> tensor<?x96xf32>
  %m = tensor.dim %x, %c0 : tensor<?x512xbf16>
  %e = tensor.expand_shape %r [[0, 1], [2]] output_shape [1, %m, 96] : tensor<?x96xf32> into tensor<1x?x96xf32>
  %n0 = tensor.empty(%m) : tensor<1x?x96xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : tensor<1x?x96xf32>) outs(%n0 : tensor<1x?x96xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x?x96xbf16>
  return %n : tensor<1x?x96xbf16>
}

func.func @linear_rounded_few(%x: tensor<?x100xbf16>, %w: tensor<40x100xbf16>) -> tensor<?x40xbf16> {
  %c0 = arith.constant 0 : index
  %q = arith.constant 0.25 : f32
  %m = tensor.dim %x, %c0 : tensor<?x100xbf16>
  %t0 = tensor.empty() : tensor<100x40xbf16>
  %wt = linalg.transpose ins(%w : tensor<40x100xbf16>) outs(%t0 : tensor<100x40xbf16>) permutation = [1, 0]
  %i = tensor.empty(%m) : tensor<?x40xf32>
  %f = linalg.fill ins(%q : f32) outs(%i : tensor<?x40xf32>) -> tensor<?x40xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x100xbf16>, tensor<100x40xbf16>) outs(%f : tensor<?x40xf32>) -> tensor<?x40xf32>
  %n0 = tensor.empty(%m) : tensor<?x40xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<?x40xf32>) outs(%n0 : tensor<?x40xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x40xbf16>
  return %n : tensor<?x40xbf16>
}

func.func @batch_rounded_f16(%a: tensor<2x30x45xf16>, %b: tensor<2x45x40xf16>) -> tensor<2x30x40xf16> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<2x30x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<2x30x40xf32>) -> tensor<2x30x40xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x30x45xf16>, tensor<2x45x40xf16>) outs(%f : tensor<2x30x40xf32>) -> tensor<2x30x40xf32>
  %n0 = tensor.empty() : tensor<2x30x40xf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<2x30x40xf32>) outs(%n0 : tensor<2x30x40xf16>) {
  ^bb0(%a0: f32, %o: f16):
    %t = arith.truncf %a0 : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x30x40xf16>
  return %n : tensor<2x30x40xf16>
}

// A decode step's bf16 projections on AMX tiles (GemvToCpu: the weight as
// A tiles, the lhs rows packed into pairs of k as the B tile): 35 steps of
// 32 k (a first block of 16 from zero tiles, one more block, 3 steps),
// 3 blocks of 32 weight rows in parallel and the last 4 rows on vectors, a
// bias-like init; then 16 rows (a whole B tile), one block, 3 steps, a
// fill and bf16 rounding. A K that is not whole steps stays on vectors
// (linear_few_bf16, linear_rounded_few).
func.func @linear_amx_gemv(%x: tensor<?x1120xbf16>, %w: tensor<100x1120xbf16>, %c: tensor<?x100xf32>) -> tensor<?x100xf32> {
  %t0 = tensor.empty() : tensor<1120x100xbf16>
  %wt = linalg.transpose ins(%w : tensor<100x1120xbf16>) outs(%t0 : tensor<1120x100xbf16>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %wt : tensor<?x1120xbf16>, tensor<1120x100xbf16>) outs(%c : tensor<?x100xf32>) -> tensor<?x100xf32>
  return %r : tensor<?x100xf32>
}

func.func @linear_amx_gemv_16(%x: tensor<16x96xbf16>, %w: tensor<32x96xbf16>) -> tensor<16x32xbf16> {
  %q = arith.constant 0.25 : f32
  %t0 = tensor.empty() : tensor<96x32xbf16>
  %wt = linalg.transpose ins(%w : tensor<32x96xbf16>) outs(%t0 : tensor<96x32xbf16>) permutation = [1, 0]
  %i = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%q : f32) outs(%i : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<16x96xbf16>, tensor<96x32xbf16>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %n0 = tensor.empty() : tensor<16x32xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<16x32xf32>) outs(%n0 : tensor<16x32xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x32xbf16>
  return %n : tensor<16x32xbf16>
}

// Consumers the product applies as it stores (GemmEpilogue.h): Llama's
// gate, SiLU(x W_gate^T) * up, rounded to bf16 after each op as the
// exporter writes it; on the GEMM (37 rows) and, with a dynamic row count
// of 5 at run time, on the decode products (AMX tiles for the first 96
// weight rows where the host has them, vectors for the rest).
func.func @linear_silu_gate(%x: tensor<37x70xbf16>, %w: tensor<29x70xbf16>, %up: tensor<1x37x29xbf16>) -> tensor<1x37x29xbf16> {
  %z = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<70x29xbf16>
  %wt = linalg.transpose ins(%w : tensor<29x70xbf16>) outs(%t0 : tensor<70x29xbf16>) permutation = [1, 0]
  %i = tensor.empty() : tensor<37x29xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<37x70xbf16>, tensor<70x29xbf16>) outs(%f : tensor<37x29xf32>) -> tensor<37x29xf32>
  %e = tensor.expand_shape %r [[0, 1], [2]] output_shape [1, 37, 29] : tensor<37x29xf32> into tensor<1x37x29xf32>
  %n0 = tensor.empty() : tensor<1x37x29xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : tensor<1x37x29xf32>) outs(%n0 : tensor<1x37x29xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x37x29xbf16>
  %s0 = tensor.empty() : tensor<1x37x29xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%n : tensor<1x37x29xbf16>) outs(%s0 : tensor<1x37x29xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %a32 = arith.extf %a : bf16 to f32
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %a32 : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %y = arith.divf %a32, %den : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  } -> tensor<1x37x29xbf16>
  %m = "attn.mul"(%s, %up) : (tensor<1x37x29xbf16>, tensor<1x37x29xbf16>) -> tensor<1x37x29xbf16>
  return %m : tensor<1x37x29xbf16>
}

func.func @linear_silu_gate_few(%x: tensor<?x1120xbf16>, %w: tensor<100x1120xbf16>, %up: tensor<?x100xbf16>) -> tensor<?x100xbf16> {
  %z = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x1120xbf16>
  %t0 = tensor.empty() : tensor<1120x100xbf16>
  %wt = linalg.transpose ins(%w : tensor<100x1120xbf16>) outs(%t0 : tensor<1120x100xbf16>) permutation = [1, 0]
  %i = tensor.empty(%rows) : tensor<?x100xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<?x100xf32>) -> tensor<?x100xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x1120xbf16>, tensor<1120x100xbf16>) outs(%f : tensor<?x100xf32>) -> tensor<?x100xf32>
  %n0 = tensor.empty(%rows) : tensor<?x100xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<?x100xf32>) outs(%n0 : tensor<?x100xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x100xbf16>
  %s0 = tensor.empty(%rows) : tensor<?x100xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%n : tensor<?x100xbf16>) outs(%s0 : tensor<?x100xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %a32 = arith.extf %a : bf16 to f32
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %a32 : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %y = arith.divf %a32, %den : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  } -> tensor<?x100xbf16>
  %m0 = tensor.empty(%rows) : tensor<?x100xbf16>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s, %up : tensor<?x100xbf16>, tensor<?x100xbf16>) outs(%m0 : tensor<?x100xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %pb = arith.truncf %p : f32 to bf16
    linalg.yield %pb : bf16
  } -> tensor<?x100xbf16>
  return %m : tensor<?x100xbf16>
}

// BERT's feed-forward in f32: GELU (erf) of the product, then the residual
// added (attn.add, lowered to a generic before the product), on the GEMM;
// GPT-2's tanh GELU on the parallel decode products (3 rows).
func.func @linear_gelu_residual(%x: tensor<20x301xf32>, %w: tensor<45x301xf32>, %res: tensor<20x45xf32>) -> tensor<20x45xf32> {
  %z = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<301x45xf32>
  %wt = linalg.transpose ins(%w : tensor<45x301xf32>) outs(%t0 : tensor<301x45xf32>) permutation = [1, 0]
  %i = tensor.empty() : tensor<20x45xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<20x45xf32>) -> tensor<20x45xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<20x301xf32>, tensor<301x45xf32>) outs(%f : tensor<20x45xf32>) -> tensor<20x45xf32>
  %g0 = tensor.empty() : tensor<20x45xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<20x45xf32>) outs(%g0 : tensor<20x45xf32>) {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    %one = arith.constant 1.0 : f32
    %u = arith.mulf %a, %rsqrt2 : f32
    %erf = math.erf %u : f32
    %p = arith.addf %erf, %one : f32
    %h = arith.mulf %a, %half : f32
    %y = arith.mulf %h, %p : f32
    linalg.yield %y : f32
  } -> tensor<20x45xf32>
  %sum = "attn.add"(%res, %g) : (tensor<20x45xf32>, tensor<20x45xf32>) -> tensor<20x45xf32>
  return %sum : tensor<20x45xf32>
}

func.func @linear_gelu_tanh_few(%x: tensor<3x257xf32>, %w: tensor<260x257xf32>, %res: tensor<3x260xf32>) -> tensor<3x260xf32> {
  %z = arith.constant 0.0 : f32
  %t0 = tensor.empty() : tensor<257x260xf32>
  %wt = linalg.transpose ins(%w : tensor<260x257xf32>) outs(%t0 : tensor<257x260xf32>) permutation = [1, 0]
  %i = tensor.empty() : tensor<3x260xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<3x260xf32>) -> tensor<3x260xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<3x257xf32>, tensor<257x260xf32>) outs(%f : tensor<3x260xf32>) -> tensor<3x260xf32>
  %g0 = tensor.empty() : tensor<3x260xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%res, %r : tensor<3x260xf32>, tensor<3x260xf32>) outs(%g0 : tensor<3x260xf32>) {
  ^bb0(%b: f32, %a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %c = arith.constant 0.797884583 : f32
    %k = arith.constant 0.044715 : f32
    %one = arith.constant 1.0 : f32
    %a2 = arith.mulf %a, %a : f32
    %a3 = arith.mulf %a2, %a : f32
    %ka3 = arith.mulf %a3, %k : f32
    %in = arith.addf %a, %ka3 : f32
    %arg = arith.mulf %in, %c : f32
    %t = math.tanh %arg : f32
    %p = arith.addf %t, %one : f32
    %h = arith.mulf %a, %half : f32
    %y = arith.mulf %h, %p : f32
    %s = arith.addf %y, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x260xf32>
  return %g : tensor<3x260xf32>
}

// nn.Linear's bias as the exporter writes it: the product starts at the
// bias broadcast to every row (a generic reading it at the last dim only,
// extended to f32 or as it is, through reshapes that keep the last dim),
// which the GEMM reads in place instead of the broadcast tensor. 37 rows
// at run time through the GEMM, bf16 with K = 300 (two k blocks).
func.func @linear_bias_bf16(%x: tensor<?x300xbf16>, %w: tensor<70x300xbf16>, %bias: tensor<70xbf16>) -> tensor<?x70xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x300xbf16>
  %t0 = tensor.empty() : tensor<300x70xbf16>
  %wt = linalg.transpose ins(%w : tensor<70x300xbf16>) outs(%t0 : tensor<300x70xbf16>) permutation = [1, 0]
  %e = tensor.empty(%m) : tensor<1x?x70xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias : tensor<70xbf16>) outs(%e : tensor<1x?x70xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %y = arith.extf %a : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<1x?x70xf32>
  %b2 = tensor.collapse_shape %b [[0, 1], [2]] : tensor<1x?x70xf32> into tensor<?x70xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<?x300xbf16>, tensor<300x70xbf16>) outs(%b2 : tensor<?x70xf32>) -> tensor<?x70xf32>
  return %r : tensor<?x70xf32>
}

// GPT-2's form in bf16: onto the bias, then rounded to bf16 (in the
// GEMM's output loop), 70 rows through the GEMM.
func.func @linear_bias_rounded_bf16(%x: tensor<70x512xbf16>, %w: tensor<96x512xbf16>, %bias: tensor<96xbf16>) -> tensor<70x96xbf16> {
  %t0 = tensor.empty() : tensor<512x96xbf16>
  %wt = linalg.transpose ins(%w : tensor<96x512xbf16>) outs(%t0 : tensor<512x96xbf16>) permutation = [1, 0]
  %e = tensor.empty() : tensor<70x96xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<96xbf16>) outs(%e : tensor<70x96xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %y = arith.extf %a : bf16 to f32
    linalg.yield %y : f32
  } -> tensor<70x96xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<70x512xbf16>, tensor<512x96xbf16>) outs(%b : tensor<70x96xf32>) -> tensor<70x96xf32>
  %o0 = tensor.empty() : tensor<70x96xbf16>
  %o = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<70x96xf32>) outs(%o0 : tensor<70x96xbf16>) {
  ^bb0(%a: f32, %u: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<70x96xbf16>
  return %o : tensor<70x96xbf16>
}

// An f32 bias (the generic yields it as it is) under 3 rows: the dot
// products along W's rows start at it.
func.func @linear_bias_few(%x: tensor<3x257xf32>, %w: tensor<45x257xf32>, %bias: tensor<45xf32>) -> tensor<3x45xf32> {
  %t0 = tensor.empty() : tensor<257x45xf32>
  %wt = linalg.transpose ins(%w : tensor<45x257xf32>) outs(%t0 : tensor<257x45xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<3x45xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<45xf32>) outs(%e : tensor<3x45xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<3x45xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<3x257xf32>, tensor<257x45xf32>) outs(%b : tensor<3x45xf32>) -> tensor<3x45xf32>
  return %r : tensor<3x45xf32>
}

// linalg.broadcast of a bias onto a batch of products.
func.func @batch_bias(%a: tensor<2x30x45xf32>, %b: tensor<2x45x40xf32>, %bias: tensor<40xf32>) -> tensor<2x30x40xf32> {
  %e = tensor.empty() : tensor<2x30x40xf32>
  %c = linalg.broadcast ins(%bias : tensor<40xf32>) outs(%e : tensor<2x30x40xf32>) dimensions = [0, 1]
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x30x45xf32>, tensor<2x45x40xf32>) outs(%c : tensor<2x30x40xf32>) -> tensor<2x30x40xf32>
  return %r : tensor<2x30x40xf32>
}

// A vector broadcast along the columns (each row its own value) is not a
// bias: the product accumulates onto the broadcast tensor.
func.func @linear_column_init(%x: tensor<37x70xf32>, %w: tensor<29x70xf32>, %col: tensor<37xf32>) -> tensor<37x29xf32> {
  %t0 = tensor.empty() : tensor<70x29xf32>
  %wt = linalg.transpose ins(%w : tensor<29x70xf32>) outs(%t0 : tensor<70x29xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<37x29xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%col : tensor<37xf32>) outs(%e : tensor<37x29xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<37x70xf32>, tensor<70x29xf32>) outs(%b : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}
