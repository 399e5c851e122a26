// Two layers of one form (projections, causal attention, residual, tanh):
// attn-cpu-outline-kernels makes each GEMM, the attention and the fused
// loops one function called from both layers.

func.func @f(%x: tensor<1x16x32xf32>, %wq0: tensor<32x32xf32>, %wk0: tensor<32x32xf32>, %wv0: tensor<32x32xf32>, %wo0: tensor<32x32xf32>, %wq1: tensor<32x32xf32>, %wk1: tensor<32x32xf32>, %wv1: tensor<32x32xf32>, %wo1: tensor<32x32xf32>) -> tensor<1x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %l0_q = attn.matmul %x, %wq0 : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %l0_k = attn.matmul %x, %wk0 : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %l0_v = attn.matmul %x, %wv0 : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %l0_a = attn.sdpa %l0_q, %l0_k, %l0_v {is_causal = true} : (tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %l0_e = tensor.empty() : tensor<16x32xf32>
  %l0_f = linalg.fill ins(%zero : f32) outs(%l0_e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %l0_a2 = tensor.collapse_shape %l0_a [[0, 1], [2]] : tensor<1x16x32xf32> into tensor<16x32xf32>
  %l0_o = linalg.matmul ins(%l0_a2, %wo0 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%l0_f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %l0_o3 = tensor.expand_shape %l0_o [[0, 1], [2]] output_shape [1, 16, 32] : tensor<16x32xf32> into tensor<1x16x32xf32>
  %l0_r = attn.add %x, %l0_o3 : (tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %l0_t = attn.tanh %l0_r : tensor<1x16x32xf32>
  %l1_q = attn.matmul %l0_t, %wq1 : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %l1_k = attn.matmul %l0_t, %wk1 : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %l1_v = attn.matmul %l0_t, %wv1 : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
  %l1_a = attn.sdpa %l1_q, %l1_k, %l1_v {is_causal = true} : (tensor<1x16x32xf32>, tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %l1_e = tensor.empty() : tensor<16x32xf32>
  %l1_f = linalg.fill ins(%zero : f32) outs(%l1_e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %l1_a2 = tensor.collapse_shape %l1_a [[0, 1], [2]] : tensor<1x16x32xf32> into tensor<16x32xf32>
  %l1_o = linalg.matmul ins(%l1_a2, %wo1 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%l1_f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %l1_o3 = tensor.expand_shape %l1_o [[0, 1], [2]] output_shape [1, 16, 32] : tensor<16x32xf32> into tensor<1x16x32xf32>
  %l1_r = attn.add %l0_t, %l1_o3 : (tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
  %l1_t = attn.tanh %l1_r : tensor<1x16x32xf32>
  return %l1_t : tensor<1x16x32xf32>
}
