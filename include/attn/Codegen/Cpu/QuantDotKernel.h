//===- QuantDotKernel.h - integer dots of the quantized GEMV ----*- C++ -*-===//
//
// The instruction family of the quantized decode GEMV's integer path
// (attn.quantized_matmul with quantized-activations=int8,
// QuantizedMatmulToCpu.cpp): one step multiplies 32 unsigned 8-bit weight
// codes by 32 signed 8-bit activations and adds the products, four per
// lane, to 8 i32 lanes. The lowering keeps everything else: quantizing
// the activations, the codes' offsets, the scales and the f32
// accumulators. A product's kernel is chosen once, from
// Target::getProductKernels(i8, i8, i32), by QuantDotKernel::create.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_QUANTDOTKERNEL_H
#define ATTN_CODEGEN_CPU_QUANTDOTKERNEL_H

#include "attn/Codegen/Cpu/Target.h"

#include "mlir/IR/Builders.h"

#include <memory>

namespace mlir::attn::cpu {

class QuantDotKernel {
public:
  virtual ~QuantDotKernel();

  /// Bytes of K per step and the i32 lanes of a step's accumulator.
  static constexpr int64_t kStepBytes = 32;
  static constexpr int64_t kAccLanes = 8;
  /// The same for a wide step (isWide()): two steps' bytes in one.
  static constexpr int64_t kWideStepBytes = 2 * kStepBytes;
  static constexpr int64_t kWideAccLanes = 2 * kAccLanes;

  /// The kernel of `kernels` (Target::getProductKernels(i8, i8, i32)):
  /// VNNI's vpdpbusd for ByteDot (EVEX) and ByteDotVex (VEX), both on ymm,
  /// and ByteDotWide (EVEX on zmm and ymm); AVX2's vpmaddubsw and vpmaddwd
  /// for ByteMadd (codes below 128); or null
  /// where the target has no integer dot product (the GEMV then
  /// multiplies in f32).
  static std::unique_ptr<QuantDotKernel> create(OpBuilder &b, Location loc,
                                                ProductKernels kernels);

  /// Whether accumulate also takes wide steps (512-bit registers).
  virtual bool isWide() const = 0;
  /// Whether accumulate is exact for any unsigned code (0..255), or only
  /// for codes below 128 (AVX2's saturating pairs in i16).
  virtual bool takesFullBytes() const = 0;

  /// `acc` (vector<8xi32>) plus, in lane i, sum_{j < 4} codes[4i + j] *
  /// act[4i + j], with `codes` (vector<32xi8>) unsigned (0..255) and `act`
  /// (vector<32xi8>) signed; exact (no saturation). On a wide kernel also
  /// vector<16xi32> with vector<64xi8> operands.
  virtual Value accumulate(Value acc, Value codes, Value act) = 0;

  /// Lane i of `x` and `y` (vector<8xi32>, or vector<16xi32> on a wide
  /// kernel) as pairs of i16, multiplied and added (vpmaddwd): x[i] & 0xffff
  /// times y[i] & 0xffff plus the two high halves' product, each half
  /// signed; exact.
  Value multiplyPairs(Value x, Value y);

protected:
  QuantDotKernel(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_QUANTDOTKERNEL_H
