// RUN: attn-opt %s --split-input-file --attn-cpu-expand-narrow-floats | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-cpu-expand-narrow-floats=expand-f16 | FileCheck %s --check-prefix=F16
// RUN: attn-opt %s --split-input-file --attn-cpu-expand-narrow-floats=native-bf16 | FileCheck %s --check-prefix=NATIVE

// f64 -> bf16 rounds to odd into f32 (the inexact result's last bit set,
// after a step toward zero where f32 rounding went away from it), then to
// nearest even into bf16 (integer code, or vcvtneps2bf16 with native-bf16):
// one correct rounding, no __truncdfbf2.
// CHECK-LABEL: func.func @trunc_f64_to_bf16
// CHECK-SAME: %[[X:.+]]: vector<8xf64>
// CHECK: %[[N:.+]] = arith.truncf %[[X]] : vector<8xf64> to vector<8xf32>
// CHECK: %[[B:.+]] = arith.extf %[[N]] : vector<8xf32> to vector<8xf64>
// CHECK: %[[INEXACT:.+]] = arith.cmpf one, %[[B]], %[[X]] : vector<8xf64>
// CHECK: arith.cmpi ugt
// CHECK: arith.subi
// CHECK: arith.ori
// CHECK: %[[ODD:.+]] = arith.select %[[INEXACT]]
// CHECK: %[[F:.+]] = arith.bitcast %[[ODD]] : vector<8xi32> to vector<8xf32>
// CHECK: arith.addi %{{.+}} : vector<8xi32>
// CHECK: arith.trunci %{{.+}} : vector<8xi32> to vector<8xi16>
// CHECK: %[[R:.+]] = arith.bitcast %{{.+}} : vector<8xi16> to vector<8xbf16>
// CHECK: return %[[R]]
// NATIVE-LABEL: func.func @trunc_f64_to_bf16
// NATIVE: %[[F:.+]] = arith.bitcast %{{.+}} : vector<8xi32> to vector<8xf32>
// NATIVE: %[[R:.+]] = arith.truncf %[[F]] : vector<8xf32> to vector<8xbf16>
// NATIVE: return %[[R]]
func.func @trunc_f64_to_bf16(%x: vector<8xf64>) -> vector<8xbf16> {
  %r = arith.truncf %x : vector<8xf64> to vector<8xbf16>
  return %r : vector<8xbf16>
}

// -----

// CHECK-LABEL: func.func @trunc_f64_to_f16
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK-NOT: f64 to f16
// F16-LABEL: func.func @trunc_f64_to_f16
// F16-NOT: arith.truncf %{{.+}} : f32 to f16
// F16: arith.trunci %{{.+}} : i32 to i16
// F16: arith.bitcast %{{.+}} : i16 to f16
func.func @trunc_f64_to_f16(%x: f64) -> f16 {
  %r = arith.truncf %x : f64 to f16
  return %r : f16
}

// -----

// Widening to f64 goes through f32 (exact).
// CHECK-LABEL: func.func @ext_to_f64
// CHECK: arith.shli %{{.+}} : i32
// CHECK: %[[A:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK: arith.extf %[[A]] : f32 to f64
// CHECK: %[[B:.+]] = arith.extf %{{.+}} : vector<4xf16> to vector<4xf32>
// CHECK: arith.extf %[[B]] : vector<4xf32> to vector<4xf64>
func.func @ext_to_f64(%x: bf16, %y: vector<4xf16>) -> (f64, vector<4xf64>) {
  %a = arith.extf %x : bf16 to f64
  %b = arith.extf %y : vector<4xf16> to vector<4xf64>
  return %a, %b : f64, vector<4xf64>
}

// -----

// expand-f16 (no F16C): f16 <-> f32 in integer code.
// F16-LABEL: func.func @f16_f32
// F16: arith.bitcast %{{.+}} : vector<16xf16> to vector<16xi16>
// F16: arith.extui %{{.+}} : vector<16xi16> to vector<16xi32>
// F16: arith.uitofp
// F16: arith.bitcast %{{.+}} : vector<16xi32> to vector<16xf32>
// F16: arith.addf
// F16: arith.trunci %{{.+}} : vector<16xi32> to vector<16xi16>
// F16: arith.bitcast %{{.+}} : vector<16xi16> to vector<16xf16>
// F16-NOT: arith.extf
// F16-NOT: arith.truncf
func.func @f16_f32(%x: vector<16xf16>, %y: vector<16xf32>) -> (vector<16xf32>, vector<16xf16>) {
  %a = arith.extf %x : vector<16xf16> to vector<16xf32>
  %b = arith.truncf %y : vector<16xf32> to vector<16xf16>
  return %a, %b : vector<16xf32>, vector<16xf16>
}

// -----

