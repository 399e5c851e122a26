// A dynamic batch dim that does not match at run time: the compiled code
// stops with a message (see attn-run-errors.test).
func.func @f(%q: tensor<?x8x16xf32>, %k: tensor<?x8x16xf32>) -> tensor<?x8x16xf32> {
  %o = attn.sdpa %q, %k, %k : (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) -> tensor<?x8x16xf32>
  return %o : tensor<?x8x16xf32>
}
