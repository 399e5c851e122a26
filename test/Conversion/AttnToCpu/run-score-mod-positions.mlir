// Both versions of the flash score step for a score_mod region that reads
// positions with dynamic lengths (flash-score-mod-positions.mlir), run and
// compared with the math lowering: the 32-bit one (L = 67 and S = 45 within
// the default position-bound) and the 64-bit one (position-bound=40: both
// lengths above it), at 256 bits (AVX2's lanes) and 512.
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 block-q=16 block-kv=16 vector-bits=256" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 block-q=16 block-kv=16 vector-bits=512 position-bound=40" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 block-q=16 block-kv=16 vector-bits=256 position-bound=40" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// CHECK: flash_vs_math
// CHECK-NEXT: 1

func.func @flash(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %m: tensor<1x2x1x1xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %k extras(%m) {is_causal = true, "attn.cpu_backend" = "flash"} : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x?x16xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %slope: f32):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = math.fma %slope, %df, %s : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x?x16xf32>
}

func.func @math(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %m: tensor<1x2x1x1xf32>) -> tensor<1x2x?x16xf32> {
  %o = attn.sdpa %q, %k, %k extras(%m) {is_causal = true, "attn.cpu_backend" = "math"} : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x?x16xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %slope: f32):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = math.fma %slope, %df, %s : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x?x16xf32>
}

// sin(a * index + c) in a [1, 2, n, 16] tensor.
func.func @wave(%n: index, %a: f32, %c: f32) -> tensor<1x2x?x16xf32> {
  %e = tensor.empty(%n) : tensor<1x2x?x16xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x2x?x16xf32>) {
  ^bb0(%o: f32):
    %h = linalg.index 1 : index
    %r = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c16 = arith.constant 16 : index
    %c97 = arith.constant 97 : index
    %hr = arith.muli %h, %c97 : index
    %row = arith.addi %hr, %r : index
    %rd = arith.muli %row, %c16 : index
    %i = arith.addi %rd, %d : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %x = arith.mulf %f, %a : f32
    %y = arith.addf %x, %c : f32
    %s = math.sin %y : f32
    linalg.yield %s : f32
  } -> tensor<1x2x?x16xf32>
  return %g : tensor<1x2x?x16xf32>
}

func.func @main() {
  %l = arith.constant 67 : index
  %s = arith.constant 45 : index
  %a1 = arith.constant 0.731 : f32
  %c1 = arith.constant 0.1 : f32
  %a2 = arith.constant 0.377 : f32
  %c2 = arith.constant 0.5 : f32
  %q = func.call @wave(%l, %a1, %c1) : (index, f32, f32) -> tensor<1x2x?x16xf32>
  %k = func.call @wave(%s, %a2, %c2) : (index, f32, f32) -> tensor<1x2x?x16xf32>
  %m = arith.constant dense<[[[[0.25]], [[0.0625]]]]> : tensor<1x2x1x1xf32>
  %f = func.call @flash(%q, %k, %m) : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x?x16xf32>
  %r = func.call @math(%q, %k, %m) : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%f, %r : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    // NaN (a wrong -inf row) compares false and fails the check below.
    %gt = arith.cmpf ugt, %ad, %acc : f32
    %n = arith.select %gt, %ad, %acc : f32
    linalg.yield %n : f32
  } -> tensor<f32>
  %err = tensor.extract %max[] : tensor<f32>
  %tol = arith.constant 2.000000e-05 : f32
  %ok = arith.cmpf ole, %err, %tol : f32
  vector.print str "flash_vs_math\n"
  vector.print %ok : i1
  vector.print %err : f32
  return
}
