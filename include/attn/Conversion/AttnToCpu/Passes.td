//===- Passes.td - attn ops to CPU code --------------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_ATTNTOCPU_PASSES_TD
#define ATTN_CONVERSION_ATTNTOCPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnLowerToCpu : Pass<"attn-lower-to-cpu"> {
  let summary = "Lower every attn op to linalg/tensor/arith/math/scf on tensors";
  let description = [{
    Rewrites each attn op nested in the op it runs on (the pipeline runs it
    on each function) into upstream dialects on tensors, for static and
    dynamic (`?`) dims, ready for one-shot bufferization:

    - `attn.matmul` (batch dims broadcast NumPy style), and
      `linalg.matmul`/`linalg.batch_matmul` on tensors with their default
      maps and an f32/f64 result: a register-tiled GEMM in `vector` code on
      buffers (an `scf.forall` over batch x row blocks x column blocks; rhs
      panels packed to the compute type; a 6-row x N-vector FMA tile sized
      for `vector-bits`), accumulating in f32 (f64 for f64) and rounding
      once. With `bf16-dot`, bf16 x bf16 products accumulated in f32 pack
      their rhs panels in bf16 pairs of k instead (`pack[p, 2n + i] =
      rhs[2p + i, n]`, an odd K padded with a zero row) and multiply them
      with `x86vector.avx512.dot` (AVX512-BF16's vdpbf16ps, two products
      per f32 lane), broadcasting each lhs pair as one 32-bit value. With
      `amx`, such products call `attnrt_amx_available()` once and, when it
      returns 1, run on AMX tiles (`amx.tile_load`, `amx.tile_mulf`,
      `amx.tile_store`: 2 x 2 16x16 f32 C tiles per step of 32 k) on the
      pair-packed panel (grouped: each 16 columns' pair rows one after the
      other, so that a B tile is 16 consecutive 64-byte rows) and a bf16
      copy of the lhs block, both zero-padded to whole tiles; otherwise the
      code above. linalg's init is
      accumulated onto (a `linalg.fill` init only sets the start value); an
      f32 result whose one use is its rounding to bf16/f16 (a `linalg.generic`
      of `arith.truncf` alone, directly or through reshapes) is computed in
      the narrow type, rounded once in the GEMM's output loop, and the
      rounding goes. Elementwise generics that then read the result once
      (each the previous one's, with identity maps, other operands of the
      same shape, a body of ops that map onto vectors lane by lane: an
      activation, SiLU(gate) * up, a residual add) run in the same output
      loop (the dot products' stores for a few rows), on the accumulators
      in registers, where the last of them was; the tensors they read are
      reshaped back to the product's shape, and no intermediate tensor is
      written. The elementwise attn ops are lowered first, so that a
      product sees them as generics. Other linalg matmuls keep linalg's
      loops.
    - `attn.transpose`: `linalg.transpose`.
    - `attn.mul/div/add/sub/masked_fill/where/cast/dropout/repeat_interleave`:
      elementwise `linalg.generic`s with NumPy broadcasting maps.
    - `attn.softmax`: max, sum-of-exp and normalise generics in f32.
    - `attn.sdpa`: `math` materialises the `[..., L, S]` scores; `flash` is an
      `scf.forall` over batch dims x query blocks with an `scf.for` over
      key/value blocks doing online softmax on block-sized scratch only, in
      register-tiled `vector` code on buffers (`bufferization.to_buffer` of
      the operands, the result a `bufferization.to_tensor` of a new buffer).
      `auto` picks flash unless `dropout_p > 0`. A string attribute
      `attn.cpu_backend` ("auto", "flash", "math") on an attn.sdpa overrides
      the option for that op.

    Dropout (attn.dropout, and attn.sdpa with `dropout_p > 0` on the math
    path) is deterministic: element `i` (row-major) is kept iff the top 24
    bits of a MurmurHash3 finaliser of `(i, seed)` are >= `p * 2^24`, with
    `seed` the op's optional `seed` i64 attribute (0 when absent). attn.sdpa
    drops out its `[..., L, S]` probabilities with the stream attn.dropout
    uses on that tensor.

    Dynamic dims do not broadcast at run time: where a `?` dim meets another
    size, a `cf.assert` checks they are equal.

    Each op's code is inserted where the op is, so an op bracketed by
    `attn-instrument-trace` keeps its code between its two trace calls.

    An op that cannot be lowered (e.g. a cast from f64 to f16) is a located
    error and the pass fails.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::affine::AffineDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect", "::mlir::amx::AMXDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
  let options = [
    Option<"backend", "backend", "::mlir::attn::SdpaCpuBackend",
           /*default=*/"::mlir::attn::SdpaCpuBackend::Auto",
           "attn.sdpa implementation: auto (flash unless dropout), flash "
           "(tiled online softmax) or math (materialised scores)",
           "::mlir::attn::sdpaCpuBackendValues()">,
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "Query rows per flash block (0: chosen for the target; rounded "
           "up to a multiple of the vector lanes)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"0",
           "Key/value rows per flash block (0: chosen for the target)">,
    Option<"vectorBits", "vector-bits", "int64_t",
           /*default=*/"::mlir::attn::kDefaultVectorBits",
           "Vector register width of the target in bits: 128, 256 or 512 "
           "(the code never depends on the host's)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "The target has AVX512-BF16: bf16 x bf16 GEMMs accumulated in "
           "f32 multiply pairs of k with x86vector.avx512.dot (vdpbf16ps) "
           "on pair-packed bf16 panels">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "The target has AMX (amx-tile, amx-bf16): bf16 x bf16 GEMMs "
           "accumulated in f32 call attnrt_amx_available() once and run on "
           "AMX tiles when it returns 1, on the vector path otherwise (the "
           "pass must then run on the module, which gets the function's "
           "declaration)">,
    Option<"vnni", "vnni", "bool", /*default=*/"false",
           "The target has an integer dot product on 256-bit registers "
           "(AVX-VNNI, or AVX512-VNNI with AVX512-VL): vpdpbusd multiplies "
           "u8 by s8 (the quantized GEMV with quantized-activations=int8)">,
    Option<"avxVnni", "avx-vnni", "bool", /*default=*/"false",
           "With vnni: the target has AVX-VNNI, whose VEX form of vpdpbusd "
           "the kernel emits (else AVX512-VNNI's EVEX form)">,
    Option<"avx2", "avx2", "bool", /*default=*/"false",
           "The target has AVX2: without vnni, the quantized GEMV's integer "
           "path (quantized-activations=int8) multiplies weights of 4- and "
           "6-bit codes (q4_0, q4_k, q6_k, int4_*) with vpmaddubsw and "
           "vpmaddwd; 8-bit codes stay on the f32 path">,
    Option<"vnni512", "vnni-512", "bool", /*default=*/"false",
           "With vnni and vector-bits=512: the target has AVX512-VNNI and "
           "AVX512-BW; the quantized GEMV's integer path multiplies two "
           "units of 32 per vpdpbusd on zmm registers where the weight's "
           "codes have a fixed offset (q8_0, q4_0, int8_sym, int4_sym) and "
           "its rows an even number of units">,
    Option<"quantizedActivations", "quantized-activations",
           "::mlir::attn::QuantizedActivations",
           /*default=*/"::mlir::attn::QuantizedActivations::None",
           "none: quantized products multiply their f32 inputs; int8: the "
           "decode GEMV of attn.quantized_matmul quantizes each input row "
           "to int8 per block of 32 (scale max|x| / 127, round to nearest "
           "even) and multiplies in integers where the target has vnni and "
           "the weight's scheme suits it (q8_0, q4_0, q4_k, q6_k, int4_*, int8_* with "
           "K and the group multiples of 32), in f32 otherwise",
           "::mlir::attn::quantizedActivationsValues()">,
    Option<"positionBound", "position-bound", "int64_t",
           /*default=*/"::mlir::attn::kDefaultPositionBound",
           "Dynamic lengths up to which a score_mod region's positions are "
           "computed in 32 bits (1 to 2^30; longer ones run the 64-bit "
           "code)">
  ];
}

#endif // ATTN_CONVERSION_ATTNTOCPU_PASSES_TD
