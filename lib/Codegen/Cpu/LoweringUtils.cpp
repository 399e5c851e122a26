//===- LoweringUtils.cpp - shared helpers of the attn-to-CPU lowering -----===//

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

bool cpu::isSupportedFloatCast(Type from, Type to) {
  // f64 -> f16/bf16 would need either a libcall that the JIT may not find or
  // two roundings (f64 -> f32 -> f16), which is not the contract's result.
  if (from.isF64() && (to.isF16() || to.isBF16()))
    return false;
  return true;
}

double cpu::roundToType(Type type, double value) {
  APFloat f(value);
  bool losesInfo = false;
  (void)f.convert(cast<FloatType>(type).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &losesInfo);
  bool ignored;
  (void)f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &ignored);
  return f.convertToDouble();
}

Value cpu::createFloatConstant(OpBuilder &b, Location loc, Type type,
                               double value) {
  APFloat f(value);
  bool losesInfo = false;
  (void)f.convert(cast<FloatType>(type).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &losesInfo);
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, f));
}

Value cpu::createFloatConstantOfType(OpBuilder &b, Location loc, Type type,
                                     double value) {
  auto vt = dyn_cast<VectorType>(type);
  if (!vt)
    return createFloatConstant(b, loc, type, value);
  Value scalar = createFloatConstant(b, loc, vt.getElementType(), value);
  return vector::BroadcastOp::create(b, loc, vt, scalar);
}

Value cpu::buildZeroWhereAllMasked(OpBuilder &b, Location loc, Value max,
                                   Value p) {
  Value negInf = createFloatConstantOfType(
      b, loc, max.getType(), -std::numeric_limits<double>::infinity());
  Value allMasked =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max, negInf);
  Value zero = createFloatConstantOfType(b, loc, p.getType(), 0.0);
  return arith::SelectOp::create(b, loc, allMasked, zero, p);
}

Value cpu::getDimSize(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  return tensor::DimOp::create(b, loc, tensor, dim);
}

Value cpu::buildExpandShape(OpBuilder &b, Location loc, RankedTensorType type,
                            Value x, ArrayRef<ReassociationIndices> groups,
                            ArrayRef<OpFoldResult> sizes) {
  bool splitsDynamic = llvm::any_of(groups, [&](const ReassociationIndices &g) {
    return llvm::count_if(g, [&](int64_t d) { return type.isDynamicDim(d); }) >
           1;
  });
  if (!splitsDynamic)
    return tensor::ExpandShapeOp::create(b, loc, type, x, groups, sizes);
  Value shape = tensor::FromElementsOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, sizes));
  return tensor::ReshapeOp::create(b, loc, type, x, shape);
}

AffineMap cpu::getBroadcastMap(RankedTensorType operandType,
                               ArrayRef<int64_t> resultShape, unsigned numLoops,
                               unsigned firstLoop, MLIRContext *ctx) {
  int64_t rank = operandType.getRank();
  int64_t resultRank = resultShape.size();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t r = resultRank - rank + i;
    if (operandType.getDimSize(i) == 1 && resultShape[r] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(firstLoop + r, ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

void cpu::assertEqualSizes(OpBuilder &b, Location loc, Value a, Value c,
                           StringRef message) {
  std::optional<int64_t> ca = getConstantIntValue(a);
  std::optional<int64_t> cc = getConstantIntValue(c);
  if (ca && cc && *ca == *cc)
    return;
  Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, c);
  cf::AssertOp::create(b, loc, eq, message);
}

/// The broadcast size of result dim `r` when every operand has a static size
/// there (the result type may still say `?`).
static Value staticBroadcastSize(OpBuilder &b, Location loc,
                                 ValueRange operands, int64_t r,
                                 int64_t resultRank) {
  int64_t size = 1;
  for (Value operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t i = r - (resultRank - type.getRank());
    if (i >= 0 && type.getDimSize(i) != 1)
      size = type.getDimSize(i);
  }
  return arith::ConstantIndexOp::create(b, loc, size);
}

SmallVector<Value> cpu::getBroadcastDynamicSizes(OpBuilder &b, Location loc,
                                                 RankedTensorType resultType,
                                                 ValueRange operands) {
  SmallVector<Value> sizes;
  int64_t resultRank = resultType.getRank();
  for (int64_t r = 0; r < resultRank; ++r) {
    SmallVector<Value> candidates;
    for (Value operand : operands) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t i = r - (resultRank - type.getRank());
      if (i < 0 || !type.isDynamicDim(i))
        continue;
      candidates.push_back(tensor::DimOp::create(b, loc, operand, i));
    }
    // The size every operand dim that does not broadcast must have: the
    // static result size, else the first dynamic operand size.
    Value size;
    if (!resultType.isDynamicDim(r))
      size = arith::ConstantIndexOp::create(b, loc, resultType.getDimSize(r));
    else if (!candidates.empty())
      size = candidates.front();
    else
      size = staticBroadcastSize(b, loc, operands, r, resultRank);
    for (Value c : candidates)
      if (c != size)
        assertEqualSizes(b, loc, size, c,
                         "attn: dynamic dims that broadcast must be equal at "
                         "run time (a run-time size-1 broadcast is not "
                         "supported)");
    if (resultType.isDynamicDim(r))
      sizes.push_back(size);
  }
  return sizes;
}

Value cpu::createEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                       ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamicSizes);
}

