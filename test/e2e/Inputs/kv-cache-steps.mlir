// Two entry points over one KV cache that both write in place (arguments
// marked bufferization.writable, new values returned through
// bufferization.materialize_in_destination): @prefill writes rows [0, T)
// and attends causally over them; @decode writes row n - 1, n being the
// length of its padding mask, and attends over the filled prefix [0, n)
// only (a dynamic slice of the cache). Cache [1, 2, 16, 32]; queries of 4
// heads share 2 key/value heads.
func.func @prefill(%kc: tensor<1x2x16x32xf32> {bufferization.writable = true},
                   %vc: tensor<1x2x16x32xf32> {bufferization.writable = true},
                   %q: tensor<1x4x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                   %v: tensor<1x2x?x32xf32>)
    -> (tensor<1x4x?x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %k, %c2 : tensor<1x2x?x32xf32>
  %kn = tensor.insert_slice %k into %kc[0, 0, 0, 0] [1, 2, %t, 32] [1, 1, 1, 1] : tensor<1x2x?x32xf32> into tensor<1x2x16x32xf32>
  %vn = tensor.insert_slice %v into %vc[0, 0, 0, 0] [1, 2, %t, 32] [1, 1, 1, 1] : tensor<1x2x?x32xf32> into tensor<1x2x16x32xf32>
  %o = attn.sdpa %q, %k, %v {is_causal = true, scale = 0.17677669529663687 : f64} : (tensor<1x4x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>) -> tensor<1x4x?x32xf32>
  %km = bufferization.materialize_in_destination %kn in %kc : (tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32>
  %vm = bufferization.materialize_in_destination %vn in %vc : (tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32>
  return %o, %km, %vm : tensor<1x4x?x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
}

func.func @decode(%kc: tensor<1x2x16x32xf32> {bufferization.writable = true},
                  %vc: tensor<1x2x16x32xf32> {bufferization.writable = true},
                  %q: tensor<1x4x1x32xf32>, %k: tensor<1x2x1x32xf32>,
                  %v: tensor<1x2x1x32xf32>, %pad: tensor<1x?xi1>)
    -> (tensor<1x4x1x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %pad, %c1 : tensor<1x?xi1>
  %p = arith.subi %n, %c1 : index
  %kn = tensor.insert_slice %k into %kc[0, 0, %p, 0] [1, 2, 1, 32] [1, 1, 1, 1] : tensor<1x2x1x32xf32> into tensor<1x2x16x32xf32>
  %vn = tensor.insert_slice %v into %vc[0, 0, %p, 0] [1, 2, 1, 32] [1, 1, 1, 1] : tensor<1x2x1x32xf32> into tensor<1x2x16x32xf32>
  %keys = tensor.extract_slice %kn[0, 0, 0, 0] [1, 2, %n, 32] [1, 1, 1, 1] : tensor<1x2x16x32xf32> to tensor<1x2x?x32xf32>
  %values = tensor.extract_slice %vn[0, 0, 0, 0] [1, 2, %n, 32] [1, 1, 1, 1] : tensor<1x2x16x32xf32> to tensor<1x2x?x32xf32>
  %mask = tensor.expand_shape %pad [[0], [1, 2, 3]] output_shape [1, 1, 1, %n] : tensor<1x?xi1> into tensor<1x1x1x?xi1>
  %o = attn.sdpa %q, %keys, %values, %mask {scale = 0.17677669529663687 : f64, safe_softmax = true} : (tensor<1x4x1x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x1x1x?xi1>) -> tensor<1x4x1x32xf32>
  %km = bufferization.materialize_in_destination %kn in %kc : (tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32>
  %vm = bufferization.materialize_in_destination %vn in %vc : (tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32>
  return %o, %km, %vm : tensor<1x4x1x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
}
