//===- QuantDotKernel.cpp - integer dots of the quantized GEMV ------------===//

#include "attn/Codegen/Cpu/QuantDotKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn::cpu;

QuantDotKernel::~QuantDotKernel() = default;

namespace {
/// Side-effect-free inline assembly of `text` on `operands` (AT&T order:
/// the last operand is the destination), with `constraints`.
Value createAsm(OpBuilder &b, Location loc, Type type, ValueRange operands,
                StringRef text, StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             b, loc, type, operands, text, constraints,
             /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
             ArrayAttr())
      .getResult(0);
}
} // namespace

Value QuantDotKernel::multiplyPairs(Value x, Value y) {
  auto type = cast<VectorType>(x.getType());
  auto pairs = VectorType::get({2 * type.getNumElements()}, b.getI16Type());
  auto asPairs = [&](Value v) {
    return vector::BitCastOp::create(b, loc, pairs, v).getResult();
  };
  // zmm operands (and any of the 32 registers) need the EVEX form.
  bool zmm = type.getNumElements() * 32 == 512;
  return createAsm(b, loc, type, ValueRange{asPairs(x), asPairs(y)},
                   "vpmaddwd $2, $1, $0", zmm ? "=v,v,v" : "=x,x,x");
}

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
  bool takesFullBytes() const override { return true; }

  Value accumulate(Value acc, Value codes, Value act) override {
    assert((wide || cast<VectorType>(acc.getType()).getNumElements() ==
                        kAccLanes) &&
           "a zmm step on a ymm kernel");
    // AT&T order: vpdpbusd b (s8), a (u8), dst; dst is tied to acc ($3).
    StringRef text = vex ? "{vex} vpdpbusd $2, $1, $0" : "vpdpbusd $2, $1, $0";
    return createAsm(b, loc, acc.getType(), ValueRange{codes, act, acc}, text,
                     wide ? "=v,v,v,0" : "=x,x,x,0");
  }

private:
  bool vex, wide;
};

/// AVX2: vpmaddubsw multiplies u8 codes by s8 activations and adds each
/// pair into an i16 with saturation (exact while a pair's sum fits: codes
/// below 128, |act| <= 127, 2 * 127 * 127 < 2^15), vpmaddwd adds each pair
/// of i16 into an i32 lane (times ones), then the lanes are added to acc:
/// lane i gets the same 4 products as vpdpbusd's. Inline assembly for the
/// reason above.
class MaddDotKernel : public QuantDotKernel {
public:
  MaddDotKernel(OpBuilder &b, Location loc) : QuantDotKernel(b, loc) {}

  bool isWide() const override { return false; }
  bool takesFullBytes() const override { return false; }

  Value accumulate(Value acc, Value codes, Value act) override {
    auto i16Type = VectorType::get({16}, b.getI16Type());
    // AT&T order: vpmaddubsw b (s8), a (u8), dst.
    Value pairs = createAsm(b, loc, i16Type, ValueRange{codes, act},
                            "vpmaddubsw $2, $1, $0", "=x,x,x");
    Value ones = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(i16Type, b.getI16IntegerAttr(1)));
    auto laneType = cast<VectorType>(acc.getType());
    auto asLanes = [&](Value v) {
      return vector::BitCastOp::create(b, loc, laneType, v).getResult();
    };
    Value quads = multiplyPairs(asLanes(pairs), asLanes(ones));
    return arith::AddIOp::create(b, loc, acc, quads);
  }
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
  if (kernels.vector == VectorKernel::ByteMadd)
    return std::make_unique<MaddDotKernel>(b, loc);
  return nullptr;
}