Value cpu::createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                        ValueRange dynamicSizes, double value) {
  Value empty = createEmpty(b, loc, type, dynamicSizes);
  Value cst = createFloatConstant(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{empty})
      .getResult(0);
}

/// True when `v`'s buffer is one the lowering allocated: follows
/// destination-passing results to their tied init down to a restrict,
/// writable bufferization.to_tensor or a tensor.empty, or to an attn op
/// whose lowering (after the elementwise ops') allocates its result.
static bool isFreshTensor(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def))
      return toTensor.getRestrict() && toTensor.getWritable();
    if (isa<tensor::EmptyOp, MatmulOp, SdpaOp, SoftmaxOp, SafeSoftmaxOp,
            TransposeOp, RepeatInterleaveOp>(def))
      return true;
    auto dps = dyn_cast<DestinationStyleOpInterface>(def);
    if (!dps || !dps.hasPureTensorSemantics())
      return false;
    v = dps.getTiedOpOperand(cast<OpResult>(v))->get();
  }
  return false;
}

bool cpu::isElementwiseGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.hasPureTensorSemantics() &&
         generic.getNumDpsInits() == 1 && generic->getNumResults() == 1 &&
         generic.getNumLoops() == generic.getNumParallelLoops();
}

Value cpu::findReusableInput(Operation *user, RankedTensorType resultType,
                             ValueRange inputs) {
  for (Value input : inputs) {
    if (input.getType() != resultType || llvm::count(inputs, input) != 1 ||
        !isFreshTensor(input))
      continue;
    bool lastUse = llvm::all_of(input.getUsers(), [&](Operation *u) {
      return u == user ||
             (u->getBlock() == user->getBlock() && u->isBeforeInBlock(user));
    });
    if (lastUse)
      return input;
  }
  return Value();
}

Value cpu::buildElementwise(OpBuilder &b, Location loc,
                            RankedTensorType resultType, ValueRange inputs,
                            ElementwiseBodyFn body, Operation *replacing) {
  MLIRContext *ctx = b.getContext();
  Value reuse =
      replacing ? findReusableInput(replacing, resultType, inputs) : Value();
  // Computed even when an input is reused: it also emits the run-time
  // checks that the dynamic sizes of the other inputs agree.
  SmallVector<Value> dynamicSizes =
      getBroadcastDynamicSizes(b, loc, resultType, inputs);
  Value init = reuse ? reuse : createEmpty(b, loc, resultType, dynamicSizes);
  unsigned rank = resultType.getRank();
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    if (input == reuse)
      continue;
    ins.push_back(input);
    maps.push_back(getBroadcastMap(cast<RankedTensorType>(input.getType()),
                                   resultType.getShape(), rank, 0, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ins, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        // The body's operands in the order of `inputs`: the reused one is
        // the init's block argument.
        SmallVector<Value> scalars;
        ValueRange inArgs = args.drop_back();
        for (Value input : inputs)
          if (input == reuse) {
            scalars.push_back(args.back());
          } else {
            scalars.push_back(inArgs.front());
            inArgs = inArgs.drop_front();
          }
        Value r = body(nb, nl, scalars);
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

Value cpu::buildFlatIndex(OpBuilder &b, Location loc, ArrayRef<Value> sizes) {
  Value flat = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [i, size] : llvm::enumerate(sizes)) {
    Value idx = linalg::IndexOp::create(b, loc, i);
    flat = arith::MulIOp::create(b, loc, flat, size);
    flat = arith::AddIOp::create(b, loc, flat, idx);
  }
  return flat;
}

Value cpu::buildDropoutElement(OpBuilder &b, Location loc, Value x,
                               Value flatIndex, double p, int64_t seed) {
  Type i64 = b.getI64Type();
  auto cst = [&](uint64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, i64,
                                     b.getIntegerAttr(i64, (int64_t)v));
  };
  Value h = arith::IndexCastUIOp::create(b, loc, i64, flatIndex);
  h = arith::MulIOp::create(b, loc, h, cst(0x9E3779B97F4A7C15ULL));
  h = arith::AddIOp::create(b, loc, h,
                            cst((uint64_t)seed * 0xD1B54A32D192ED03ULL));
  // MurmurHash3 fmix64.
  auto xorShift = [&](Value v) -> Value {
    Value s = arith::ShRUIOp::create(b, loc, v, cst(33));
    return arith::XOrIOp::create(b, loc, v, s);
  };
  h = xorShift(h);
  h = arith::MulIOp::create(b, loc, h, cst(0xff51afd7ed558ccdULL));
  h = xorShift(h);
  h = arith::MulIOp::create(b, loc, h, cst(0xc4ceb9fe1a85ec53ULL));
  h = xorShift(h);
  Value top = arith::ShRUIOp::create(b, loc, h, cst(40));
  Value u = arith::UIToFPOp::create(b, loc, b.getF64Type(), top);
  u = arith::MulFOp::create(
      b, loc, u, createFloatConstant(b, loc, b.getF64Type(), 1.0 / 16777216.0));
  Value keep =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, u,
                            createFloatConstant(b, loc, b.getF64Type(), p));
  Type t = x.getType();
  Value scaled = arith::MulFOp::create(
      b, loc, x, createFloatConstant(b, loc, t, 1.0 / (1.0 - p)));
  return arith::SelectOp::create(b, loc, keep, scaled,
                                 createFloatConstant(b, loc, t, 0.0));
}

