// Conversions to and from f16 and bf16 on every bit pattern or boundary,
// for narrow-float-conversions.test (which checks the results against an
// exact reference).

#id = affine_map<(d0) -> (d0)>

// Every f16 / bf16 bit pattern widened to f32 and to f64.
func.func @widen(%h: tensor<65536xf16>, %b: tensor<65536xbf16>) -> (tensor<65536xf32>, tensor<65536xf64>, tensor<65536xf32>, tensor<65536xf64>) {
  %h32 = "attn.cast"(%h) : (tensor<65536xf16>) -> tensor<65536xf32>
  %h64 = "attn.cast"(%h) : (tensor<65536xf16>) -> tensor<65536xf64>
  %b32 = "attn.cast"(%b) : (tensor<65536xbf16>) -> tensor<65536xf32>
  %b64 = "attn.cast"(%b) : (tensor<65536xbf16>) -> tensor<65536xf64>
  return %h32, %h64, %b32, %b64 : tensor<65536xf32>, tensor<65536xf64>, tensor<65536xf32>, tensor<65536xf64>
}

// f32 values (ties, subnormals, overflow, Inf, NaN) narrowed.
func.func @narrow_f32(%x: tensor<?xf32>) -> (tensor<?xf16>, tensor<?xbf16>) {
  %h = "attn.cast"(%x) : (tensor<?xf32>) -> tensor<?xf16>
  %b = "attn.cast"(%x) : (tensor<?xf32>) -> tensor<?xbf16>
  return %h, %b : tensor<?xf16>, tensor<?xbf16>
}

// f64 values narrowed in one rounding (a frontend's arith.truncf; the attn
// cast refuses f64 -> f16/bf16).
func.func @narrow_f64(%x: tensor<?xf64>) -> (tensor<?xf16>, tensor<?xbf16>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %eh = tensor.empty(%n) : tensor<?xf16>
  %eb = tensor.empty(%n) : tensor<?xbf16>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x : tensor<?xf64>) outs(%eh, %eb : tensor<?xf16>, tensor<?xbf16>) {
  ^bb0(%a: f64, %o1: f16, %o2: bf16):
    %h = arith.truncf %a : f64 to f16
    %b = arith.truncf %a : f64 to bf16
    linalg.yield %h, %b : f16, bf16
  } -> (tensor<?xf16>, tensor<?xbf16>)
  return %r#0, %r#1 : tensor<?xf16>, tensor<?xbf16>
}
