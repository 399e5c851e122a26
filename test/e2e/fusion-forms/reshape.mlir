// End-to-end check of chains that view the scores between [B*H, L, S] and
// [B, H, L, S] (reshapes of batch dims only): attn-run --check runs each
// function fused (flash and math backends) and unfused (math lowering) on
// the same seeded inputs. Every fused trace has exactly one sdpa span and
// no softmax span, so these tests fail if the fusion stops seeing through
// the reshapes.
// ONE-SDPA: "name": "sdpa"
// ONE-SDPA-NOT: "name": "sdpa"

// tensor.collapse_shape/expand_shape around bmm, an additive f32 padding
// mask at rank 4, f32
// RUN: attn-run %s --entry bmm_views_f32 --check --backend=flash --trace %t.bmm_views_f32.json | FileCheck %s --check-prefix=BMM
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.bmm_views_f32.json
// RUN: attn-run %s --entry bmm_views_f32 --check --backend=math | FileCheck %s --check-prefix=BMM
// BMM: result 0: 2x3x37x16xf32 {{.*}} nan=0
// BMM: check: {{.*}} ok
func.func @bmm_views_f32(%q: tensor<2x3x37x24xf32>, %k: tensor<2x3x29x24xf32>, %v: tensor<2x3x29x16xf32>, %m: tensor<2x1x1x29xf32>) -> tensor<2x3x37x16xf32> {
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x3x37x24xf32> into tensor<6x37x24xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<2x3x29x24xf32> into tensor<6x29x24xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x3x29x16xf32> into tensor<6x29x16xf32>
  %kt = attn.transpose %k3 dims(1, 2) : tensor<6x29x24xf32> -> tensor<6x24x29xf32>
  %s = attn.matmul %q3, %kt : (tensor<6x37x24xf32>, tensor<6x24x29xf32>) -> tensor<6x37x29xf32>
  %c = arith.constant dense<0.2> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<6x37x29xf32>, tensor<f32>) -> tensor<6x37x29xf32>
  %s4 = tensor.expand_shape %ss [[0, 1], [2], [3]] output_shape [2, 3, 37, 29] : tensor<6x37x29xf32> into tensor<2x3x37x29xf32>
  %a = attn.add %s4, %m : (tensor<2x3x37x29xf32>, tensor<2x1x1x29xf32>) -> tensor<2x3x37x29xf32>
  %a3 = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<2x3x37x29xf32> into tensor<6x37x29xf32>
  %p = attn.softmax %a3 dim(-1) : tensor<6x37x29xf32>
  %o = attn.matmul %p, %v3 : (tensor<6x37x29xf32>, tensor<6x29x16xf32>) -> tensor<6x37x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [2, 3, 37, 16] : tensor<6x37x16xf32> into tensor<2x3x37x16xf32>
  return %o4 : tensor<2x3x37x16xf32>
}

// attn.reshape of the scores to rank 4 for a boolean padding mask and back,
// rank-3 q/k/v, f16 (fully masked rows: NaN in both runs)
// RUN: attn-run %s --entry attn_reshape_f16 --check --backend=flash --trace %t.attn_reshape_f16.json | FileCheck %s --check-prefix=RESHAPE-F16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.attn_reshape_f16.json
// RUN: attn-run %s --entry attn_reshape_f16 --check --backend=math | FileCheck %s --check-prefix=RESHAPE-F16
// RESHAPE-F16: result 0: 6x37x16xf16 {{.*}} nan={{[1-9][0-9]*}}
// RESHAPE-F16: check: {{.*}} ok
func.func @attn_reshape_f16(%q: tensor<6x37x24xf16>, %k: tensor<6x29x24xf16>, %v: tensor<6x29x16xf16>, %m: tensor<2x1x37x29xi1>) -> tensor<6x37x16xf16> {
  %kt = attn.transpose %k dims(1, 2) : tensor<6x29x24xf16> -> tensor<6x24x29xf16>
  %s = attn.matmul %q, %kt : (tensor<6x37x24xf16>, tensor<6x24x29xf16>) -> tensor<6x37x29xf16>
  %s4 = attn.reshape %s : tensor<6x37x29xf16> -> tensor<2x3x37x29xf16>
  %f = attn.masked_fill %s4, %m value(0xFFF0000000000000) : (tensor<2x3x37x29xf16>, tensor<2x1x37x29xi1>) -> tensor<2x3x37x29xf16>
  %f3 = attn.reshape %f : tensor<2x3x37x29xf16> -> tensor<6x37x29xf16>
  %p = attn.softmax %f3 dim(-1) : tensor<6x37x29xf16>
  %o = attn.matmul %p, %v : (tensor<6x37x29xf16>, tensor<6x29x16xf16>) -> tensor<6x37x16xf16>
  return %o : tensor<6x37x16xf16>
}

