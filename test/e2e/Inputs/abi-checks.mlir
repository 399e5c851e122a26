// The function test/e2e/Inputs/abi_checks.c calls through the C ABI: static
// head, length and head-dim sizes, a dynamic batch.
func.func @attend(%q: tensor<?x2x4x8xf32>, %k: tensor<?x2x4x8xf32>, %v: tensor<?x2x4x8xf32>) -> tensor<?x2x4x8xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32>) -> tensor<?x2x4x8xf32>
  return %o : tensor<?x2x4x8xf32>
}
