// Two projections whose weights attn-compile --prepack-weights packs:
// nn.Linear's [N, K] weight (K = 300: two k blocks; N = 130: two column
// blocks, the second partial) and a Conv1D-style [K, N] weight read as
// stored (N = 33: part of a vector).
func.func @mlp(%w1: tensor<130x300xf32> {attn.weight},
               %w2: tensor<130x33xf32> {attn.weight},
               %x: tensor<?x300xf32>) -> tensor<?x33xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x300xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<300x130xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<130x300xf32>) outs(%e : tensor<300x130xf32>) permutation = [1, 0]
  %a = tensor.empty(%m) : tensor<?x130xf32>
  %f = linalg.fill ins(%z : f32) outs(%a : tensor<?x130xf32>) -> tensor<?x130xf32>
  %h = linalg.matmul ins(%x, %w1t : tensor<?x300xf32>, tensor<300x130xf32>) outs(%f : tensor<?x130xf32>) -> tensor<?x130xf32>
  %b = tensor.empty(%m) : tensor<?x33xf32>
  %g = linalg.fill ins(%z : f32) outs(%b : tensor<?x33xf32>) -> tensor<?x33xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<?x130xf32>, tensor<130x33xf32>) outs(%g : tensor<?x33xf32>) -> tensor<?x33xf32>
  return %y : tensor<?x33xf32>
}
