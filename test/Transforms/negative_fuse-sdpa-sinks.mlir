// RUN: attn-opt %s --attn-fuse-sdpa=explain=true --split-input-file --verify-diagnostics | FileCheck %s

// Chains with a joined column that attn.sdpa's sinks cannot express: not
// fused, with a remark naming why.

// The sink is the last column but the slice drops the first.
// CHECK-LABEL: func.func @negative_sinks_slice_drops_first_column
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_sinks_slice_drops_first_column(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %sinks: tensor<1x4x1x1xf32>) -> tensor<1x4x8x16xf32> {
  %kt = attn.transpose %k dims(2, 3) : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %e = tensor.empty() : tensor<1x4x8x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sinks : tensor<1x4x1x1xf32>) outs(%e : tensor<1x4x8x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x4x8x1xf32>
  %j0 = tensor.empty() : tensor<1x4x8x9xf32>
  %j1 = tensor.insert_slice %s into %j0[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x9xf32>
  %j = tensor.insert_slice %sb into %j1[0, 0, 0, 8] [1, 4, 8, 1] [1, 1, 1, 1] : tensor<1x4x8x1xf32> into tensor<1x4x8x9xf32>
  // expected-remark @+1 {{not fused: attention sinks: the slice after the softmax does not drop exactly the sink column (the last one)}}
  %p = attn.softmax %j dim(-1) : tensor<1x4x8x9xf32>
  %pw = tensor.extract_slice %p[0, 0, 0, 1] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x9xf32> to tensor<1x4x8x8xf32>
  %o = attn.matmul %pw, %v : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// The sink is the first column but the slice drops the last.
// CHECK-LABEL: func.func @negative_sinks_first_slice_drops_last
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_sinks_first_slice_drops_last(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %sinks: tensor<1x4x1x1xf32>) -> tensor<1x4x8x16xf32> {
  %kt = attn.transpose %k dims(2, 3) : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %e = tensor.empty() : tensor<1x4x8x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sinks : tensor<1x4x1x1xf32>) outs(%e : tensor<1x4x8x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x4x8x1xf32>
  %j0 = tensor.empty() : tensor<1x4x8x9xf32>
  %j1 = tensor.insert_slice %s into %j0[0, 0, 0, 1] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x9xf32>
  %j = tensor.insert_slice %sb into %j1[0, 0, 0, 0] [1, 4, 8, 1] [1, 1, 1, 1] : tensor<1x4x8x1xf32> into tensor<1x4x8x9xf32>
  // expected-remark @+1 {{not fused: attention sinks: the slice after the softmax does not drop exactly the sink column (the first one)}}
  %p = attn.softmax %j dim(-1) : tensor<1x4x8x9xf32>
  %pw = tensor.extract_slice %p[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x9xf32> to tensor<1x4x8x8xf32>
  %o = attn.matmul %pw, %v : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// The joined column varies along the query rows: not one sink per head.
// CHECK-LABEL: func.func @negative_sinks_per_row
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_sinks_per_row(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %sinks: tensor<1x1x8x1xf32>) -> tensor<1x4x8x16xf32> {
  %kt = attn.transpose %k dims(2, 3) : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %e = tensor.empty() : tensor<1x4x8x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sinks : tensor<1x1x8x1xf32>) outs(%e : tensor<1x4x8x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x4x8x1xf32>
  %j0 = tensor.empty() : tensor<1x4x8x9xf32>
  %j1 = tensor.insert_slice %s into %j0[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x9xf32>
  %j = tensor.insert_slice %sb into %j1[0, 0, 0, 8] [1, 4, 8, 1] [1, 1, 1, 1] : tensor<1x4x8x1xf32> into tensor<1x4x8x9xf32>
  // expected-remark @+1 {{not fused: attention sinks: the sink column is not one value per head (broadcast from tensor<1x1x8x1xf32>, the scores have 4 heads)}}
  %p = attn.softmax %j dim(-1) : tensor<1x4x8x9xf32>
  %pw = tensor.extract_slice %p[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x9xf32> to tensor<1x4x8x8xf32>
  %o = attn.matmul %pw, %v : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// One joined value for every head.
// CHECK-LABEL: func.func @negative_sinks_shared_by_heads
// CHECK-NOT: attn.sdpa
// CHECK: attn.softmax
func.func @negative_sinks_shared_by_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %sinks: tensor<1x1x1x1xf32>) -> tensor<1x4x8x16xf32> {
  %kt = attn.transpose %k dims(2, 3) : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s = attn.matmul %q, %kt : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %e = tensor.empty() : tensor<1x4x8x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sinks : tensor<1x1x1x1xf32>) outs(%e : tensor<1x4x8x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x4x8x1xf32>
  %j0 = tensor.empty() : tensor<1x4x8x9xf32>
  %j1 = tensor.insert_slice %s into %j0[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x8xf32> into tensor<1x4x8x9xf32>
  %j = tensor.insert_slice %sb into %j1[0, 0, 0, 8] [1, 4, 8, 1] [1, 1, 1, 1] : tensor<1x4x8x1xf32> into tensor<1x4x8x9xf32>
  // expected-remark @+1 {{not fused: attention sinks: the sink column is not one value per head (broadcast from tensor<1x1x1x1xf32>, the scores have 4 heads)}}
  %p = attn.softmax %j dim(-1) : tensor<1x4x8x9xf32>
  %pw = tensor.extract_slice %p[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<1x4x8x9xf32> to tensor<1x4x8x8xf32>
  %o = attn.matmul %pw, %v : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
