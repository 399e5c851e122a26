%0 = "attn.frobnicate"() : () -> tensor<f32>
