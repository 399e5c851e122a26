// End-to-end check of a fusion form family (issue 3): attn-run --check runs
// each function fused (default pipeline) and unfused (math lowering) on the
// same seeded random inputs; i1 mask arguments get fully masked rows.
// This file: additive masks [L,S], [B,1,1,S], [B,H,L,S]; causal + additive.
// Every function's trace has exactly one sdpa span and no softmax span
// (attn-run --trace), so these tests fail if fusion silently stops.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// additive mask [L,S] (runtime argument), f32
// RUN: attn-run %s --entry add_ls_f32 --check --trace %t.add_ls_f32.json | FileCheck %s --check-prefix=ADD_LS_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_ls_f32.json
// ADD_LS_F32: result 0: 2x2x13x24xf32 {{.*}} nan=0
// ADD_LS_F32: check: {{.*}} ok
func.func @add_ls_f32(%q: tensor<2x2x13x24xf32>, %k: tensor<2x2x13x24xf32>, %v: tensor<2x2x13x24xf32>, %bias: tensor<13x13xf32>) -> tensor<2x2x13x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xf32> -> tensor<2x2x24x13xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xf32>, tensor<2x2x24x13xf32>) -> tensor<2x2x13x13xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf32>, tensor<f32>) -> tensor<2x2x13x13xf32>
  %t5 = attn.add %t4, %bias : (tensor<2x2x13x13xf32>, tensor<13x13xf32>) -> tensor<2x2x13x13xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x13x13xf32>
  %t7 = attn.matmul %t6, %v : (tensor<2x2x13x13xf32>, tensor<2x2x13x24xf32>) -> tensor<2x2x13x24xf32>
  return %t7 : tensor<2x2x13x24xf32>
}

// additive mask [L,S] (small constant with a -inf row (f16/bf16 runtime additive masks do not fuse)), f16
// RUN: attn-run %s --entry add_ls_f16 --check --trace %t.add_ls_f16.json | FileCheck %s --check-prefix=ADD_LS_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_ls_f16.json
// ADD_LS_F16: result 0: 2x2x13x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// ADD_LS_F16: check: {{.*}} ok
func.func @add_ls_f16(%q: tensor<2x2x13x40xf16>, %k: tensor<2x2x13x40xf16>, %v: tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x40xf16> -> tensor<2x2x40x13xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x40xf16>, tensor<2x2x40x13xf16>) -> tensor<2x2x13x13xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf16>, tensor<f16>) -> tensor<2x2x13x13xf16>
  %t5 = arith.constant dense<[[-0.705, -1.397, 0.604, -1.710, 0.144, -0.537, -1.768, 0.030, -1.850, -0.265, -1.721, -1.637, -0.302], [0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00], [1.307, -1.505, -1.107, 0.510, 1.791, 0.308, -0.413, 1.905, -1.814, 1.434, -0.842, -1.423, -1.529], [-0.766, 1.265, -1.277, 0.326, 0.556, -0.510, 0.191, -1.749, -1.762, -1.176, 0.722, -0.290, -0.743], [0.342, -0.187, -0.801, 1.178, 0.796, -1.024, 0.298, 0.101, 1.501, 0.918, -0.848, 1.921, -1.528], [-0.328, 1.029, -1.392, -0.044, -1.843, 0.673, 1.058, 0.292, 1.502, -0.745, 0.781, 0.377, 0.320], [-0.175, 1.360, 1.779, -0.104, 0.657, -1.757, 0.806, 0.589, 1.972, 1.288, -0.862, -0.457, 0.675], [-1.910, -0.153, -1.328, -1.532, -1.764, 1.073, -1.483, -1.010, -0.436, 1.486, -1.678, -0.203, 0.198], [1.534, 1.277, 1.456, -0.886, -0.339, -0.565, 1.537, 1.831, -1.396, -1.295, -1.072, -1.067, -0.060], [0.356, -0.949, -1.984, -0.324, -0.523, 0.265, 1.812, 0.762, 0.062, 0.470, 0.705, -1.784, 1.598], [1.120, 1.498, 1.191, -0.430, -0.404, -1.586, 0.537, -1.751, -1.731, -1.165, -1.351, -0.640, -1.790], [-1.999, -1.395, -1.594, -0.546, -1.898, 1.497, 0.456, -1.406, -0.991, -0.610, -0.543, -1.509, 1.396], [1.972, -0.136, -0.065, -1.656, -1.591, -0.629, -0.941, 1.315, -1.354, -1.908, 1.804, 0.113, -1.414]]> : tensor<13x13xf16>
  %t6 = attn.add %t4, %t5 : (tensor<2x2x13x13xf16>, tensor<13x13xf16>) -> tensor<2x2x13x13xf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x13x13xf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x13x13xf16>, tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16>
  return %t8 : tensor<2x2x13x40xf16>
}

