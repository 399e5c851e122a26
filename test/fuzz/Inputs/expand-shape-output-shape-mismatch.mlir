func.func @main() {
  %e1 = tensor.empty() : tensor<66560xf32>
  %g2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e1 : tensor<66560xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %a = arith.constant 7.310000e-01 : f32
    %c = arith.constant 1.000000e-01 : f32
    %m = arith.constant 1.000000e+00 : f32
    %x = arith.mulf %f, %a : f32
    %y = arith.addf %x, %c : f32
    %s = math.sin %y : f32
    %z = arith.mulf %s, %m : f32
    linalg.yield %z : f32
  } -> tensor<66560xf32>
  %t3 = tensor.expand_shape %g2 [[0, 1, 2, 3]] output_shape [4, 4, 130, 64] : tensor<66560xf32> into tensor<2x4x130x64xf32>
  %e4 = tensor.empty() : tensor<66560xf32>
  %g5 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e4 : tensor<66560xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %a = arith.constant 3.770000e-01 : f32
    %c = arith.constant 5.000000e-01 : f32
    %m = arith.constant 1.000000e+00 : f32
    %x = arith.mulf %f, %a : f32
    %y = arith.addf %x, %c : f32
    %s = math.sin %y : f32
    %z = arith.mulf %s, %m : f32
    linalg.yield %z : f32
  } -> tensor<66560xf32>
  %t6 = tensor.expand_shape %g5 [[0, 1, 2, 3]] output_shape [2, 4, 130, 64] : tensor<66560xf32> into tensor<2x4x130x64xf32>
  %e7 = tensor.empty() : tensor<66560xf32>
  %g8 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e7 : tensor<66560xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %a = arith.constant 5.330000e-01 : f32
    %c = arith.constant 9.000000e-01 : f32
    %m = arith.constant 2.000000e+00 : f32
    %x = arith.mulf %f, %a : f32
    %y = arith.addf %x, %c : f32
    %s = math.sin %y : f32
    %z = arith.mulf %s, %m : f32
    linalg.yield %z : f32
  } -> tensor<66560xf32>
  %t9 = tensor.expand_shape %g8 [[0, 1, 2, 3]] output_shape [2, 4, 130, 64] : tensor<66560xf32> into tensor<2x4x130x64xf32>
  %o10 = attn.sdpa %t3, %t6, %t9 {is_causal = true, "attn.cpu_backend" = "flash"} : (tensor<2x4x130x64xf32>, tensor<2x4x130x64xf32>, tensor<2x4x130x64xf32>) -> tensor<2x4x130x64xf32>
  %o11 = attn.sdpa %t3, %t6, %t9 {is_causal = true, "attn.cpu_backend" = "math"} : (tensor<2x4x130x64xf32>, tensor<2x4x130x64xf32>, tensor<2x4x130x64xf32>) -> tensor<2x4x130x64xf32>
  %u12 = attn.transpose %t6 dims(-2, -1) : tensor<2x4x130x64xf32> -> tensor<2x4x64x130xf32>
  %u13 = attn.matmul %t3, %u12 : (tensor<2x4x130x64xf32>, tensor<2x4x64x130xf32>) -> tensor<2x4x130x130xf32>
  %u14 = arith.constant dense<1.250000e-01> : tensor<f64>
  %u15 = attn.mul %u13, %u14 : (tensor<2x4x130x130xf32>, tensor<f64>) -> tensor<2x4x130x130xf32>
  %e16 = tensor.empty() : tensor<130x130xi1>
  %m17 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e16 : tensor<130x130xi1>) {
  ^bb0(%o: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %f = arith.cmpi ugt, %j, %i : index
    linalg.yield %f : i1
  } -> tensor<130x130xi1>
  %u18 = attn.masked_fill %u15, %m17 value(0xFFF0000000000000) : (tensor<2x4x130x130xf32>, tensor<130x130xi1>) -> tensor<2x4x130x130xf32>
  %u19 = attn.softmax %u18 dim(-1) : tensor<2x4x130x130xf32>
  %u20 = attn.matmul %u19, %t9 : (tensor<2x4x130x130xf32>, tensor<2x4x130x64xf32>) -> tensor<2x4x130x64xf32>
  %c21 = tensor.collapse_shape %o10 [[0, 1, 2, 3]] : tensor<2x4x130x64xf32> into tensor<66560xf32>
  %c22 = tensor.collapse_shape %o11 [[0, 1, 2, 3]] : tensor<2x4x130x64xf32> into tensor<66560xf32>
  %c23 = tensor.empty() : tensor<f32>
  %zero25 = arith.constant 0.0 : f32
  %c24 = linalg.fill ins(%zero25 : f32) outs(%c23 : tensor<f32>) -> tensor<f32>
  %c25 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%c21, %c22 : tensor<66560xf32>, tensor<66560xf32>) outs(%c24 : tensor<f32>) {
  ^bb0(%xa: f32, %xb: f32, %acc: f32):
    %a = arith.addf %xa, %xa : f32
    %b = arith.addf %xb, %xb : f32
    %na = arith.cmpf uno, %a, %a : f32
    %nb = arith.cmpf uno, %b, %b : f32
    %d = arith.subf %a, %b : f32
    %ad = math.absf %d : f32
    %inf = arith.constant 0x7F800000 : f32
    %z = arith.constant 0.0 : f32
    %both = arith.andi %na, %nb : i1
    %one = arith.xori %na, %nb : i1
    %er1 = arith.select %one, %inf, %ad : f32
    %er2 = arith.select %both, %z, %er1 : f32
    %m = arith.maximumf %acc, %er2 : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %c26 = tensor.extract %c25[] : tensor<f32>
  %half27 = arith.constant 0.5 : f32
  %c27 = arith.mulf %c26, %half27 : f32
  %tol28 = arith.constant 2.000000e-05 : f32
  %c28 = arith.cmpf ole, %c27, %tol28 : f32
  vector.print str "flash_vs_math\n"
  vector.print %c28 : i1
  vector.print %c27 : f32
  %c29 = tensor.collapse_shape %o10 [[0, 1, 2, 3]] : tensor<2x4x130x64xf32> into tensor<66560xf32>
  %c30 = tensor.collapse_shape %u20 [[0, 1, 2, 3]] : tensor<2x4x130x64xf32> into tensor<66560xf32>
  %c31 = tensor.empty() : tensor<f32>
  %zero33 = arith.constant 0.0 : f32
  %c32 = linalg.fill ins(%zero33 : f32) outs(%c31 : tensor<f32>) -> tensor<f32>
  %c33 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%c29, %c30 : tensor<66560xf32>, tensor<66560xf32>) outs(%c32 : tensor<f32>) {
  ^bb0(%xa: f32, %xb: f32, %acc: f32):
    %a = arith.addf %xa, %xa : f32
    %b = arith.addf %xb, %xb : f32
    %na = arith.cmpf uno, %a, %a : f32
    %nb = arith.cmpf uno, %b, %b : f32
    %d = arith.subf %a, %b : f32
    %ad = math.absf %d : f32
    %inf = arith.constant 0x7F800000 : f32
    %z = arith.constant 0.0 : f32
    %both = arith.andi %na, %nb : i1
    %one = arith.xori %na, %nb : i1
    %er1 = arith.select %one, %inf, %ad : f32
    %er2 = arith.select %both, %z, %er1 : f32
    %m = arith.maximumf %acc, %er2 : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %c34 = tensor.extract %c33[] : tensor<f32>
  %half35 = arith.constant 0.5 : f32
  %c35 = arith.mulf %c34, %half35 : f32
  %tol36 = arith.constant 2.000000e-05 : f32
  %c36 = arith.cmpf ole, %c35, %tol36 : f32
  vector.print str "flash_vs_unfused\n"
  vector.print %c36 : i1
  vector.print %c35 : f32
  %n37 = tensor.collapse_shape %o10 [[0, 1, 2, 3]] : tensor<2x4x130x64xf32> into tensor<66560xf32>
  %n38 = tensor.empty() : tensor<i64>
  %zi40 = arith.constant 0 : i64
  %n39 = linalg.fill ins(%zi40 : i64) outs(%n38 : tensor<i64>) -> tensor<i64>
  %n40 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%n37 : tensor<66560xf32>) outs(%n39 : tensor<i64>) {
  ^bb0(%x: f32, %acc: i64):
    %n = arith.cmpf uno, %x, %x : f32
    %ni = arith.extui %n : i1 to i64
    %s = arith.addi %acc, %ni : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  %n41 = tensor.extract %n40[] : tensor<i64>
  vector.print str "flash_nans\n"
  vector.print %n41 : i64
  return
}
