//===- QuantDotKernel.cpp - integer dots of the quantized GEMV ------------===//

#include "attn/Codegen/Cpu/QuantDotKernel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::attn::cpu;

QuantDotKernel::~QuantDotKernel() = default;

FunctionType mlir::attn::cpu::getVnniDotFunctionType(MLIRContext *context) {
  Type i32 = IntegerType::get(context, 32), i8 = IntegerType::get(context, 8);
  auto acc = VectorType::get({QuantDotKernel::kAccLanes}, i32);
  auto bytes = VectorType::get({QuantDotKernel::kStepBytes}, i8);
  return FunctionType::get(context, {acc, bytes, bytes}, {acc});
}

namespace {
/// vpdpbusd on ymm registers (the intrinsic LLVM selects as AVX-VNNI's VEX
/// form or AVX512-VNNI's EVEX form, whichever the target has): u8 x s8
/// quads summed into i32 lanes without saturation.
class VnniDotKernel : public QuantDotKernel {
public:
  VnniDotKernel(OpBuilder &b, Location loc) : QuantDotKernel(b, loc) {}

  Value accumulate(Value acc, Value codes, Value act) override {
    return func::CallOp::create(b, loc, kVnniDotFunction,
                                TypeRange{acc.getType()},
                                ValueRange{acc, codes, act})
        .getResult(0);
  }
};
} // namespace

std::unique_ptr<QuantDotKernel>
QuantDotKernel::create(OpBuilder &b, Location loc, ProductKernels kernels) {
  if (kernels.vector == VectorKernel::ByteDot)
    return std::make_unique<VnniDotKernel>(b, loc);
  return nullptr;
}