// additive mask [L,S] (small constant with a -inf row (f16/bf16 runtime additive masks do not fuse)), bf16
// RUN: attn-run %s --entry add_ls_bf16 --check --trace %t.add_ls_bf16.json | FileCheck %s --check-prefix=ADD_LS_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_ls_bf16.json
// ADD_LS_BF16: result 0: 2x2x13x24xbf16 {{.*}} nan={{[1-9][0-9]*}}
// ADD_LS_BF16: check: {{.*}} ok
func.func @add_ls_bf16(%q: tensor<2x2x13x24xbf16>, %k: tensor<2x2x13x24xbf16>, %v: tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xbf16> -> tensor<2x2x24x13xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xbf16>, tensor<2x2x24x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xbf16>, tensor<bf16>) -> tensor<2x2x13x13xbf16>
  %t5 = arith.constant dense<[[0.173, -1.892, 0.112, 1.914, 1.453, 0.785, -0.956, -0.533, -1.332, 1.088, 0.130, 1.116, -0.681], [0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80], [-1.108, 1.246, 1.940, 1.411, 1.224, 1.273, 0.959, -1.093, 0.071, -0.578, -1.884, -1.888, -0.882], [-0.963, 0.770, 1.826, -0.211, 1.748, 1.952, 1.820, -0.541, -1.118, -1.093, -1.213, -1.183, 0.496], [1.601, 1.362, -0.082, 0.612, 1.199, -1.661, 0.642, 1.639, 1.129, 1.001, -0.088, -1.286, 1.157], [-0.670, 1.203, 1.887, -0.417, -0.394, 1.787, 0.899, -1.320, -1.492, -1.395, 1.619, 1.226, -1.415], [1.306, 1.921, 0.629, -0.598, 0.195, -1.476, -1.943, 1.884, 0.599, 0.106, 1.734, -0.265, 1.487], [1.305, -1.156, -0.993, -0.828, -1.038, 0.346, -0.963, -0.324, -1.476, 1.640, -0.585, -0.167, 0.333], [1.617, -0.317, 1.671, 0.007, 0.127, 0.094, -1.925, -0.240, -1.268, -1.984, 1.197, -1.311, -0.106], [0.901, 0.226, -0.696, 0.073, 0.222, 1.137, -1.576, 0.241, -1.006, -0.892, 1.089, 0.031, 0.247], [1.040, 1.650, -0.227, 0.450, 0.022, 0.049, 0.771, -0.191, 0.133, -0.088, 1.766, 0.797, 1.506], [1.769, -0.962, 0.238, 1.773, 1.360, -1.451, -1.514, -0.232, -1.710, -1.037, -1.708, 0.678, 1.136], [1.588, -1.382, 0.864, 0.641, -1.428, 1.531, 1.870, -1.122, 1.810, -0.407, -0.051, 1.959, 1.330]]> : tensor<13x13xbf16>
  %t6 = attn.add %t4, %t5 : (tensor<2x2x13x13xbf16>, tensor<13x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x13x13xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x13x13xbf16>, tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16>
  return %t8 : tensor<2x2x13x24xbf16>
}

// additive mask [B,1,1,S] (runtime argument), f32
// RUN: attn-run %s --entry add_b11s_f32 --check --trace %t.add_b11s_f32.json | FileCheck %s --check-prefix=ADD_B11S_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_b11s_f32.json
// ADD_B11S_F32: result 0: 2x2x13x24xf32 {{.*}} nan=0
// ADD_B11S_F32: check: {{.*}} ok
func.func @add_b11s_f32(%q: tensor<2x2x13x24xf32>, %k: tensor<2x2x13x24xf32>, %v: tensor<2x2x13x24xf32>, %bias: tensor<2x1x1x13xf32>) -> tensor<2x2x13x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xf32> -> tensor<2x2x24x13xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xf32>, tensor<2x2x24x13xf32>) -> tensor<2x2x13x13xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf32>, tensor<f32>) -> tensor<2x2x13x13xf32>
  %t5 = attn.add %t4, %bias : (tensor<2x2x13x13xf32>, tensor<2x1x1x13xf32>) -> tensor<2x2x13x13xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x13x13xf32>
  %t7 = attn.matmul %t6, %v : (tensor<2x2x13x13xf32>, tensor<2x2x13x24xf32>) -> tensor<2x2x13x24xf32>
  return %t7 : tensor<2x2x13x24xf32>
}

// additive mask [B,1,1,S] (small constant with a -inf row (f16/bf16 runtime additive masks do not fuse)), f16
// RUN: attn-run %s --entry add_b11s_f16 --check --trace %t.add_b11s_f16.json | FileCheck %s --check-prefix=ADD_B11S_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_b11s_f16.json
// ADD_B11S_F16: result 0: 2x2x13x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// ADD_B11S_F16: check: {{.*}} ok
func.func @add_b11s_f16(%q: tensor<2x2x13x40xf16>, %k: tensor<2x2x13x40xf16>, %v: tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x40xf16> -> tensor<2x2x40x13xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x40xf16>, tensor<2x2x40x13xf16>) -> tensor<2x2x13x13xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf16>, tensor<f16>) -> tensor<2x2x13x13xf16>
  %t5 = arith.constant dense<[[[[-1.354, -0.274, 0.062, -0.644, -1.217, -0.726, 0.889, -1.922, 0.216, -0.238, -1.928, -0.674, 0.496]]], [[[0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00]]]]> : tensor<2x1x1x13xf16>
  %t6 = attn.add %t4, %t5 : (tensor<2x2x13x13xf16>, tensor<2x1x1x13xf16>) -> tensor<2x2x13x13xf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x13x13xf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x13x13xf16>, tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16>
  return %t8 : tensor<2x2x13x40xf16>
}

// additive mask [B,1,1,S] (small constant with a -inf row (f16/bf16 runtime additive masks do not fuse)), bf16
// RUN: attn-run %s --entry add_b11s_bf16 --check --trace %t.add_b11s_bf16.json | FileCheck %s --check-prefix=ADD_B11S_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_b11s_bf16.json
// ADD_B11S_BF16: result 0: 2x2x13x24xbf16 {{.*}} nan={{[1-9][0-9]*}}
// ADD_B11S_BF16: check: {{.*}} ok
func.func @add_b11s_bf16(%q: tensor<2x2x13x24xbf16>, %k: tensor<2x2x13x24xbf16>, %v: tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xbf16> -> tensor<2x2x24x13xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xbf16>, tensor<2x2x24x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xbf16>, tensor<bf16>) -> tensor<2x2x13x13xbf16>
  %t5 = arith.constant dense<[[[[0.049, -1.743, 1.940, 1.153, 1.887, -1.581, -0.938, -1.842, 1.116, -0.918, -1.482, -0.311, 1.646]]], [[[0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80]]]]> : tensor<2x1x1x13xbf16>
  %t6 = attn.add %t4, %t5 : (tensor<2x2x13x13xbf16>, tensor<2x1x1x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x13x13xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x13x13xbf16>, tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16>
  return %t8 : tensor<2x2x13x24xbf16>
}

