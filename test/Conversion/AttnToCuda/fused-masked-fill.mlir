// RUN: attn-opt %attn_src_root/examples/naive_causal_attention.mlir --attn-fuse-sdpa --attn-lower-sdpa-to-cuda | FileCheck %s

// The seed's chain: masked_fill(mask, -inf) fuses into attn.sdpa with the
// inverted mask (`arith.xori %mask, true`). On the GPU nothing runs that
// inversion on the host: the kernel reads the function's own mask argument
// with the DROP polarity (1), so the mask may live in device memory. The f32
// model itself runs on the GPU too (the kernels' generic kernel, in f32).

// Scale 0.125, -inf, DROP (sdpa-to-cuda.mlir has the layout).
// CHECK: memref.global "private" constant @[[$DROP:__attn_sdpa_call_attrs_[0-9a-f]+]] : memref<48xi8> = dense<[-1, -1, -1, -1, -1, -1, -1, 127, -1, -1, -1, -1, -1, -1, -1, 127, 0, 0, 0, 62, 0, 0, -128, -1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]>
// CHECK-LABEL: func.func @naive
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<128x128xi1>
// CHECK-NOT: arith.xori
// CHECK: %[[MB:.+]] = bufferization.to_buffer %[[MASK]] read_only
// CHECK: %[[MU:.+]] = memref.cast %[[MB]]
// CHECK: %[[A:.+]] = memref.get_global @[[$DROP]]
// CHECK-NEXT: %[[AU:.+]] = memref.cast %[[A]]
// CHECK: call @attnrt_cuda_sdpa_f32_bool(%{{.+}}, %{{.+}}, %{{.+}}, %[[MU]], %{{.+}}, %[[AU]])
// CHECK-NOT: arith.xori
// CHECK-NOT: {{^ *%.* = attn\.}}
