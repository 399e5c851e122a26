//===- AttnToCuda.cpp - lower attn.sdpa to calls into the CUDA kernels ----===//
//
// attn.sdpa -> bufferization.to_buffer of q/k/v/mask, a memref.alloc for the
// result, and a call of `attnrt_cuda_sdpa_<dtype>[_bool|_add][_lengths]`
// taking unranked memrefs (rank + descriptor pointer, the bridge reads sizes
// and strides from the descriptor): the tensors, the sequence lengths (the
// `_lengths` entries: q_lengths, kv_lengths), then the op's attributes as the bytes of an
// attn::cuda::SdpaCallAttrs in a constant global (the kernels' contract,
// kernels/include/attn/kernels/sdpa_contract.h, which also says which ops
// the kernels take), the boolean mask's polarity among them. A non-zero
// status fails a cf.assert: the bridge has printed the kernel library's
// message by then.
// An attn.sdpa with a score_mod region calls the entry point generated for
// its region (ScoreModToCuda.cpp) with its extra operands after the result;
// the generated source is recorded in the module for attn-compile. A boolean
// mask that combines several masks moves into such a region first, so that
// no host op combines device masks.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCuda/AttnToCuda.h"
#include "attn/Conversion/AttnToCuda/ScoreModToCuda.h"
#include "attn/Conversion/AttnToCuda/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

#include "attn/kernels/sdpa_contract.h"

#include <cstring>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERSDPATOCUDA
#include "attn/Conversion/AttnToCuda/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace contract = ::attn::cuda;

/// The kernels' element type code of `type`, or nullopt.
static std::optional<attn_dtype> getKernelDtype(Type type) {
  if (type.isF16())
    return ATTN_DTYPE_F16;
  if (type.isBF16())
    return ATTN_DTYPE_BF16;
  if (type.isF32())
    return ATTN_DTYPE_F32;
  return std::nullopt;
}

std::string mlir::attn::getCudaUnsupportedReason(SdpaOp op) {
  RankedTensorType q = op.getQuery().getType();
  Type et = q.getElementType();
  // f32 runs on the kernels' generic CUDA-core kernel in f32 precision.
  if (!getKernelDtype(et)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "element type " << et << " (the CUDA kernels take f16, bf16 and f32)";
    return s;
  }
  int64_t rank = q.getRank();
  if (rank > contract::kMaxRank)
    return "rank " + std::to_string(rank) +
           " (the CUDA kernels take [B, H, L, E] at most)";
  int64_t e = q.getShape().back();
  int64_t ev = op.getValue().getType().getShape().back();
  for (int64_t d : {e, ev}) {
    if (ShapedType::isDynamic(d))
      return "a dynamic head dim (the kernel is chosen at compile time)";
    if (!contract::is_supported_head_dim(d))
      return "head dim " + std::to_string(d) +
             " (the CUDA kernels need a multiple of " +
             std::to_string(contract::kHeadDimMultiple) + ", at most " +
             std::to_string(contract::kMaxHeadDim) + ")";
  }
  if (op.getDropoutP().convertToDouble() != 0.0)
    return "dropout_p > 0 (the CUDA kernels are inference kernels)";
  if (op.hasLengths()) {
    Value qLengths = op.getQLengths(), kvLengths = op.getKvLengths();
    if (op.getScoreModBlock())
      return "sequence lengths with a score_mod region (the generated CUDA "
             "kernels take no lengths)";
    if (qLengths && kvLengths &&
        cast<RankedTensorType>(qLengths.getType()).getElementType() !=
            cast<RankedTensorType>(kvLengths.getType()).getElementType())
      return "q_lengths and kv_lengths of different integer types (the CUDA "
             "kernels read both as one type)";
    if (!op.isPacked() && rank != contract::kMaxRank)
      return "sequence lengths on a rank-" + std::to_string(rank) +
             " query (the CUDA kernels index them by the B of [B, H, L, E])";
  }
  if (op.getSinks())
    return "attention sinks (the CUDA kernels take no sinks)";
  if (op.getScoreModBlock()) {
    std::string why;
    if (failed(generateCudaScoreModKernel(op, why)))
      return why;
  }
  if (op.hasAdditiveMask() &&
      cast<RankedTensorType>(op.getMask().getType()).getElementType() != et)
    return "an additive mask whose element type differs from the query's "
           "(the CUDA kernels read it in the input type)";
  return "";
}

