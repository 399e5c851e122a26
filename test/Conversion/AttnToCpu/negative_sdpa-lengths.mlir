// RUN: attn-opt %s --attn-lower-to-cpu="backend=flash vector-bits=256" | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-cpu="backend=math vector-bits=256" | FileCheck %s

// Without lengths nothing of them is emitted: no run-time check, no
// integer loads, the key loop over all keys.
// CHECK-LABEL: func.func @no_lengths
// CHECK-NOT: out of range
// CHECK-NOT: xi32>
// CHECK-NOT: xi64>
// CHECK: return
func.func @no_lengths(%q: tensor<2x2x40x8xf32>) -> tensor<2x2x40x8xf32> {
  %o = attn.sdpa %q, %q, %q {is_causal = true} : (tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>) -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}
