// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One case per error of #attn.quant and attn.quantized_matmul.

func.func @unknown_scheme(%x: tensor<1x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{unknown quantization scheme 'q5_0' (q8_0, q4_0, q4_k, q6_k, int8_sym, int8_asym, int4_sym or int4_asym)}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q5_0>} : (tensor<1x32xf32>, tensor<18xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @unknown_key(%x: tensor<1x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{expected `group = ...` or `scale = ...` (each at most once), got 'groups'}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, groups = 32, scale = f16>} : (tensor<1x32xf32>, tensor<18xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @repeated_key(%x: tensor<1x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{expected `group = ...` or `scale = ...` (each at most once), got 'group'}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, group = 32, group = 32, scale = f16>} : (tensor<1x32xf32>, tensor<18xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @int_without_group(%x: tensor<1x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{#attn.quant<int4_sym> needs `group = G` and `scale = f16` or `f32`}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_sym, scale = f16>} : (tensor<1x32xf32>, tensor<18xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @gguf_group(%x: tensor<1x64xf32>, %w: tensor<36xi8>) {
  // expected-error @+1 {{#attn.quant<q4_0> has fixed blocks of 32 elements, not group = 64}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0, group = 64>} : (tensor<1x64xf32>, tensor<36xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @gguf_scale(%x: tensor<1x256xf32>, %w: tensor<210xi8>) {
  // expected-error @+1 {{#attn.quant<q6_k> has f16 scales, not 'f32'}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q6_k, scale = f32>} : (tensor<1x256xf32>, tensor<210xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @group_not_positive(%x: tensor<1x32xf32>, %w: tensor<100xi8>) {
  // expected-error @+1 {{#attn.quant<int8_sym>: group must be positive, got 0}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_sym, group = 0, scale = f32>} : (tensor<1x32xf32>, tensor<100xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @int_scale_type(%x: tensor<1x32xf32>, %w: tensor<100xi8>) {
  // expected-error @+1 {{#attn.quant<int8_asym>: scale must be f16 or f32, got 'bf16'}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_asym, group = 32, scale = bf16>} : (tensor<1x32xf32>, tensor<100xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @int4_group(%x: tensor<1x80xf32>, %w: tensor<100xi8>) {
  // expected-error @+1 {{#attn.quant<int4_asym>: 4-bit codes are packed in chunks of 32, so the group must be a multiple of 32, got 40}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int4_asym, group = 40, scale = f16>} : (tensor<1x80xf32>, tensor<100xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @input_rank(%x: tensor<32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{'attn.quantized_matmul' op 'input' must have rank >= 2 ([batch..., M, K]), got shape 32}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<32xf32>, tensor<18xi8>) -> tensor<1xf32>
  return
}

// -----

func.func @element_types(%x: tensor<1x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{result element type 'bf16' differs from the input's 'f32'}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x32xf32>, tensor<18xi8>) -> tensor<1x1xbf16>
  return
}

// -----

func.func @input_f64(%x: tensor<1x32xf64>, %w: tensor<18xi8>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x32xf64>'}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x32xf64>, tensor<18xi8>) -> tensor<1x1xf64>
  return
}

// -----

func.func @weight_not_bytes(%x: tensor<1x32xf32>, %w: tensor<9xi16>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 8-bit signless integer values, but got 'tensor<9xi16>'}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x32xf32>, tensor<9xi16>) -> tensor<1x1xf32>
  return
}

// -----

func.func @dynamic_k(%x: tensor<1x?xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{K (the input's last dim) must be static, got input shape 1x?}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x?xf32>, tensor<18xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @dynamic_n(%x: tensor<1x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{N (the result's last dim) must be static, got result shape 1x?}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x32xf32>, tensor<18xi8>) -> tensor<1x?xf32>
  return
}

// -----

func.func @empty_k(%x: tensor<1x0xf32>, %w: tensor<0xi8>) {
  // expected-error @+1 {{N and K must be positive, got [N, K] = [4, 0]}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x0xf32>, tensor<0xi8>) -> tensor<1x4xf32>
  return
}

// -----

func.func @result_rows(%x: tensor<3x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{result shape 4x1 is not [batch..., M, N] for the input shape 3x32 (the same dims but the last)}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<3x32xf32>, tensor<18xi8>) -> tensor<4x1xf32>
  return
}

// -----

func.func @result_rank(%x: tensor<2x3x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{result shape 6x1 is not [batch..., M, N] for the input shape 2x3x32 (the same dims but the last)}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<2x3x32xf32>, tensor<18xi8>) -> tensor<6x1xf32>
  return
}

// -----

func.func @result_refined(%x: tensor<?x32xf32>, %w: tensor<18xi8>) {
  // expected-error @+1 {{result shape 3x1 is not [batch..., M, N] for the input shape ?x32 (the same dims but the last)}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<?x32xf32>, tensor<18xi8>) -> tensor<3x1xf32>
  return
}

// -----

func.func @k_not_whole_groups(%x: tensor<1x48xf32>, %w: tensor<27xi8>) {
  // expected-error @+1 {{K = 48 is not a multiple of the group of 32 elements of #attn.quant<q4_0>}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x48xf32>, tensor<27xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @k_not_whole_super_blocks(%x: tensor<1x384xf32>, %w: tensor<216xi8>) {
  // expected-error @+1 {{K = 384 is not a multiple of the group of 256 elements of #attn.quant<q4_k>}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_k>} : (tensor<1x384xf32>, tensor<216xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @weight_rank(%x: tensor<1x32xf32>, %w: tensor<1x18xi8>) {
  // expected-error @+1 {{'weight' must be a static 1-D tensor of bytes, got shape 1x18}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x32xf32>, tensor<1x18xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @weight_dynamic(%x: tensor<1x32xf32>, %w: tensor<?xi8>) {
  // expected-error @+1 {{'weight' must be a static 1-D tensor of bytes, got shape ?}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<1x32xf32>, tensor<?xi8>) -> tensor<1x1xf32>
  return
}

// -----

func.func @weight_size(%x: tensor<3x96xf32>, %w: tensor<600xi8>) {
  // expected-error @+1 {{'weight' has 600 bytes, but #attn.quant<q4_0> lays out an [N, K] = [37, 96] weight in 1998 bytes}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q4_0>} : (tensor<3x96xf32>, tensor<600xi8>) -> tensor<3x37xf32>
  return
}

// -----

// The int layouts' sections start at multiples of 64 bytes: codes 0..73,
// scales at 128 (f32 per channel, 8 bytes), zero points at 192, 194 in all.
func.func @weight_size_sections(%x: tensor<1x37xf32>, %w: tensor<76xi8>) {
  // expected-error @+1 {{'weight' has 76 bytes, but #attn.quant<int8_asym, group = 37, scale = f32> lays out an [N, K] = [2, 37] weight in 194 bytes}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<int8_asym, group = 37, scale = f32>} : (tensor<1x37xf32>, tensor<76xi8>) -> tensor<1x2xf32>
  return
}

// -----

func.func @weight_size_overflow(%x: tensor<1x4611686018427387904xf32>, %w: tensor<1xi8>) {
  // expected-error @+1 {{the size of an [N, K] = [8, 4611686018427387904] weight in #attn.quant<q8_0> does not fit in 64 bits}}
  %y = attn.quantized_matmul %x, %w {format = #attn.quant<q8_0>} : (tensor<1x4611686018427387904xf32>, tensor<1xi8>) -> tensor<1x8xf32>
  return
}