// additive mask [B,H,L,S] (runtime argument), f32
// RUN: attn-run %s --entry add_bhls_f32 --check --trace %t.add_bhls_f32.json | FileCheck %s --check-prefix=ADD_BHLS_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_bhls_f32.json
// ADD_BHLS_F32: result 0: 2x2x13x24xf32 {{.*}} nan=0
// ADD_BHLS_F32: check: {{.*}} ok
func.func @add_bhls_f32(%q: tensor<2x2x13x24xf32>, %k: tensor<2x2x13x24xf32>, %v: tensor<2x2x13x24xf32>, %bias: tensor<2x2x13x13xf32>) -> tensor<2x2x13x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xf32> -> tensor<2x2x24x13xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xf32>, tensor<2x2x24x13xf32>) -> tensor<2x2x13x13xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf32>, tensor<f32>) -> tensor<2x2x13x13xf32>
  %t5 = attn.add %t4, %bias : (tensor<2x2x13x13xf32>, tensor<2x2x13x13xf32>) -> tensor<2x2x13x13xf32>
  %t6 = attn.softmax %t5 dim(-1) : tensor<2x2x13x13xf32>
  %t7 = attn.matmul %t6, %v : (tensor<2x2x13x13xf32>, tensor<2x2x13x24xf32>) -> tensor<2x2x13x24xf32>
  return %t7 : tensor<2x2x13x24xf32>
}

// additive mask [B,H,L,S] (small constant with a -inf row (f16/bf16 runtime additive masks do not fuse)), f16
// RUN: attn-run %s --entry add_bhls_f16 --check --trace %t.add_bhls_f16.json | FileCheck %s --check-prefix=ADD_BHLS_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_bhls_f16.json
// ADD_BHLS_F16: result 0: 2x2x13x40xf16 {{.*}} nan={{[1-9][0-9]*}}
// ADD_BHLS_F16: check: {{.*}} ok
func.func @add_bhls_f16(%q: tensor<2x2x13x40xf16>, %k: tensor<2x2x13x40xf16>, %v: tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x40xf16> -> tensor<2x2x40x13xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x40xf16>, tensor<2x2x40x13xf16>) -> tensor<2x2x13x13xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf16>, tensor<f16>) -> tensor<2x2x13x13xf16>
  %t5 = arith.constant dense<[[[[1.276, -0.966, -1.403, 1.677, 0.282, 0.802, -1.642, -1.770, 0.753, -0.299, -1.710, 1.753, 0.538], [0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00, 0xFC00], [1.207, -1.665, 1.425, -1.734, 1.451, -0.185, -0.643, 0.212, 1.707, -0.929, -1.483, 0.108, -1.046], [-1.562, -1.354, -1.798, -1.193, -0.752, -0.780, 1.038, -0.840, 0.000, -1.288, -0.612, -1.927, -0.998], [-1.939, 0.932, 0.204, -1.242, -0.101, 1.739, -1.575, 1.276, -0.271, -0.020, 1.338, -0.428, 0.027], [0.751, 1.930, -0.629, 1.329, 0.827, 0.544, -0.381, -0.610, -1.782, -1.481, -1.717, 0.964, -0.978], [-1.347, -1.662, 1.365, 1.482, 0.682, -0.872, -1.031, -0.828, -0.162, -1.370, -0.217, -0.947, 1.847], [1.890, 0.188, -1.022, 1.863, -0.762, -0.574, -1.996, -0.473, -0.101, 0.011, -1.196, 0.019, -1.980], [-0.943, -1.641, -0.402, -1.833, -1.910, -0.783, -1.069, 0.342, 0.117, 1.002, 0.630, 0.864, 1.516], [-0.442, -0.695, 1.939, -1.402, 0.897, 0.573, -1.825, 1.341, 1.568, 0.509, 0.935, 1.249, -1.443], [0.095, 0.017, 1.340, 1.219, 1.306, 0.336, 1.571, 0.732, 0.773, -1.080, -1.875, -1.468, -0.557], [-1.580, 1.343, 0.234, 0.511, 0.505, 0.723, -0.043, -1.987, 1.191, 0.993, 0.012, 0.141, 0.637], [-1.736, 0.947, -0.991, -1.702, -0.938, 0.917, -1.179, 0.959, 1.903, -0.024, -0.470, -0.084, 0.735]], [[1.068, 0.468, 0.571, -1.690, -1.410, -0.984, 0.973, -0.782, 0.271, -1.950, -1.757, -0.925, 0.688], [0.769, 0.703, -0.837, 0.066, -0.141, -0.135, -1.526, 1.575, -1.203, 1.913, 1.745, -1.930, -0.164], [1.280, 1.872, -0.202, -0.925, -1.161, 1.782, -1.157, 0.326, -1.433, 0.096, 1.811, -1.470, 1.281], [0.035, 1.547, 0.813, -1.074, 1.591, -0.055, -1.901, -1.986, -0.033, -0.197, -0.792, -1.437, -0.624], [-0.736, 1.361, -1.993, 1.003, 1.356, -1.520, 1.706, 0.852, 1.606, -0.841, -0.511, -0.428, 1.995], [0.357, -0.557, -0.288, -0.899, -1.807, -1.593, 1.339, -0.858, 1.742, -1.003, -0.937, 0.044, -1.241], [-0.507, 1.825, 1.537, 1.248, 0.524, 1.654, 1.763, 0.197, 0.878, -1.802, 0.929, -0.197, 1.011], [0.578, -0.855, -1.804, 1.707, -1.491, -0.111, -0.625, -0.809, 0.956, 1.905, -0.959, 0.624, -0.797], [0.229, -0.423, -1.331, -1.353, -1.169, 1.624, -0.012, -1.120, 1.625, 1.986, -0.200, -1.442, -1.230], [-1.637, -0.632, -1.636, -1.043, -0.967, 0.278, 1.549, 0.999, -0.349, -0.344, 0.097, -0.493, -0.647], [-1.752, -0.890, 1.871, -1.497, 0.014, 0.519, 1.451, -1.136, -0.916, -1.006, -0.401, -0.217, 1.816], [1.395, 1.492, -1.913, -1.871, 0.838, 1.583, -0.107, 0.349, -1.999, -0.434, 1.707, 1.302, 1.422], [1.889, -1.006, -1.564, -1.382, 0.089, 0.728, 1.766, 0.887, 0.589, 1.059, -0.171, 0.206, -1.842]]], [[[1.129, -1.070, 1.680, 0.582, -0.785, -1.488, -0.993, 0.545, 0.794, -1.551, -1.719, 0.098, 0.332], [-0.448, -1.106, 0.404, -1.958, -0.794, -0.157, 1.836, 0.578, 1.535, -0.099, -1.061, -1.012, 1.842], [0.819, -0.770, -1.913, -0.007, 0.698, -0.320, -0.971, 0.669, 1.701, -1.093, -1.864, -0.648, -0.318], [0.730, -1.208, 1.188, 0.957, 0.020, -1.179, 1.879, -0.753, 1.280, -1.077, -1.114, 1.042, -0.820], [1.808, -0.017, -1.251, -1.107, -0.332, 0.661, 1.795, -1.414, -0.426, -1.148, 1.896, -1.432, -1.793], [-1.759, -0.427, 1.593, 1.534, 0.931, 1.990, 1.726, -0.683, -1.258, 1.744, 0.985, -1.872, 0.658], [-0.486, -0.504, -0.673, -1.323, -1.989, -0.881, -0.594, 1.822, -1.505, 1.857, -1.170, -0.573, 1.286], [1.288, -0.270, -1.803, -0.106, -0.509, 1.678, -1.228, -0.543, 1.588, -1.879, -0.357, 1.247, 1.067], [-1.837, -1.861, -1.750, 1.680, -0.972, 0.989, 1.594, -0.644, -0.911, 1.831, 0.468, -0.951, 0.867], [-0.734, -0.897, -1.985, 1.023, 1.666, 0.536, 1.773, -1.903, -1.065, -0.099, 1.827, 1.816, -0.454], [-0.996, -0.280, -0.026, 1.712, -1.268, 1.210, 0.954, 1.291, 1.091, 0.429, -0.689, -0.722, -0.553], [1.129, -1.684, -1.211, 1.012, -1.011, -1.741, -1.865, 0.210, -0.697, 1.921, 1.534, 1.951, -0.940], [-1.664, -1.614, -0.006, 0.839, -0.212, -1.063, -0.333, 0.481, 0.696, 0.992, 1.388, 0.658, -1.515]], [[1.363, -0.825, 0.268, -0.508, 0.952, -1.203, -1.010, -1.019, -1.387, 1.537, 0.313, -0.695, -0.416], [1.970, 0.029, -1.074, 1.234, 0.613, 1.964, -1.591, -0.101, 1.276, 1.362, 1.658, -1.839, -0.825], [-1.523, -1.242, 1.892, 0.333, 1.721, -0.511, 1.465, -0.204, -0.960, 1.111, 1.783, -1.577, 0.385], [0.480, -1.129, -0.525, -1.435, -1.184, -0.980, 0.398, 0.607, -1.186, -1.954, -0.691, 0.713, -1.259], [-0.751, -1.186, 1.181, 0.192, -1.747, -1.594, -0.419, 0.201, 0.557, -1.635, -1.345, 0.782, -0.361], [-0.867, -0.770, 1.813, -0.751, 0.266, -0.571, -0.334, 1.457, 1.986, -0.545, -1.211, 0.912, -1.185], [-1.976, 1.607, -0.305, 1.281, -0.375, 1.531, -0.156, -1.350, -1.941, 0.206, 0.563, 1.639, -1.644], [0.489, -0.517, 0.018, -1.416, -0.867, 0.085, 1.702, -1.565, -0.038, 1.219, 1.868, -1.211, -1.493], [1.772, 1.902, -0.069, -1.787, 1.705, -0.448, 1.617, 0.481, 1.298, -1.359, 1.143, -1.112, -0.382], [1.385, 1.317, -1.268, -1.127, -0.401, 0.072, -0.466, -1.508, -1.012, 0.900, 1.589, -1.836, 0.249], [1.030, -1.847, 1.353, -1.529, 0.398, 0.200, 0.508, -0.775, -0.320, 0.330, -0.297, 0.635, -0.213], [-0.247, -1.906, 0.476, -0.042, -1.059, 1.054, 1.120, -0.167, -1.282, -0.107, -1.572, -1.486, -0.278], [-1.633, -0.232, 0.041, -1.837, 0.546, -1.671, 0.934, 1.111, 0.046, -1.783, 0.016, -0.489, 1.803]]]]> : tensor<2x2x13x13xf16>
  %t6 = attn.add %t4, %t5 : (tensor<2x2x13x13xf16>, tensor<2x2x13x13xf16>) -> tensor<2x2x13x13xf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x13x13xf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x13x13xf16>, tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16>
  return %t8 : tensor<2x2x13x40xf16>
}

