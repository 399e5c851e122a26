// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=0" \
// RUN: | mlir-translate --mlir-to-llvmir \
// RUN: | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx512f -S \
// RUN: | FileCheck %s

// The flash loops reach LLVM in a form its loop vectoriser handles: with
// AVX-512 the q.k^T reduction, the online-softmax exp (polynomial, no libm
// call) and the p.v update use 16-wide float vectors inside the outlined
// OpenMP region.

// CHECK-LABEL: define internal void @flash..omp_par
// CHECK: fmul reassoc contract <16 x float>
// CHECK: fadd reassoc contract <16 x float>
// CHECK-NOT: call float @expf
// CHECK: {{^}}}
func.func @flash(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>, %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}
