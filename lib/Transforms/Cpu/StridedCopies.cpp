//===- StridedCopies.cpp - strided memref.copy as vector loops -----------===//
//
// attn-cpu-lower-strided-copies: a memref.copy between buffers whose rows
// (last dimension) are contiguous but which are not dense as a whole (a
// KV cache's rows and a dense copy of them, a slice of a wider tensor)
// becomes a loop nest over the rows that moves each row in whole vectors
// and one masked vector for its last elements. memref-to-llvm would lower
// it to the MLIR runtime's memrefCopy, which walks a generic index one
// element at a time; copies of dense buffers (llvm.memcpy there) and of
// rows with another stride are left to it.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPULOWERSTRIDEDCOPIES
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// Whether memref-to-llvm copies `type` with one memcpy: the identity
/// layout, or a static shape whose strides are dense row-major.
static bool isCopiedWhole(MemRefType type) {
  return type.getLayout().isIdentity() ||
         (type.hasStaticShape() && type.getNumElements() > 0 &&
          memref::isStaticShapeAndContiguousRowMajor(type));
}

/// Whether the last dimension of `type` has stride 1.
static bool hasContiguousRows(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The vector type a row of `type` moves in, or none when its elements are
/// not whole bytes (i1 buffers hold a byte per element, vectors of i1 a
/// bit).
static VectorType getRowVectorType(MemRefType type, int64_t vectorBits) {
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return nullptr;
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits % 8 != 0 || bits > (unsigned)vectorBits)
    return nullptr;
  return VectorType::get({vectorBits / (int64_t)bits}, element);
}

static bool isRowCopy(memref::CopyOp copy, int64_t vectorBits) {
  auto source = dyn_cast<MemRefType>(copy.getSource().getType());
  auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
  if (!source || !target || source.getRank() == 0 ||
      source.getElementType() != target.getElementType())
    return false;
  if (isCopiedWhole(source) && isCopiedWhole(target))
    return false;
  return hasContiguousRows(source) && hasContiguousRows(target) &&
         getRowVectorType(source, vectorBits);
}

/// for each row index ivs: target[ivs, :] = source[ivs, :] in vectors of
/// `vecType`, the last (n mod lanes) elements by a masked load and store.
static void emitRowCopies(OpBuilder &b, Location loc, Value source,
                          Value target, VectorType vecType) {
  int64_t rank = cast<MemRefType>(source.getType()).getRank();
  // Sizes and constants ahead of the loops.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lanes =
      arith::ConstantIndexOp::create(b, loc, vecType.getNumElements());
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < rank; ++dim)
    sizes.push_back(memref::DimOp::create(b, loc, source, dim));
  Value n = sizes.back();
  Value full = arith::SubIOp::create(
      b, loc, n, arith::RemUIOp::create(b, loc, n, lanes));
  Value hasTail =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, full, n);
  auto maskType = VectorType::get(vecType.getShape(), b.getI1Type());
  Value mask = vector::CreateMaskOp::create(
      b, loc, maskType, ValueRange{arith::SubIOp::create(b, loc, n, full)});
  Value pass =
      arith::ConstantOp::create(b, loc, vecType, b.getZeroAttr(vecType));
  SmallVector<Value> ivs;
  OpBuilder::InsertionGuard guard(b);
  for (int64_t dim = 0; dim + 1 < rank; ++dim) {
    auto loop = scf::ForOp::create(b, loc, zero, sizes[dim], one);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    ivs.push_back(loop.getInductionVar());
  }
  auto at = [&](Value column) {
    SmallVector<Value> indices(ivs);
    indices.push_back(column);
    return indices;
  };
  auto vectors = scf::ForOp::create(b, loc, zero, full, lanes);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(vectors.getBody()->getTerminator());
    Value j = vectors.getInductionVar();
    Value v = vector::LoadOp::create(b, loc, vecType, source, at(j));
    vector::StoreOp::create(b, loc, v, target, at(j));
  }
  auto tail = scf::IfOp::create(b, loc, hasTail, /*withElseRegion=*/false);
  b.setInsertionPoint(tail.thenBlock()->getTerminator());
  Value v = vector::MaskedLoadOp::create(b, loc, vecType, source, at(full),
                                         mask, pass);
  vector::MaskedStoreOp::create(b, loc, target, at(full), mask, v);
}

namespace {
struct AttnCpuLowerStridedCopiesPass
    : public attn::impl::AttnCpuLowerStridedCopiesBase<
          AttnCpuLowerStridedCopiesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (vectorBits < 8) {
      getOperation()->emitError("vector-bits must be at least 8, not ")
          << static_cast<int64_t>(vectorBits);
      return signalPassFailure();
    }
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      if (isRowCopy(copy, vectorBits))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      VectorType vecType = getRowVectorType(
          cast<MemRefType>(copy.getSource().getType()), vectorBits);
      emitRowCopies(b, copy.getLoc(), copy.getSource(), copy.getTarget(),
                    vecType);
      copy->erase();
    }
  }
};
} // namespace
