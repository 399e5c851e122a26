// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-lower-to-cpu{vnni=true quantized-activations=int8}))" --verify-diagnostics

// Nested in a function, the pass cannot declare the vpdpbusd intrinsic
// the integer GEMV calls in the module: an error (the pipeline runs it on
// the module with vnni and quantized-activations=int8).
// expected-error @+1 {{attn-lower-to-cpu: with vnni and quantized-activations=int8 the pass must run on the module (it declares llvm.x86.avx512.vpdpbusd.256)}}
func.func @nested(%x: tensor<1x96xf32>, %w: tensor<1998xi8>) -> tensor<1x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>}
      : (tensor<1x96xf32>, tensor<1998xi8>) -> tensor<1x37xf32>
  return %y : tensor<1x37xf32>
}
