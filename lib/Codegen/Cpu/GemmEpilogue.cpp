//===- GemmEpilogue.cpp - the elementwise code a product applies ----------===//
//
// Which consumers of a product's result the GEMM and the GEMV apply as
// they store it (getProductConsumers), the tensors those read, reshaped to
// the product's shape (buildGemmEpilogue), and the store itself: the
// consumers' bodies cloned onto the accumulators, on vectors lane by lane
// or on scalars (ResultStore).
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/GemmEpilogue.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

/// An elementwise generic that reads every operand at the result's index.
static bool isIdentityElementwise(linalg::GenericOp generic) {
  return isElementwiseGeneric(generic) &&
         llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); });
}

Value cpu::getBroadcastRow(Value init, Type accType) {
  while (true) {
    if (auto collapse = init.getDefiningOp<tensor::CollapseShapeOp>()) {
      if (collapse.getReassociationIndices().back().size() != 1)
        return nullptr;
      init = collapse.getSrc();
    } else if (auto expand = init.getDefiningOp<tensor::ExpandShapeOp>()) {
      if (expand.getReassociationIndices().back().size() != 1)
        return nullptr;
      init = expand.getSrc();
    } else {
      break;
    }
  }
  auto isRow = [&](Value row) {
    auto type = dyn_cast<RankedTensorType>(row.getType());
    return type && type.getRank() == 1 &&
           isa<FloatType>(type.getElementType()) &&
           isSupportedFloatCast(type.getElementType(), accType);
  };
  if (auto broadcast = init.getDefiningOp<linalg::BroadcastOp>()) {
    int64_t rank = broadcast.getInit().getType().getRank();
    if (!broadcast.hasPureTensorSemantics() ||
        !isRow(broadcast.getInput()) ||
        !llvm::equal(broadcast.getDimensions(), llvm::seq<int64_t>(rank - 1)))
      return nullptr;
    return broadcast.getInput();
  }
  auto generic = init.getDefiningOp<linalg::GenericOp>();
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return nullptr;
  OpOperand *input = generic.getDpsInputOperand(0);
  AffineMap inputMap = generic.getMatchingIndexingMap(input);
  AffineMap outputMap =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  int64_t rank = generic.getNumLoops();
  if (!isRow(input->get()) || !outputMap.isIdentity() || rank == 0 ||
      inputMap.getNumResults() != 1 ||
      inputMap.getResult(0) != getAffineDimExpr(rank - 1, init.getContext()))
    return nullptr;
  // The generic's result is the product's init: its elements are of
  // accType, the input's as they are or extended.
  Block &body = generic.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto ext = yielded.getDefiningOp<arith::ExtFOp>())
    yielded = ext.getIn();
  return yielded == body.getArgument(0) ? input->get() : nullptr;
}

bool cpu::isRoundingGeneric(Operation *op, Value input) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !isIdentityElementwise(generic) ||
      generic.getNumDpsInputs() != 1 || generic.getDpsInputs()[0] != input)
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  auto trunc = dyn_cast<arith::TruncFOp>(body.front());
  if (!trunc)
    return false;
  Type narrow = trunc.getType();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return trunc.getIn() == body.getArgument(0) && !trunc.getRoundingmodeAttr() &&
         (narrow.isBF16() || narrow.isF16()) &&
         trunc.getIn().getType().isF32() &&
         yield->getOperands() == ValueRange{trunc.getResult()};
}

/// Scalar types that a vector of lanes holds.
static bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

bool cpu::isEpilogueGeneric(Operation *op, Value value) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !isIdentityElementwise(generic) ||
      !isa<FloatType>(getElementTypeOrSelf(generic->getResult(0))))
    return false;
  Block &body = generic.getRegion().front();
  int64_t reads = 0;
  for (auto [operand, arg] :
       llvm::zip(generic->getOperands(), body.getArguments())) {
    // Floats only: a vector of i1 is not laid out as a buffer of i1.
    if (!arg.use_empty() && !isa<FloatType>(arg.getType()))
      return false;
    if (operand != value)
      continue;
    if (arg.use_empty())
      return false;
    ++reads;
  }
  if (reads != 1)
    return false;
  return llvm::all_of(body.without_terminator(), [](Operation &o) {
    bool scalarConstant = isa<arith::ConstantOp>(o);
    return o.getNumRegions() == 0 && isPure(&o) &&
           (scalarConstant || OpTrait::hasElementwiseMappableTraits(&o)) &&
           llvm::all_of(o.getOperandTypes(), isScalar) &&
           llvm::all_of(o.getResultTypes(), isScalar);
  });
}

