//===- QuantizedEmbeddingToCpu.cpp - attn.quantized_embedding -------------===//
//
// Rows of a table stored quantized (#attn.quant, docs/quantization.md): the
// indices are one dim of R; each index is checked to lie in [0, N) (a
// run-time check, nn.Embedding's IndexError), and its row is dequantized
// in vector registers with attn.quantized_matmul's decoders (QuantDecoder)
// and stored, rounded to the result's type:
//
//   scf.for r < R
//     i = indices[r]; cf.assert 0 <= i < N (i clamped to 0 past it)
//     scf.for u < K / unit
//       per vector of the unit: out[r, u * unit + v * lanes ...] =
//         decodeVector(i, u, v)
//     the K % 32 last elements of an int8 row one by one (decodeScalar)
//
// The table is read only at the rows looked up; no float copy of it exists.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/QuantBlocks.h"
#include "attn/Codegen/Cpu/Target.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// The row index indices[r] as an index, checked to lie in [0, n) and
/// clamped to 0 past it (no read outside the table after a failed check).
static Value checkedRow(OpBuilder &b, Location loc, Value indices, Value r,
                        int64_t n) {
  Value raw = memref::LoadOp::create(b, loc, indices, ValueRange{r});
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value rows = arith::ConstantIndexOp::create(b, loc, n);
  Value ok = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, rows));
  cf::AssertOp::create(b, loc, ok, "index out of range");
  return arith::SelectOp::create(b, loc, ok, i, zero);
}

struct QuantizedEmbeddingOpLowering
    : OpRewritePattern<QuantizedEmbeddingOp> {
  QuantizedEmbeddingOpLowering(MLIRContext *ctx,
                               const AttnCpuLoweringOptions &options)
      : OpRewritePattern(ctx), target(options.target) {}

  LogicalResult matchAndRewrite(QuantizedEmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value flatIds = flattenIndices(rewriter, loc, op.getIndices());
    Value rows = getDimSize(rewriter, loc, flatIds, 0);
    auto idsType = cast<RankedTensorType>(flatIds.getType());
    auto flatType = RankedTensorType::get({idsType.getDimSize(0), op.getK()},
                                          op.getType().getElementType());
    Value flat = emitRows(rewriter, loc, op, flatIds, rows, flatType);
    rewriter.replaceOp(op, restoreShape(rewriter, loc, op, flat));
    return success();
  }

  /// The indices as one dim: a scalar as [1], several dims collapsed.
  static Value flattenIndices(OpBuilder &b, Location loc, Value ids) {
    auto type = cast<RankedTensorType>(ids.getType());
    if (type.getRank() == 1)
      return ids;
    if (type.getRank() == 0)
      return tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({1}, type.getElementType()), ids,
          ArrayRef<ReassociationIndices>{}, ArrayRef<OpFoldResult>{
                                                b.getIndexAttr(1)});
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    return tensor::CollapseShapeOp::create(b, loc, ids,
                                           ArrayRef<ReassociationIndices>{all});
  }

  /// The [R, K] rows back to the indices' shape followed by K.
  static Value restoreShape(OpBuilder &b, Location loc,
                            QuantizedEmbeddingOp op, Value flat) {
    int64_t rank = op.getIndices().getType().getRank();
    if (rank == 1)
      return flat;
    if (rank == 0)
      return tensor::CollapseShapeOp::create(
          b, loc, op.getType(), flat, ArrayRef<ReassociationIndices>{{0, 1}});
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(
          getAsOpFoldResult(getDimSize(b, loc, op.getIndices(), i)));
    sizes.push_back(b.getIndexAttr(op.getK()));
    SmallVector<ReassociationIndices> groups = {
        llvm::to_vector(llvm::seq<int64_t>(0, rank)), {rank}};
    return buildExpandShape(b, loc, op.getType(), flat, groups, sizes);
  }

  Value emitRows(OpBuilder &b, Location loc, QuantizedEmbeddingOp op,
                 Value ids, Value rows, RankedTensorType flatType) const {
    QuantizedWeight weight{op.getFormat(), op.getN(), op.getK()};
    Value idsBuf = toReadOnlyBuffer(b, loc, ids);
    Value wBuf = toReadOnlyBuffer(b, loc, op.getWeight());
    Type et = flatType.getElementType();
    Value out = allocAligned(
        b, loc, et,
        {flatType.isDynamicDim(0) ? OpFoldResult(rows)
                                  : b.getIndexAttr(flatType.getDimSize(0)),
         b.getIndexAttr(weight.k)});
    int64_t lanes = target.getLanes(b.getF32Type());
    QuantDecoder decoder(b, loc, weight, wBuf, lanes);
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    int64_t unit = decoder.getUnitElements();
    buildForLoop(b, loc, idx(0), rows, idx(1), [&](Value r) {
      Value i = checkedRow(b, loc, idsBuf, r, weight.n);
      buildForLoop(b, loc, idx(0), idx(decoder.getWholeUnits()), idx(1),
                   [&](Value u) {
        Value base = arith::MulIOp::create(b, loc, u, idx(unit));
        for (int64_t v = 0; v < decoder.getVectorsPerUnit(); ++v) {
          Value k = arith::AddIOp::create(b, loc, base, idx(v * lanes));
          vector::StoreOp::create(
              b, loc,
              castFloat(b, loc, decoder.decodeVector(i, u, v),
                        VectorType::get({lanes}, et)),
              out, ValueRange{r, k});
        }
      });
      for (int64_t k = decoder.getWholeUnits() * unit; k < weight.k; ++k)
        memref::StoreOp::create(
            b, loc, castFloat(b, loc, decoder.decodeScalar(i, idx(k)), et),
            out, ValueRange{r, idx(k)});
    });
    return bufferization::ToTensorOp::create(b, loc, flatType, out,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  cpu::Target target;
};

} // namespace

void mlir::attn::populateAttnQuantizedEmbeddingToCpuPatterns(
    RewritePatternSet &patterns, const AttnCpuLoweringOptions &options) {
  patterns.add<QuantizedEmbeddingOpLowering>(patterns.getContext(), options);
}
