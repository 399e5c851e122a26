//===- Target.cpp - what the CPU code is generated for --------------------===//

#include "attn/Codegen/Cpu/Target.h"

#include "attn/Codegen/Cpu/PairDotTile.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <memory>
#include <optional>

using namespace mlir;
using namespace mlir::attn;

int64_t cpu::Target::getLanes(Type elementType) const {
  return std::max<int64_t>(
      1, vectorBits / static_cast<int64_t>(elementType.getIntOrFloatBitWidth()));
}

cpu::ProductKernels cpu::Target::getProductKernels(Type lhs, Type rhs,
                                                   Type acc) const {
  ProductKernels kernels;
  if (lhs.isInteger(8) && rhs.isInteger(8) && acc.isInteger(32)) {
    if (vnni512)
      kernels.vector = VectorKernel::ByteDotWide;
    else if (vnni)
      kernels.vector = avxVnni ? VectorKernel::ByteDotVex : VectorKernel::ByteDot;
    else if (avx2)
      kernels.vector = VectorKernel::ByteMadd;
    return kernels;
  }
  if (!lhs.isBF16() || !rhs.isBF16() || !acc.isF32())
    return kernels;
  if (bf16Dot && isPairDotWidth(getLanes(acc)))
    kernels.vector = VectorKernel::PairDot;
  kernels.amxTiles = amx;
  return kernels;
}

std::string cpu::Target::validate() const {
  if (!isValidVectorBits(vectorBits))
    return ("vector-bits must be 128, 256 or 512, not " + Twine(vectorBits))
        .str();
  if (vnni512 && (!vnni || vectorBits != 512))
    return "vnni-512 needs vnni and vector-bits=512";
  if (avx2 && vectorBits < 256)
    return "avx2 needs vector-bits=256 or 512";
  return "";
}

/// The widest vector registers `tm` generates code for, in bits: 512 with
/// AVX-512F, 256 with AVX, else 128 (SSE, NEON).
static int64_t getTargetVectorBits(const llvm::TargetMachine &tm) {
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (sti->checkFeatures("+avx512f"))
    return 512;
  if (sti->checkFeatures("+avx"))
    return 256;
  return 128;
}

/// The reciprocal throughput (cycles per instruction) that `sti`'s
/// scheduling model gives the instruction `name`, or none.
static std::optional<double>
getReciprocalThroughput(const llvm::MCSubtargetInfo &sti,
                        const llvm::MCInstrInfo &mii, StringRef name) {
  const llvm::MCSchedModel &model = sti.getSchedModel();
  if (!model.hasInstrSchedModel())
    return std::nullopt;
  for (unsigned op = 0, e = mii.getNumOpcodes(); op < e; ++op) {
    if (mii.getName(op) != name)
      continue;
    const llvm::MCSchedClassDesc *desc =
        model.getSchedClassDesc(mii.get(op).getSchedClass());
    if (!desc || !desc->isValid() || desc->isVariant())
      return std::nullopt;
    return llvm::MCSchedModel::getReciprocalThroughput(sti, *desc);
  }
  return std::nullopt;
}

/// Reciprocal throughputs of VDPBF16PS, in FMAs of the same width, where
/// LLVM 22's scheduling model of a CPU misrates it. znver4: the model says
/// 3 cycles against the FMA's 1 for 512-bit registers; a loop of 12
/// independent accumulators on one Zen 4 core retires one vdpbf16ps per
/// cycle, as it does FMAs (bench/RESULTS.md, "Matrix products").
static std::optional<double> getMeasuredDotPerFma(StringRef cpu) {
  return llvm::StringSwitch<std::optional<double>>(cpu)
      .Case("znver4", 1.0)
      .Default(std::nullopt);
}

/// Whether bf16 GEMMs on `tm` should multiply pairs with AVX512-BF16's
/// vdpbf16ps (the lowering's bf16-dot): the target has the feature, and the
/// scheduling model of its CPU rates vdpbf16ps at more products per cycle
/// than the FMA of the widened operands (2 per lane against 1: its
/// reciprocal throughput under twice the FMA's, at the width of
/// getTargetVectorBits), or a measured rate where LLVM's model misrates
/// it (Zen 4). Only the model of a CPU that has AVX512-BF16 by definition
/// is trusted: another CPU's (a feature added with --mattr, a virtual
/// machine reporting an older model) is not calibrated for it.
static bool targetPrefersBf16Dot(const llvm::TargetMachine &tm) {
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (!sti->checkFeatures("+avx512bf16") || !tm.getMCInstrInfo())
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> cpuOnly(
      tm.getTarget().createMCSubtargetInfo(tm.getTargetTriple(),
                                           tm.getTargetCPU(), ""));
  if (!cpuOnly || !cpuOnly->checkFeatures("+avx512bf16"))
    return false;
  if (std::optional<double> measured =
          getMeasuredDotPerFma(tm.getTargetCPU());
      measured && getTargetVectorBits(tm) == 512)
    return *measured < 2;
  // The register forms at the lowering's vector width.
  StringRef suffix = getTargetVectorBits(tm) == 512   ? "Zr"
                     : getTargetVectorBits(tm) == 256 ? "Z256r"
                                                      : "Z128r";
  std::optional<double> dot = getReciprocalThroughput(
      *sti, *tm.getMCInstrInfo(), ("VDPBF16PS" + suffix).str());
  std::optional<double> fma = getReciprocalThroughput(
      *sti, *tm.getMCInstrInfo(), ("VFMADD231PS" + suffix).str());
  return dot && fma && *dot < 2 * *fma;
}

/// Whether bf16 GEMMs on `tm` run on AMX tiles (the lowering's amx): the
/// target (its CPU and --mattr, or the host's features) has amx-tile and
/// amx-bf16. The code still checks at run time that the OS lets the
/// process use them (attnrt_amx_available).
static bool targetHasAmx(const llvm::TargetMachine &tm) {
  return tm.getMCSubtargetInfo()->checkFeatures("+amx-tile,+amx-bf16");
}

/// Whether bf16 GEMMs on `tm` multiply pairs with vdpbf16ps where they do
/// not run on AMX tiles (the lowering's bf16-dot, and attn-cpu-prepack-
/// weights' bf16-pairs): targetPrefersBf16Dot, or an AMX target with
/// AVX512-BF16, whose pair path is the fallback for a process that may not
/// use the tiles and reads the same prepacked panels as the tiles.
static bool targetUsesBf16Pairs(const llvm::TargetMachine &tm) {
  return targetPrefersBf16Dot(tm) ||
         (targetHasAmx(tm) &&
          tm.getMCSubtargetInfo()->checkFeatures("+avx512bf16"));
}

cpu::Target cpu::getTarget(const llvm::TargetMachine &tm) {
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  Target target;
  target.vectorBits = getTargetVectorBits(tm);
  target.bf16Dot = targetUsesBf16Pairs(tm);
  target.amx = targetHasAmx(tm);
  target.nativeBf16 = sti->checkFeatures("+avx512bf16");
  target.f16c = sti->checkFeatures("+f16c");
  // The 256-bit vpdpbusd: AVX-VNNI's VEX form, or AVX512-VNNI's EVEX form
  // on ymm registers (AVX512-VL).
  target.avxVnni = sti->checkFeatures("+avxvnni");
  target.vnni =
      target.avxVnni || sti->checkFeatures("+avx512vnni,+avx512vl");
  target.avx2 = sti->checkFeatures("+avx2");
  target.vnni512 = target.vectorBits == 512 &&
                   sti->checkFeatures("+avx512vnni,+avx512vl,+avx512bw");
  return target;
}
