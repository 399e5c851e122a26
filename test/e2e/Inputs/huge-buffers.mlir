// Functions whose buffers cannot be allocated, for allocation-checks.test.

// A 40 GB intermediate (then a 160 GB one) from positions: malloc fails.
func.func @big(%x: tensor<1x1x4xf32>) -> tensor<1x1x4xf32> {
  %i = attn.iota 0 : tensor<200000x1x1xf32>
  %j = attn.iota 1 : tensor<1x50000x1xf32>
  %s = attn.add %i, %j : (tensor<200000x1x1xf32>, tensor<1x50000x1xf32>) -> tensor<200000x50000x1xf32>
  %t = attn.add %s, %x : (tensor<200000x50000x1xf32>, tensor<1x1x4xf32>) -> tensor<200000x50000x4xf32>
  %r = tensor.extract_slice %t[7, 9, 0] [1, 1, 4] [1, 1, 1] : tensor<200000x50000x4xf32> to tensor<1x1x4xf32>
  return %r : tensor<1x1x4xf32>
}

// Dynamic broadcasting of three small inputs into a huge result.
func.func @bcast(%a: tensor<?x1x1xf32>, %b: tensor<1x?x1xf32>, %c: tensor<1x1x?xf32>) -> tensor<?x?x?xf32> {
  %0 = attn.add %a, %b : (tensor<?x1x1xf32>, tensor<1x?x1xf32>) -> tensor<?x?x1xf32>
  %1 = attn.add %0, %c : (tensor<?x?x1xf32>, tensor<1x1x?xf32>) -> tensor<?x?x?xf32>
  return %1 : tensor<?x?x?xf32>
}

// One op whose result size overflows 64 bits (2^66 elements).
func.func @where(%c: tensor<?x1x1xi1>, %a: tensor<1x?x1xf32>, %b: tensor<1x1x?xf32>) -> tensor<?x?x?xf32> {
  %r = attn.where %c, %a, %b : (tensor<?x1x1xi1>, tensor<1x?x1xf32>, tensor<1x1x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}
