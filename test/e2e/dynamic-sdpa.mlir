// attn.sdpa on dynamic shapes: the flash lowering (default) against the
// math lowering (--check's reference), causal, with a boolean mask, on odd
// sizes that are not multiples of the flash block sizes.
// RUN: attn-run %s --entry f --check --trace %t.json --shape 0=2x4x70x48 --shape 1=2x4x133x48 --shape 2=2x4x133x48 --shape 3=70x133 | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE < %t.json
// CHECK: result 0: 2x4x70x48xf32
// CHECK: check: {{.*}} ok
// TRACE: "name": "sdpa"

func.func @f(%q: tensor<?x4x?x48xf32>, %k: tensor<?x4x?x48xf32>,
             %v: tensor<?x4x?x48xf32>, %mask: tensor<?x?xi1>) -> tensor<?x4x?x48xf32> {
  %o = attn.sdpa %q, %k, %v, %mask {is_causal = true, scale = 0.14433756729740643 : f64}
      : (tensor<?x4x?x48xf32>, tensor<?x4x?x48xf32>, tensor<?x4x?x48xf32>, tensor<?x?xi1>) -> tensor<?x4x?x48xf32>
  return %o : tensor<?x4x?x48xf32>
}
