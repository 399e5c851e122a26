// Not a test (lit skips Inputs/): times attn.sdpa flash vs math on the CPU,
// L = S = 1024, H = 8, E = Ev = 64, f32, causal off. Run from the repo root:
//
//   build/bin/attn-opt test/Conversion/AttnToCpu/Inputs/bench-sdpa-cpu.mlir \
//       --attn-cpu-lowering-pipeline="num-threads=0" \
//     | /usr/lib/llvm-22/bin/mlir-runner -e main -entry-point-result=void -O3 \
//       -shared-libs=/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/llvm-22/lib/libomp.so
//
// Prints the seconds per call of flash, then of math (best of 3 runs).

func.func private @rtclock() -> f64

func.func @flash(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v {"attn.cpu_backend" = "flash"} : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

func.func @math(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = attn.sdpa %q, %k, %v {"attn.cpu_backend" = "math"} : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

func.func @gen(%a: f32) -> tensor<1x8x1024x64xf32> {
  %e = tensor.empty() : tensor<1x8x1024x64xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<1x8x1024x64xf32>) {
  ^bb0(%o: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %c64 = arith.constant 64 : index
    %c1024 = arith.constant 1024 : index
    %t0 = arith.muli %i1, %c1024 : index
    %t1 = arith.addi %t0, %i2 : index
    %t2 = arith.muli %t1, %c64 : index
    %t3 = arith.addi %t2, %i3 : index
    %ii = arith.index_cast %t3 : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %x = arith.mulf %f, %a : f32
    %s = math.sin %x : f32
    linalg.yield %s : f32
  } -> tensor<1x8x1024x64xf32>
  return %g : tensor<1x8x1024x64xf32>
}

func.func @main() {
  %a0 = arith.constant 0.731 : f32
  %a1 = arith.constant 0.377 : f32
  %a2 = arith.constant 0.533 : f32
  %q = func.call @gen(%a0) : (f32) -> tensor<1x8x1024x64xf32>
  %k = func.call @gen(%a1) : (f32) -> tensor<1x8x1024x64xf32>
  %v = func.call @gen(%a2) : (f32) -> tensor<1x8x1024x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %inf = arith.constant 1.0e30 : f64
  %bf = scf.for %i = %c0 to %c3 step %c1 iter_args(%best = %inf) -> (f64) {
    %t0 = func.call @rtclock() : () -> f64
    %o = func.call @flash(%q, %k, %v) : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
    %t1 = func.call @rtclock() : () -> f64
    %x = tensor.extract %o[%c0, %c0, %c0, %c0] : tensor<1x8x1024x64xf32>
    %d = arith.subf %t1, %t0 : f64
    %m = arith.minimumf %best, %d : f64
    scf.yield %m : f64
  }
  %bm = scf.for %i = %c0 to %c3 step %c1 iter_args(%best = %inf) -> (f64) {
    %t0 = func.call @rtclock() : () -> f64
    %o = func.call @math(%q, %k, %v) : (tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32>
    %t1 = func.call @rtclock() : () -> f64
    %x = tensor.extract %o[%c0, %c0, %c0, %c0] : tensor<1x8x1024x64xf32>
    %d = arith.subf %t1, %t0 : f64
    %m = arith.minimumf %best, %d : f64
    scf.yield %m : f64
  }
  vector.print str "flash_s "
  vector.print %bf : f64
  vector.print str "math_s "
  vector.print %bm : f64
  return
}
