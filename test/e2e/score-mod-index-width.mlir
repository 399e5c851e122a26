// Position terms of score_mod regions (relative bias, ALiBi) convert the
// index difference j - i to f32 on every score vector. With static
// lengths, arith-int-range-narrowing (in the CPU pipeline after the
// lowering) proves the difference fits in 32 bits, so the conversion is a
// packed i32 -> f32 (vcvtdq2ps); in 64 bits AVX2 has no packed conversion
// and the region cost 1.4x the plain kernel. With dynamic lengths (what the
// Python exporter emits) the flash lowering clamps the first row and key
// of its score step to 2^30 when both lengths are at most that, which gives
// the range analysis its bound: the same 32-bit conversion, with the
// 64-bit code kept for longer lengths. The numbers are checked against the
// math lowering of the same op, on the host and on AVX2.
// RUN: attn-compile %s --emit=llvm --mcpu=x86-64-v3 --num-threads=1 -o - | FileCheck %s --check-prefix=IR
// IR-LABEL: define {{.*}}@relative(
// IR: sitofp <8 x i32> %{{.+}} to <8 x float>
// IR-NOT: sitofp <8 x i64>
// IR-LABEL: define {{.*}}@alibi(
// IR: sitofp <8 x i32> %{{.+}} to <8 x float>
// IR-NOT: sitofp <8 x i64>
// IR-LABEL: define {{.*}}@relative_dynamic(
// IR: sitofp <8 x i32> %{{.+}} to <8 x float>
// IR-LABEL: define {{.*}}@alibi_dynamic(
// IR: sitofp <8 x i32> %{{.+}} to <8 x float>
// RUN: attn-run %s --entry relative --backend=flash --check | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry alibi --backend=flash --check --mcpu=x86-64-v3 | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry relative_dynamic --backend=flash --check --shape 0=2x2x67x32 --shape 1=2x2x45x32 --shape 2=2x2x45x32 | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry relative_dynamic --backend=flash --check --mcpu=x86-64-v3 --shape 0=1x2x131x32 --shape 1=1x2x131x32 --shape 2=1x2x131x32 | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry alibi_dynamic --backend=flash --check --shape 0=1x2x67x32 --shape 1=1x2x67x32 --shape 2=1x2x67x32 | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry alibi_dynamic --backend=flash --check --mcpu=x86-64-v3 --shape 0=2x2x75x32 --shape 1=2x2x75x32 --shape 2=2x2x75x32 | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: {{.*}} ok

func.func @relative(%q: tensor<1x2x67x32xf32>, %k: tensor<1x2x67x32xf32>, %v: tensor<1x2x67x32xf32>) -> tensor<1x2x67x32xf32> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<1x2x67x32xf32>, tensor<1x2x67x32xf32>, tensor<1x2x67x32xf32>) -> tensor<1x2x67x32xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = arith.addf %s, %df : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x67x32xf32>
}

func.func @alibi(%q: tensor<1x2x67x32xf32>, %k: tensor<1x2x67x32xf32>, %v: tensor<1x2x67x32xf32>, %m: tensor<1x2x1x1xf32>) -> tensor<1x2x67x32xf32> {
  %o = attn.sdpa %q, %k, %v extras(%m) {is_causal = true} : (tensor<1x2x67x32xf32>, tensor<1x2x67x32xf32>, tensor<1x2x67x32xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x67x32xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %slope: f32):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = math.fma %slope, %df, %s : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x67x32xf32>
}

func.func @relative_dynamic(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>) -> tensor<?x2x?x32xf32> {
  %o = attn.sdpa %q, %k, %v {is_causal = true} : (tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>) -> tensor<?x2x?x32xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %i, %j : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = arith.addf %s, %df : f32
    attn.yield %r : f32
  }
  return %o : tensor<?x2x?x32xf32>
}

func.func @alibi_dynamic(%q: tensor<?x2x?x32xf32>, %k: tensor<?x2x?x32xf32>, %v: tensor<?x2x?x32xf32>, %m: tensor<1x2x1x1xf32>) -> tensor<?x2x?x32xf32> {
  %o = attn.sdpa %q, %k, %v extras(%m) {is_causal = true} : (tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<?x2x?x32xf32>, tensor<1x2x1x1xf32>) -> tensor<?x2x?x32xf32> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %slope: f32):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %r = math.fma %slope, %df, %s : f32
    attn.yield %r : f32
  }
  return %o : tensor<?x2x?x32xf32>
}
