// RUN: attn-opt %s --attn-lower-to-cpu=vector-bits=512 | FileCheck %s --check-prefix=TILE512
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=0 vector-bits=512" \
// RUN: | mlir-translate --mlir-to-llvmir \
// RUN: | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx512f -S \
// RUN: | FileCheck %s --check-prefix=AVX512
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=0 vector-bits=256" \
// RUN: | mlir-translate --mlir-to-llvmir \
// RUN: | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma -S \
// RUN: | FileCheck %s --check-prefix=AVX2

// The flash loops are vector code sized for the target: with 512-bit
// vectors the q.k^T and p.v register tiles hold 24 accumulators of 16
// floats (24 FMAs per step), with 256-bit vectors 12 of 8; the
// online-softmax exp is the polynomial (no libm call).

// TILE512-LABEL: func.func @flash
// TILE512: scf.for {{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// TILE512-COUNT-24: vector.fma
// AVX512-LABEL: define internal void @flash..omp_par
// AVX512: call <16 x float> @llvm.fma.v16f32
// AVX512-NOT: call float @expf
// AVX512: {{^}}}
// AVX2-LABEL: define internal void @flash..omp_par
// AVX2: call <8 x float> @llvm.fma.v8f32
// AVX2-NOT: <16 x float>
// AVX2-NOT: call float @expf
// AVX2: {{^}}}
func.func @flash(%q: tensor<1x4x256x64xf32>, %k: tensor<1x4x256x64xf32>, %v: tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32> {
  %o = attn.sdpa %q, %k, %v : (tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>, tensor<1x4x256x64xf32>) -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}
