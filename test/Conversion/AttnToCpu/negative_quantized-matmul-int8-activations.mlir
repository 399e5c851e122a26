// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 quantized-activations=int8" --split-input-file | FileCheck %s --check-prefix=NOVNNI
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 vnni=true" --split-input-file | FileCheck %s --check-prefix=NOVNNI
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=512 vnni=true quantized-activations=int8" --split-input-file | FileCheck %s --check-prefix=INT8
// RUN: attn-opt %s --attn-lower-to-cpu="vector-bits=256 avx2=true quantized-activations=int8" --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: not attn-opt %s --attn-lower-to-cpu="quantized-activations=int4" 2>&1 | FileCheck %s --check-prefix=BADPASS
// RUN: not attn-opt %s --attn-lower-to-cpu="vector-bits=256 vnni=true vnni-512=true quantized-activations=int8" 2>&1 | FileCheck %s --check-prefix=BADWIDE
// RUN: not attn-opt %s --attn-lower-to-cpu="vector-bits=512 vnni-512=true" 2>&1 | FileCheck %s --check-prefix=BADWIDE
// RUN: not attn-opt %s --attn-lower-to-cpu="vector-bits=128 avx2=true" 2>&1 | FileCheck %s --check-prefix=BADAVX2
// RUN: not attn-opt %s --attn-cpu-lowering-pipeline="quantized-activations=yes" 2>&1 | FileCheck %s --check-prefix=BADPIPELINE

// What quantized-activations=int8 leaves to the f32 GEMV: a target without
// vnni (the option alone changes nothing), vnni without the option (the
// default, none), and, with both, the products whose weight has no units
// of 32 with one scale (int8 rows of K or groups not a
// multiple of 32), and the prefill GEMM of a weight without a fixed
// offset, or on a target whose integer dot is not VNNI's (avx2).

// BADPASS: for the --quantized-activations option: Cannot find option named 'int4'!
// BADWIDE: error: attn-lower-to-cpu: vnni-512 needs vnni and vector-bits=512
// BADAVX2: error: attn-lower-to-cpu: avx2 needs vector-bits=256 or 512
// BADPIPELINE: for the --quantized-activations option: Cannot find option named 'yes'!

// NOVNNI-LABEL: func.func @negative_q4_0
// NOVNNI-NOT: vpdpbusd
// NOVNNI-NOT: xi8>, vector<32xi8>
// NOVNNI: vector.fma
// NOVNNI-NOT: vpdpbusd
// NOVNNI: return
// INT8-LABEL: func.func @negative_q4_0
// INT8: llvm.inline_asm "vpdpbusd
func.func @negative_q4_0(%x: tensor<2x96xf32>, %w: tensor<1998xi8>) -> tensor<2x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>}
      : (tensor<2x96xf32>, tensor<1998xi8>) -> tensor<2x37xf32>
  return %y : tensor<2x37xf32>
}

// -----

// int8 rows of K = 100 (a tail past the last 32) and groups of 20.
// INT8-LABEL: func.func @negative_int8_tail
// INT8-NOT: vpdpbusd
// INT8: vector.fma
// INT8-NOT: vpdpbusd
// INT8: return
func.func @negative_int8_tail(%x: tensor<1x100xf32>, %w: tensor<562xi8>) -> tensor<1x5xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_sym, group = 20, scale = f16>}
      : (tensor<1x100xf32>, tensor<562xi8>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

// Prefill (more than 8 rows: the GEMM) of a weight without units of 32
// codes of one scale (int8_asym in groups of 20) keeps the f32 GEMM on
// dequantized panels.
// INT8-LABEL: func.func @negative_prefill_asym_tail
// INT8-NOT: vpdpbusd
// INT8: return
func.func @negative_prefill_asym_tail(%x: tensor<9x100xf32>, %w: tensor<665xi8>) -> tensor<9x5xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_asym, group = 20, scale = f32>}
      : (tensor<9x100xf32>, tensor<665xi8>) -> tensor<9x5xf32>
  return %y : tensor<9x5xf32>
}

// -----

// Prefill of q4_0 (which the int8 GEMM reads on a VNNI target) without
// vnni, or without the option: the f32 GEMM; on avx2 without vnni too
// (vpmaddubsw is exact only for codes below 128; the GEMM takes no
// integer path there).
// NOVNNI-LABEL: func.func @negative_prefill_q4_0
// NOVNNI-NOT: vpdpbusd
// NOVNNI-NOT: xi32>
// NOVNNI: vector.fma
// NOVNNI-NOT: vpdpbusd
// NOVNNI: return
// AVX2-LABEL: func.func @negative_prefill_q4_0
// AVX2-NOT: vpdpbusd
// AVX2-NOT: vpmaddubsw
// AVX2-NOT: xi32>
// AVX2: vector.fma
// AVX2-NOT: vpmaddubsw
// AVX2: return
func.func @negative_prefill_q4_0(%x: tensor<13x96xf32>, %w: tensor<1998xi8>) -> tensor<13x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>}
      : (tensor<13x96xf32>, tensor<1998xi8>) -> tensor<13x37xf32>
  return %y : tensor<13x37xf32>
}

// -----

// Prefill of q6_k (which the int8 GEMM reads on a VNNI target, and whose
// decode GEMV takes vpmaddubsw on avx2) without vnni, or without the
// option, or on avx2: the f32 GEMM.
// NOVNNI-LABEL: func.func @negative_prefill_q6_k
// NOVNNI-NOT: vpdpbusd
// NOVNNI-NOT: xi32>
// NOVNNI: vector.fma
// NOVNNI-NOT: vpdpbusd
// NOVNNI: return
// AVX2-LABEL: func.func @negative_prefill_q6_k
// AVX2-NOT: vpdpbusd
// AVX2-NOT: vpmaddubsw
// AVX2-NOT: xi32>
// AVX2: vector.fma
// AVX2-NOT: vpmaddubsw
// AVX2: return
func.func @negative_prefill_q6_k(%x: tensor<13x256xf32>, %w: tensor<7770xi8>) -> tensor<13x37xf32> {
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q6_k>}
      : (tensor<13x256xf32>, tensor<7770xi8>) -> tensor<13x37xf32>
  return %y : tensor<13x37xf32>
}
