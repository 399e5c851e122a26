// RUN: attn-opt %s --split-input-file --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s

// What the CUDA kernels do not take with sequence lengths stays on the CPU,
// lengths included, with a remark (sdpa-lengths-to-cuda.mlir: what they take).

// The padded layout of a rank-3 query: the kernels index the lengths by
// the B of [B, H, L, E], which a [B, L, E] query would put in H.
// CHECK-LABEL: func.func @rank3
// CHECK-NOT: func.call
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} q_lengths(%{{.+}})
func.func @rank3(%q: tensor<2x16x64xf16>, %n: tensor<2xi32>) -> tensor<2x16x64xf16> {
  // expected-remark @+1 {{attn.sdpa stays on the CPU: sequence lengths on a rank-3 query (the CUDA kernels index them by the B of [B, H, L, E])}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%n) : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2xi32>) -> tensor<2x16x64xf16>
  return %0 : tensor<2x16x64xf16>
}

// -----

// q_lengths and kv_lengths of different integer types.
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: func.call
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} q_lengths(%{{.+}}) kv_lengths(%{{.+}})
func.func @mixed(%q: tensor<2x4x16x64xf16>, %nq: tensor<2xi32>, %nk: tensor<2xi64>) -> tensor<2x4x16x64xf16> {
  // expected-remark @+1 {{attn.sdpa stays on the CPU: q_lengths and kv_lengths of different integer types (the CUDA kernels read both as one type)}}
  %0 = attn.sdpa %q, %q, %q q_lengths(%nq) kv_lengths(%nk) : (tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2xi32>, tensor<2xi64>) -> tensor<2x4x16x64xf16>
  return %0 : tensor<2x4x16x64xf16>
}

// -----

// Lengths with a score_mod region: the generated kernels take no lengths.
// CHECK-LABEL: func.func @score_mod
// CHECK-NOT: func.call
// CHECK: attn.sdpa %{{.+}}, %{{.+}}, %{{.+}} kv_lengths(%{{.+}})
func.func @score_mod(%q: tensor<2x4x16x64xf16>, %n: tensor<2xi32>) -> tensor<2x4x16x64xf16> {
  // expected-remark @+1 {{attn.sdpa stays on the CPU: sequence lengths with a score_mod region (the generated CUDA kernels take no lengths)}}
  %0 = attn.sdpa %q, %q, %q kv_lengths(%n) : (tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2x4x16x64xf16>, tensor<2xi32>) -> tensor<2x4x16x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 5.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x4x16x64xf16>
}