// additive mask [B,H,L,S] (small constant with a -inf row (f16/bf16 runtime additive masks do not fuse)), bf16
// RUN: attn-run %s --entry add_bhls_bf16 --check --trace %t.add_bhls_bf16.json | FileCheck %s --check-prefix=ADD_BHLS_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_bhls_bf16.json
// ADD_BHLS_BF16: result 0: 2x2x13x24xbf16 {{.*}} nan={{[1-9][0-9]*}}
// ADD_BHLS_BF16: check: {{.*}} ok
func.func @add_bhls_bf16(%q: tensor<2x2x13x24xbf16>, %k: tensor<2x2x13x24xbf16>, %v: tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xbf16> -> tensor<2x2x24x13xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xbf16>, tensor<2x2x24x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xbf16>, tensor<bf16>) -> tensor<2x2x13x13xbf16>
  %t5 = arith.constant dense<[[[[-1.455, 1.428, 1.984, 0.928, 1.260, -1.225, 1.927, -0.033, 1.827, 1.664, -1.340, 1.154, 1.722], [0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80, 0xFF80], [-1.738, -0.596, 1.025, -1.365, 1.586, -0.900, 1.263, -1.426, 0.009, 1.680, -1.167, -0.949, 0.024], [-0.724, -1.853, -1.272, -1.355, 1.746, 0.719, 1.582, -1.325, 1.139, -1.540, 0.123, 0.545, -0.561], [1.492, 0.221, 0.320, 1.530, -1.582, 1.972, 0.519, -0.423, 1.191, -0.941, 1.962, 0.309, -0.559], [1.059, -0.231, -1.293, 0.974, -1.807, 1.279, -0.985, 0.557, 1.936, 0.343, 0.655, -0.749, -1.993], [-1.865, -1.403, 0.464, -0.271, 0.051, 1.582, -1.472, -1.091, 0.612, -1.911, -1.990, -0.580, -1.575], [-0.571, -1.103, 0.334, 0.356, -1.183, 0.496, -0.100, -1.461, 1.746, -1.026, -1.403, -1.617, 0.553], [1.485, 1.129, -0.392, -0.943, -1.954, 0.580, 0.249, -0.599, 0.582, -0.225, 1.749, 0.934, -1.006], [1.614, -1.824, 0.126, -0.376, -1.049, -1.766, 1.115, -1.951, 0.204, 1.764, -1.431, -1.202, 0.432], [0.028, 0.566, 1.254, -1.301, -0.762, -0.799, -1.806, 1.557, 1.132, 0.862, -1.975, 1.378, 0.981], [-0.139, 0.967, -0.190, -1.096, -1.579, -1.071, -1.845, -0.658, 0.999, 0.780, 1.381, 0.847, -0.936], [0.215, -0.256, 1.154, 0.093, -0.939, 0.568, 1.861, -1.132, 1.520, -1.939, -0.959, -1.056, 0.976]], [[1.779, 0.985, -0.693, 1.521, -0.686, -1.043, 1.630, 0.523, 0.771, 0.661, 1.916, -0.122, 1.359], [0.790, 1.430, -0.251, 0.898, 0.281, -0.769, -1.152, 0.490, -1.689, 1.643, -1.422, -1.892, -1.573], [1.716, -0.621, -1.433, -1.885, -1.833, 0.771, 0.536, 0.788, 0.947, -1.737, 0.362, -0.546, 1.270], [1.278, 1.565, -1.736, 1.471, 1.658, 1.777, -1.572, -1.177, -1.552, -1.862, 1.391, 1.248, 0.537], [1.300, 0.526, -0.851, -1.600, -1.609, 1.029, -1.180, -0.723, -0.305, -1.916, -0.973, -0.870, 0.863], [-0.528, -0.717, 1.856, 0.015, 1.406, 0.473, -1.876, -0.348, -0.254, 1.092, -0.613, 0.819, 0.152], [-1.134, 1.449, -1.636, 1.279, -1.319, -1.995, -1.192, 1.049, 1.911, -1.983, -0.037, -0.034, 1.187], [-1.262, -0.022, -0.611, 1.327, -0.958, 1.775, -0.865, -1.141, 0.798, -0.007, -1.560, 0.546, -1.676], [1.152, 0.789, 1.148, 0.512, -0.578, -0.395, -0.422, 1.562, -1.655, 1.554, -1.899, -1.176, -0.947], [1.605, 0.005, -0.483, 1.536, -1.066, -0.156, 0.126, 1.018, 1.012, 0.585, -0.606, -0.693, -1.379], [1.372, 0.648, 0.968, -1.322, -0.245, 1.094, 0.317, -1.496, -0.152, 1.541, -1.048, -1.234, -0.794], [0.813, 1.375, -1.382, -1.376, -1.010, -0.694, 0.089, -1.356, -0.688, -1.243, 1.901, 0.915, -1.593], [1.850, -1.593, -0.463, 1.935, 1.180, 0.933, -0.260, -1.215, 0.552, -1.573, -1.174, -0.447, -1.864]]], [[[-0.404, 1.164, 0.774, 0.002, 0.530, -0.147, -1.433, 0.415, -0.381, 0.964, 1.632, -0.280, 0.296], [0.996, -0.315, -1.086, 0.889, 1.520, 1.096, 0.800, 1.410, 0.718, 0.566, -0.184, -0.748, 0.513], [-1.609, -0.322, 1.130, 0.853, 0.518, -1.000, -0.306, -0.179, 0.486, -0.363, 0.701, 1.721, -1.268], [0.618, 1.113, -0.445, -0.041, 1.898, -1.847, 0.173, -1.357, 1.127, 1.762, 0.077, -1.596, 0.298], [0.164, 0.869, 0.049, 0.557, 1.316, 0.087, -0.359, 1.792, -1.160, 0.737, -0.430, 1.051, -1.510], [1.938, -0.578, -1.774, -0.903, -0.401, -1.947, -0.326, -0.318, 0.793, -0.591, -0.939, -1.102, 0.966], [1.760, 0.108, -1.124, 1.206, -0.432, -1.152, -1.483, 1.106, 1.238, 0.537, -0.123, 0.248, -1.096], [1.855, -0.587, 0.555, 1.275, 1.265, -0.128, -0.823, 0.193, -1.499, 1.335, -0.581, 1.403, -0.930], [-0.495, -0.986, -0.296, -1.256, -1.989, 0.887, -0.875, -1.020, -0.793, -0.082, -0.286, 0.549, 0.637], [-0.550, 1.715, 1.418, -1.772, 1.312, 1.623, 1.136, -1.438, 1.325, 0.533, -1.940, -1.954, 1.807], [0.624, -1.000, -1.594, -1.429, -1.065, 1.105, -0.614, -1.389, 1.616, 1.167, -1.328, 1.565, 0.433], [1.125, 0.674, 1.576, 1.152, 1.355, -1.211, 0.771, 0.123, 0.968, -0.246, 1.531, 0.220, -0.942], [-1.063, -1.443, -0.028, -1.766, -0.132, -1.422, -0.035, -0.007, 0.158, 1.452, -1.974, 1.363, -0.128]], [[0.250, 0.661, 1.362, -0.500, -0.325, 1.842, -1.698, 0.548, 0.545, -1.886, 0.439, 0.730, 1.726], [-0.678, 1.927, 0.043, -0.061, 1.590, -1.864, 0.873, 0.501, -0.646, 1.447, -0.535, -0.102, 0.102], [1.082, -1.157, -0.259, -0.310, 0.216, 1.307, -0.828, 1.311, -0.385, 0.015, -0.913, 0.026, 1.900], [0.618, 1.168, -0.676, -0.732, -0.803, 0.346, 0.539, 1.137, -1.840, 0.891, 1.542, 0.182, -1.801], [-0.798, -1.975, -1.240, 1.686, 0.435, 0.632, 1.156, 1.639, 0.447, 0.467, 0.507, 0.786, 0.385], [0.724, -1.150, 0.668, -0.168, 1.051, -1.595, -1.275, -1.852, 1.098, 1.656, 0.623, -0.525, 1.290], [1.146, 0.248, -0.968, -0.792, -0.313, -0.726, -0.277, 0.567, 1.735, -1.782, 0.270, -1.842, -1.525], [1.241, 0.301, 1.675, -0.214, -1.943, -0.451, 0.368, 1.751, 1.923, -0.098, -0.350, -1.592, 0.578], [-1.151, -1.393, -1.938, -1.981, 0.735, -1.513, 1.865, -1.647, 1.478, -1.484, -1.929, 0.877, -1.031], [0.934, -1.250, -1.799, 1.096, 0.854, 1.422, 0.919, -1.663, 0.514, 0.837, -0.158, 1.729, -0.984], [1.857, 0.869, -1.954, -1.941, 0.603, 1.269, -1.681, -0.756, 0.918, -1.336, 1.444, -0.055, -1.761], [-0.530, 0.300, -0.245, 0.708, -1.420, 1.189, -0.547, 0.580, 0.519, -0.328, -0.457, 1.145, 1.780], [1.138, 0.267, -0.830, -1.757, 1.896, 0.813, 1.310, -0.672, 0.423, 1.910, 1.325, 0.405, -0.766]]]]> : tensor<2x2x13x13xbf16>
  %t6 = attn.add %t4, %t5 : (tensor<2x2x13x13xbf16>, tensor<2x2x13x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x13x13xbf16>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x13x13xbf16>, tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16>
  return %t8 : tensor<2x2x13x24xbf16>
}