/// The bridge function for `op`'s element type and mask kind.
static std::string getBridgeName(SdpaOp op) {
  std::string name = "attnrt_cuda_sdpa_";
  Type et = op.getQuery().getType().getElementType();
  name += et.isF16() ? "f16" : et.isBF16() ? "bf16" : "f32";
  if (op.hasBoolMask())
    name += "_bool";
  else if (op.hasAdditiveMask())
    name += "_add";
  if (op.hasLengths())
    name += "_lengths";
  return name;
}

/// Declares (once) `name` with `type` at the module's start.
static func::FuncOp getOrDeclareBridge(ModuleOp module, StringRef name,
                                       FunctionType type, Location loc) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto f = func::FuncOp::create(b, loc, name, type);
  f.setPrivate();
  return f;
}

/// A fully dynamic strided memref type for reading `tensor` in place.
static MemRefType getReadBufferType(RankedTensorType tensor) {
  int64_t rank = tensor.getRank();
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(tensor.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(tensor.getShape(), tensor.getElementType(), layout);
}

/// q/k/v/mask as unranked memrefs over their buffers. An attn.transpose
/// that keeps the last dim in place (the nanoGPT `x.transpose(1, 2)`) becomes
/// a strided view of its input's buffer: the kernels take any row strides, so
/// nothing is copied and no op is left to run on the CPU.
static Value toUnrankedBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto unranked = UnrankedMemRefType::get(type.getElementType(), 0);
  auto transpose = tensor.getDefiningOp<TransposeOp>();
  int64_t rank = type.getRank();
  if (transpose) {
    auto [d0, d1] = transpose.getNormalizedDims();
    if (d0 != d1 && d1 != rank - 1) {
      Value input = transpose.getInput();
      Value buffer = bufferization::ToBufferOp::create(
          b, loc, getReadBufferType(cast<RankedTensorType>(input.getType())), input,
          /*read_only=*/true);
      SmallVector<unsigned> perm =
          llvm::to_vector(llvm::seq<unsigned>(0, rank));
      std::swap(perm[d0], perm[d1]);
      auto map = AffineMap::getPermutationMap(perm, b.getContext());
      Value view =
          memref::TransposeOp::create(b, loc, buffer, AffineMapAttr::get(map));
      return memref::CastOp::create(b, loc, unranked, view);
    }
  }
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, getReadBufferType(type), tensor, /*read_only=*/true);
  return memref::CastOp::create(b, loc, unranked, buffer);
}

/// The boolean masks that a combined boolean mask of polarity `drops`
/// combines (the fusion's `arith.andi` of keep masks, `arith.ori` of drop
/// masks), each with whether its true entries drop positions; an inverted
/// mask (`arith.xori %m, true`, a mask of the other polarity) is `%m` read
/// the other way, so that no host op touches a device mask.
static void
collectCombinedMasks(Value mask, bool drops,
                     SmallVectorImpl<std::pair<Value, bool>> &leaves) {
  Operation *def = mask.getDefiningOp();
  if (def && (drops ? isa<arith::OrIOp>(def) : isa<arith::AndIOp>(def))) {
    collectCombinedMasks(def->getOperand(0), drops, leaves);
    collectCombinedMasks(def->getOperand(1), drops, leaves);
    return;
  }
  if (Value source = getInvertedOperand(mask))
    leaves.push_back({source, !drops});
  else
    leaves.push_back({mask, drops});
}

/// Erases the and/or/xor tree (and its all-true constants) that computed a
/// boolean mask once it is dead.
static void eraseDeadMaskTree(Value mask) {
  Operation *def = mask.getDefiningOp();
  if (!def || !def->use_empty() ||
      !isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::ConstantOp>(def))
    return;
  SmallVector<Value> operands(def->getOperands());
  def->erase();
  for (Value v : operands)
    eraseDeadMaskTree(v);
}

