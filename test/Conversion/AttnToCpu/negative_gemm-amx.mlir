// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 amx=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --split-input-file | FileCheck %s --check-prefix=OFF

// What amx leaves to the vector code: products whose operands are not both
// bf16 (no runtime check, no tiles), and every product without the option
// (its default, what the other lowering tests see).

// f16 operands.
// CHECK-LABEL: func.func @f16
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @f16(%a: tensor<8x37xf16>, %b: tensor<37x40xf16>) -> tensor<8x40xf16> {
  %c = attn.matmul %a, %b : (tensor<8x37xf16>, tensor<37x40xf16>) -> tensor<8x40xf16>
  return %c : tensor<8x40xf16>
}

// -----

// f32 operands.
// CHECK-LABEL: func.func @f32
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @f32(%a: tensor<8x37xf32>, %b: tensor<37x40xf32>) -> tensor<8x40xf32> {
  %c = attn.matmul %a, %b : (tensor<8x37xf32>, tensor<37x40xf32>) -> tensor<8x40xf32>
  return %c : tensor<8x40xf32>
}

// -----

// f32 x bf16 (an f32 activation against a bf16 weight).
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: amx
// CHECK: vector.fma
// CHECK-NOT: amx
// CHECK: return
func.func @mixed(%a: tensor<8x37xf32>, %b: tensor<37x40xbf16>, %c: tensor<8x40xf32>) -> tensor<8x40xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x37xf32>, tensor<37x40xbf16>) outs(%c : tensor<8x40xf32>) -> tensor<8x40xf32>
  return %r : tensor<8x40xf32>
}

// -----

// bf16 x bf16 without the option: no declaration, no check, no tiles.
// OFF-NOT: attnrt_amx_available
// OFF-LABEL: func.func @bf16_off
// OFF-NOT: amx
// OFF: vector.fma
// OFF-NOT: amx
// OFF: return
func.func @bf16_off(%a: tensor<8x37xbf16>, %b: tensor<37x40xbf16>) -> tensor<8x40xbf16> {
  %c = attn.matmul %a, %b : (tensor<8x37xbf16>, tensor<37x40xbf16>) -> tensor<8x40xbf16>
  return %c : tensor<8x40xbf16>
}