// a runtime ALiBi-style additive bias [H,L,S] (on the left of the add), then
// the causal constant (-inf): the contract's order (add, then replace), f32
// RUN: attn-run %s --entry causal_add_f32 --check --trace %t.causal_add_f32.json | FileCheck %s --check-prefix=CAUSAL_ADD_F32
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_add_f32.json
// CAUSAL_ADD_F32: result 0: 2x2x13x24xf32 {{.*}} nan=0
// CAUSAL_ADD_F32: check: {{.*}} ok
func.func @causal_add_f32(%q: tensor<2x2x13x24xf32>, %k: tensor<2x2x13x24xf32>, %v: tensor<2x2x13x24xf32>, %bias: tensor<2x13x13xf32>) -> tensor<2x2x13x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xf32> -> tensor<2x2x24x13xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xf32>, tensor<2x2x24x13xf32>) -> tensor<2x2x13x13xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf32>, tensor<f32>) -> tensor<2x2x13x13xf32>
  %t5 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<13x13xi1>
  %t6 = attn.add %bias, %t4 : (tensor<2x13x13xf32>, tensor<2x2x13x13xf32>) -> tensor<2x2x13x13xf32>
  %t7 = attn.masked_fill %t6, %t5 value(0xFFF0000000000000) : (tensor<2x2x13x13xf32>, tensor<13x13xi1>) -> tensor<2x2x13x13xf32>
  %t8 = attn.softmax %t7 dim(-1) : tensor<2x2x13x13xf32>
  %t9 = attn.matmul %t8, %v : (tensor<2x2x13x13xf32>, tensor<2x2x13x24xf32>) -> tensor<2x2x13x24xf32>
  return %t9 : tensor<2x2x13x24xf32>
}