/// An elementwise attn op (before its lowering to a generic) that reads
/// `value` once and only operands of its result's shape: it will be an
/// epilogue generic.
static bool isEpilogueAttnOp(Operation *op, Value value) {
  if (!isa<ScalarElementwiseOpInterface>(op) || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && isa<FloatType>(type.getElementType()) &&
         llvm::count(op->getOperands(), value) == 1 &&
         llvm::all_of(op->getOperandTypes(), [&](Type t) {
           auto operand = dyn_cast<RankedTensorType>(t);
           return operand && operand.getShape() == type.getShape() &&
                  isa<FloatType>(operand.getElementType());
         });
}

void ProductConsumers::dropElementwise() {
  ops.resize(ops.size() - elementwise.size());
  elementwise.clear();
  epilogueInput = Value();
  // Reshapes after the rounding end nothing the product applies.
  while (!ops.empty() && ops.back() != rounding.getOperation()) {
    ops.pop_back();
    reshapes.pop_back();
  }
  if (!rounding)
    *this = ProductConsumers();
}

ProductConsumers cpu::getProductConsumers(Operation *matmul) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(matmul) ||
      matmul->getNumResults() != 1)
    return {};
  ProductConsumers consumers;
  Value v = matmul->getResult(0);
  // The one user of v, in the product's block, or null.
  auto nextUser = [&]() -> Operation * {
    if (!v.hasOneUse())
      return nullptr;
    Operation *user = *v.getUsers().begin();
    return user->getBlock() == matmul->getBlock() ? user : nullptr;
  };
  auto take = [&](Operation *op) {
    consumers.ops.push_back(op);
    v = op->getResult(0);
  };
  auto isReshape = [&](Operation *user) {
    return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
               tensor::ReshapeOp>(user) &&
           user->getOperand(0) == v;
  };
  Operation *user = nextUser();
  for (; user && (isReshape(user) ||
                  (!consumers.rounding && isRoundingGeneric(user, v)));
       user = nextUser()) {
    if (isReshape(user))
      consumers.reshapes.push_back(user);
    else
      consumers.rounding = cast<linalg::GenericOp>(user);
    take(user);
  }
  consumers.epilogueInput = v;
  for (; user && (isEpilogueGeneric(user, v) || isEpilogueAttnOp(user, v));
       user = nextUser()) {
    consumers.elementwise.push_back(user);
    take(user);
  }
  if (consumers.elementwise.empty())
    consumers.dropElementwise();
  return consumers;
}

/// The sizes of each reshape's source, in order, from the product's sizes:
/// values that do not read the product or the reshapes (a collapsed dim
/// multiplies its source dims; an expanded or reshaped one is its
/// output_shape or shape entry).
static SmallVector<SmallVector<OpFoldResult>>
getSourceSizes(OpBuilder &b, Location loc, ArrayRef<Operation *> reshapes,
               ArrayRef<Value> productSizes) {
  SmallVector<SmallVector<OpFoldResult>> sources;
  SmallVector<OpFoldResult> sizes = getAsOpFoldResult(productSizes);
  for (Operation *op : reshapes) {
    sources.push_back(sizes);
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      sizes = expand.getMixedOutputShape();
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      SmallVector<OpFoldResult> collapsed;
      for (ReassociationIndices group : collapse.getReassociationIndices()) {
        Value size = arith::ConstantIndexOp::create(b, loc, 1);
        for (int64_t i : group)
          size = b.createOrFold<arith::MulIOp>(
              loc, size, getValueOrCreateConstantIndexOp(b, loc, sizes[i]));
        collapsed.push_back(getAsOpFoldResult(size));
      }
      sizes = collapsed;
    } else {
      Value shape = cast<tensor::ReshapeOp>(op).getShape();
      sizes.clear();
      for (int64_t i = 0; i < type.getRank(); ++i) {
        if (!type.isDynamicDim(i)) {
          sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
          continue;
        }
        Value size = tensor::ExtractOp::create(
            b, loc, shape,
            ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
        if (!size.getType().isIndex())
          size = arith::IndexCastOp::create(b, loc, b.getIndexType(), size);
        sizes.push_back(size);
      }
    }
  }
  return sources;
}

/// `x`, of the shape after `reshapes`, reshaped back to the shape before
/// them (its element type kept); `sourceSizes` from getSourceSizes.
static Value reshapeBack(OpBuilder &b, Location loc, Value x,
                         ArrayRef<Operation *> reshapes,
                         ArrayRef<SmallVector<OpFoldResult>> sourceSizes) {
  for (auto [op, sizes] :
       llvm::reverse(llvm::zip_equal(reshapes, sourceSizes))) {
    auto source = cast<RankedTensorType>(op->getOperand(0).getType())
                      .clone(getElementTypeOrSelf(x.getType()));
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      x = tensor::CollapseShapeOp::create(b, loc, x,
                                          expand.getReassociationIndices());
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      x = buildExpandShape(b, loc, source, x,
                           collapse.getReassociationIndices(), sizes);
    } else {
      Value shape = tensor::FromElementsOp::create(
          b, loc, getValueOrCreateConstantIndexOp(b, loc, sizes));
      x = tensor::ReshapeOp::create(b, loc, source, x, shape);
    }
  }
  return x;
}

