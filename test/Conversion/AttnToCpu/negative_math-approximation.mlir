// What attn-cpu-math-approximation leaves to LLVM's intrinsics and libm:
// sin and cos (their range reduction loses accuracy as |x| grows; see
// docs/cpu-math.md), log and log2 (wrong on denormal inputs), rsqrt (upstream's needs AVX2 intrinsics), f64 (no
// f64 approximation upstream), and with `ops=` every op not listed.
// RUN: attn-opt %s --attn-cpu-math-approximation | FileCheck %s
// RUN: attn-opt %s --attn-cpu-math-approximation=ops=math.exp | FileCheck %s --check-prefix=ONLY
// An op name without an upstream approximation is an error, not a no-op.
// RUN: not attn-opt %s --attn-cpu-math-approximation=ops=math.tnh 2>&1 | FileCheck %s --check-prefix=BADNAME
// RUN: not attn-opt %s --attn-cpu-math-approximation=ops=math.rsqrt 2>&1 | FileCheck %s --check-prefix=RSQRT

// CHECK-LABEL: func.func @kept
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.cos %{{.*}} : vector<8xf32>
// CHECK: math.rsqrt %{{.*}} : vector<8xf32>
// CHECK: math.tanh %{{.*}} : f64
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.log %{{.*}} : f32
// CHECK: math.log2 %{{.*}} : vector<8xf32>
// ONLY-LABEL: func.func @kept
// ONLY: math.sin
// ONLY: math.tanh %{{.*}} : f64
// ONLY-LABEL: func.func @not_listed
// ONLY: math.tanh %{{.*}} : f32
// ONLY-NOT: math.exp
// ONLY: return
// BADNAME: error: attn-cpu-math-approximation: no polynomial approximation of 'math.tnh'
// RSQRT: error: attn-cpu-math-approximation: no polynomial approximation of 'math.rsqrt'
func.func @kept(%x: f32, %v: vector<8xf32>, %d: f64) -> (f32, vector<8xf32>, vector<8xf32>, f64, f64, f32, vector<8xf32>) {
  %0 = math.sin %x : f32
  %1 = math.cos %v : vector<8xf32>
  %2 = math.rsqrt %v : vector<8xf32>
  %3 = math.tanh %d : f64
  %4 = math.exp %d : f64
  %5 = math.log %x : f32
  %6 = math.log2 %v : vector<8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : f32, vector<8xf32>, vector<8xf32>, f64, f64, f32, vector<8xf32>
}

func.func @not_listed(%x: f32) -> (f32, f32) {
  %0 = math.tanh %x : f32
  %1 = math.exp %x : f32
  return %0, %1 : f32, f32
}
