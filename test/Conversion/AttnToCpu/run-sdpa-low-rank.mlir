// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 block-q=2 block-kv=3" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s

// attn.sdpa without head dims: rank 2 (f64, rank-1 boolean mask, causal)
// and rank 3 (broadcast key/value batch), flash against math.

func.func @maxabsdiff(%a: tensor<?xf64>, %b: tensor<?xf64>) -> f64 {
  %init = arith.constant dense<0.0> : tensor<f64>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%a, %b : tensor<?xf64>, tensor<?xf64>) outs(%init : tensor<f64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %d = arith.subf %x, %y : f64
    %ad = math.absf %d : f64
    %m = arith.maximumf %acc, %ad : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %e = tensor.extract %r[] : tensor<f64>
  return %e : f64
}

func.func @main() {
  %q = arith.constant dense<[[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]]> : tensor<3x2xf64>
  %k = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]]> : tensor<4x2xf64>
  %m = arith.constant dense<[true, false, true, true]> : tensor<4xi1>
  %a = attn.sdpa %q, %k, %k, %m {"attn.cpu_backend" = "flash", is_causal = true} : (tensor<3x2xf64>, tensor<4x2xf64>, tensor<4x2xf64>, tensor<4xi1>) -> tensor<3x2xf64>
  %b = attn.sdpa %q, %k, %k, %m {"attn.cpu_backend" = "math", is_causal = true} : (tensor<3x2xf64>, tensor<4x2xf64>, tensor<4x2xf64>, tensor<4xi1>) -> tensor<3x2xf64>
  %fa = tensor.collapse_shape %a [[0, 1]] : tensor<3x2xf64> into tensor<6xf64>
  %fb = tensor.collapse_shape %b [[0, 1]] : tensor<3x2xf64> into tensor<6xf64>
  %da = tensor.cast %fa : tensor<6xf64> to tensor<?xf64>
  %db = tensor.cast %fb : tensor<6xf64> to tensor<?xf64>
  %e = func.call @maxabsdiff(%da, %db) : (tensor<?xf64>, tensor<?xf64>) -> f64
  %tol2 = arith.constant 1.0e-12 : f64
  %ok2 = arith.cmpf ole, %e, %tol2 : f64
  // CHECK: rank2_flash_vs_math
  // CHECK-NEXT: 1
  vector.print str "rank2_flash_vs_math\n"
  vector.print %ok2 : i1
  // Row 0 attends to key 0 only (causal): the output is value row 0.
  // CHECK: rank2_row0
  // CHECK-NEXT: 1
  // CHECK-NEXT: 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x0 = tensor.extract %a[%c0, %c0] : tensor<3x2xf64>
  %x1 = tensor.extract %a[%c0, %c1] : tensor<3x2xf64>
  vector.print str "rank2_row0\n"
  vector.print %x0 : f64
  vector.print %x1 : f64

  %q3 = arith.constant dense<[[[0.1, 0.2], [0.3, -0.4], [0.5, 0.6], [0.0, 1.0], [2.0, -1.0]],
                              [[-0.1, 0.7], [0.9, 0.4], [-0.5, 0.6], [1.0, 1.0], [0.2, 0.1]]]> : tensor<2x5x2xf64>
  %k3 = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5], [0.3, 0.3], [0.7, -0.2], [0.1, 0.9]]]> : tensor<1x7x2xf64>
  %v3 = arith.constant dense<[[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0]]]> : tensor<1x7x1xf64>
  %a3 = attn.sdpa %q3, %k3, %v3 {"attn.cpu_backend" = "flash", scale = 2.0 : f64} : (tensor<2x5x2xf64>, tensor<1x7x2xf64>, tensor<1x7x1xf64>) -> tensor<2x5x1xf64>
  %b3 = attn.sdpa %q3, %k3, %v3 {"attn.cpu_backend" = "math", scale = 2.0 : f64} : (tensor<2x5x2xf64>, tensor<1x7x2xf64>, tensor<1x7x1xf64>) -> tensor<2x5x1xf64>
  %fa3 = tensor.collapse_shape %a3 [[0, 1, 2]] : tensor<2x5x1xf64> into tensor<10xf64>
  %fb3 = tensor.collapse_shape %b3 [[0, 1, 2]] : tensor<2x5x1xf64> into tensor<10xf64>
  %da3 = tensor.cast %fa3 : tensor<10xf64> to tensor<?xf64>
  %db3 = tensor.cast %fb3 : tensor<10xf64> to tensor<?xf64>
  %e3 = func.call @maxabsdiff(%da3, %db3) : (tensor<?xf64>, tensor<?xf64>) -> f64
  %tol = arith.constant 1.0e-12 : f64
  %ok3 = arith.cmpf ole, %e3, %tol : f64
  // CHECK: rank3_flash_vs_math
  // CHECK-NEXT: 1
  vector.print str "rank3_flash_vs_math\n"
  vector.print %ok3 : i1
  return
}
