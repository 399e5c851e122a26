#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<(d0, d1, d2) -> (d2)>
module {
  func.func @norms_f32(%arg0: tensor<512xf32>, %arg1: tensor<512xf32>, %arg2: tensor<512xf32>, %arg3: tensor<2x64x512xf32>, %arg4: tensor<2x64x512xf32>) -> (tensor<2x64x512xf32>, tensor<2x64x512xf32>, tensor<2x64x512xf32>) {
    %0 = tensor.empty() : tensor<2x64x512xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg3 : tensor<2x64x512xf32>) outs(%0 : tensor<2x64x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = arith.mulf %in, %in : f32
      linalg.yield %31 : f32
    } -> tensor<2x64x512xf32>
    %2 = tensor.empty() : tensor<2x64xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<2x64xf32>) -> tensor<2x64xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%1 : tensor<2x64x512xf32>) outs(%3 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %31 : f32
    } -> tensor<2x64xf32>
    %5 = tensor.empty() : tensor<2x64xf32>
    %6 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<2x64xf32>) outs(%5 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.120000e+02 : f32
      %31 = arith.divf %in, %cst_5 : f32
      linalg.yield %31 : f32
    } -> tensor<2x64xf32>
    %expanded = tensor.expand_shape %6 [[0], [1, 2]] output_shape [2, 64, 1] : tensor<2x64xf32> into tensor<2x64x1xf32>
    %cst_0 = arith.constant dense<9.99999997E-7> : tensor<f32>
    %7 = attn.add %expanded, %cst_0 : (tensor<2x64x1xf32>, tensor<f32>) -> tensor<2x64x1xf32>
    %8 = tensor.empty() : tensor<2x64x1xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7 : tensor<2x64x1xf32>) outs(%8 : tensor<2x64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = math.rsqrt %in : f32
      linalg.yield %31 : f32
    } -> tensor<2x64x1xf32>
    %10 = attn.mul %arg3, %9 : (tensor<2x64x512xf32>, tensor<2x64x1xf32>) -> tensor<2x64x512xf32>
    %11 = attn.mul %arg0, %10 : (tensor<512xf32>, tensor<2x64x512xf32>) -> tensor<2x64x512xf32>
    %12 = tensor.empty() : tensor<2x64xf32>
    %cst_1 = arith.constant 0.000000e+00 : f32
    %13 = linalg.fill ins(%cst_1 : f32) outs(%12 : tensor<2x64xf32>) -> tensor<2x64xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg3 : tensor<2x64x512xf32>) outs(%13 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %31 : f32
    } -> tensor<2x64xf32>
    %15 = tensor.empty() : tensor<2x64xf32>
    %16 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%14 : tensor<2x64xf32>) outs(%15 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.120000e+02 : f32
      %31 = arith.divf %in, %cst_5 : f32
      linalg.yield %31 : f32
    } -> tensor<2x64xf32>
    %expanded_2 = tensor.expand_shape %16 [[0], [1, 2]] output_shape [2, 64, 1] : tensor<2x64xf32> into tensor<2x64x1xf32>
    %17 = tensor.empty() : tensor<2x64x512xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg3, %expanded_2 : tensor<2x64x512xf32>, tensor<2x64x1xf32>) outs(%17 : tensor<2x64x512xf32>) {
    ^bb0(%in: f32, %in_5: f32, %out: f32):
      %31 = arith.subf %in, %in_5 : f32
      %32 = arith.mulf %31, %31 : f32
      linalg.yield %32 : f32
    } -> tensor<2x64x512xf32>
    %19 = tensor.empty() : tensor<2x64xf32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %20 = linalg.fill ins(%cst_3 : f32) outs(%19 : tensor<2x64xf32>) -> tensor<2x64xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%18 : tensor<2x64x512xf32>) outs(%20 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %31 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %31 : f32
    } -> tensor<2x64xf32>
    %22 = tensor.empty() : tensor<2x64xf32>
    %23 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%21 : tensor<2x64xf32>) outs(%22 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.120000e+02 : f32
      %31 = arith.divf %in, %cst_5 : f32
      linalg.yield %31 : f32
    } -> tensor<2x64xf32>
    %expanded_4 = tensor.expand_shape %23 [[0], [1, 2]] output_shape [2, 64, 1] : tensor<2x64xf32> into tensor<2x64x1xf32>
    %24 = tensor.empty() : tensor<2x64x1xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_4 : tensor<2x64x1xf32>) outs(%24 : tensor<2x64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 9.99999974E-6 : f32
      %31 = arith.addf %in, %cst_5 : f32
      %32 = math.rsqrt %31 : f32
      linalg.yield %32 : f32
    } -> tensor<2x64x1xf32>
    %26 = tensor.empty() : tensor<2x64x512xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map3, #map3, #map4, #map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg3, %expanded_2, %25, %arg1, %arg2 : tensor<2x64x512xf32>, tensor<2x64x1xf32>, tensor<2x64x1xf32>, tensor<512xf32>, tensor<512xf32>) outs(%26 : tensor<2x64x512xf32>) {
    ^bb0(%in: f32, %in_5: f32, %in_6: f32, %in_7: f32, %in_8: f32, %out: f32):
      %31 = arith.subf %in, %in_5 : f32
      %32 = arith.mulf %31, %in_6 : f32
      %33 = arith.mulf %32, %in_7 : f32
      %34 = arith.addf %33, %in_8 : f32
      linalg.yield %34 : f32
    } -> tensor<2x64x512xf32>
    %28 = tensor.empty() : tensor<2x64x512xf32>
    %29 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg4 : tensor<2x64x512xf32>) outs(%28 : tensor<2x64x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 1.000000e+00 : f32
      %31 = arith.negf %in : f32
      %32 = math.exp %31 : f32
      %33 = arith.addf %cst_5, %32 : f32
      %34 = arith.divf %in, %33 : f32
      linalg.yield %34 : f32
    } -> tensor<2x64x512xf32>
    %30 = attn.mul %29, %arg3 : (tensor<2x64x512xf32>, tensor<2x64x512xf32>) -> tensor<2x64x512xf32>
    return %11, %27, %30 : tensor<2x64x512xf32>, tensor<2x64x512xf32>, tensor<2x64x512xf32>
  }
  func.func @norms_bf16(%arg0: tensor<512xbf16>, %arg1: tensor<512xbf16>, %arg2: tensor<512xbf16>, %arg3: tensor<2x64x512xbf16>, %arg4: tensor<2x64x512xbf16>) -> (tensor<2x64x512xbf16>, tensor<2x64x512xbf16>, tensor<2x64x512xbf16>) {
    %0 = attn.cast %arg3 : tensor<2x64x512xbf16> -> tensor<2x64x512xf32>
    %1 = tensor.empty() : tensor<2x64x512xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<2x64x512xf32>) outs(%1 : tensor<2x64x512xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = arith.mulf %in, %in : f32
      linalg.yield %33 : f32
    } -> tensor<2x64x512xf32>
    %3 = tensor.empty() : tensor<2x64xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x64xf32>) -> tensor<2x64xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<2x64x512xf32>) outs(%4 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %33 : f32
    } -> tensor<2x64xf32>
    %6 = tensor.empty() : tensor<2x64xf32>
    %7 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<2x64xf32>) outs(%6 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.120000e+02 : f32
      %33 = arith.divf %in, %cst_5 : f32
      linalg.yield %33 : f32
    } -> tensor<2x64xf32>
    %expanded = tensor.expand_shape %7 [[0], [1, 2]] output_shape [2, 64, 1] : tensor<2x64xf32> into tensor<2x64x1xf32>
    %cst_0 = arith.constant dense<9.99999997E-7> : tensor<f32>
    %8 = attn.add %expanded, %cst_0 : (tensor<2x64x1xf32>, tensor<f32>) -> tensor<2x64x1xf32>
    %9 = tensor.empty() : tensor<2x64x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x64x1xf32>) outs(%9 : tensor<2x64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = math.rsqrt %in : f32
      linalg.yield %33 : f32
    } -> tensor<2x64x1xf32>
    %11 = attn.mul %0, %10 : (tensor<2x64x512xf32>, tensor<2x64x1xf32>) -> tensor<2x64x512xf32>
    %12 = attn.cast %11 : tensor<2x64x512xf32> -> tensor<2x64x512xbf16>
    %13 = attn.mul %arg0, %12 : (tensor<512xbf16>, tensor<2x64x512xbf16>) -> tensor<2x64x512xbf16>
    %14 = tensor.empty() : tensor<2x64xf32>
    %cst_1 = arith.constant 0.000000e+00 : f32
    %15 = linalg.fill ins(%cst_1 : f32) outs(%14 : tensor<2x64xf32>) -> tensor<2x64xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg3 : tensor<2x64x512xbf16>) outs(%15 : tensor<2x64xf32>) {
    ^bb0(%in: bf16, %out: f32):
      %33 = arith.extf %in : bf16 to f32
      %34 = arith.addf %out, %33 fastmath<reassoc> : f32
      linalg.yield %34 : f32
    } -> tensor<2x64xf32>
    %17 = tensor.empty() : tensor<2x64xf32>
    %18 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<2x64xf32>) outs(%17 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.120000e+02 : f32
      %33 = arith.divf %in, %cst_5 : f32
      linalg.yield %33 : f32
    } -> tensor<2x64xf32>
    %expanded_2 = tensor.expand_shape %18 [[0], [1, 2]] output_shape [2, 64, 1] : tensor<2x64xf32> into tensor<2x64x1xf32>
    %19 = tensor.empty() : tensor<2x64x512xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg3, %expanded_2 : tensor<2x64x512xbf16>, tensor<2x64x1xf32>) outs(%19 : tensor<2x64x512xf32>) {
    ^bb0(%in: bf16, %in_5: f32, %out: f32):
      %33 = arith.extf %in : bf16 to f32
      %34 = arith.subf %33, %in_5 : f32
      %35 = arith.mulf %34, %34 : f32
      linalg.yield %35 : f32
    } -> tensor<2x64x512xf32>
    %21 = tensor.empty() : tensor<2x64xf32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %22 = linalg.fill ins(%cst_3 : f32) outs(%21 : tensor<2x64xf32>) -> tensor<2x64xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%20 : tensor<2x64x512xf32>) outs(%22 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %33 = arith.addf %out, %in fastmath<reassoc> : f32
      linalg.yield %33 : f32
    } -> tensor<2x64xf32>
    %24 = tensor.empty() : tensor<2x64xf32>
    %25 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]} ins(%23 : tensor<2x64xf32>) outs(%24 : tensor<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 5.120000e+02 : f32
      %33 = arith.divf %in, %cst_5 : f32
      linalg.yield %33 : f32
    } -> tensor<2x64xf32>
    %expanded_4 = tensor.expand_shape %25 [[0], [1, 2]] output_shape [2, 64, 1] : tensor<2x64xf32> into tensor<2x64x1xf32>
    %26 = tensor.empty() : tensor<2x64x1xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_4 : tensor<2x64x1xf32>) outs(%26 : tensor<2x64x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %cst_5 = arith.constant 9.99999974E-6 : f32
      %33 = arith.addf %in, %cst_5 : f32
      %34 = math.rsqrt %33 : f32
      linalg.yield %34 : f32
    } -> tensor<2x64x1xf32>
    %28 = tensor.empty() : tensor<2x64x512xbf16>
    %29 = linalg.generic {indexing_maps = [#map, #map3, #map3, #map4, #map4, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg3, %expanded_2, %27, %arg1, %arg2 : tensor<2x64x512xbf16>, tensor<2x64x1xf32>, tensor<2x64x1xf32>, tensor<512xbf16>, tensor<512xbf16>) outs(%28 : tensor<2x64x512xbf16>) {
    ^bb0(%in: bf16, %in_5: f32, %in_6: f32, %in_7: bf16, %in_8: bf16, %out: bf16):
      %33 = arith.extf %in : bf16 to f32
      %34 = arith.subf %33, %in_5 : f32
      %35 = arith.mulf %34, %in_6 : f32
      %36 = arith.extf %in_7 : bf16 to f32
      %37 = arith.mulf %35, %36 : f32
      %38 = arith.extf %in_8 : bf16 to f32
      %39 = arith.addf %37, %38 : f32
      %40 = arith.truncf %39 : f32 to bf16
      linalg.yield %40 : bf16
    } -> tensor<2x64x512xbf16>
    %30 = tensor.empty() : tensor<2x64x512xbf16>
    %31 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg4 : tensor<2x64x512xbf16>) outs(%30 : tensor<2x64x512xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %33 = arith.extf %in : bf16 to f32
      %cst_5 = arith.constant 1.000000e+00 : f32
      %34 = arith.negf %33 : f32
      %35 = math.exp %34 : f32
      %36 = arith.addf %cst_5, %35 : f32
      %37 = arith.divf %33, %36 : f32
      %38 = arith.truncf %37 : f32 to bf16
      linalg.yield %38 : bf16
    } -> tensor<2x64x512xbf16>
    %32 = attn.mul %31, %arg3 : (tensor<2x64x512xbf16>, tensor<2x64x512xbf16>) -> tensor<2x64x512xbf16>
    return %13, %29, %32 : tensor<2x64x512xbf16>, tensor<2x64x512xbf16>, tensor<2x64x512xbf16>
  }
}

