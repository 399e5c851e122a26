// bf16 attention over three key blocks of the AMX path (128, 128 and a
// last one of 44 keys, zero-padded to 64) with values near 1, so that the
// output is near 1 and the accumulator's rescaling between key blocks (the
// running max rising from block to block) shows in it well above the bf16
// tolerance; 160 query rows (a 128-row block and one of 32 rows). On a host
// with AMX the tiles run, with ATTNFUSE_AMX=0 the vector path; both
// against the math reference at 1e-2.
// RUN: attn-run %s --entry f --check --atol 1e-2 --rtol 1e-2 --num-threads 2 | FileCheck %s
// RUN: env ATTNFUSE_AMX=0 attn-run %s --entry f --check --atol 1e-2 --rtol 1e-2 --num-threads 1 | FileCheck %s
// CHECK: result 0: 2x4x160x64xbf16 {{.*}} nan=0
// CHECK: check: {{.*}} ok

func.func @f(%q: tensor<2x4x160x64xbf16>, %k: tensor<2x4x300x64xbf16>,
             %v: tensor<2x4x300x64xbf16>) -> tensor<2x4x160x64xbf16> {
  %one = arith.constant dense<1.0> : tensor<bf16>
  %v1 = "attn.add"(%v, %one) : (tensor<2x4x300x64xbf16>, tensor<bf16>) -> tensor<2x4x300x64xbf16>
  %o = attn.sdpa %q, %k, %v1 : (tensor<2x4x160x64xbf16>, tensor<2x4x300x64xbf16>, tensor<2x4x300x64xbf16>) -> tensor<2x4x160x64xbf16>
  return %o : tensor<2x4x160x64xbf16>
}
