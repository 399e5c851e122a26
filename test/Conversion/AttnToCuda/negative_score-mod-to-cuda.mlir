// RUN: attn-opt %s --split-input-file --attn-lower-sdpa-to-cuda --verify-diagnostics | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-lower-sdpa-to-cuda=require-gpu 2>&1 | FileCheck %s --check-prefix=REQUIRE

// A score_mod region the generator cannot translate exactly keeps its
// attn.sdpa on the CPU, with a remark naming the op (or type); no kernel,
// no source is generated. With require-gpu it is an error.
// REQUIRE-COUNT-6: error: 'attn.sdpa' op cannot run on the GPU: {{.*(no CUDA translation|no exact CUDA translation|the CUDA kernels read)}}

// An op without a translation (erfc is not in the generator's table).
// CHECK-LABEL: func.func @untranslatable_op
// CHECK-NOT: attn.cuda_sources
// CHECK: attn.sdpa
// CHECK-NOT: call
func.func @untranslatable_op(%d: tensor<2x16x64xf16>) -> tensor<2x16x64xf16> {
  // expected-remark @+1 {{attn.sdpa stays on the CPU: the score_mod op 'math.erfc' (no CUDA translation)}}
  %0 = attn.sdpa %d, %d, %d : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16> score_mod {
  ^bb0(%s: f32, %h: index, %i: index, %j: index):
    %t = math.erfc %s : f32
    attn.yield %t : f32
  }
  return %0 : tensor<2x16x64xf16>
}

// -----

// A bit cast reinterprets bits; the generator has no rule for it.
// CHECK-LABEL: func.func @bitcast
// CHECK: attn.sdpa
func.func @bitcast(%d: tensor<2x16x64xf16>) -> tensor<2x16x64xf16> {
  // expected-remark @+1 {{stays on the CPU: the score_mod op 'arith.bitcast' (no CUDA translation)}}
  %0 = attn.sdpa %d, %d, %d : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16> score_mod {
  ^bb0(%s: f32, %h: index, %i: index, %j: index):
    %x = arith.bitcast %s : f32 to i32
    %y = arith.bitcast %x : i32 to f32
    attn.yield %y : f32
  }
  return %0 : tensor<2x16x64xf16>
}

// -----

// An integer to f16 conversion would round twice through f32.
// CHECK-LABEL: func.func @int_to_f16
// CHECK: attn.sdpa
func.func @int_to_f16(%d: tensor<2x16x64xf16>) -> tensor<2x16x64xf16> {
  // expected-remark @+1 {{stays on the CPU: the score_mod op 'arith.sitofp' from i64 to f16 (no exact CUDA translation)}}
  %0 = attn.sdpa %d, %d, %d : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16> score_mod {
  ^bb0(%s: f32, %h: index, %i: index, %j: index):
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f16
    %w = arith.extf %f : f16 to f32
    %r = arith.addf %s, %w : f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x16x64xf16>
}

// -----

// A value of a type the generator does not hold (f8).
// CHECK-LABEL: func.func @f8_value
// CHECK: attn.sdpa
func.func @f8_value(%d: tensor<2x16x64xf16>) -> tensor<2x16x64xf16> {
  // expected-remark @+1 {{stays on the CPU: the score_mod op 'arith.truncf' has a value of type f8E4M3FN (no CUDA translation)}}
  %0 = attn.sdpa %d, %d, %d : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16> score_mod {
  ^bb0(%s: f32, %h: index, %i: index, %j: index):
    %q = arith.truncf %s : f32 to f8E4M3FN
    %w = arith.extf %q : f8E4M3FN to f32
    attn.yield %w : f32
  }
  return %0 : tensor<2x16x64xf16>
}

// -----

// An f64 extra operand: the kernels read f16, bf16, f32 and i1 tensors.
// CHECK-LABEL: func.func @f64_extra
// CHECK: attn.sdpa
func.func @f64_extra(%d: tensor<2x16x64xf32>, %bias: tensor<16x16xf64>) -> tensor<2x16x64xf32> {
  // expected-remark @+1 {{stays on the CPU: score_mod extra operand 0 has element type f64 (the CUDA kernels read f16, bf16, f32 and i1)}}
  %0 = attn.sdpa %d, %d, %d extras(%bias) : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<16x16xf64>) -> tensor<2x16x64xf32> score_mod {
  ^bb0(%s: f32, %h: index, %i: index, %j: index, %e: f64):
    %w = arith.extf %s : f32 to f64
    %a = arith.addf %w, %e : f64
    %r = arith.truncf %a : f64 to f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x16x64xf32>
}

// -----

// f64 -> f16 in one step rounds once on the CPU; through f32 it would round
// twice.
// CHECK-LABEL: func.func @f64_to_f16
// CHECK: attn.sdpa
func.func @f64_to_f16(%d: tensor<2x16x64xf16>) -> tensor<2x16x64xf16> {
  // expected-remark @+1 {{stays on the CPU: the score_mod op 'arith.truncf' from f64 to f16 (no exact CUDA translation)}}
  %0 = attn.sdpa %d, %d, %d : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>) -> tensor<2x16x64xf16> score_mod {
  ^bb0(%s: f32, %h: index, %i: index, %j: index):
    %w = arith.extf %s : f32 to f64
    %x = arith.mulf %w, %w : f64
    %h16 = arith.truncf %x : f64 to f16
    %r = arith.extf %h16 : f16 to f32
    attn.yield %r : f32
  }
  return %0 : tensor<2x16x64xf16>
}
