// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-lower-to-cpu{amx=true}))" --verify-diagnostics

// Nested in a function, the pass cannot declare the runtime function in
// the module: an error (the pipeline runs it on the module with amx).
// expected-error @+1 {{attn-lower-to-cpu: with amx the pass must run on the module (it declares attnrt_amx_available)}}
func.func @nested(%a: tensor<8x37xbf16>, %b: tensor<37x40xbf16>) -> tensor<8x40xbf16> {
  %c = attn.matmul %a, %b : (tensor<8x37xbf16>, tensor<37x40xbf16>) -> tensor<8x40xbf16>
  return %c : tensor<8x40xbf16>
}
