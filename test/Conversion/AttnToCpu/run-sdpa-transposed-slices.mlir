// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 block-q=16 block-kv=16 outline-kernels=false" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 block-q=16 block-kv=16" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 block-q=16 block-kv=16 outline-kernels=false" \
// RUN:   --mlir-print-ir-after=attn-lower-to-cpu 2>&1 >/dev/null \
// RUN: | FileCheck %s --check-prefix=VIEW

// GPT-2's attention input: one fused QKV projection [B, T, 3 * H * D],
// sliced into q, k and v, each viewed as [B, T, H, D] and transposed to
// [B, H, T, D]. The flash lowering reads the slices in place through a
// permuted view; the reference transposes into a dense tensor first (a
// generic, which is no transpose op). Same algorithm, same order: the two
// results must agree exactly, causal and with a key padding mask, at odd
// sizes (T = 13, H = 3, D = 8). Inline (each attention reads the slices
// through memref.transpose) and outlined (the transposes have two users
// here, so the caller makes them; the kernel takes its rows at any row
// stride).
// VIEW-LABEL: func.func @main
// VIEW-COUNT-6: memref.transpose {{.+}} (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// VIEW-NOT: memref.transpose
// CHECK: in_place_vs_copied
// CHECK-NEXT: 0
// CHECK: in_place_vs_copied_masked
// CHECK-NEXT: 0

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#perm = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

func.func @copy_heads(%x: tensor<1x13x3x8xf32>) -> tensor<1x3x13x8xf32> {
  %e = tensor.empty() : tensor<1x3x13x8xf32>
  %t = linalg.generic {indexing_maps = [#perm, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x13x3x8xf32>) outs(%e : tensor<1x3x13x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<1x3x13x8xf32>
  return %t : tensor<1x3x13x8xf32>
}

func.func @max_diff(%a: tensor<1x3x13x8xf32>, %b: tensor<1x3x13x8xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id4, #id4, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) outs(%f : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    // A NaN on either side is a difference too.
    %m = arith.maximumf %acc, %ad : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  %v = tensor.extract %r[] : tensor<f32>
  return %v : f32
}

func.func @main() {
  %e = tensor.empty() : tensor<1x13x72xf32>
  %qkv = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<1x13x72xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c72 = arith.constant 72 : index
    %ij = arith.muli %i, %c72 : index
    %n = arith.addi %ij, %j : index
    %ni = arith.index_cast %n : index to i64
    %f = arith.sitofp %ni : i64 to f32
    %a = arith.constant 0.731 : f32
    %x = arith.mulf %f, %a : f32
    %s = math.sin %x : f32
    linalg.yield %s : f32
  } -> tensor<1x13x72xf32>
  %qs = tensor.extract_slice %qkv[0, 0, 0] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %ks = tensor.extract_slice %qkv[0, 0, 24] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %vs = tensor.extract_slice %qkv[0, 0, 48] [1, 13, 24] [1, 1, 1] : tensor<1x13x72xf32> to tensor<1x13x24xf32>
  %q4 = tensor.expand_shape %qs [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %k4 = tensor.expand_shape %ks [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %v4 = tensor.expand_shape %vs [[0], [1], [2, 3]] output_shape [1, 13, 3, 8] : tensor<1x13x24xf32> into tensor<1x13x3x8xf32>
  %q = attn.transpose %q4 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %k = attn.transpose %k4 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %v = attn.transpose %v4 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %qc = func.call @copy_heads(%q4) : (tensor<1x13x3x8xf32>) -> tensor<1x3x13x8xf32>
  %kc = func.call @copy_heads(%k4) : (tensor<1x13x3x8xf32>) -> tensor<1x3x13x8xf32>
  %vc = func.call @copy_heads(%v4) : (tensor<1x13x3x8xf32>) -> tensor<1x3x13x8xf32>

  %o1 = attn.sdpa %q, %k, %v {is_causal = true, "attn.cpu_backend" = "flash"} : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) -> tensor<1x3x13x8xf32>
  %r1 = attn.sdpa %qc, %kc, %vc {is_causal = true, "attn.cpu_backend" = "flash"} : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) -> tensor<1x3x13x8xf32>
  %d1 = func.call @max_diff(%o1, %r1) : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) -> f32
  vector.print str "in_place_vs_copied\n"
  vector.print %d1 : f32

  // Keys 9 .. 12 padded out.
  %me = tensor.empty() : tensor<1x1x1x13xi1>
  %mask = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%me : tensor<1x1x1x13xi1>) {
  ^bb0(%o: i1):
    %j = linalg.index 3 : index
    %c9 = arith.constant 9 : index
    %keep = arith.cmpi ult, %j, %c9 : index
    linalg.yield %keep : i1
  } -> tensor<1x1x1x13xi1>
  // The roles rotated: q from the last third, k from the first, v from
  // the second (transposes of their own, which CSE does not merge).
  %q2 = attn.transpose %v4 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %k2 = attn.transpose %q4 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %v2 = attn.transpose %k4 dims(1, 2) : tensor<1x13x3x8xf32> -> tensor<1x3x13x8xf32>
  %o2 = attn.sdpa %q2, %k2, %v2, %mask {"attn.cpu_backend" = "flash"} : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x1x1x13xi1>) -> tensor<1x3x13x8xf32>
  %r2 = attn.sdpa %vc, %qc, %kc, %mask {"attn.cpu_backend" = "flash"} : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>, tensor<1x1x1x13xi1>) -> tensor<1x3x13x8xf32>
  %d2 = func.call @max_diff(%o2, %r2) : (tensor<1x3x13x8xf32>, tensor<1x3x13x8xf32>) -> f32
  vector.print str "in_place_vs_copied_masked\n"
  vector.print %d2 : f32
  return
}
