// Every code path of the CPU lowering on bf16 and f16, for
// portable-libraries.test: fused flash and decode attention, the math
// backend, the register-tiled GEMM, elementwise and transcendental ops,
// softmax, casts (f32, f64) and a frontend's raw linalg.generic doing
// arithmetic, math and conversions on the narrow type itself.

#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @flash_bf16(%q: tensor<1x2x40x32xbf16>, %k: tensor<1x2x40x32xbf16>, %v: tensor<1x2x40x32xbf16>, %m: tensor<40x40xi1>) -> tensor<1x2x40x32xbf16> {
  %o = attn.sdpa %q, %k, %v, %m {is_causal = true} : (tensor<1x2x40x32xbf16>, tensor<1x2x40x32xbf16>, tensor<1x2x40x32xbf16>, tensor<40x40xi1>) -> tensor<1x2x40x32xbf16>
  return %o : tensor<1x2x40x32xbf16>
}

func.func @decode_bf16(%q: tensor<1x4x1x64xbf16>, %k: tensor<1x4x300x64xbf16>, %v: tensor<1x4x300x64xbf16>) -> tensor<1x4x1x64xbf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1x64xbf16>, tensor<1x4x300x64xbf16>, tensor<1x4x300x64xbf16>) -> tensor<1x4x1x64xbf16>
  return %o : tensor<1x4x1x64xbf16>
}

func.func @math_bf16(%q: tensor<2x16x24xbf16>, %k: tensor<2x20x24xbf16>, %v: tensor<2x20x8xbf16>) -> tensor<2x16x8xbf16> {
  %o = attn.sdpa %q, %k, %v {"attn.cpu_backend" = "math"} : (tensor<2x16x24xbf16>, tensor<2x20x24xbf16>, tensor<2x20x8xbf16>) -> tensor<2x16x8xbf16>
  return %o : tensor<2x16x8xbf16>
}

func.func @gemm_bf16(%a: tensor<37x64xbf16>, %b: tensor<64x50xbf16>) -> tensor<37x50xbf16> {
  %c = "attn.matmul"(%a, %b) : (tensor<37x64xbf16>, tensor<64x50xbf16>) -> tensor<37x50xbf16>
  return %c : tensor<37x50xbf16>
}

func.func @elementwise_bf16(%a: tensor<6x33xbf16>, %b: tensor<6x33xbf16>, %m: tensor<6x33xi1>) -> tensor<6x33xbf16> {
  %0 = attn.add %a, %b : (tensor<6x33xbf16>, tensor<6x33xbf16>) -> tensor<6x33xbf16>
  %1 = attn.mul %0, %b : (tensor<6x33xbf16>, tensor<6x33xbf16>) -> tensor<6x33xbf16>
  %2 = attn.exp %1 : tensor<6x33xbf16>
  %3 = attn.tanh %2 : tensor<6x33xbf16>
  %4 = attn.div %3, %a : (tensor<6x33xbf16>, tensor<6x33xbf16>) -> tensor<6x33xbf16>
  %5 = attn.abs %4 : tensor<6x33xbf16>
  %6 = "attn.masked_fill"(%5, %m) {value = -1.0 : f64} : (tensor<6x33xbf16>, tensor<6x33xi1>) -> tensor<6x33xbf16>
  %c = arith.constant dense<0.5> : tensor<bf16>
  %7 = "attn.maximum"(%6, %c) : (tensor<6x33xbf16>, tensor<bf16>) -> tensor<6x33xbf16>
  %8 = attn.sub %7, %a : (tensor<6x33xbf16>, tensor<6x33xbf16>) -> tensor<6x33xbf16>
  %9 = attn.dropout %8 p(0.25) train(true) : tensor<6x33xbf16>
  return %9 : tensor<6x33xbf16>
}

func.func @softmax_bf16(%x: tensor<3x5x77xbf16>) -> tensor<3x5x77xbf16> {
  %p = "attn.softmax"(%x) {dim = -1 : i64} : (tensor<3x5x77xbf16>) -> tensor<3x5x77xbf16>
  return %p : tensor<3x5x77xbf16>
}

func.func @casts_bf16(%x: tensor<4x9xbf16>, %y: tensor<4x9xf32>) -> (tensor<4x9xf32>, tensor<4x9xbf16>, tensor<4x9xf64>) {
  %a = "attn.cast"(%x) : (tensor<4x9xbf16>) -> tensor<4x9xf32>
  %b = "attn.cast"(%y) : (tensor<4x9xf32>) -> tensor<4x9xbf16>
  %c = "attn.cast"(%x) : (tensor<4x9xbf16>) -> tensor<4x9xf64>
  return %a, %b, %c : tensor<4x9xf32>, tensor<4x9xbf16>, tensor<4x9xf64>
}

func.func @raw_linalg_bf16(%x: tensor<4x9xbf16>, %d: tensor<4x9xf64>, %i: tensor<4x9xi32>) -> tensor<4x9xbf16> {
  %e = tensor.empty() : tensor<4x9xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %d, %i : tensor<4x9xbf16>, tensor<4x9xf64>, tensor<4x9xi32>) outs(%e : tensor<4x9xbf16>) {
  ^bb0(%a: bf16, %b: f64, %n: i32, %o: bf16):
    %s = arith.addf %a, %a : bf16
    %p = arith.mulf %s, %a : bf16
    %q = arith.divf %p, %s : bf16
    %w = math.sqrt %q : bf16
    %x1 = math.exp %w : bf16
    %x2 = math.tanh %x1 : bf16
    %t1 = arith.truncf %b : f64 to bf16
    %m1 = arith.maximumf %x2, %t1 : bf16
    %c1 = arith.sitofp %n : i32 to bf16
    %r1 = arith.subf %m1, %c1 : bf16
    linalg.yield %r1 : bf16
  } -> tensor<4x9xbf16>
  return %r : tensor<4x9xbf16>
}


