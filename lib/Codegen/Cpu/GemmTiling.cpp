//===- GemmTiling.cpp - the blocking of CPU GEMMs and their panels --------===//

#include "attn/Codegen/Cpu/GemmTiling.h"

#include "attn/Codegen/Cpu/AmxTile.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/PairDotTile.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

GemmTiling cpu::getBaseTiling(Type ct, const Target &target) {
  GemmTiling t;
  t.lanes = target.getLanes(ct);
  t.nv = target.getAccumulatorRegisters() / t.mr;
  // The panel's columns are whole register tiles.
  t.nc = llvm::alignTo(t.nc, t.nv * t.lanes);
  return t;
}

GemmTiling cpu::getAmxTiling(GemmTiling t) {
  t.mr = kAmxBlock;
  t.mc = llvm::alignTo(t.mc, kAmxBlock);
  t.nc = llvm::alignTo(t.nc, kAmxBlock);
  t.kc = llvm::alignTo(t.kc, kAmxStepK);
  return t;
}

bool cpu::isAmxPanelType(ShapedType type) {
  return type.getElementType().isBF16() && type.getRank() == 4 &&
         type.hasStaticShape() && type.getDimSize(2) % (kAmxStepK / 2) == 0 &&
         type.getDimSize(3) % (2 * kAmxBlock) == 0;
}

RankedTensorType cpu::getPackedRhsType(Type element, int64_t k, int64_t n,
                                       const Target &target) {
  Type f32 = Float32Type::get(element.getContext());
  GemmTiling t = getBaseTiling(f32, target);
  // The blocks' extents for a static product, as emitWorkItem sizes them.
  int64_t kc = std::max<int64_t>(1, std::min(t.kc, k));
  int64_t nc = std::max<int64_t>(
      t.lanes, std::min<int64_t>(t.nc, llvm::alignTo(n, t.lanes)));
  if (target.amx && element.isBF16()) {
    // Whole AMX steps, as getAmxTiling pads its blocks; the pack zeroes
    // the padding.
    kc = llvm::alignTo(kc, kAmxStepK);
    nc = llvm::alignTo(nc, kAmxBlock);
  }
  int64_t nb = llvm::divideCeil(n, nc), kb = llvm::divideCeil(k, kc);
  if (element.isBF16())
    // Pairs of k (t.kc is even: only a single block of odd K has an odd
    // kc, whose last pair is padded with zero).
    return RankedTensorType::get(
        {nb, kb, static_cast<int64_t>(llvm::divideCeil(kc, 2)), 2 * nc},
        element);
  return RankedTensorType::get({nb, kb, kc, nc}, f32);
}

GemmTiling cpu::getPackedRhsTiling(GemmTiling t, ShapedType type) {
  bool pairs = type.getElementType().isBF16();
  t.kc = pairs ? 2 * type.getDimSize(2) : type.getDimSize(2);
  t.nc = pairs ? type.getDimSize(3) / 2 : type.getDimSize(3);
  return t;
}

bool cpu::isPackedRhsLowerable(RankedTensorType type, const Target &target) {
  Type element = type.getElementType();
  int64_t lanes = target.getLanes(Float32Type::get(type.getContext()));
  if (type.getRank() != 4 || !type.hasStaticShape())
    return false;
  if (element.isBF16())
    return target.bf16Dot && isPairDotWidth(lanes) &&
           type.getDimSize(3) % (2 * lanes) == 0;
  return element.isF32() && type.getDimSize(3) % lanes == 0;
}
