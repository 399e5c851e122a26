// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s

// attn.dropout keeps about 1 - p of the elements, scaled by 1 / (1 - p),
// deterministically (same seed, same mask); attn.sdpa's math path with
// dropout_p equals the unfused softmax -> dropout -> matmul chain with the
// same seed; and a few elementwise ops on small known inputs.

func.func @maxabsdiff(%a: tensor<?xf32>, %b: tensor<?xf32>) -> f32 {
  %init = arith.constant dense<0.0> : tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %m = arith.maximumf %acc, %ad : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %e = tensor.extract %r[] : tensor<f32>
  return %e : f32
}

func.func @dropout_stats() {
  %ones = arith.constant dense<1.0> : tensor<256x1024xf32>
  %d = attn.dropout %ones p(2.000000e-01) train(true) {seed = 3 : i64} : tensor<256x1024xf32>
  %d2 = attn.dropout %ones p(2.000000e-01) train(true) {seed = 3 : i64} : tensor<256x1024xf32>
  %init = arith.constant dense<0.0> : tensor<1xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (0)>, affine_map<(i, j) -> (0)>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%d, %d2 : tensor<256x1024xf32>, tensor<256x1024xf32>) outs(%init, %init : tensor<1xf32>, tensor<1xf32>) {
  ^bb0(%a: f32, %b: f32, %kept: f32, %diff: f32):
    %z = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %nz = arith.cmpf one, %a, %z : f32
    %inc = arith.select %nz, %one, %z : f32
    %k = arith.addf %kept, %inc : f32
    %dd = arith.subf %a, %b : f32
    %ad = math.absf %dd : f32
    %df = arith.addf %diff, %ad : f32
    linalg.yield %k, %df : f32, f32
  } -> (tensor<1xf32>, tensor<1xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %kept = tensor.extract %r#0[%c0] : tensor<1xf32>
  %diff = tensor.extract %r#1[%c0] : tensor<1xf32>
  %n = arith.constant 262144.0 : f32
  %frac = arith.divf %kept, %n : f32
  %target = arith.constant 0.8 : f32
  %dev = arith.subf %frac, %target : f32
  %adev = math.absf %dev : f32
  %tol = arith.constant 0.005 : f32
  %ok = arith.cmpf olt, %adev, %tol : f32
  // CHECK: dropout_fraction_ok
  // CHECK-NEXT: 1
  vector.print str "dropout_fraction_ok\n"
  vector.print %ok : i1
  // Kept elements are 1 / 0.8.
  // CHECK: kept_value
  // CHECK-NEXT: 1.25
  %x = tensor.extract %d[%c0, %c0] : tensor<256x1024xf32>
  %y = tensor.extract %d[%c0, %c1] : tensor<256x1024xf32>
  %m = arith.maximumf %x, %y : f32
  vector.print str "kept_value\n"
  vector.print %m : f32
  // CHECK: same_seed_same_mask
  // CHECK-NEXT: 0
  vector.print str "same_seed_same_mask\n"
  vector.print %diff : f32
  return
}

func.func @sdpa_dropout() {
  %q = arith.constant dense<[[[[0.1, 0.2], [0.3, -0.4], [0.5, 0.6], [-0.7, 0.8]]]]> : tensor<1x1x4x2xf32>
  %k = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5], [0.3, 0.3]]]]> : tensor<1x1x5x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.5, 2.5, 3.5], [0.5, 0.25, 0.125]]]]> : tensor<1x1x5x3xf32>
  %o = attn.sdpa %q, %k, %v {dropout_p = 5.000000e-01 : f64, scale = 1.0 : f64, seed = 11 : i64} : (tensor<1x1x4x2xf32>, tensor<1x1x5x2xf32>, tensor<1x1x5x3xf32>) -> tensor<1x1x4x3xf32>
  %kt = attn.transpose %k dims(-2, -1) : tensor<1x1x5x2xf32> -> tensor<1x1x2x5xf32>
  %s = attn.matmul %q, %kt : (tensor<1x1x4x2xf32>, tensor<1x1x2x5xf32>) -> tensor<1x1x4x5xf32>
  %p = attn.softmax %s dim(-1) : tensor<1x1x4x5xf32>
  %pd = attn.dropout %p p(5.000000e-01) train(true) {seed = 11 : i64} : tensor<1x1x4x5xf32>
  %u = attn.matmul %pd, %v : (tensor<1x1x4x5xf32>, tensor<1x1x5x3xf32>) -> tensor<1x1x4x3xf32>
  %fo = tensor.collapse_shape %o [[0, 1, 2, 3]] : tensor<1x1x4x3xf32> into tensor<12xf32>
  %fu = tensor.collapse_shape %u [[0, 1, 2, 3]] : tensor<1x1x4x3xf32> into tensor<12xf32>
  %do = tensor.cast %fo : tensor<12xf32> to tensor<?xf32>
  %du = tensor.cast %fu : tensor<12xf32> to tensor<?xf32>
  %err = func.call @maxabsdiff(%do, %du) : (tensor<?xf32>, tensor<?xf32>) -> f32
  %tol = arith.constant 1.0e-5 : f32
  %ok = arith.cmpf ole, %err, %tol : f32
  // CHECK: sdpa_dropout_matches_chain
  // CHECK-NEXT: 1
  vector.print str "sdpa_dropout_matches_chain\n"
  vector.print %ok : i1
  return
}

func.func @elementwise() {
  %a = arith.constant dense<[[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[2.0, 4.0, -3.0]> : tensor<3xf32>
  %m = arith.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %s = arith.constant dense<10.0> : tensor<f64>
  %d = attn.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %e = attn.sub %d, %s : (tensor<2x3xf32>, tensor<f64>) -> tensor<2x3xf32>
  %w = attn.where %m, %e, %s : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<f64>) -> tensor<2x3xf32>
  %h = attn.cast %w : tensor<2x3xf32> -> tensor<2x3xf16>
  %r = attn.repeat_interleave %h repeats(2) dim(0) : tensor<2x3xf16> -> tensor<4x3xf16>
  %f = attn.cast %r : tensor<4x3xf16> -> tensor<4x3xf32>
  %want = arith.constant dense<[[-9.5, -10.5, -11.0], [-9.5, -10.5, -11.0], [10.0, 10.0, 10.0], [10.0, 10.0, 10.0]]> : tensor<4x3xf32>
  %ff = tensor.collapse_shape %f [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  %fw = tensor.collapse_shape %want [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  %df = tensor.cast %ff : tensor<12xf32> to tensor<?xf32>
  %dw = tensor.cast %fw : tensor<12xf32> to tensor<?xf32>
  %err = func.call @maxabsdiff(%df, %dw) : (tensor<?xf32>, tensor<?xf32>) -> f32
  // CHECK: elementwise_maxabsdiff
  // CHECK-NEXT: 0
  vector.print str "elementwise_maxabsdiff\n"
  vector.print %err : f32
  return
}

func.func @main() {
  func.call @dropout_stats() : () -> ()
  func.call @sdpa_dropout() : () -> ()
  func.call @elementwise() : () -> ()
  return
}
