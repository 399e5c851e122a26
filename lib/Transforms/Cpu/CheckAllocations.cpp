//===- CheckAllocations.cpp - run-time checks of memref.alloc -------------===//
//
// attn-check-allocations: a dynamic buffer size that overflows 64 bits, and
// a malloc that returns null, fail a cf.assert (the runtime's check-failure
// handler once attn-check-failure-calls has run) instead of corrupting
// memory or faulting.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCHECKALLOCATIONS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// The largest byte size accepted: the lowering adds the alignment (at most
/// a page here) to the size it passes to malloc.
static constexpr int64_t kMaxBytes = INT64_MAX - 4096;

/// "file:line:col" of the first file location in `loc`, else "".
static std::string describeLocation(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file)
      return WalkResult::advance();
    text = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
            ":" + Twine(file.getColumn()))
               .str();
    return WalkResult::interrupt();
  });
  return text;
}

/// "the buffer of memref<...> (for the op at file:line:col)".
static std::string describeBuffer(memref::AllocOp alloc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the buffer of " << alloc.getType();
  std::string where = describeLocation(alloc.getLoc());
  if (!where.empty())
    os << " (for the op at " << where << ")";
  return text;
}

/// Bytes per element in memory (i1 takes a byte).
static int64_t getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  return 0;
}

namespace {
struct AttnCheckAllocationsPass
    : public attn::impl::AttnCheckAllocationsBase<AttnCheckAllocationsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp op) { allocs.push_back(op); });
    for (memref::AllocOp alloc : allocs)
      if (failed(checkAllocation(alloc)))
        return signalPassFailure();
  }

  /// Overflow checks of the byte size before `alloc` (when it has dynamic
  /// sizes), a null check after it.
  LogicalResult checkAllocation(memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    int64_t elementBytes = getElementBytes(type.getElementType());
    if (elementBytes == 0)
      return success(); // Not a buffer of scalars: nothing we can size.
    // The static part of the size, checked now.
    int64_t staticBytes = elementBytes;
    for (int64_t dim : type.getShape())
      if (!ShapedType::isDynamic(dim) &&
          (llvm::MulOverflow(staticBytes, dim, staticBytes) ||
           staticBytes > kMaxBytes))
        return alloc.emitError("the buffer of ")
               << type << " needs 2^63 bytes or more (its static sizes "
               << "overflow)";
    OpBuilder b(alloc);
    Location loc = alloc.getLoc();
    Type i64 = b.getI64Type();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    Value bytes = constant(staticBytes);
    Value fits = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    for (Value size : alloc.getDynamicSizes()) {
      Value n = arith::IndexCastOp::create(b, loc, i64, size);
      auto product = arith::MulUIExtendedOp::create(b, loc, bytes, n);
      Value noHigh = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           product.getHigh(), constant(0));
      // Sizes are >= 0 (the argument checks), so the low half is the product
      // when it is below kMaxBytes as a signed number.
      Value small =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                product.getLow(), constant(kMaxBytes));
      fits = arith::AndIOp::create(
          b, loc, fits, arith::AndIOp::create(b, loc, noHigh, small));
      bytes = product.getLow();
    }
    if (!alloc.getDynamicSizes().empty())
      cf::AssertOp::create(b, loc, fits,
                           describeBuffer(alloc) +
                               " needs 2^63 bytes or more (its run-time "
                               "sizes overflow)");
    b.setInsertionPointAfter(alloc);
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, alloc);
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    Value allocated = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, pointer, zeroIndex);
    Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        bytes, constant(0));
    cf::AssertOp::create(b, loc,
                         arith::OrIOp::create(b, loc, allocated, empty),
                         "out of memory: allocating " + describeBuffer(alloc) +
                             " failed");
    return success();
  }
};
} // namespace
