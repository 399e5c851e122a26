//===- QuantDotKernel.cpp - integer dots of the quantized GEMV ------------===//

#include "attn/Codegen/Cpu/QuantDotKernel.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::attn::cpu;

QuantDotKernel::~QuantDotKernel() = default;

namespace {
/// vpdpbusd on ymm registers, u8 x s8 quads summed into i32 lanes without
/// saturation, as side-effect-free inline assembly: LLVM's intrinsic would
/// be a call (llvm.call_intrinsic, or a func.call of a declaration named
/// after it) of unknown memory effects, which the buffer deallocation
/// rejects and which keeps SCF-to-OpenMP's memref.alloca_scope around a
/// parallel loop's body (it may allocate), which the loops' conversion to
/// blocks then breaks. `vex`: AVX-VNNI's VEX form (the assembler picks
/// the EVEX form, which needs AVX512-VNNI and AVX512-VL, unless told).
/// `wide`: the EVEX form on zmm registers too, whose operands may be any
/// of the 32 vector registers ("v").
class VnniDotKernel : public QuantDotKernel {
public:
  VnniDotKernel(OpBuilder &b, Location loc, bool vex, bool wide)
      : QuantDotKernel(b, loc), vex(vex), wide(wide) {}

  bool isWide() const override { return wide; }

  Value accumulate(Value acc, Value codes, Value act) override {
    assert((wide || cast<VectorType>(acc.getType()).getNumElements() ==
                        kAccLanes) &&
           "a zmm step on a ymm kernel");
    // AT&T order: vpdpbusd b (s8), a (u8), dst; dst is tied to acc ($3).
    StringRef text = vex ? "{vex} vpdpbusd $2, $1, $0" : "vpdpbusd $2, $1, $0";
    return LLVM::InlineAsmOp::create(
               b, loc, acc.getType(), ValueRange{codes, act, acc}, text,
               wide ? "=v,v,v,0" : "=x,x,x,0", /*has_side_effects=*/false,
               /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  }

private:
  bool vex, wide;
};
} // namespace

std::unique_ptr<QuantDotKernel>
QuantDotKernel::create(OpBuilder &b, Location loc, ProductKernels kernels) {
  if (kernels.vector == VectorKernel::ByteDot ||
      kernels.vector == VectorKernel::ByteDotVex ||
      kernels.vector == VectorKernel::ByteDotWide)
    return std::make_unique<VnniDotKernel>(
        b, loc, kernels.vector == VectorKernel::ByteDotVex,
        kernels.vector == VectorKernel::ByteDotWide);
  return nullptr;
}