// causal constant (-inf) then an ALiBi-style additive bias [H,L,S] on the left of the add, f16
// RUN: attn-run %s --entry causal_add_f16 --check --trace %t.causal_add_f16.json | FileCheck %s --check-prefix=CAUSAL_ADD_F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_add_f16.json
// CAUSAL_ADD_F16: result 0: 2x2x13x40xf16 {{.*}} nan=0
// CAUSAL_ADD_F16: check: {{.*}} ok
func.func @causal_add_f16(%q: tensor<2x2x13x40xf16>, %k: tensor<2x2x13x40xf16>, %v: tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x40xf16> -> tensor<2x2x40x13xf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x40xf16>, tensor<2x2x40x13xf16>) -> tensor<2x2x13x13xf16>
  %t3 = arith.constant dense<0.15811388300841897> : tensor<f16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf16>, tensor<f16>) -> tensor<2x2x13x13xf16>
  %t5 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<13x13xi1>
  %t6 = attn.masked_fill %t4, %t5 value(0xFFF0000000000000) : (tensor<2x2x13x13xf16>, tensor<13x13xi1>) -> tensor<2x2x13x13xf16>
  %t7 = arith.constant dense<[[[-0.286, 1.552, -0.493, 0.739, 0.407, 1.584, 1.230, -0.867, -1.993, -0.948, -0.310, 0.347, 1.264], [1.550, -1.831, 1.333, 1.247, 1.469, 0.288, -0.905, 1.405, 1.228, 0.739, 1.655, -0.613, -1.660], [0.215, 1.190, -1.198, 1.001, 1.727, -1.064, 0.428, 0.711, -0.139, -1.174, -0.981, 1.005, 1.167], [-0.161, -1.649, 1.226, 1.089, -1.069, 0.318, 1.588, 1.540, 0.087, -0.094, 0.357, -1.243, -1.231], [-1.277, 0.804, -0.549, 0.258, -0.390, 0.069, -1.404, -1.822, 1.989, -0.504, -1.576, 0.531, 1.149], [-1.375, 0.389, -0.620, 0.078, -1.918, -1.866, 1.962, 1.464, -0.055, 0.269, -0.954, 1.117, -0.296], [1.786, 1.069, 1.275, 1.854, -0.984, -1.849, -1.196, -1.277, -1.665, -1.796, 0.230, 1.483, -0.167], [1.789, 1.640, -1.743, 0.392, -0.410, -1.520, 1.837, -0.971, 0.258, 0.563, 1.826, 0.679, -0.428], [-0.207, -1.361, 1.863, 1.967, -1.113, -1.845, -0.977, -0.592, 1.611, 1.618, 1.349, -1.812, 1.145], [0.838, 0.587, 1.942, -1.777, -1.421, 1.020, 1.758, 0.708, -0.805, 0.366, 1.032, -1.578, -0.704], [-0.972, -1.503, -0.075, -1.326, -1.046, -1.427, 0.711, -1.950, 0.869, -1.220, -1.856, 1.711, -1.118], [1.736, 1.467, 1.555, -1.441, -0.211, -1.612, 1.715, 1.369, 0.513, -0.191, -0.641, 1.292, -0.090], [0.513, -1.429, -1.113, -1.773, 0.855, 0.213, -1.421, 1.483, -0.934, -0.353, -1.377, -0.916, 1.358]], [[-0.662, -1.329, -0.036, -0.728, 1.613, -1.543, 1.914, -1.773, 1.580, 0.673, -1.155, -0.090, -0.855], [-0.969, -1.194, -0.543, 1.964, 1.992, 1.700, -1.610, -0.842, 1.585, -1.770, 0.906, -0.826, 1.915], [-1.936, 1.228, -0.636, -1.439, -1.992, 1.329, 0.106, -1.257, -0.259, 1.648, -1.127, 0.285, -1.448], [-1.279, 1.082, 0.846, -1.213, -1.683, -1.650, 0.434, -0.018, -0.904, -1.176, 0.450, 0.831, 1.246], [0.332, -1.191, -1.737, 0.931, -0.368, 0.887, -1.779, 1.243, -0.659, 1.368, 1.458, -0.028, -1.938], [1.641, -0.094, 1.488, -0.935, -1.256, 1.326, -0.532, -1.346, -0.515, 0.380, -1.981, 0.079, -0.217], [0.063, -1.517, 0.858, 1.266, 1.462, -0.716, 0.845, -0.474, 1.005, -1.755, 1.491, 1.816, -0.021], [0.053, 0.122, 0.149, -1.917, 1.870, -1.105, -1.270, -1.589, -0.998, 1.269, -1.880, -1.614, 0.796], [-1.220, -1.929, 0.398, 0.306, 0.092, 0.811, -1.589, 1.478, 0.868, -1.819, -1.508, -0.026, 0.003], [-0.882, -1.512, -0.377, -1.452, 0.367, 1.444, -1.411, 0.291, 0.986, -1.343, 1.304, 1.750, -0.445], [-0.318, 1.359, 0.102, -0.417, 1.765, 1.108, -0.646, -1.038, -0.660, -0.258, 1.925, 1.218, 1.651], [1.260, 1.391, -1.786, 0.069, 1.831, 1.737, -1.003, -0.311, 0.531, -0.542, 0.123, -1.723, -0.268], [0.019, -1.917, -1.442, 1.879, 1.106, 1.748, 0.533, 1.237, 1.537, 1.539, -1.863, 0.566, -0.937]]]> : tensor<2x13x13xf16>
  %t8 = attn.add %t7, %t6 : (tensor<2x13x13xf16>, tensor<2x2x13x13xf16>) -> tensor<2x2x13x13xf16>
  %t9 = attn.softmax %t8 dim(-1) : tensor<2x2x13x13xf16>
  %t10 = attn.matmul %t9, %v : (tensor<2x2x13x13xf16>, tensor<2x2x13x40xf16>) -> tensor<2x2x13x40xf16>
  return %t10 : tensor<2x2x13x40xf16>
}

