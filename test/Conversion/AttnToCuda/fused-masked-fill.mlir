// RUN: attn-opt %attn_src_root/examples/naive_causal_attention.mlir --attn-fuse-sdpa --attn-lower-sdpa-to-cuda | FileCheck %s

// The seed's chain: masked_fill(mask, -inf) fuses into attn.sdpa with the
// inverted mask (`arith.xori %mask, true`). On the GPU nothing runs that
// inversion on the host: the kernel reads the function's own mask argument
// with the DROP polarity (1), so the mask may live in device memory. The f32
// model itself runs on the GPU too (the kernels' generic kernel, in f32).

// CHECK-LABEL: func.func @naive
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<128x128xi1>
// CHECK-NOT: arith.xori
// CHECK: %[[MB:.+]] = bufferization.to_buffer %[[MASK]] read_only
// CHECK: %[[MU:.+]] = memref.cast %[[MB]]
// CHECK: arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[DROP:.+]] = arith.constant 1 : i32
// CHECK: call @attnrt_cuda_sdpa_f32_bool(%{{.+}}, %{{.+}}, %{{.+}}, %[[MU]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[DROP]],
// CHECK-NOT: arith.xori
// CHECK-NOT: {{^ *%.* = attn\.}}
