// RUN: attn-opt %s --attn-cpu-fuse-product-consumers --split-input-file | FileCheck %s

// GPT-2's tanh GELU as the exporter writes it, on a bf16 projection: nine
// attn ops, three of them reading the product. They become one generic
// that reads the product once, its constants in the body, and the rounding
// after the product stays apart (the GEMM folds it).

// CHECK-LABEL: func.func @gelu_tanh(
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[P]] : tensor<32x256xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: linalg.yield
// CHECK: %[[E:.+]] = tensor.expand_shape %[[R]]
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%[[E]] : tensor<1x32x256xbf16>) outs(%{{.+}} : tensor<1x32x256xbf16>)
// CHECK: math.tanh
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK-NOT: attn.
// CHECK: return %[[G]]
func.func @gelu_tanh(%x: tensor<32x64xbf16>, %w: tensor<64x256xbf16>) -> tensor<1x32x256xbf16> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<32x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<32x256xf32>) -> tensor<32x256xf32>
  %p = linalg.matmul ins(%x, %w : tensor<32x64xbf16>, tensor<64x256xbf16>) outs(%f : tensor<32x256xf32>) -> tensor<32x256xf32>
  %n0 = tensor.empty() : tensor<32x256xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<32x256xf32>) outs(%n0 : tensor<32x256xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<32x256xbf16>
  %v = tensor.expand_shape %n [[0, 1], [2]] output_shape [1, 32, 256] : tensor<32x256xbf16> into tensor<1x32x256xbf16>
  %half = arith.constant dense<0.5> : tensor<f32>
  %a = "attn.mul"(%v, %half) : (tensor<1x32x256xbf16>, tensor<f32>) -> tensor<1x32x256xbf16>
  %c0 = tensor.empty() : tensor<1x32x256xbf16>
  %cube = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<1x32x256xbf16>) outs(%c0 : tensor<1x32x256xbf16>) {
  ^bb0(%e: bf16, %o: bf16):
    %e32 = arith.extf %e : bf16 to f32
    %sq = arith.mulf %e32, %e32 : f32
    %cu = arith.mulf %sq, %e32 : f32
    %r = arith.truncf %cu : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<1x32x256xbf16>
  %k = arith.constant dense<0.044715> : tensor<f32>
  %b = "attn.mul"(%cube, %k) : (tensor<1x32x256xbf16>, tensor<f32>) -> tensor<1x32x256xbf16>
  %c = "attn.add"(%v, %b) : (tensor<1x32x256xbf16>, tensor<1x32x256xbf16>) -> tensor<1x32x256xbf16>
  %s = arith.constant dense<0.797884583> : tensor<f32>
  %d = "attn.mul"(%c, %s) : (tensor<1x32x256xbf16>, tensor<f32>) -> tensor<1x32x256xbf16>
  %t = "attn.tanh"(%d) : (tensor<1x32x256xbf16>) -> tensor<1x32x256xbf16>
  %one = arith.constant dense<1.0> : tensor<f32>
  %u = "attn.add"(%t, %one) : (tensor<1x32x256xbf16>, tensor<f32>) -> tensor<1x32x256xbf16>
  %g = "attn.mul"(%a, %u) : (tensor<1x32x256xbf16>, tensor<1x32x256xbf16>) -> tensor<1x32x256xbf16>
  return %g : tensor<1x32x256xbf16>
}

// -----

// Generics that read no product are left as they are (the pipeline's
// attn-cpu-fuse-elementwise fuses them later); the elementwise attn ops
// are generics now.

// CHECK-LABEL: func.func @negative_no_product(
// CHECK: %[[A:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[B:.+]] = linalg.generic {{.+}} outs(%[[A]]
// CHECK: arith.mulf
// CHECK: return %[[B]]
func.func @negative_no_product(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %m = "attn.mul"(%e, %two) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

// A consumer that reads the product and is also returned keeps its own
// loop: fusing it into its reader would compute it twice.

// CHECK-LABEL: func.func @negative_second_user(
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK: %[[T:.+]] = linalg.generic {{.+}} ins(%[[P]]
// CHECK: math.tanh
// CHECK: %[[M:.+]] = linalg.generic {{.+}} ins(%[[T]]
// CHECK: return %[[M]], %[[T]]
func.func @negative_second_user(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>, %c: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %p = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  %t = "attn.tanh"(%p) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %m = "attn.mul"(%t, %two) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  return %m, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Llama's gate in f32 products rounded to bf16: SiLU and the product with
// `up` become one generic, but neither product's rounding goes into it
// (each product stores bf16 itself; `up`'s would otherwise be written in
// f32 for the gate to round).

// CHECK-LABEL: func.func @gate_keeps_roundings(
// CHECK: %[[G:.+]] = linalg.matmul
// CHECK: %[[GR:.+]] = linalg.generic {{.+}} ins(%[[G]] : tensor<8x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: linalg.yield
// CHECK: %[[U:.+]] = linalg.matmul
// CHECK: %[[UR:.+]] = linalg.generic {{.+}} ins(%[[U]] : tensor<8x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: linalg.yield
// CHECK: %[[M:.+]] = linalg.generic {{.+}} ins(%[[GR]] : tensor<8x16xbf16>) outs(%[[UR]] : tensor<8x16xbf16>)
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: return %[[M]]
func.func @gate_keeps_roundings(%x: tensor<8x32xbf16>, %wg: tensor<32x16xbf16>, %wu: tensor<32x16xbf16>) -> tensor<8x16xbf16> {
  %z = arith.constant 0.0 : f32
  %i = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%i : tensor<8x16xf32>) -> tensor<8x16xf32>
  %n0 = tensor.empty() : tensor<8x16xbf16>
  %g = linalg.matmul ins(%x, %wg : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %gr = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<8x16xf32>) outs(%n0 : tensor<8x16xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x16xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%gr : tensor<8x16xbf16>) outs(%n0 : tensor<8x16xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %a32 = arith.extf %a : bf16 to f32
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %a32 : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %y = arith.divf %a32, %den : f32
    %yb = arith.truncf %y : f32 to bf16
    linalg.yield %yb : bf16
  } -> tensor<8x16xbf16>
  %u = linalg.matmul ins(%x, %wu : tensor<8x32xbf16>, tensor<32x16xbf16>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %ur = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%u : tensor<8x16xf32>) outs(%n0 : tensor<8x16xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x16xbf16>
  %m = "attn.mul"(%s, %ur) : (tensor<8x16xbf16>, tensor<8x16xbf16>) -> tensor<8x16xbf16>
  return %m : tensor<8x16xbf16>
}