// causal constant (-inf) then an ALiBi-style additive bias [H,L,S] on the left of the add, bf16
// RUN: attn-run %s --entry causal_add_bf16 --check --trace %t.causal_add_bf16.json | FileCheck %s --check-prefix=CAUSAL_ADD_BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.causal_add_bf16.json
// CAUSAL_ADD_BF16: result 0: 2x2x13x24xbf16 {{.*}} nan=0
// CAUSAL_ADD_BF16: check: {{.*}} ok
func.func @causal_add_bf16(%q: tensor<2x2x13x24xbf16>, %k: tensor<2x2x13x24xbf16>, %v: tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xbf16> -> tensor<2x2x24x13xbf16>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xbf16>, tensor<2x2x24x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<bf16>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xbf16>, tensor<bf16>) -> tensor<2x2x13x13xbf16>
  %t5 = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<13x13xi1>
  %t6 = attn.masked_fill %t4, %t5 value(0xFFF0000000000000) : (tensor<2x2x13x13xbf16>, tensor<13x13xi1>) -> tensor<2x2x13x13xbf16>
  %t7 = arith.constant dense<[[[0.714, -0.906, 0.169, 1.698, 0.485, -0.998, 0.081, -0.265, 1.803, -0.850, -0.778, 0.590, -1.518], [0.377, 1.824, 0.055, -0.926, -0.134, 0.135, -1.406, -1.504, -1.475, -0.826, -0.374, -0.847, -1.026], [-1.649, 0.185, 1.359, 0.440, 0.281, 0.601, -1.195, 0.841, -0.156, 0.192, 0.451, -0.124, -0.758], [-1.031, -1.114, 0.050, -0.467, 0.343, -1.952, -0.589, 1.447, -1.046, 0.227, -0.034, -0.861, 1.950], [-0.818, 1.089, -1.366, -1.733, 1.485, -0.240, -1.752, -0.448, -0.240, 0.942, -1.563, -1.099, 1.837], [0.955, -1.382, -0.652, -0.590, 0.701, 0.465, 1.400, 1.285, 0.071, 0.955, 0.973, 1.039, -0.099], [1.140, 0.834, 1.659, -1.491, 1.483, -1.983, 1.063, 0.343, -0.008, 1.851, 0.288, -0.328, 1.135], [1.491, 0.429, -0.482, -0.191, -0.168, 0.892, -0.828, -0.437, 0.221, -0.462, -0.712, 1.148, 1.398], [-0.002, -0.224, -1.263, -0.784, -1.420, 0.302, 0.326, -1.648, 1.681, -0.705, 1.374, 1.353, 1.835], [-1.183, -0.294, 1.642, -1.957, -1.810, 0.260, -0.011, 1.681, 1.094, 0.154, 1.993, 0.070, 0.069], [0.741, -0.442, -0.569, 0.379, -0.596, 1.792, 0.706, 0.101, -1.604, -0.502, -0.396, 0.245, 0.296], [1.519, 1.858, -0.053, -0.239, 0.498, 1.984, -0.627, 0.121, 1.264, -1.317, -0.728, 1.914, 1.304], [0.050, -1.558, 1.578, 0.760, 1.282, 1.961, 1.553, -0.316, -1.374, -0.840, 0.046, 0.020, -1.248]], [[-1.270, 0.520, 0.413, -0.587, 1.975, 0.546, -1.831, -0.354, 1.151, -0.773, 0.763, -1.984, -0.782], [1.369, 0.345, 0.672, -1.213, -0.009, 0.213, -0.936, 0.587, 0.126, 1.988, 0.298, -0.356, -1.514], [-1.373, 1.038, -1.573, -1.600, -1.318, 0.090, 1.293, 0.452, 1.226, -1.752, -1.950, 1.082, -0.709], [0.862, -0.585, -1.322, -0.934, -1.602, 1.615, 0.329, -0.604, -0.201, -0.457, -1.781, 1.562, 0.331], [1.838, -0.241, 0.481, -1.003, -1.824, 1.723, 1.419, -0.741, 1.595, 1.264, -0.785, 0.410, 1.840], [-0.018, 1.799, -1.028, -0.441, 0.874, -1.114, -0.763, 1.501, -0.062, 1.171, -1.026, -1.306, -0.566], [-1.254, 1.886, -0.837, 0.246, -1.540, 0.135, -0.458, -0.387, -1.738, -1.507, 1.303, -0.595, -1.020], [-1.235, -0.866, -1.051, -1.860, 0.657, -0.634, -1.376, 0.823, -1.629, -0.921, 1.340, -1.489, -0.227], [1.345, 1.220, -1.363, -0.588, 0.890, -0.492, 1.834, -1.168, 1.804, 0.019, -1.091, -0.189, -1.476], [0.826, -0.957, 1.598, 0.350, -0.528, -1.015, 0.433, -1.150, 1.490, -1.509, 0.052, 0.170, -0.918], [1.087, -0.461, 0.630, 0.271, -0.757, -0.440, -1.656, -1.292, 1.404, -0.716, 0.651, -1.564, 0.248], [-0.554, 0.001, -0.812, -1.736, -0.755, -1.094, -1.495, 0.867, -0.871, -0.386, 1.636, 1.100, 1.531], [1.445, -1.471, -0.894, -1.882, 0.718, 0.654, -0.594, -0.350, 0.636, 0.797, -1.006, 1.387, -0.592]]]> : tensor<2x13x13xbf16>
  %t8 = attn.add %t7, %t6 : (tensor<2x13x13xbf16>, tensor<2x2x13x13xbf16>) -> tensor<2x2x13x13xbf16>
  %t9 = attn.softmax %t8 dim(-1) : tensor<2x2x13x13xbf16>
  %t10 = attn.matmul %t9, %v : (tensor<2x2x13x13xbf16>, tensor<2x2x13x24xbf16>) -> tensor<2x2x13x24xbf16>
  return %t10 : tensor<2x2x13x24xbf16>
}