GemmEpilogue cpu::buildGemmEpilogue(OpBuilder &b, Location loc,
                                    const ProductConsumers &consumers,
                                    ArrayRef<Value> productSizes,
                                    Type inputType) {
  GemmEpilogue epilogue;
  epilogue.inputType = inputType;
  SmallVector<SmallVector<OpFoldResult>> sourceSizes =
      getSourceSizes(b, loc, consumers.reshapes, productSizes);
  // The value the next generic reads.
  Value previous = consumers.epilogueInput;
  for (Operation *op : consumers.elementwise) {
    auto generic = cast<linalg::GenericOp>(op);
    SmallVector<Value> &reads = epilogue.reads.emplace_back();
    Block &body = generic.getRegion().front();
    for (auto [operand, arg] :
         llvm::zip(generic->getOperands(), body.getArguments()))
      reads.push_back(
          arg.use_empty() || operand == previous
              ? Value()
              : reshapeBack(b, loc, operand, consumers.reshapes, sourceSizes));
    epilogue.generics.push_back(generic);
    previous = generic->getResult(0);
  }
  return epilogue;
}

ResultStore::ResultStore(OpBuilder &b, Location loc,
                         const GemmEpilogue *epilogue)
    : epilogue(epilogue) {
  if (!epilogue)
    return;
  for (ArrayRef<Value> reads : epilogue->reads) {
    SmallVector<Value> &bufs = buffers.emplace_back();
    for (Value tensor : reads)
      bufs.push_back(tensor ? toReadOnlyBuffer(b, loc, tensor) : Value());
  }
}

/// `element`, or a vector of `element` shaped as `lanes` when there is one.
static Type withLanes(Type element, VectorType lanes) {
  return lanes ? VectorType::get(lanes.getShape(), element) : element;
}

/// Clones the ops of an elementwise body whose arguments `map` maps, on
/// scalars (`lanes` null) or lane by lane on vectors shaped as `lanes`;
/// returns the yielded value. Scalars from above the body are broadcast to
/// the lanes.
static Value cloneBodyOnLanes(OpBuilder &b, Location loc, Block &body,
                              IRMapping &map, VectorType lanes) {
  auto lookup = [&](Value v) -> Value {
    if (Value mapped = map.lookupOrNull(v))
      return mapped;
    if (!lanes)
      return v;
    Value broadcast =
        vector::BroadcastOp::create(b, loc, withLanes(v.getType(), lanes), v);
    map.map(v, broadcast);
    return broadcast;
  };
  for (Operation &op : body.without_terminator()) {
    if (!lanes) {
      b.clone(op, map);
      continue;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto type = cast<VectorType>(withLanes(constant.getType(), lanes));
      map.map(constant.getResult(),
              arith::ConstantOp::create(
                  b, loc, type,
                  DenseElementsAttr::get(type, constant.getValue())));
      continue;
    }
    OperationState state(loc, op.getName());
    for (Value operand : op.getOperands())
      state.addOperands(lookup(operand));
    state.addAttributes(op.getAttrs());
    for (Type type : op.getResultTypes())
      state.addTypes(withLanes(type, lanes));
    map.map(op.getResults(), b.create(state)->getResults());
  }
  return lookup(body.getTerminator()->getOperand(0));
}

void ResultStore::store(OpBuilder &b, Location loc, Value acc, Value out,
                        ValueRange indices) const {
  auto lanes = dyn_cast<VectorType>(acc.getType());
  auto load = [&](Value buf) -> Value {
    Type element = cast<MemRefType>(buf.getType()).getElementType();
    if (lanes)
      return vector::LoadOp::create(b, loc, withLanes(element, lanes), buf,
                                    indices);
    return memref::LoadOp::create(b, loc, buf, indices);
  };
  Type outElement = cast<MemRefType>(out.getType()).getElementType();
  Value value = castFloat(
      b, loc, acc,
      withLanes(epilogue ? epilogue->inputType : outElement, lanes));
  for (auto [i, constGeneric] : llvm::enumerate(
           epilogue ? epilogue->generics : ArrayRef<linalg::GenericOp>())) {
    linalg::GenericOp generic = constGeneric;
    Block &body = generic.getRegion().front();
    IRMapping map;
    for (auto [arg, buf] : llvm::zip(body.getArguments(), buffers[i])) {
      if (buf)
        map.map(arg, load(buf));
      else if (!arg.use_empty())
        map.map(arg, value);
    }
    value = cloneBodyOnLanes(b, loc, body, map, lanes);
  }
  if (lanes)
    vector::StoreOp::create(b, loc, value, out, indices);
  else
    memref::StoreOp::create(b, loc, value, out, indices);
}
