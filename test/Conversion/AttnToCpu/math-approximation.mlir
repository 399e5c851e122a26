// attn-cpu-math-approximation replaces the accurate set of transcendental
// math ops (exp, expm1, tanh, erf, log1p) by upstream's
// polynomial approximations: arith/math ops only, no libm call left, on
// scalars and vectors; f16/bf16 go through f32 and are rounded back once.
// RUN: attn-opt %s --attn-cpu-math-approximation | FileCheck %s
// `ops=` picks the set: here only tanh (exp stays).
// RUN: attn-opt %s --attn-cpu-math-approximation=ops=math.tanh | FileCheck %s --check-prefix=ONLY
// The pass runs nested in a pipeline on functions as well.
// RUN: attn-opt %s --pass-pipeline='builtin.module(func.func(attn-cpu-math-approximation))' | FileCheck %s

// CHECK-LABEL: func.func @scalars
// CHECK-NOT: math.exp
// CHECK-NOT: math.expm1
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.log1p
// CHECK: math.fma
// CHECK: return
// ONLY-LABEL: func.func @scalars
// ONLY: math.exp %
// ONLY-NOT: math.tanh
// ONLY: math.erf %
// ONLY: return
func.func @scalars(%x: f32) -> (f32, f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  %4 = math.log1p %x : f32
  %5 = math.expm1 %x : f32
  return %0, %1, %2, %4, %5 : f32, f32, f32, f32, f32
}

// The flash emitter's score_mod regions run on vectors of scores.
// CHECK-LABEL: func.func @vector_softcap
// CHECK-NOT: math.tanh
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK-NOT: math.tanh
// CHECK: return
func.func @vector_softcap(%s: vector<16xf32>) -> vector<16xf32> {
  %c = arith.constant dense<3.000000e+01> : vector<16xf32>
  %d = arith.divf %s, %c : vector<16xf32>
  %t = math.tanh %d : vector<16xf32>
  %r = arith.mulf %t, %c : vector<16xf32>
  return %r : vector<16xf32>
}

// CHECK-LABEL: func.func @half_types
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT: math.tanh
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: math.erf
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return
func.func @half_types(%v: vector<8xbf16>, %h: f16) -> (vector<8xbf16>, f16) {
  %0 = math.tanh %v : vector<8xbf16>
  %1 = math.erf %h : f16
  return %0, %1 : vector<8xbf16>, f16
}