// runtime additive mask [L,S] then a constant causal masked_fill with a
// finite fill: the contract's order (add, then replace), f32
// RUN: attn-run %s --entry add_then_causal_finite_f32 --check --trace %t.add_then_causal_finite_f32.json | FileCheck %s --check-prefix=ADD_THEN_CAUSAL
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not='"name": "softmax"' --input-file %t.add_then_causal_finite_f32.json
// ADD_THEN_CAUSAL: result 0: 2x2x13x24xf32 {{.*}} nan=0
// ADD_THEN_CAUSAL: check: {{.*}} ok
func.func @add_then_causal_finite_f32(%q: tensor<2x2x13x24xf32>, %k: tensor<2x2x13x24xf32>, %v: tensor<2x2x13x24xf32>, %bias: tensor<13x13xf32>) -> tensor<2x2x13x24xf32> {
  %t1 = attn.transpose %k dims(-2, -1) : tensor<2x2x13x24xf32> -> tensor<2x2x24x13xf32>
  %t2 = attn.matmul %q, %t1 : (tensor<2x2x13x24xf32>, tensor<2x2x24x13xf32>) -> tensor<2x2x13x13xf32>
  %t3 = arith.constant dense<0.20412414523193154> : tensor<f32>
  %t4 = attn.mul %t2, %t3 : (tensor<2x2x13x13xf32>, tensor<f32>) -> tensor<2x2x13x13xf32>
  %t5 = attn.add %t4, %bias : (tensor<2x2x13x13xf32>, tensor<13x13xf32>) -> tensor<2x2x13x13xf32>
  %causal = arith.constant dense<[[false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false]]> : tensor<13x13xi1>
  %t6 = attn.masked_fill %t5, %causal value(-1.0e9) : (tensor<2x2x13x13xf32>, tensor<13x13xi1>) -> tensor<2x2x13x13xf32>
  %t7 = attn.softmax %t6 dim(-1) : tensor<2x2x13x13xf32>
  %t8 = attn.matmul %t7, %v : (tensor<2x2x13x13xf32>, tensor<2x2x13x24xf32>) -> tensor<2x2x13x24xf32>
  return %t8 : tensor<2x2x13x24xf32>
}
