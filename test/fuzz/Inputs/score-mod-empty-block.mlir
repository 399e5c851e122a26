func.func @score_mod_op_kind(%q: tensor<2x4x8xf32>) {
  %0 = attn.sdpa %q, %q, %q : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> score_mod {
  ^bb0(%s: f32, %b: index, %i: index, %j: index):
 }
  return
}
