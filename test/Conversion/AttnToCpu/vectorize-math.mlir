// REQUIRES: x86_64-host
// With the pipeline's polynomial math (attn-cpu-math-approximation, on by
// default), the transcendental functions are vector code: a soft-capping
// score_mod region (f32 and bf16 inputs, computed in f32) inside the flash
// loops, and the exporter's GELU (erf) and silu elementwise loops after
// LLVM's loop vectoriser. No libm call and no scalarised vector intrinsic
// (llvm.tanh.v8f32, which the backend splits into tanhf calls) is left, for
// AVX2 (x86-64-v3) and for AVX-512.
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 vector-bits=256" \
// RUN: | mlir-translate --mlir-to-llvmir \
// RUN: | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S \
// RUN: | FileCheck %s --check-prefixes=CHECK,AVX2
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 vector-bits=512" \
// RUN: | mlir-translate --mlir-to-llvmir \
// RUN: | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v4 -S \
// RUN: | FileCheck %s --check-prefixes=CHECK,AVX512
// Without it (fast-math=false) the region calls the tanh intrinsic on a
// vector, which the backend scalarises into libm calls:
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 vector-bits=256 fast-math=false" \
// RUN: | mlir-translate --mlir-to-llvmir \
// RUN: | opt -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 -S \
// RUN: | FileCheck %s --check-prefix=LIBM
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 vector-bits=256 fast-math=false" \
// RUN: | mlir-translate --mlir-to-llvmir | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 \
// RUN: | FileCheck %s --check-prefix=LIBM-ASM
// RUN: attn-opt %s --attn-cpu-lowering-pipeline="num-threads=1 vector-bits=256" \
// RUN: | mlir-translate --mlir-to-llvmir | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v3 \
// RUN: | FileCheck %s --check-prefix=ASM

// CHECK-LABEL: define {{.*}}@softcap(
// CHECK-NOT: tanh
// AVX2: call <8 x float> @llvm.fma.v8f32
// AVX512: call <16 x float> @llvm.fma.v16f32
// CHECK-NOT: tanh
// CHECK: {{^}}}
// CHECK-LABEL: define {{.*}}@softcap_bf16(
// CHECK-NOT: tanh
// AVX2: call <8 x float> @llvm.fma.v8f32
// AVX512: call <16 x float> @llvm.fma.v16f32
// CHECK-NOT: tanh
// CHECK: {{^}}}
// CHECK-LABEL: define {{.*}}@gelu(
// CHECK-NOT: erf
// AVX2: <8 x float>
// AVX512: <{{8|16}} x float>
// CHECK-NOT: erf
// CHECK: {{^}}}
// CHECK-LABEL: define {{.*}}@silu(
// CHECK-NOT: @expf
// AVX2: <8 x float>
// CHECK-NOT: @expf
// CHECK: {{^}}}
// LIBM-LABEL: define {{.*}}@softcap(
// LIBM: @llvm.tanh.v8f32
// LIBM-LABEL: define {{.*}}@gelu(
// LIBM: call float @erff
// LIBM-ASM-LABEL: {{^}}softcap:
// LIBM-ASM: tanhf
// ASM-LABEL: {{^}}softcap:
// ASM-NOT: tanhf
// ASM: vfmadd{{.*}}%ymm
// ASM-NOT: tanhf
// ASM-LABEL: {{^}}_mlir_ciface_softcap:

func.func @softcap(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x64x64xf32>
}

func.func @softcap_bf16(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.000000e+01 : f32
    %d = arith.divf %s, %c : f32
    %t = math.tanh %d : f32
    %r = arith.mulf %t, %c : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x64x64xbf16>
}

func.func @gelu(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  %init = tensor.empty() : tensor<4x1000xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x1000xf32>) outs(%init : tensor<4x1000xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %is2 = arith.constant 0.707106769 : f32
    %s = arith.mulf %a, %is2 : f32
    %e = math.erf %s : f32
    %ah = arith.mulf %a, %h : f32
    %p = arith.addf %one, %e : f32
    %r = arith.mulf %ah, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x1000xf32>
  return %0 : tensor<4x1000xf32>
}

func.func @silu(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  %init = tensor.empty() : tensor<4x1000xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x1000xf32>) outs(%init : tensor<4x1000xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.000000e+00 : f32
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x1000xf32>
  return %0 : tensor<4x1000xf32>
}
