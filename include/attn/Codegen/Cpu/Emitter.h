//===- Emitter.h - the base of the CPU kernel emitters --------------------===//
//
// The flash and decode attention, GEMM and GEMV lowerings emit their loops
// op by op on buffers. What they all need lives here once: the builder and
// location, the compute type and its vector, and short builders for index
// arithmetic, constants, loops and buffers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_EMITTER_H
#define ATTN_CODEGEN_CPU_EMITTER_H

#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/RegisterTile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::attn::cpu {

class Emitter {
protected:
  /// Emits at `b`'s insertion point; arithmetic in `computeType`, vectors
  /// of `lanes` of it.
  Emitter(OpBuilder &b, Location loc, Type computeType, int64_t lanes)
      : b(b), loc(loc), ct(computeType),
        vecType(VectorType::get({lanes}, computeType)) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value minu(Value x, Value y) {
    return arith::MinUIOp::create(b, loc, x, y);
  }
  /// ceil(x / d), a constant when x is one.
  OpFoldResult ceilDiv(Value x, int64_t d) {
    if (std::optional<int64_t> c = getConstantIntValue(x))
      return b.getIndexAttr(llvm::divideCeil(static_cast<uint64_t>(*c), d));
    return arith::CeilDivUIOp::create(b, loc, x, idx(d)).getResult();
  }
  /// A compute-type scalar constant.
  Value fconst(double v) { return createFloatConstant(b, loc, ct, v); }
  Value toBuffer(Value tensor) { return toReadOnlyBuffer(b, loc, tensor); }
  /// A 64-byte aligned compute-type buffer.
  Value alloc(ArrayRef<OpFoldResult> sizes) {
    return allocAligned(b, loc, ct, sizes);
  }
  void forLoop(Value lo, Value hi, Value step,
               function_ref<void(Value)> body) {
    buildForLoop(b, loc, lo, hi, step, body);
  }
  void forGroups(Value lo, Value hi, int64_t group, GroupFn body) {
    cpu::forGroups(b, loc, lo, hi, group, body);
  }

  OpBuilder &b;
  Location loc;
  /// The compute type and its vector.
  Type ct;
  VectorType vecType;
};

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_EMITTER_H