int64_t cpu::getDropoutSeed(Operation *op) {
  if (auto seed = op->getAttrOfType<IntegerAttr>("seed"))
    return seed.getInt();
  return 0;
}

arith::FastMathFlagsAttr cpu::getReassocFlags(MLIRContext *ctx) {
  return arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::reassoc |
                                                arith::FastMathFlags::contract);
}

LogicalResult cpu::checkLowerableToCpu(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([](CastOp cast) -> LogicalResult {
        Type from = cast.getInput().getType().getElementType();
        Type to = cast.getType().getElementType();
        if (!isSupportedFloatCast(from, to))
          return cast.emitOpError()
                 << "cannot be lowered to CPU code: a cast from " << from
                 << " to " << to
                 << " needs one correctly rounded conversion, which the CPU "
                    "lowering does not provide (cast to f32 first)";
        return success();
      })
      .Case([](WhereOp where) -> LogicalResult {
        Type to = where.getType().getElementType();
        for (Value v : {where.getA(), where.getB()}) {
          Type from = cast<RankedTensorType>(v.getType()).getElementType();
          if (!isSupportedFloatCast(from, to))
            return where.emitOpError()
                   << "cannot be lowered to CPU code: selecting a " << from
                   << " scalar into a " << to
                   << " result needs one correctly rounded conversion, "
                      "which the CPU lowering does not provide";
        }
        return success();
      })
      .Default([](Operation *) { return success(); });
}

int64_t cpu::getVectorLanes(Type elementType, int64_t vectorBits) {
  return std::max<int64_t>(
      1, vectorBits / static_cast<int64_t>(elementType.getIntOrFloatBitWidth()));
}

/// Whether `tensor` may bufferize to a view whose last dimension is not
/// contiguous: it is, or views through reshapes, an extract_slice whose
/// last stride is not 1.
static bool mayHaveStridedRows(Value tensor) {
  while (Operation *def = tensor.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      std::optional<int64_t> last =
          getConstantIntValue(slice.getMixedStrides().back());
      if (!last || *last != 1)
        return true;
      tensor = slice.getSource();
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      tensor = expand.getSrc();
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      tensor = collapse.getSrc();
    } else {
      return false;
    }
  }
  return false;
}

StridedLayoutAttr cpu::getContiguousRowsLayout(MLIRContext *ctx,
                                                int64_t rank) {
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  strides.back() = 1;
  return StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides);
}

Value cpu::toReadOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  // Contiguous rows at any row stride and offset: a slice of rows (a block
  // of rows, one expert's weight of a stacked [E, N, K] tensor, a column
  // block of a wider tensor) bufferizes to a subview of its source, which
  // casts to this layout, instead of a copy. Where the rows may not be
  // contiguous the identity layout asks bufferization for a copy (a copy
  // into this layout would need an allocation of it, which memref.alloc
  // does not take).
  MemRefType memrefType;
  if (type.getRank() == 0 || mayHaveStridedRows(tensor)) {
    memrefType = MemRefType::get(type.getShape(), type.getElementType());
  } else {
    memrefType = MemRefType::get(
        type.getShape(), type.getElementType(),
        getContiguousRowsLayout(b.getContext(), type.getRank()));
  }
  return bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                           /*read_only=*/true);
}

