// Position terms of score_mod regions (relative bias, ALiBi) convert the
// index difference j - i to f32 on every score vector. With static
// lengths, arith-int-range-narrowing (in the CPU pipeline after the
// lowering) proves the difference fits in 32 bits, so the conversion is a
// packed i32 -> f32 (vcvtdq2ps); in 64 bits AVX2 has no packed conversion
// and the region cost 1.4x the plain kernel. The numbers are checked
// against the math lowering of the same op.
// RUN: attn-compile %s --emit=llvm --mcpu=x86-64-v3 --num-threads=1 -o - | FileCheck %s --check-prefix=IR
// IR-LABEL: define {{.*}}@relative(
// IR: sitofp <8 x i32> %{{.+}} to <8 x float>
// IR-NOT: sitofp <8 x i64>
// IR-LABEL: define {{.*}}@alibi(
// IR: sitofp <8 x i32> %{{.+}} to <8 x float>
// IR-NOT: sitofp <8 x i64>
// RUN: attn-run %s --entry relative --backend=flash --check | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry alibi --backend=flash --check --mcpu=x86-64-v3 | FileCheck %s --check-prefix=CHECKED
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
