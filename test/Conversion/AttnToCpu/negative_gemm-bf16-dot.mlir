// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 bf16-dot=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512" --split-input-file | FileCheck %s --check-prefix=OFF

// What bf16-dot leaves to the FMA tile: other operand types (the products
// are not both bf16), and every product without the option (its default,
// what the existing lowering tests see).

// f16 operands: widened to f32 as before.
// CHECK-LABEL: func.func @f16
// CHECK-NOT: x86vector
// CHECK: vector.fma
// CHECK-NOT: x86vector
// CHECK: return
func.func @f16(%a: tensor<8x37xf16>, %b: tensor<37x40xf16>) -> tensor<8x40xf16> {
  %c = attn.matmul %a, %b : (tensor<8x37xf16>, tensor<37x40xf16>) -> tensor<8x40xf16>
  return %c : tensor<8x40xf16>
}

// -----

// CHECK-LABEL: func.func @f32
// CHECK-NOT: x86vector
// CHECK: vector.fma
// CHECK-NOT: x86vector
// CHECK: return
func.func @f32(%a: tensor<8x37xf32>, %b: tensor<37x40xf32>) -> tensor<8x40xf32> {
  %c = attn.matmul %a, %b : (tensor<8x37xf32>, tensor<37x40xf32>) -> tensor<8x40xf32>
  return %c : tensor<8x40xf32>
}

// -----

// An f32 lhs against a bf16 rhs (and the reverse): one side is not bf16.
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: x86vector
// CHECK: vector.fma
// CHECK-NOT: x86vector
// CHECK: return
func.func @mixed(%a: tensor<8x37xf32>, %b: tensor<37x40xbf16>, %c: tensor<8x40xf32>) -> tensor<8x40xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x37xf32>, tensor<37x40xbf16>) outs(%c : tensor<8x40xf32>) -> tensor<8x40xf32>
  return %r : tensor<8x40xf32>
}

// -----

// CHECK-LABEL: func.func @mixed_lhs
// CHECK-NOT: x86vector
// CHECK: vector.fma
// CHECK-NOT: x86vector
// CHECK: return
func.func @mixed_lhs(%a: tensor<8x37xbf16>, %b: tensor<37x40xf32>, %c: tensor<8x40xf32>) -> tensor<8x40xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x37xbf16>, tensor<37x40xf32>) outs(%c : tensor<8x40xf32>) -> tensor<8x40xf32>
  return %r : tensor<8x40xf32>
}

// -----

// bf16 x bf16 without bf16-dot: the f32-widened panel and FMAs.
// OFF-LABEL: func.func @bf16
// OFF: memref.alloc() {alignment = 64 : i64} : memref<37x48xf32>
// OFF-NOT: x86vector
// OFF: vector.fma
// OFF-NOT: x86vector
// OFF: return
func.func @bf16(%a: tensor<8x37xbf16>, %b: tensor<37x40xbf16>) -> tensor<8x40xbf16> {
  %c = attn.matmul %a, %b : (tensor<8x37xbf16>, tensor<37x40xbf16>) -> tensor<8x40xbf16>
  return %c : tensor<8x40xbf16>
}