func.func @flash_f16(%q: tensor<1x2x40x32xf16>, %k: tensor<1x2x40x32xf16>, %v: tensor<1x2x40x32xf16>, %m: tensor<40x40xi1>) -> tensor<1x2x40x32xf16> {
  %o = attn.sdpa %q, %k, %v, %m {is_causal = true} : (tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>, tensor<40x40xi1>) -> tensor<1x2x40x32xf16>
  return %o : tensor<1x2x40x32xf16>
}

func.func @decode_f16(%q: tensor<1x4x1x64xf16>, %k: tensor<1x4x300x64xf16>, %v: tensor<1x4x300x64xf16>) -> tensor<1x4x1x64xf16> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x1x64xf16>, tensor<1x4x300x64xf16>, tensor<1x4x300x64xf16>) -> tensor<1x4x1x64xf16>
  return %o : tensor<1x4x1x64xf16>
}

func.func @math_f16(%q: tensor<2x16x24xf16>, %k: tensor<2x20x24xf16>, %v: tensor<2x20x8xf16>) -> tensor<2x16x8xf16> {
  %o = attn.sdpa %q, %k, %v {"attn.cpu_backend" = "math"} : (tensor<2x16x24xf16>, tensor<2x20x24xf16>, tensor<2x20x8xf16>) -> tensor<2x16x8xf16>
  return %o : tensor<2x16x8xf16>
}

func.func @gemm_f16(%a: tensor<37x64xf16>, %b: tensor<64x50xf16>) -> tensor<37x50xf16> {
  %c = "attn.matmul"(%a, %b) : (tensor<37x64xf16>, tensor<64x50xf16>) -> tensor<37x50xf16>
  return %c : tensor<37x50xf16>
}

func.func @elementwise_f16(%a: tensor<6x33xf16>, %b: tensor<6x33xf16>, %m: tensor<6x33xi1>) -> tensor<6x33xf16> {
  %0 = attn.add %a, %b : (tensor<6x33xf16>, tensor<6x33xf16>) -> tensor<6x33xf16>
  %1 = attn.mul %0, %b : (tensor<6x33xf16>, tensor<6x33xf16>) -> tensor<6x33xf16>
  %2 = attn.exp %1 : tensor<6x33xf16>
  %3 = attn.tanh %2 : tensor<6x33xf16>
  %4 = attn.div %3, %a : (tensor<6x33xf16>, tensor<6x33xf16>) -> tensor<6x33xf16>
  %5 = attn.abs %4 : tensor<6x33xf16>
  %6 = "attn.masked_fill"(%5, %m) {value = -1.0 : f64} : (tensor<6x33xf16>, tensor<6x33xi1>) -> tensor<6x33xf16>
  %c = arith.constant dense<0.5> : tensor<f16>
  %7 = "attn.maximum"(%6, %c) : (tensor<6x33xf16>, tensor<f16>) -> tensor<6x33xf16>
  %8 = attn.sub %7, %a : (tensor<6x33xf16>, tensor<6x33xf16>) -> tensor<6x33xf16>
  %9 = attn.dropout %8 p(0.25) train(true) : tensor<6x33xf16>
  return %9 : tensor<6x33xf16>
}

func.func @softmax_f16(%x: tensor<3x5x77xf16>) -> tensor<3x5x77xf16> {
  %p = "attn.softmax"(%x) {dim = -1 : i64} : (tensor<3x5x77xf16>) -> tensor<3x5x77xf16>
  return %p : tensor<3x5x77xf16>
}

func.func @casts_f16(%x: tensor<4x9xf16>, %y: tensor<4x9xf32>) -> (tensor<4x9xf32>, tensor<4x9xf16>, tensor<4x9xf64>) {
  %a = "attn.cast"(%x) : (tensor<4x9xf16>) -> tensor<4x9xf32>
  %b = "attn.cast"(%y) : (tensor<4x9xf32>) -> tensor<4x9xf16>
  %c = "attn.cast"(%x) : (tensor<4x9xf16>) -> tensor<4x9xf64>
  return %a, %b, %c : tensor<4x9xf32>, tensor<4x9xf16>, tensor<4x9xf64>
}

func.func @raw_linalg_f16(%x: tensor<4x9xf16>, %d: tensor<4x9xf64>, %i: tensor<4x9xi32>) -> tensor<4x9xf16> {
  %e = tensor.empty() : tensor<4x9xf16>
  %r = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %d, %i : tensor<4x9xf16>, tensor<4x9xf64>, tensor<4x9xi32>) outs(%e : tensor<4x9xf16>) {
  ^bb0(%a: f16, %b: f64, %n: i32, %o: f16):
    %s = arith.addf %a, %a : f16
    %p = arith.mulf %s, %a : f16
    %q = arith.divf %p, %s : f16
    %w = math.sqrt %q : f16
    %x1 = math.exp %w : f16
    %x2 = math.tanh %x1 : f16
    %t1 = arith.truncf %b : f64 to f16
    %m1 = arith.maximumf %x2, %t1 : f16
    %c1 = arith.sitofp %n : i32 to f16
    %r1 = arith.subf %m1, %c1 : f16
    linalg.yield %r1 : f16
  } -> tensor<4x9xf16>
  return %r : tensor<4x9xf16>
}