Value cpu::getRowTransposeSource(Value tensor,
                                 SmallVectorImpl<int64_t> &perm) {
  perm.clear();
  Value source;
  if (auto t = tensor.getDefiningOp<TransposeOp>()) {
    int64_t rank = t.getType().getRank();
    llvm::append_range(perm, llvm::seq<int64_t>(0, rank));
    auto [a, c] = t.getNormalizedDims();
    std::swap(perm[a], perm[c]);
    source = t.getInput();
  } else if (auto t = tensor.getDefiningOp<linalg::TransposeOp>();
             t && t.hasPureTensorSemantics()) {
    llvm::append_range(perm, t.getPermutation());
    source = t.getInput();
  }
  if (!source || perm.size() < 2 ||
      perm.back() != static_cast<int64_t>(perm.size()) - 1)
    return {};
  return source;
}

Value cpu::toReadOnlyBufferThroughTranspose(OpBuilder &b, Location loc,
                                            Value tensor) {
  SmallVector<int64_t> perm;
  Value source = getRowTransposeSource(tensor, perm);
  if (!source)
    return toReadOnlyBuffer(b, loc, tensor);
  // The source's buffer has unit stride along its last dim (a copy where
  // its rows may be strided), which the permuted view keeps last.
  Value buffer = toReadOnlyBuffer(b, loc, source);
  Value view = memref::TransposeOp::create(
      b, loc, buffer,
      AffineMapAttr::get(AffineMap::getPermutationMap(perm, b.getContext())));
  auto type = cast<RankedTensorType>(tensor.getType());
  return memref::CastOp::create(
      b, loc,
      MemRefType::get(type.getShape(), type.getElementType(),
                      getContiguousRowsLayout(b.getContext(), type.getRank())),
      view);
}

Value cpu::broadcastRows(OpBuilder &b, Location loc, Value row,
                         ShapedType type, ArrayRef<Value> sizes) {
  auto rowType = cast<MemRefType>(row.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> viewSizes, viewStrides(rank, b.getIndexAttr(0));
  for (int64_t i = 0; i < rank; ++i)
    viewSizes.push_back(type.isDynamicDim(i)
                            ? OpFoldResult(sizes[i])
                            : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
  viewStrides.back() = b.getIndexAttr(1);
  SmallVector<int64_t> strides(rank, 0);
  strides.back() = 1;
  auto viewType = MemRefType::get(
      type.getShape(), rowType.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides));
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, row);
  return memref::ReinterpretCastOp::create(
      b, loc, viewType, meta.getBaseBuffer(), meta.getConstifiedMixedOffset(),
      viewSizes, viewStrides);
}

Value cpu::allocAligned(OpBuilder &b, Location loc, Type elementType,
                        ArrayRef<OpFoldResult> sizes) {
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(sizes, dynamic, shape);
  return memref::AllocOp::create(b, loc, MemRefType::get(shape, elementType),
                                 dynamic, b.getI64IntegerAttr(64));
}

void cpu::buildForLoop(OpBuilder &b, Location loc, Value lo, Value hi,
                       Value step, function_ref<void(Value)> body) {
  scf::ForOp::create(b, loc, lo, hi, step, ValueRange{},
                     [&](OpBuilder &, Location, Value iv, ValueRange) {
                       body(iv);
                       scf::YieldOp::create(b, loc);
                     });
}

Value cpu::buildRowCountChoice(OpBuilder &b, Location loc, int64_t staticRows,
                               Value rows, int64_t maxRows, RowsBuilderFn few,
                               RowsBuilderFn many) {
  if (!ShapedType::isDynamic(staticRows))
    return staticRows <= maxRows ? few(b, loc) : many(b, loc);
  Value fits = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ule, rows,
      arith::ConstantIndexOp::create(b, loc, maxRows));
  auto branch = scf::IfOp::create(
      b, loc, fits,
      [&](OpBuilder &nested, Location l) {
        scf::YieldOp::create(nested, l, few(nested, l));
      },
      [&](OpBuilder &nested, Location l) {
        scf::YieldOp::create(nested, l, many(nested, l));
      });
  return branch.getResult(0);
}