/// `op`'s masked value rounded to its element type, in the compute type.
static Value getRoundedMaskedValue(OpBuilder &b, Location loc, SdpaOp op,
                                   Type computeType) {
  auto et = cast<FloatType>(op.getQuery().getType().getElementType());
  APFloat v(op.getEffectiveMaskedValue());
  bool lost = false;
  v.convert(et.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
  v.convert(cast<FloatType>(computeType).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &lost); // exact: a wider type
  return arith::ConstantOp::create(b, loc, FloatAttr::get(computeType, v));
}

/// The region of `fused`: `op`'s region (or the score), then `masked_value`
/// (rounded) where one of `leaves` (the last block arguments) drops the
/// position.
static void buildMaskedRegion(SdpaOp op, SdpaOp fused,
                              ArrayRef<std::pair<Value, bool>> leaves) {
  Location loc = op.getLoc();
  RankedTensorType q = op.getQuery().getType();
  Type ct = getComputeType(q.getElementType());
  unsigned rank = q.getRank(), numOld = op.getExtras().size();
  OpBuilder b(op.getContext());
  SmallVector<Type> argTypes{ct};
  argTypes.append(rank, b.getIndexType());
  for (Value v : fused.getExtras())
    argTypes.push_back(cast<RankedTensorType>(v.getType()).getElementType());
  SmallVector<Location> locs(argTypes.size(), loc);
  Block *block =
      b.createBlock(&fused.getScoreMod().front(), {}, argTypes, locs);
  ValueRange args = block->getArguments();
  Value score = op.buildScoreMod(b, args[0], args.slice(1, rank),
                                 args.slice(1 + rank, numOld));
  Value keep, allTrue;
  for (auto [i, leaf] : llvm::enumerate(leaves)) {
    Value p = args[1 + rank + numOld + i];
    if (leaf.second) {
      if (!allTrue)
        allTrue = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      p = arith::XOrIOp::create(b, loc, p, allTrue);
    }
    keep = keep ? arith::AndIOp::create(b, loc, keep, p).getResult() : p;
  }
  Value fill = getRoundedMaskedValue(b, loc, op, ct);
  YieldOp::create(b, loc, arith::SelectOp::create(b, loc, keep, score, fill));
}

/// A boolean mask that combines several masks (which the host would have
/// to combine into a new device tensor) moves into a score_mod region
/// instead: each mask becomes an extra operand, read as it is by the kernel
/// generated for the region, which sets masked_value (rounded) where one
/// drops the position. Exact: with a boolean mask the op has no additive
/// mask, so the region's result is what the mask step replaced. Returns the
/// new op, or `op` when there is nothing to fold or the result would not run
/// on CUDA.
static SdpaOp foldCombinedMaskIntoRegion(SdpaOp op) {
  Value mask = op.getMask();
  Operation *def = mask ? mask.getDefiningOp() : nullptr;
  if (!op.hasBoolMask() || !def ||
      !(op.maskDrops() ? isa<arith::OrIOp>(def) : isa<arith::AndIOp>(def)))
    return op;
  SmallVector<std::pair<Value, bool>> leaves;
  collectCombinedMasks(mask, op.maskDrops(), leaves);
  if (op.getExtras().size() + leaves.size() > contract::kMaxModTensors)
    return op;
  SdpaChanges changes;
  changes.mask = Value();
  changes.extras = SmallVector<Value>(op.getExtras());
  for (auto &leaf : leaves)
    changes.extras->push_back(leaf.first);
  changes.scoreMod = SdpaChanges::Region::Empty;
  OpBuilder b(op);
  SdpaOp fused = op.cloneWith(b, changes);
  buildMaskedRegion(op, fused, leaves);
  if (!getCudaUnsupportedReason(fused).empty()) {
    fused.erase();
    return op;
  }
  op.replaceAllUsesWith(fused.getResult());
  op.erase();
  eraseDeadMaskTree(mask);
  return fused;
}

/// The entry point of `op`'s generated kernel (one per distinct region), its
/// source recorded in the module's kCudaSourcesAttrName dictionary for
/// attn-compile. `op` must be supported (getCudaUnsupportedReason).
static std::string recordScoreModKernel(SdpaOp op, ModuleOp module) {
  std::string reason;
  FailureOr<CudaScoreModKernel> kernel =
      generateCudaScoreModKernel(op, reason);
  assert(succeeded(kernel) && "checked by getCudaUnsupportedReason");
  NamedAttrList sources;
  if (auto dict = module->getAttrOfType<DictionaryAttr>(kCudaSourcesAttrName))
    sources.append(dict.getValue());
  MLIRContext *ctx = module.getContext();
  sources.set(StringAttr::get(ctx, kernel->symbol),
              StringAttr::get(ctx, kernel->source));
  module->setAttr(kCudaSourcesAttrName, sources.getDictionary(ctx));
  return kernel->symbol;
}

/// The attributes the kernels read for `op`.
static contract::SdpaCallAttrs getCallAttrs(SdpaOp op) {
  contract::SdpaCallAttrs attrs;
  // Static: getCudaUnsupportedReason requires static head dims.
  attrs.scale = static_cast<float>(*op.getEffectiveScale());
  attrs.is_causal = op.getIsCausal() ? 1 : 0;
  attrs.masked_value = static_cast<float>(op.getEffectiveMaskedValue());
  attrs.mask_polarity = op.maskDrops() ? ATTN_MASK_DROP : ATTN_MASK_KEEP;
  // The band (is_causal and the window intersected; the kernels intersect
  // it with is_causal again, which changes nothing). With a -inf masked
  // value the kernels skip the key tiles outside it.
  MaskBand band = op.getBand();
  attrs.window_left = band.left.value_or(ATTN_WINDOW_UNBOUNDED);
  attrs.window_right = band.right.value_or(ATTN_WINDOW_UNBOUNDED);
  attrs.safe_softmax = op.getSafeSoftmax() ? 1 : 0;
  switch (op.getPaddingSide()) {
  case PaddingSide::right:
    attrs.padding_side = ATTN_PAD_RIGHT;
    break;
  case PaddingSide::left:
    attrs.padding_side = ATTN_PAD_LEFT;
    break;
  case PaddingSide::packed:
    attrs.padding_side = ATTN_PAD_PACKED;
    break;
  }
  Value qLengths = op.getQLengths(), kvLengths = op.getKvLengths();
  if (qLengths)
    attrs.lengths |= contract::kLengthsQ;
  if (kvLengths)
    attrs.lengths |= contract::kLengthsKv;
  Value lengths = qLengths ? qLengths : kvLengths;
  if (lengths &&
      cast<RankedTensorType>(lengths.getType()).getElementType().isInteger(64))
    attrs.lengths |= contract::kLengthsI64;
  return attrs;
}

/// `attrs` as the bridge reads them: an unranked view of a constant global
/// holding their bytes, one global per distinct value.
static Value getCallAttrsBuffer(OpBuilder &b, Location loc, ModuleOp module,
                                const contract::SdpaCallAttrs &attrs) {
  SmallVector<int8_t> bytes(sizeof(attrs));
  std::memcpy(bytes.data(), &attrs, sizeof(attrs));
  ArrayRef<uint8_t> raw(reinterpret_cast<const uint8_t *>(bytes.data()),
                        bytes.size());
  std::string name =
      "__attn_sdpa_call_attrs_" + llvm::utohexstr(llvm::xxh3_64bits(raw),
                                                  /*LowerCase=*/true, 16);
  auto type =
      MemRefType::get({static_cast<int64_t>(bytes.size())}, b.getI8Type());
  if (!module.lookupSymbol<memref::GlobalOp>(name)) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    auto value = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getI8Type()),
        ArrayRef<int8_t>(bytes));
    memref::GlobalOp::create(
        top, loc, name, top.getStringAttr("private"), type, value,
        /*constant=*/true,
        top.getI64IntegerAttr(alignof(contract::SdpaCallAttrs)));
  }
  Value global = memref::GetGlobalOp::create(b, loc, type, name);
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(b.getI8Type(), 0), global);
}