// f32 <-> bf16 in integer code: widening by upstream's bf16 expansion (a
// shift), rounding to nearest even with the rounding bias, a NaN replaced
// by the quiet NaN's f32 bits before the rounding: the select is on i32
// and feeds the rounding, no select on the 16 result bits (LLVM would make
// that a select on bfloat, legalised through __truncsfbf2 without native
// bf16). With native-bf16 (AVX512-BF16) the truncations stay for LLVM's
// vcvtneps2bf16, and so do the widenings (a shift in LLVM on every target).
// CHECK-LABEL: func.func @bf16_f32
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: arith.shli %{{.+}} : vector<16xi32>
// CHECK: %[[NAN:.+]] = arith.cmpf uno, %[[Y:.+]], %[[Y]] : vector<16xf32>
// CHECK-DAG: %[[QUIET:.+]] = arith.constant dense<2143289344> : vector<16xi32>
// CHECK-DAG: %[[BITS:.+]] = arith.bitcast %[[Y]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[U:.+]] = arith.select %[[NAN]], %[[QUIET]], %[[BITS]] : vector<16xi1>, vector<16xi32>
// CHECK: arith.shrui %[[U]]
// CHECK: arith.addi %[[U]]
// CHECK: %[[H:.+]] = arith.trunci %{{.+}} : vector<16xi32> to vector<16xi16>
// CHECK-NEXT: arith.bitcast %[[H]] : vector<16xi16> to vector<16xbf16>
// CHECK: arith.cmpf uno, %{{.+}} : f32
// CHECK: %[[S:.+]] = arith.trunci %{{.+}} : i32 to i16
// CHECK-NEXT: arith.bitcast %[[S]] : i16 to bf16
// CHECK-NOT: arith.select {{.*}}i16
// CHECK: return
// NATIVE-LABEL: func.func @bf16_f32
// NATIVE-NOT: arith.shli
// NATIVE: %[[A:.+]] = arith.extf %{{.+}} : vector<16xbf16> to vector<16xf32>
// NATIVE: %[[V:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// NATIVE: %[[S:.+]] = arith.truncf %{{.+}} : f32 to bf16
// NATIVE: return %[[A]], %[[V]], %[[S]]
func.func @bf16_f32(%x: vector<16xbf16>, %y: vector<16xf32>, %s: f32) -> (vector<16xf32>, vector<16xbf16>, bf16) {
  %a = arith.extf %x : vector<16xbf16> to vector<16xf32>
  %b = arith.truncf %y : vector<16xf32> to vector<16xbf16>
  %c = arith.truncf %s : f32 to bf16
  return %a, %b, %c : vector<16xf32>, vector<16xbf16>, bf16
}

// -----

// A bf16 rounding widened again (what the exporter writes after each op of
// a bf16 model). With native-bf16 both conversions stay: a widening in
// integer code would read the rounding's bits through a bitcast, and LLVM
// would then round in integer code too instead of vcvtneps2bf16.
// CHECK-LABEL: func.func @bf16_round_trip
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
// CHECK: arith.shli %{{.+}} : vector<16xi32>
// NATIVE-LABEL: func.func @bf16_round_trip
// NATIVE-NOT: arith.bitcast
// NATIVE: %[[T:.+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xbf16>
// NATIVE-NEXT: %[[E:.+]] = arith.extf %[[T]] : vector<16xbf16> to vector<16xf32>
// NATIVE-NEXT: return %[[E]]
func.func @bf16_round_trip(%y: vector<16xf32>) -> vector<16xf32> {
  %t = arith.truncf %y : vector<16xf32> to vector<16xbf16>
  %e = arith.extf %t : vector<16xbf16> to vector<16xf32>
  return %e : vector<16xf32>
}

// Conversions LLVM does without a libcall stay; so do truncations with an
// explicit rounding mode (native-bf16 included), and f16 <-> f32 without
// expand-f16.
// CHECK-LABEL: func.func @negative_native_conversions
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: arith.truncf %{{.+}} downward : f64 to bf16
// CHECK: arith.truncf %{{.+}} upward : f32 to bf16
// CHECK: arith.extf %{{.+}} : f16 to f32
// F16-LABEL: func.func @negative_native_conversions
// F16: arith.truncf %{{.+}} : f64 to f32
// F16: arith.truncf %{{.+}} downward : f64 to bf16
// F16: arith.truncf %{{.+}} upward : f32 to bf16
// F16-NOT: arith.extf %{{.+}} : f16 to f32
// NATIVE-LABEL: func.func @negative_native_conversions
// NATIVE: arith.truncf %{{.+}} downward : f64 to bf16
// NATIVE: arith.truncf %{{.+}} upward : f32 to bf16
// NATIVE: arith.extf %{{.+}} : f16 to f32
func.func @negative_native_conversions(%f: f32, %d: f64, %h: f16) -> (f32, bf16, bf16, f32) {
  %2 = arith.truncf %d : f64 to f32
  %3 = arith.truncf %d downward : f64 to bf16
  %5 = arith.truncf %f upward : f32 to bf16
  %4 = arith.extf %h : f16 to f32
  return %2, %3, %5, %4 : f32, bf16, bf16, f32
}