// The safe softmax at rank 4 with the `.float()` upcast, its weights viewed
// as [B*H, L, S] for bmm with a rank-3 v, bf16 (fully masked rows give 0)
// RUN: attn-run %s --entry weights_view_bf16 --check --backend=flash --trace %t.weights_view_bf16.json | FileCheck %s --check-prefix=WEIGHTS-BF16
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.weights_view_bf16.json
// RUN: attn-run %s --entry weights_view_bf16 --check --backend=math | FileCheck %s --check-prefix=WEIGHTS-BF16
// WEIGHTS-BF16: result 0: 6x37x16xbf16 {{.*}} nan=0
// WEIGHTS-BF16: check: {{.*}} ok
func.func @weights_view_bf16(%q: tensor<2x3x37x24xbf16>, %k: tensor<2x3x29x24xbf16>, %v: tensor<6x29x16xbf16>, %m: tensor<37x29xi1>) -> tensor<6x37x16xbf16> {
  %kt = attn.transpose %k dims(-2, -1) : tensor<2x3x29x24xbf16> -> tensor<2x3x24x29xbf16>
  %s = attn.matmul %q, %kt : (tensor<2x3x37x24xbf16>, tensor<2x3x24x29xbf16>) -> tensor<2x3x37x29xbf16>
  %f = attn.masked_fill %s, %m value(0xFFF0000000000000) : (tensor<2x3x37x29xbf16>, tensor<37x29xi1>) -> tensor<2x3x37x29xbf16>
  %up = attn.cast %f : tensor<2x3x37x29xbf16> -> tensor<2x3x37x29xf32>
  %p32 = attn.safe_softmax %up dim(-1) : tensor<2x3x37x29xf32>
  %p3 = attn.reshape %p32 : tensor<2x3x37x29xf32> -> tensor<6x37x29xf32>
  %p = attn.cast %p3 : tensor<6x37x29xf32> -> tensor<6x37x29xbf16>
  %o = attn.matmul %p, %v : (tensor<6x37x29xbf16>, tensor<6x29x16xbf16>) -> tensor<6x37x16xbf16>
  return %o : tensor<6x37x16xbf16>
}

// A dynamic batch dim (torch.export with a Dim on B): the views carry the
// run-time size; f32, the same chain as bmm_views_f32.
// RUN: attn-run %s --entry bmm_views_dynamic_f32 --shape 0=2x3x37x24 --shape 1=2x3x29x24 --shape 2=2x3x29x16 --shape 3=2x1x1x29 --check --backend=flash --trace %t.bmm_views_dynamic_f32.json | FileCheck %s --check-prefix=BMM-DYN
// RUN: FileCheck %s --check-prefix=ONE-SDPA --implicit-check-not=softmax --input-file %t.bmm_views_dynamic_f32.json
// RUN: attn-run %s --entry bmm_views_dynamic_f32 --shape 0=3x3x37x24 --shape 1=3x3x29x24 --shape 2=3x3x29x16 --shape 3=3x1x1x29 --check --backend=math | FileCheck %s --check-prefix=BMM-DYN3
// BMM-DYN: result 0: 2x3x37x16xf32 {{.*}} nan=0
// BMM-DYN: check: {{.*}} ok
// BMM-DYN3: result 0: 3x3x37x16xf32 {{.*}} nan=0
// BMM-DYN3: check: {{.*}} ok
func.func @bmm_views_dynamic_f32(%q: tensor<?x3x37x24xf32>, %k: tensor<?x3x29x24xf32>, %v: tensor<?x3x29x16xf32>, %m: tensor<?x1x1x29xf32>) -> tensor<?x3x37x16xf32> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : tensor<?x3x37x24xf32>
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<?x3x37x24xf32> into tensor<?x37x24xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<?x3x29x24xf32> into tensor<?x29x24xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<?x3x29x16xf32> into tensor<?x29x16xf32>
  %kt = attn.transpose %k3 dims(1, 2) : tensor<?x29x24xf32> -> tensor<?x24x29xf32>
  %s = attn.matmul %q3, %kt : (tensor<?x37x24xf32>, tensor<?x24x29xf32>) -> tensor<?x37x29xf32>
  %c = arith.constant dense<0.2> : tensor<f32>
  %ss = attn.mul %s, %c : (tensor<?x37x29xf32>, tensor<f32>) -> tensor<?x37x29xf32>
  %s4 = tensor.expand_shape %ss [[0, 1], [2], [3]] output_shape [%b, 3, 37, 29] : tensor<?x37x29xf32> into tensor<?x3x37x29xf32>
  %a = attn.add %s4, %m : (tensor<?x3x37x29xf32>, tensor<?x1x1x29xf32>) -> tensor<?x3x37x29xf32>
  %a3 = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<?x3x37x29xf32> into tensor<?x37x29xf32>
  %p = attn.softmax %a3 dim(-1) : tensor<?x37x29xf32>
  %o = attn.matmul %p, %v3 : (tensor<?x37x29xf32>, tensor<?x29x16xf32>) -> tensor<?x37x16xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [%b, 3, 37, 16] : tensor<?x37x16xf32> into tensor<?x3x37x16xf32>
  return %o4 : tensor<?x3x37x16xf32>
}
