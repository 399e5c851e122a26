//===- Target.h - what the CPU code is generated for ------------*- C++ -*-===//
//
// One description of the CPU the lowering generates code for: its vector
// width and the instruction families the microkernels may use. It is built
// once, from an LLVM TargetMachine (the tools: --mcpu/--mattr or the host)
// or from the pipeline's and passes' options (attn-opt); nothing in the
// lowering probes the host, and every pass that depends on the target reads
// it from here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_TARGET_H
#define ATTN_CODEGEN_CPU_TARGET_H

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir::attn {

/// The vector register width, in bits, that the CPU lowering tiles for
/// unless told otherwise: AVX2's (x86-64-v3).
inline constexpr int64_t kDefaultVectorBits = 256;

namespace cpu {

/// The instruction family of a product's vector kernel (the microkernel of
/// a GEMM, a decode GEMV, or attention's q.k^T and p.v).
enum class VectorKernel {
  /// FMAs on operands widened to the accumulator's type.
  Fma,
  /// AVX512-BF16's vdpbf16ps on bf16 pairs of k, accumulated in f32.
  PairDot,
  /// VNNI's vpdpbusd on u8 x s8 quads of k, accumulated in i32 (the
  /// quantized GEMV's integer path, QuantDotKernel.h): AVX512-VNNI's EVEX
  /// form on ymm registers (AVX512-VL).
  ByteDot,
  /// The same with AVX-VNNI's VEX form.
  ByteDotVex,
  /// AVX512-VNNI's EVEX form on zmm registers as well as ymm: the integer
  /// GEMV multiplies two units of 32 per step (QuantDotKernel.h).
  ByteDotWide,
  /// AVX2's vpmaddubsw (u8 x s8 pairs into saturating i16) and vpmaddwd
  /// (i16 pairs into i32) on ymm: exact for codes below 128 only.
  ByteMadd,
};

/// The kernels a product may run on a target, chosen once per op from the
/// target and the element types: the emitters keep their loop structure
/// and only add the shape conditions of their own blocking.
struct ProductKernels {
  VectorKernel vector = VectorKernel::Fma;
  /// AMX tiles run the product where the runtime says the process may use
  /// them (attnrt_amx_available), the vector kernel otherwise.
  bool amxTiles = false;
};

struct Target {
  /// Vector register width in bits: 128, 256 or 512. Vectors, register
  /// tiles and panel layouts are sized from it; code for a wider width
  /// still runs correctly where LLVM splits the vectors, only slower.
  int64_t vectorBits = kDefaultVectorBits;
  /// bf16 x bf16 products accumulated in f32 multiply pairs of k with
  /// AVX512-BF16's vdpbf16ps (x86vector.avx512.dot) on pair-packed panels
  /// instead of FMAs on panels widened to f32: a CPU that runs it at least
  /// half as fast per product as the FMA, or an AMX CPU (its fallback and
  /// its panels).
  bool bf16Dot = false;
  /// AMX-TILE and AMX-BF16: bf16 products (GEMMs, decode products, flash
  /// attention's q.k^T and p.v) run on AMX tiles where the runtime's
  /// attnrt_amx_available() says the process may, the paths above
  /// otherwise.
  bool amx = false;
  /// AVX512-BF16's vcvtneps2bf16 rounds f32 to bf16 (f32 subnormals then
  /// round to zero) instead of integer code.
  bool nativeBf16 = false;
  /// F16C converts f16 <-> f32; without it the conversions are expanded in
  /// integer code (LLVM would call compiler-rt).
  bool f16c = true;
  /// vpdpbusd (u8 x s8 quads summed into i32 lanes) on 256-bit registers:
  /// AVX-VNNI, or AVX512-VNNI with AVX512-VL. The quantized decode GEMV
  /// multiplies int8-quantized activations in integers with it (with the
  /// lowering's quantized-activations=int8; never otherwise: the numbers
  /// change).
  bool vnni = false;
  /// With vnni: the target has AVX-VNNI, whose VEX form of vpdpbusd the
  /// kernel then emits (else AVX512-VNNI's EVEX form).
  bool avxVnni = false;
  /// With vnni and 512-bit vectors: AVX512-VNNI with AVX512-BW, vpdpbusd
  /// on zmm registers (the kernel then emits the EVEX form at both widths
  /// and the GEMV steps through two units of 32 at a time).
  bool vnni512 = false;
  /// AVX2's integer instructions on ymm registers: without vnni the
  /// quantized GEMV's integer path multiplies 4- and 6-bit codes with
  /// vpmaddubsw and vpmaddwd (ByteMadd).
  bool avx2 = false;

  /// The number of vector registers: 32 with AVX-512, 16 below.
  int64_t getVectorRegisters() const { return vectorBits >= 512 ? 32 : 16; }
  /// The vector registers a register tile keeps its accumulators in: three
  /// quarters of them (a step's loads and broadcasts need the rest). Every
  /// register tile (GEMM, flash q.k^T and p.v, decode p.v) is sized from it.
  int64_t getAccumulatorRegisters() const {
    return getVectorRegisters() * 3 / 4;
  }
  /// Elements of `elementType` per vector register, at least 1.
  int64_t getLanes(Type elementType) const;
  /// Whether the vector width is one the lowering generates code for.
  static bool isValidVectorBits(int64_t bits) {
    return bits == 128 || bits == 256 || bits == 512;
  }
  /// The kernels of a product of `lhs` x `rhs` elements accumulated in
  /// `acc`: bf16 x bf16 in f32 multiplies pairs with bf16Dot and runs on
  /// AMX tiles with amx; i8 x i8 in i32 runs byte dots with vnni;
  /// everything else runs FMAs (for i8, on the operands widened to f32).
  ProductKernels getProductKernels(Type lhs, Type rhs, Type acc) const;
  /// An empty string when the description is consistent, else what is
  /// wrong with it (for a located error of the pass that parsed it).
  std::string validate() const;

  bool operator==(const Target &other) const {
    return vectorBits == other.vectorBits && bf16Dot == other.bf16Dot &&
           amx == other.amx && nativeBf16 == other.nativeBf16 &&
           f16c == other.f16c && vnni == other.vnni &&
           avxVnni == other.avxVnni && vnni512 == other.vnni512 &&
           avx2 == other.avx2;
  }
};

/// The target of `tm`: its CPU and features, with LLVM's scheduling model
/// (or a measured rate, where that model misrates an instruction) deciding
/// whether bf16 pair dots pay.
Target getTarget(const llvm::TargetMachine &tm);

} // namespace cpu
} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_TARGET_H
