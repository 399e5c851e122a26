// Two bf16 projections accumulated in f32 whose weights attn-compile
// --prepack-weights packs in bf16 pairs on a target that multiplies them
// with vdpbf16ps: nn.Linear's [N, K] weight (K = 300: two k blocks, the
// second of 44 = 22 pairs; N = 130: two column blocks, the second partial)
// and a [K, N] weight read as stored with an odd K (33: one k block whose
// last pair is padded with zero) and N = 40 (part of a vector).
func.func @proj(%w1: tensor<130x300xbf16> {attn.weight},
                %w2: tensor<33x40xbf16> {attn.weight},
                %x: tensor<?x300xbf16>,
                %u: tensor<?x33xbf16>) -> (tensor<?x130xf32>, tensor<?x40xf32>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x300xbf16>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<300x130xbf16>
  %w1t = linalg.transpose ins(%w1 : tensor<130x300xbf16>) outs(%e : tensor<300x130xbf16>) permutation = [1, 0]
  %a = tensor.empty(%m) : tensor<?x130xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<?x130xf32>) -> tensor<?x130xf32>
  %h = linalg.matmul ins(%x, %w1t : tensor<?x300xbf16>, tensor<300x130xbf16>) outs(%f : tensor<?x130xf32>) -> tensor<?x130xf32>
  %mu = tensor.dim %u, %c0 : tensor<?x33xbf16>
  %b = tensor.empty(%mu) : tensor<?x40xf32>
  %g = linalg.fill ins(%z : f32) outs(%b : tensor<?x40xf32>) -> tensor<?x40xf32>
  %y = linalg.matmul ins(%u, %w2 : tensor<?x33xbf16>, tensor<33x40xbf16>) outs(%g : tensor<?x40xf32>) -> tensor<?x40xf32>
  return %h, %y : tensor<?x130xf32>, tensor<?x40xf32>
}