/// Rewrites one supported attn.sdpa into the bridge call, or the call of its
/// generated kernel when it has a score_mod region.
static void lowerSdpaToCudaCall(SdpaOp op, ModuleOp module) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type et = resultType.getElementType();

  SmallVector<Value> args;
  for (Value v : {op.getQuery(), op.getKey(), op.getValue()})
    args.push_back(toUnrankedBuffer(b, loc, v));
  if (Value mask = op.getMask())
    args.push_back(toUnrankedBuffer(b, loc, mask));

  // The result buffer; sizes from q ([..., L]) and v (Ev).
  SmallVector<Value> dynSizes;
  int64_t rank = resultType.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    if (!resultType.isDynamicDim(i))
      continue;
    Value src = i == rank - 1 ? op.getValue() : op.getQuery();
    dynSizes.push_back(tensor::DimOp::create(b, loc, src, i));
  }
  auto outType = MemRefType::get(resultType.getShape(), et);
  Value out = memref::AllocOp::create(b, loc, outType, dynSizes);
  args.push_back(
      memref::CastOp::create(b, loc, UnrankedMemRefType::get(et, 0), out));
  for (Value extra : op.getExtras())
    args.push_back(toUnrankedBuffer(b, loc, extra));
  // Sequence lengths: q_lengths then kv_lengths; a side without passes the
  // other side's buffer, which the bridge does not read for it.
  if (op.hasLengths()) {
    Value qLengths, kvLengths;
    if (op.getQLengths())
      qLengths = toUnrankedBuffer(b, loc, op.getQLengths());
    if (op.getKvLengths())
      kvLengths = toUnrankedBuffer(b, loc, op.getKvLengths());
    args.push_back(qLengths ? qLengths : kvLengths);
    args.push_back(kvLengths ? kvLengths : qLengths);
  }

  args.push_back(getCallAttrsBuffer(b, loc, module, getCallAttrs(op)));
  SmallVector<Type> argTypes = llvm::map_to_vector(
      args, [](Value v) -> Type { return v.getType(); });
  auto fnType = FunctionType::get(b.getContext(), argTypes, {b.getI32Type()});
  std::string callee = op.getScoreModBlock() ? recordScoreModKernel(op, module)
                                             : getBridgeName(op);
  func::FuncOp bridge = getOrDeclareBridge(module, callee, fnType, loc);
  auto call = func::CallOp::create(b, loc, bridge, args);

  Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                   call.getResult(0), zero);
  cf::AssertOp::create(
      b, loc, ok,
      "attn.sdpa: the CUDA kernel call failed (its message is on stderr)");

  Value result = bufferization::ToTensorOp::create(
      b, loc, resultType, out, /*restrict=*/true, /*writable=*/true);
  llvm::SmallSetVector<Operation *, 4> producers;
  for (Value v : op.getOperands())
    if (Operation *def = v.getDefiningOp<TransposeOp>())
      producers.insert(def);
  op.replaceAllUsesWith(result);
  op.erase();
  // Transposes now read through strided views: dead unless used elsewhere.
  for (Operation *def : producers)
    if (def->use_empty())
      def->erase();
}

namespace {
struct AttnLowerSdpaToCudaPass
    : public mlir::attn::impl::AttnLowerSdpaToCudaBase<
          AttnLowerSdpaToCudaPass> {
  using AttnLowerSdpaToCudaBase::AttnLowerSdpaToCudaBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<SdpaOp> ops;
    module.walk([&](SdpaOp op) { ops.push_back(op); });
    bool failedAny = false;
    for (SdpaOp op : ops) {
      std::string reason = getCudaUnsupportedReason(op);
      if (reason.empty()) {
        lowerSdpaToCudaCall(foldCombinedMaskIntoRegion(op), module);
        continue;
      }
      if (requireGpu) {
        op.emitOpError() << "cannot run on the GPU: " << reason;
        failedAny = true;
        continue;
      }
      op.emitRemark() << "attn.sdpa stays on the CPU: " << reason;
    }
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
