//===- SdpaFlashToCpu.cpp - attn.sdpa as register-tiled online softmax ----===//
//
// The flash path emits the loop nest a hand-written kernel would have, in
// the vector dialect on buffers (so that no L x S tensor ever exists and the
// accumulators live in vector registers):
//
//   scf.forall (query batch dims x query blocks of blockQ rows)   work item
//     pack qT[E, blockQ] = q^T of the block (f32; zero past the last row)
//     scf.for key blocks of blockKV keys (causal, window: only the band;
//                  lengths: only the sequence's keys, none past its rows)
//       [boolean mask with -inf: skip the block when the mask removes all
//        of the item's rows x the block's keys, a padding mask's padded
//        keys (maskKeepsTile; one element per key for [B, 1, 1, S])]
//       [pack k/v of the block to f32 when their element type is not f32]
//       1. scores:  sT[j, i] = hook(sum_e k[j, e] * qT[e, i])
//          register tile: qkKeys keys (broadcast) x qkRowVecs vectors of
//          query rows, accumulated over e in registers; its epilogue applies
//          the score step (applyScoreTransforms: scale, additive mask,
//          boolean mask, causal) to the tile in registers, stores it and
//          keeps the block's row max.
//       2. softmax: per vector of `lanes` query rows: online-softmax
//          statistics, p = exp(s - m) in place (one pass over the tile in
//          L1), row sums.
//       3. p.v:     acc[i, d] = acc[i, d] * alpha[i] + sum_j sT[j, i] v[j, d]
//          register tile: pvRows query rows (broadcast) x pvColVecs vectors
//          of value columns, accumulated over the block's keys.
//     out = acc / l (NaN for rows whose scores were all -inf, 0 when S = 0)
//
// The score tile is stored key-major (sT = S^T): then the row statistics
// (max, sum) are vertical vector ops over the tile's rows, q.k^T needs no
// transposed key tile (keys are broadcast from their rows) and p.v reads p
// as broadcasts. Register tiles and vector width come from the target (see
// chooseFlashTiling); every tile shape is static, and the remainders (last
// key block, rows or columns that do not fill a tile) are peeled into
// narrower static tiles.
//
// On targets that multiply bf16 pairs (getPairFlashTiling: bf16 operands on
// AVX512-BF16, where the GEMMs use vdpbf16ps) steps 1 and 3 multiply pairs
// instead of widening to f32: the queries are packed once per work item in
// bf16 pairs of e (qPairs, lanes along the query rows) and each key pair is
// one 32-bit broadcast from the key row in place, so q.k^T is the same
// keys x vectors-of-rows register tile on x86vector.avx512.dot; p is
// rounded to bf16 and transposed query-major (pRows), V packed in bf16
// pairs of keys (vPack), and p.v is the rows x vectors-of-columns tile on
// pairs of keys. See PairFlashKernel.
//
// On AMX targets (getAmxFlashTiling: bf16, E and Ev multiples of 32) the
// same work items run steps 1 and 3 on tiles, behind the runtime's
// permission check (the vector nest above is the fallback): the scores are
// C tiles of K (A tiles) times the queries in bf16 pairs of e (B tiles),
// stored key-major into sT as before, so that the score step, the softmax
// and the statistics stay the vector code; p is then rounded to bf16 and
// transposed query-major (the A tiles of P V) and V packed in bf16 pairs of
// keys (its B tiles). See AmxFlashKernel.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/AmxTile.h"
#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/PairDotTile.h"
#include "attn/Codegen/Cpu/RegisterTile.h"
#include "SdpaPlan.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// See FlashTiling::kernel and the FlashKernel classes.
enum class FlashKernelKind { Fma, PairDot, Amx };

/// Block sizes and register tiles of one flash lowering.
struct FlashTiling {
  /// Compute-type elements per vector register.
  int64_t lanes = 8;
  /// Query rows per work item (a multiple of lanes), keys per block.
  int64_t blockQ = 96, blockKV = 64;
  /// q.k^T tile: keys (broadcast) x vectors of query rows.
  int64_t qkKeys = 6, qkRowVecs = 2;
  /// p.v tile: query rows (broadcast) x vectors of value columns.
  int64_t pvRows = 6, pvColVecs = 2;
  /// AttnCpuLoweringOptions::positionBound.
  int64_t positionBound = kDefaultPositionBound;
  /// The instruction family of q.k^T and p.v: FMAs on f32, AVX512-BF16
  /// pair dots (getPairFlashTiling) or AMX tiles (getAmxFlashTiling).
  FlashKernelKind kernel = FlashKernelKind::Fma;
};

/// The scratch and indices of one work item.
struct WorkItem {
  SmallVector<Value> qIdx, kvIdx;
  /// First query row of the block and the number of valid rows.
  Value row0, rows;
  /// The sequence's real rows and keys (only with lengths).
  std::optional<SeqBounds> seq;
  /// qT [E, blockQ], sT [blockKV, blockQ], acc [blockQ, evPadded], the
  /// running max m, sum l and rescale factor alpha [blockQ], and the max of
  /// the current key block's scores per row, blockMax [blockQ].
  Value qT, sT, acc, m, l, alpha, blockMax;
  /// f32 copies of a key/value block, or null when read in place. On pair
  /// dots and AMX tiles vPack is the value block in bf16 pairs of keys
  /// ([blockKV / 2, 2 Ev], Ev padded to whole vectors on pair dots) and on
  /// AMX tiles kPack a bf16 key block zero-padded to whole tiles (for a last
  /// block of fewer keys).
  Value kPack, vPack;
  /// Pair dots and AMX tiles: the block's queries in bf16 pairs of e
  /// ([ceil(E / 2), 2 blockQ]: on tiles the B tiles of S^T = K Q^T) and the
  /// probabilities query-major in bf16 ([blockQ, blockKV]: on tiles the A
  /// tiles of P V).
  Value qPairs, pRows;
};

class FlashKernel;

class FlashLowering : Emitter {
public:
  /// With `amxTiling`, the AMX path where attnrt_amx_available() says the
  /// process may use the tiles (and the operands suit them); otherwise
  /// `pairTiling` where set and the operands suit it, else `tiling`.
  FlashLowering(OpBuilder &b, Location loc, SdpaOp op, const SdpaPlan &plan,
                const FlashTiling &tiling,
                std::optional<FlashTiling> pairTiling,
                std::optional<FlashTiling> amxTiling)
      : Emitter(b, loc, plan.computeType, tiling.lanes), op(op),
        plan(plan), t(tiling), pairTiling(pairTiling), amxTiling(amxTiling) {}

  Value emit();

private:
  friend class FlashKernel;
  friend class FmaFlashKernel;
  friend class PairFlashKernel;
  friend class AmxFlashKernel;

  void emitForall();
  void emitWorkItem(ValueRange ivs);
  void emitPackedWorkItem(ValueRange ivs);
  Value maxPackedQueryLength();
  Value maskKeepsTile(WorkItem &w, Value kv0);
  WorkItem allocateScratch(FlashKernel &kernel, ValueRange ivs);
  void emitInit(FlashKernel &kernel, WorkItem &w);
  BlockView keyBlock(Value source, Value pack, ArrayRef<Value> kvIdx,
                     Value kv0, Value keys, Value cols, Value paddedCols);
  Value positionsFitCheck();
  void emitScoreStepVersions(function_ref<void(bool boundPositions)> step);
  /// The raw scores of keys keyOf (mr of them) x vectors of query rows
  /// colOf (nv), added to `init`.
  using ScoreTileFn = function_ref<SmallVector<Value>(
      ArrayRef<Value> init, ArrayRef<Value> keyOf, ArrayRef<Value> colOf)>;
  void emitScores(WorkItem &w, Value kv0, Value keys, bool boundPositions,
                  ScoreTileFn tile);
  void emitScoreTileEpilogue(WorkItem &w, ArrayRef<Value> acc,
                             ArrayRef<Value> keyOf, ArrayRef<Value> rowOf,
                             Value row0, Value kv0, int64_t mr, int64_t nv);
  void emitSoftmaxStep(WorkItem &w, Value keys);
  Value applyScoreTransforms(WorkItem &w, Value scores, Value rowBase,
                             Value col);
  Value loadOperandVector(WorkItem &w, Value buf, ArrayRef<bool> broadcast,
                          Value transposed, Value rowBase, Value col);
  Value transposeAlongRows(Value buf, ArrayRef<bool> broadcast);
  using PvTileFn = function_ref<SmallVector<Value>(
      ArrayRef<Value> init, ArrayRef<Value> rowOf, ArrayRef<Value> colOf)>;
  void emitPv(WorkItem &w, PvTileFn tile);
  void emitOutput(WorkItem &w);
  bool rowsContiguous();

  SdpaOp op;
  /// A copy: a work item of the packed layout narrows it (and `buf`) to its
  /// sequence while it is emitted (emitPackedWorkItem).
  SdpaPlan plan;
  FlashTiling t;
  std::optional<FlashTiling> pairTiling, amxTiling;
  SdpaBuffers buf;
  /// A mask that varies along the query rows, transposed (its last two dims
  /// swapped, rows padded to a multiple of lanes) so that the mask of a
  /// vector of rows is one vector load; i8 for a boolean mask, the compute
  /// type for an additive one. Null otherwise.
  Value maskT;
  /// Ev rounded up to a multiple of lanes (the accumulator's row length).
  Value evPadded;
  bool packK = false, packV = false;
  /// i1: the dynamic lengths are at most t.positionBound, so that the
  /// score_mod region's positions fit 32 bits; null when the region reads
  /// no position or the lengths are static (the range analysis sees them).
  Value positionsFit;
};

/// The instruction family's part of flash attention, chosen once per
/// attn.sdpa (and per side of the AMX permission check) from the tiling:
/// the scratch it needs beyond the common buffers, how a work item's
/// queries are packed, and a key block's scores and p.v. The work items,
/// the key-block loop, the score hook, the online softmax and the output
/// are FlashLowering's.
class FlashKernel : protected Emitter {
public:
  virtual ~FlashKernel() = default;
  /// The kernel of `f`'s current tiling (f.t.kernel).
  static std::unique_ptr<FlashKernel> create(FlashLowering &f);

  /// Allocates the kernel's scratch of `w` (after the common buffers).
  virtual void allocate(WorkItem &w) = 0;
  /// Packs the work item's queries (before the accumulators are zeroed).
  virtual void packQueries(WorkItem &w) = 0;
  /// One block of keys from kv0: scores, the softmax step, p.v.
  virtual void emitKeyBlock(WorkItem &w, Value kv0) = 0;

protected:
  explicit FlashKernel(FlashLowering &f)
      : Emitter(f.b, f.loc, f.ct, f.t.lanes), f(f), plan(f.plan), t(f.t),
        buf(f.buf) {}

  /// bf16 kernels: allocates qPairs, pRows and vPack (and, with `keyPack`,
  /// kPack); packs the queries in bf16 pairs of e.
  void allocatePairs(WorkItem &w, bool keyPack);
  void packQueryPairs(WorkItem &w);
  void emitProbabilityRows(WorkItem &w, Value paddedKeys);

  FlashLowering &f;
  const SdpaPlan &plan;
  const FlashTiling &t;
  const SdpaBuffers &buf;
};

/// q.k^T and p.v as FMA register tiles on f32 (k and v widened into kPack
/// and vPack unless they are f32 vectors already).
class FmaFlashKernel : public FlashKernel {
public:
  using FlashKernel::FlashKernel;
  void allocate(WorkItem &w) override;
  void packQueries(WorkItem &w) override;
  void emitKeyBlock(WorkItem &w, Value kv0) override;

protected:
  /// The block's score tiles (the key block `k`) and its p.v.
  virtual SmallVector<Value> scoreTile(WorkItem &w, const BlockView &k,
                                       ArrayRef<Value> init,
                                       ArrayRef<Value> keyOf,
                                       ArrayRef<Value> colOf);
  virtual void emitBlockPv(WorkItem &w, Value kv0, Value keys);
};

/// q.k^T and p.v on AVX512-BF16 pair dots: the FMA kernel's loops with
/// pair tiles (PairDotTile.h).
class PairFlashKernel : public FmaFlashKernel {
public:
  using FmaFlashKernel::FmaFlashKernel;
  void allocate(WorkItem &w) override { allocatePairs(w, false); }
  void packQueries(WorkItem &w) override { packQueryPairs(w); }

protected:
  SmallVector<Value> scoreTile(WorkItem &w, const BlockView &k,
                               ArrayRef<Value> init, ArrayRef<Value> keyOf,
                               ArrayRef<Value> colOf) override;
  void emitBlockPv(WorkItem &w, Value kv0, Value keys) override;
};

/// q.k^T and p.v on AMX tiles (AmxTile.h).
class AmxFlashKernel : public FlashKernel {
public:
  using FlashKernel::FlashKernel;
  void allocate(WorkItem &w) override { allocatePairs(w, true); }
  void packQueries(WorkItem &w) override { packQueryPairs(w); }
  void emitKeyBlock(WorkItem &w, Value kv0) override;

private:
  void emitScoreStep(WorkItem &w, Value kv0, Value keys,
                     bool boundPositions);
};

} // namespace

/// Block sizes and register tiles for the target, counted in compute-type
/// lanes of its vectors (`vectorBits`, 0 = the host's). Each tile keeps its
/// accumulators, its vector loads and one broadcast in registers: with 32
/// vector registers (AVX-512) q.k^T takes 4 keys x 6 vectors of rows and
/// p.v 6 rows x 4 vectors of columns (24 accumulators each), with 16 (AVX2,
/// SSE) 4 x 3 and 6 x 2 (12). 4 keys divide the 64-key blocks and the
/// 96-row query block is a whole number of q.k^T tiles (96, 24 or 12 rows of
/// f32) and of 6-row p.v tiles, so that no remainder tile runs in the steady
/// state. 96 rows, not two AVX-512 tiles (192): the smaller block keeps its
/// scores and accumulator closer to L1 (the measurements that chose it are
/// in bench/RESULTS.md, "96-row query blocks").
static FlashTiling chooseFlashTiling(const SdpaPlan &plan,
                                     const AttnCpuLoweringOptions &options) {
  FlashTiling t;
  t.lanes = options.target.getLanes(plan.computeType);
  int64_t accumulators = options.target.getAccumulatorRegisters();
  t.qkKeys = 4;
  t.qkRowVecs = accumulators / t.qkKeys;
  t.pvRows = 6;
  t.pvColVecs = accumulators / t.pvRows;
  int64_t rowTile = t.qkRowVecs * t.lanes;
  int64_t blockQ =
      options.blockQ > 0 ? options.blockQ : std::max<int64_t>(96, rowTile);
  if (std::optional<int64_t> l = getConstantIntValue(plan.l))
    blockQ = std::min(blockQ, std::max<int64_t>(*l, 1));
  t.blockQ = llvm::alignTo(blockQ, t.lanes);
  t.blockKV = options.blockKV > 0 ? options.blockKV : 64;
  t.positionBound = options.positionBound;
  return t;
}

/// The tiling of q.k^T and p.v on pair dots, where the target multiplies
/// bf16 pairs (`bf16Dot`: the GEMMs do) and the product suits them: bf16
/// operands, f32 compute, a vector width that vdpbf16ps has and a static E
/// (the queries' pair pack is per work item). The register tiles are the
/// vector nest's (each f32 lane of an accumulator is one query row or value
/// column as before, a step takes a pair of e or keys); blockKV whole
/// vectors of keys, for the probabilities' transposes. 64 query rows by
/// default, not 96: with the pair packs beside the f32 scores and
/// accumulator a work item's scratch then stays within L1 (the sizes tried:
/// bench/RESULTS.md, "Flash attention", Zen 4).
static std::optional<FlashTiling>
getPairFlashTiling(const SdpaPlan &plan, const AttnCpuLoweringOptions &options,
                   const FlashTiling &fallback) {
  if (options.target
          .getProductKernels(plan.elementType, plan.elementType,
                             plan.computeType)
          .vector != VectorKernel::PairDot)
    return std::nullopt;
  std::optional<int64_t> e = getConstantIntValue(plan.e);
  if (!e || *e <= 0)
    return std::nullopt;
  FlashTiling t = fallback;
  t.kernel = FlashKernelKind::PairDot;
  if (options.blockQ <= 0) {
    int64_t blockQ = 64;
    if (std::optional<int64_t> l = getConstantIntValue(plan.l))
      blockQ = std::min(blockQ, std::max<int64_t>(*l, 1));
    t.blockQ = llvm::alignTo(blockQ, t.lanes);
  }
  t.blockKV = llvm::alignTo(t.blockKV, t.lanes);
  return t;
}

/// The tiling of q.k^T and p.v on AMX tiles, where the target has them
/// (getProductKernels) and the product suits them: bf16 operands, f32 compute, 512-bit
/// vectors (the 16 x 16 transposes of the probabilities), static E and Ev
/// that are whole 32-element steps. Blocks are whole tiles: query rows and
/// keys multiples of 32; 128 of each by default (so that each C tile of
/// p.v takes 4 steps per load and store; the block sizes tried on
/// BERT-sized heads: bench/RESULTS.md, "Flash attention", Xeon-AMX).
static std::optional<FlashTiling>
getAmxFlashTiling(const SdpaPlan &plan, const AttnCpuLoweringOptions &options,
                  const FlashTiling &fallback) {
  if (!options.target
           .getProductKernels(plan.elementType, plan.elementType,
                              plan.computeType)
           .amxTiles ||
      fallback.lanes != kAmxTileCols)
    return std::nullopt;
  std::optional<int64_t> e = getConstantIntValue(plan.e);
  std::optional<int64_t> ev = getConstantIntValue(plan.ev);
  if (!e || !ev || *e <= 0 || *ev <= 0 || *e % kAmxStepK != 0 ||
      *ev % kAmxBlock != 0)
    return std::nullopt;
  FlashTiling t = fallback;
  t.kernel = FlashKernelKind::Amx;
  int64_t blockQ = options.blockQ > 0 ? options.blockQ : 128;
  if (std::optional<int64_t> l = getConstantIntValue(plan.l))
    blockQ = std::min(blockQ, std::max<int64_t>(*l, 1));
  t.blockQ = llvm::alignTo(blockQ, kAmxBlock);
  t.blockKV = llvm::alignTo(options.blockKV > 0 ? options.blockKV : 128,
                            kAmxBlock);
  return t;
}

Value FlashLowering::emit() {
  buf = getSdpaBuffers(b, loc, op, plan);
  if (buf.mask)
    maskT = transposeAlongRows(buf.mask, plan.maskBroadcast);
  positionsFit = positionsFitCheck();

  // Keys and values are read in place when they already are vectors of the
  // compute type: f32 rows (values: whole vectors per row).
  std::optional<int64_t> ev = getConstantIntValue(plan.ev);
  bool sameType = plan.elementType == ct;
  packK = !sameType;
  packV = !sameType || !ev || *ev % t.lanes != 0;
  Value lanes = idx(t.lanes);
  evPadded =
      ev ? idx(llvm::alignTo(*ev, t.lanes))
         : mul(arith::CeilDivUIOp::create(b, loc, plan.ev, lanes), lanes);

  bool contiguous = rowsContiguous();
  if (pairTiling && contiguous)
    t = *pairTiling;
  if (amxTiling && contiguous) {
    // One check per attn.sdpa.
    FlashTiling fallback = t;
    buildAmxBranch(b, loc, [&](bool onTiles) {
      t = onTiles ? *amxTiling : fallback;
      emitForall();
    });
  } else {
    emitForall();
  }
  return bufferization::ToTensorOp::create(b, loc, op.getType(), buf.out,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

/// The tiles and the pair dots read the key block in place and the packers
/// read q and v with vector loads: their rows must be contiguous.
bool FlashLowering::rowsContiguous() {
  return llvm::all_of(ValueRange{buf.q, buf.k, buf.v}, [](Value v) {
    return cast<MemRefType>(v.getType()).isLastDimUnitStride();
  });
}

/// The work items: query batch dims x query blocks.
void FlashLowering::emitForall() {
  int64_t nb = plan.numBatch;
  SmallVector<OpFoldResult> ubs;
  for (Value size : plan.qBatch)
    ubs.push_back(getAsOpFoldResult(size));
  // Packed: the sequences x the query blocks of the longest.
  if (plan.packed) {
    ubs.push_back(memref::getMixedSize(b, loc, buf.qLengths, 0));
    ubs.push_back(ceilDiv(maxPackedQueryLength(), t.blockQ));
  } else {
    ubs.push_back(ceilDiv(plan.l, t.blockQ));
  }
  // A transposed mask shared by several heads (or batches): query blocks
  // outermost, so that consecutive work items read the same slice of the
  // copy while it is in cache (head-major, each head would stream the
  // whole copy from memory).
  int64_t maskRank = maskT ? cast<MemRefType>(maskT.getType()).getRank() : 0;
  bool blocksFirst =
      maskT && (maskRank - 2 < nb ||
                llvm::any_of(ArrayRef<bool>(plan.maskBroadcast)
                                 .take_front(maskRank - 2),
                             [](bool broadcast) { return broadcast; }));
  if (blocksFirst)
    std::rotate(ubs.begin(), ubs.end() - 1, ubs.end());
  auto forall =
      scf::ForallOp::create(b, loc, ubs, ValueRange{}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getBody()->getTerminator());
  SmallVector<Value> ivs(forall.getInductionVars());
  if (blocksFirst)
    std::rotate(ivs.begin(), ivs.begin() + 1, ivs.end());
  emitWorkItem(ivs);
}

WorkItem FlashLowering::allocateScratch(FlashKernel &kernel,
                                        ValueRange ivs) {
  WorkItem w;
  ValueRange batchIvs = ivs.drop_back();
  w.qIdx.assign(batchIvs.begin(), batchIvs.end());
  w.kvIdx = kvBatchIndices(b, loc, plan, w.qIdx);
  w.row0 = mul(ivs.back(), idx(t.blockQ));
  w.rows = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, plan.l, w.row0), idx(t.blockQ));
  OpFoldResult bq = b.getIndexAttr(t.blockQ), bkv = b.getIndexAttr(t.blockKV);
  OpFoldResult evp = getAsOpFoldResult(evPadded);
  w.sT = alloc({bkv, bq});
  w.acc = alloc({bq, evp});
  w.m = alloc({bq});
  w.blockMax = alloc({bq});
  w.l = alloc({bq});
  w.alpha = alloc({bq});
  kernel.allocate(w);
  return w;
}

void FmaFlashKernel::allocate(WorkItem &w) {
  OpFoldResult bq = b.getIndexAttr(t.blockQ), bkv = b.getIndexAttr(t.blockKV);
  OpFoldResult e = getAsOpFoldResult(plan.e);
  OpFoldResult evp = getAsOpFoldResult(f.evPadded);
  w.qT = alloc({e, bq});
  if (f.packK)
    w.kPack = alloc({bkv, e});
  if (f.packV)
    w.vPack = alloc({bkv, evp});
}

void FlashKernel::allocatePairs(WorkItem &w, bool keyPack) {
  OpFoldResult bq = b.getIndexAttr(t.blockQ), bkv = b.getIndexAttr(t.blockKV);
  OpFoldResult e = getAsOpFoldResult(plan.e);
  // E is static (getPairFlashTiling, getAmxFlashTiling), Ev on tiles.
  Type bf16 = b.getBF16Type();
  int64_t eSize = *getConstantIntValue(plan.e);
  w.qPairs = allocAligned(b, loc, bf16,
                          {b.getIndexAttr(llvm::divideCeil(eSize, 2)),
                           b.getIndexAttr(2 * t.blockQ)});
  w.pRows = allocAligned(b, loc, bf16, {bq, bkv});
  // On AMX tiles Ev is a multiple of 32, so evPadded is Ev itself.
  std::optional<int64_t> evSize = getConstantIntValue(f.evPadded);
  OpFoldResult pairCols =
      evSize ? OpFoldResult(b.getIndexAttr(2 * *evSize))
             : OpFoldResult(mul(f.evPadded, idx(2)));
  w.vPack = allocAligned(b, loc, bf16,
                         {b.getIndexAttr(t.blockKV / 2), pairCols});
  if (keyPack)
    w.kPack = allocAligned(b, loc, bf16, {bkv, e});
}

/// qT = the block's queries transposed (zero past the last valid row; on
/// pair dots and AMX tiles qPairs, the same in bf16 pairs of e), acc = 0,
/// m = -inf, l = 0.
void FlashLowering::emitInit(FlashKernel &kernel, WorkItem &w) {
  Value c0 = idx(0), c1 = idx(1), lanes = idx(t.lanes), bq = idx(t.blockQ);
  kernel.packQueries(w);
  Value zeroVec = createFloatConstantOfType(b, loc, vecType, 0.0);
  Value negInfVec = createFloatConstantOfType(
      b, loc, vecType, -std::numeric_limits<double>::infinity());
  forLoop(c0, bq, c1, [&](Value i) {
    forLoop(c0, evPadded, lanes, [&](Value d) {
      vector::StoreOp::create(b, loc, zeroVec, w.acc, ValueRange{i, d});
    });
  });
  forLoop(c0, bq, lanes, [&](Value i) {
    vector::StoreOp::create(b, loc, negInfVec, w.m, ValueRange{i});
    vector::StoreOp::create(b, loc, zeroVec, w.l, ValueRange{i});
  });
}

void FmaFlashKernel::packQueries(WorkItem &w) {
  Value c0 = idx(0), c1 = idx(1), bq = idx(t.blockQ);
  forLoop(c0, w.rows, c1, [&](Value i) {
    forLoop(c0, plan.e, c1, [&](Value e) {
      SmallVector<Value> qi(w.qIdx);
      qi.append({add(w.row0, i), e});
      Value x = memref::LoadOp::create(b, loc, buf.q, qi);
      memref::StoreOp::create(b, loc, castFloat(b, loc, x, ct), w.qT,
                              ValueRange{e, i});
    });
  });
  Value zero = createFloatConstant(b, loc, ct, 0.0);
  forLoop(w.rows, bq, c1, [&](Value i) {
    forLoop(c0, plan.e, c1, [&](Value e) {
      memref::StoreOp::create(b, loc, zero, w.qT, ValueRange{e, i});
    });
  });
}

void FlashKernel::packQueryPairs(WorkItem &w) {
  packPairBlock(b, loc, BlockView{buf.q, w.qIdx, w.row0, nullptr}, w.qPairs,
                t.lanes, plan.e, w.rows, idx(t.blockQ), /*transposed=*/true);
}

std::unique_ptr<FlashKernel> FlashKernel::create(FlashLowering &f) {
  switch (f.t.kernel) {
  case FlashKernelKind::Fma:
    return std::unique_ptr<FlashKernel>(new FmaFlashKernel(f));
  case FlashKernelKind::PairDot:
    return std::unique_ptr<FlashKernel>(new PairFlashKernel(f));
  case FlashKernelKind::Amx:
    return std::unique_ptr<FlashKernel>(new AmxFlashKernel(f));
  }
  llvm_unreachable("unknown flash kernel");
}

/// The longest sequence's query rows in the packed layout (lengths below 0
/// count as 0).
Value FlashLowering::maxPackedQueryLength() {
  Value zero = idx(0);
  Value n = getValueOrCreateConstantIndexOp(
      b, loc, memref::getMixedSize(b, loc, buf.qLengths, 0));
  auto loop = scf::ForOp::create(b, loc, zero, n, idx(1), ValueRange{zero});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value length = memref::LoadOp::create(b, loc, buf.qLengths,
                                        ValueRange{loop.getInductionVar()});
  length = arith::IndexCastOp::create(b, loc, b.getIndexType(), length);
  scf::YieldOp::create(
      b, loc,
      Value(arith::MaxSIOp::create(b, loc, loop.getRegionIterArg(0), length)));
  return loop.getResult(0);
}

/// One work item of the packed layout, ivs = (query batch dims, sequence,
/// query block): the sequence's rows and keys start at the sums of the
/// lengths before it. Its query blocks are emitted as the work items of a
/// batch of one unpadded sequence: `plan` and `buf` narrowed to its L and S
/// and to subviews of its rows and keys (so that is_causal and the window
/// see positions within the sequence); a block past its rows does nothing.
/// Sums and lengths are clamped to L and S, so that no buffer is read out
/// of bounds after a failed run-time check.
void FlashLowering::emitPackedWorkItem(ValueRange ivs) {
  int64_t nb = plan.numBatch;
  Value seq = ivs[nb], block = ivs[nb + 1];
  Value zero = idx(0);
  auto lengthAt = [&](Value lengths, Value i) -> Value {
    Value n = memref::LoadOp::create(b, loc, lengths, ValueRange{i});
    n = arith::IndexCastOp::create(b, loc, b.getIndexType(), n);
    return arith::MaxSIOp::create(b, loc, n, zero);
  };
  auto before = scf::ForOp::create(
      b, loc, zero, seq, idx(1), ValueRange{zero, zero},
      [&](OpBuilder &, Location, Value i, ValueRange sums) {
        Value q = add(sums[0], lengthAt(buf.qLengths, i));
        Value kv = add(sums[1], lengthAt(buf.kvLengths, i));
        scf::YieldOp::create(b, loc, ValueRange{q, kv});
      });
  auto clampTo = [&](Value x, Value bound) -> Value {
    return arith::MinSIOp::create(b, loc, x, bound);
  };
  Value qBegin = clampTo(before.getResult(0), plan.l);
  Value kvBegin = clampTo(before.getResult(1), plan.s);
  // One op per statement: the IR's order does not depend on the
  // compiler's order of evaluating arguments.
  Value qLeft = arith::SubIOp::create(b, loc, plan.l, qBegin);
  Value qRows = clampTo(lengthAt(buf.qLengths, seq), qLeft);
  Value kvLeft = arith::SubIOp::create(b, loc, plan.s, kvBegin);
  Value keys = clampTo(lengthAt(buf.kvLengths, seq), kvLeft);
  Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     mul(block, idx(t.blockQ)), qRows);
  scf::IfOp::create(b, loc, live, [&](OpBuilder &, Location) {
    SdpaPlan whole = plan;
    SdpaBuffers wholeBuf = buf;
    auto rows = [&](Value buffer, Value begin, Value count) -> Value {
      int64_t rank = cast<MemRefType>(buffer.getType()).getRank();
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes = memref::getMixedSizes(b, loc, buffer);
      SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
      offsets[rank - 2] = begin;
      sizes[rank - 2] = count;
      return memref::SubViewOp::create(b, loc, buffer, offsets, sizes,
                                       strides);
    };
    buf.q = rows(wholeBuf.q, qBegin, qRows);
    buf.out = rows(wholeBuf.out, qBegin, qRows);
    buf.k = rows(wholeBuf.k, kvBegin, keys);
    buf.v = rows(wholeBuf.v, kvBegin, keys);
    plan.l = qRows;
    plan.s = keys;
    plan.packed = plan.hasQLengths = plan.hasKvLengths = false;
    SmallVector<Value> itemIvs(ivs.take_front(nb));
    itemIvs.push_back(block);
    emitWorkItem(itemIvs);
    plan = whole;
    buf = wholeBuf;
    scf::YieldOp::create(b, loc);
  });
}

void FlashLowering::emitWorkItem(ValueRange ivs) {
  if (plan.packed) {
    emitPackedWorkItem(ivs);
    return;
  }
  std::unique_ptr<FlashKernel> kernel = FlashKernel::create(*this);
  WorkItem w = allocateScratch(*kernel, ivs);
  emitInit(*kernel, w);
  // A band with -inf: keys outside [row0 - left, row0 + rows - 1 + right]
  // are -inf for every row of the item; their blocks are not visited
  // (signed index arithmetic, clamped to [0, S]).
  Value kvBegin = idx(0), kvEnd = plan.s;
  if (plan.canSkipOutsideBand()) {
    Value zero = idx(0);
    if (std::optional<int64_t> left = plan.band.left)
      kvBegin = arith::MaxSIOp::create(
          b, loc, zero,
          arith::SubIOp::create(b, loc, w.row0, idx(*left)).getResult());
    if (std::optional<int64_t> right = plan.band.right) {
      Value end = add(add(w.row0, w.rows), idx(*right));
      end = arith::MaxSIOp::create(b, loc, zero, end);
      kvEnd = arith::MinSIOp::create(b, loc, plan.s, end);
    }
  }
  // Sequence lengths: only the blocks of the sequence's real keys, none for
  // a block of padded query rows (its rows end as 0: no key took part).
  if (plan.hasQLengths || plan.hasKvLengths) {
    w.seq = loadSeqBounds(b, loc, plan, buf.qLengths, buf.kvLengths,
                          w.qIdx.front());
    kvBegin = arith::MaxSIOp::create(b, loc, kvBegin, w.seq->kvBegin);
    kvEnd = arith::MinSIOp::create(b, loc, kvEnd, w.seq->kvEnd);
    Value live = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, w.row0,
                              w.seq->qEnd),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                              add(w.row0, w.rows), w.seq->qBegin));
    kvEnd = arith::SelectOp::create(b, loc, live, kvEnd, kvBegin);
  }
  forLoop(kvBegin, kvEnd, idx(t.blockKV), [&](Value kv0) {
    if (!plan.canSkipMaskedTiles()) {
      kernel->emitKeyBlock(w, kv0);
      return;
    }
    // A tile that the mask removes entirely adds nothing (a padding mask's
    // padded keys: canSkipMaskedTiles).
    scf::IfOp::create(b, loc, maskKeepsTile(w, kv0),
                      [&](OpBuilder &, Location) {
                        kernel->emitKeyBlock(w, kv0);
                        scf::YieldOp::create(b, loc);
                      });
  });
  emitOutput(w);
}

/// i1: whether the boolean mask keeps any position of the work item's rows
/// at keys [kv0, kv0 + blockKV): per key one element when the mask does
/// not vary along the rows ([B, 1, 1, S]), else the OR of the item's row
/// vectors of its transposed copy (lanes past the item's rows, padding of
/// the copy, ignored); keys in order, up to the first kept one.
Value FlashLowering::maskKeepsTile(WorkItem &w, Value kv0) {
  Value kvEnd =
      arith::MinUIOp::create(b, loc, plan.s, add(kv0, idx(t.blockKV)));
  return buildAnyKeyKept(
      b, loc, kv0, kvEnd, [&](OpBuilder &, Location, Value key) -> Value {
        if (!maskT) {
          SmallVector<Value> indices = scoreOperandIndices(
              b, loc, plan, plan.maskBroadcast, w.qIdx, idx(0), key);
          return buildMaskKeeps(
              b, loc, plan, memref::LoadOp::create(b, loc, buf.mask, indices));
        }
        auto boolVec = VectorType::get({t.lanes}, b.getI1Type());
        auto indexVec = VectorType::get({t.lanes}, b.getIndexType());
        Value none = arith::ConstantOp::create(
            b, loc, cast<TypedAttr>(b.getZeroAttr(boolVec)));
        auto rowsLoop = scf::ForOp::create(
            b, loc, idx(0), w.rows, idx(t.lanes), ValueRange{none},
            [&](OpBuilder &, Location, Value i0, ValueRange any) {
              // The i8 copy compared as the polarity says (keep: set, drop:
              // clear), so no inverted mask is made.
              SmallVector<Value> indices =
                  scoreOperandIndices(b, loc, plan, plan.maskBroadcast, w.qIdx,
                                      add(w.row0, i0), key);
              int64_t rank = indices.size();
              std::swap(indices[rank - 2], indices[rank - 1]);
              auto byteVec = VectorType::get({t.lanes}, b.getI8Type());
              Value x = vector::LoadOp::create(b, loc, byteVec, maskT, indices);
              Value zero = arith::ConstantOp::create(
                  b, loc, cast<TypedAttr>(b.getZeroAttr(byteVec)));
              Value kept = arith::CmpIOp::create(b, loc,
                                                 plan.maskDrops
                                                     ? arith::CmpIPredicate::eq
                                                     : arith::CmpIPredicate::ne,
                                                 x, zero);
              Value lane = arith::AddIOp::create(
                  b, loc, vector::BroadcastOp::create(b, loc, indexVec, i0),
                  vector::StepOp::create(b, loc, indexVec));
              Value real = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::ult, lane,
                  vector::BroadcastOp::create(b, loc, indexVec, w.rows));
              kept = arith::AndIOp::create(b, loc, kept, real);
              scf::YieldOp::create(
                  b, loc, Value(arith::OrIOp::create(b, loc, any[0], kept)));
            });
        return vector::ReductionOp::create(b, loc, vector::CombiningKind::OR,
                                           rowsLoop.getResult(0));
      });
}

/// The view of a key or value block: in place, or packed into `pack` (f32,
/// columns zero-padded to `paddedCols`) when `pack` is set.
BlockView FlashLowering::keyBlock(Value source, Value pack,
                                  ArrayRef<Value> kvIdx, Value kv0,
                                  Value keys, Value cols, Value paddedCols) {
  BlockView inPlace{source, SmallVector<Value>(kvIdx), kv0, nullptr};
  if (!pack)
    return inPlace;
  return packBlock(b, loc, inPlace, pack, vecType, keys, cols, paddedCols);
}

/// One key block of the vector nest: scores, softmax step and p.v, on f32
/// FMAs (k and v widened to f32 in kPack and vPack unless they are f32) or
/// on pair dots (PairFlashKernel: k read in place, see its emitBlockPv).
void FmaFlashKernel::emitKeyBlock(WorkItem &w, Value kv0) {
  Value keys = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, plan.s, kv0), idx(t.blockKV));
  BlockView k =
      f.keyBlock(buf.k, w.kPack, w.kvIdx, kv0, keys, plan.e, plan.e);
  Value negInfVec = createFloatConstantOfType(
      b, loc, vecType, -std::numeric_limits<double>::infinity());
  forLoop(idx(0), idx(t.blockQ), idx(t.lanes), [&](Value i) {
    vector::StoreOp::create(b, loc, negInfVec, w.blockMax, ValueRange{i});
  });
  f.emitScoreStepVersions([&](bool boundPositions) {
    f.emitScores(w, kv0, keys, boundPositions,
                 [&](ArrayRef<Value> init, ArrayRef<Value> keyOf,
                     ArrayRef<Value> colOf) {
                   return scoreTile(w, k, init, keyOf, colOf);
                 });
  });
  f.emitSoftmaxStep(w, keys);
  emitBlockPv(w, kv0, keys);
}

SmallVector<Value> FmaFlashKernel::scoreTile(WorkItem &w, const BlockView &k,
                                             ArrayRef<Value> init,
                                             ArrayRef<Value> keyOf,
                                             ArrayRef<Value> colOf) {
  return buildRegisterTile(
      b, loc, plan.e, init, keyOf.size(), colOf.size(),
      [&](int64_t r, Value e) {
        return loadElement(b, loc, k, keyOf[r], e, ct);
      },
      [&](int64_t v, Value e) {
        return vector::LoadOp::create(b, loc, vecType, w.qT,
                                      ValueRange{e, colOf[v]});
      });
}

void FmaFlashKernel::emitBlockPv(WorkItem &w, Value kv0, Value keys) {
  BlockView v =
      f.keyBlock(buf.v, w.vPack, w.kvIdx, kv0, keys, plan.ev, f.evPadded);
  f.emitPv(w, [&](ArrayRef<Value> init, ArrayRef<Value> rowOf,
                  ArrayRef<Value> colOf) {
    return buildRegisterTile(
        b, loc, keys, init, rowOf.size(), colOf.size(),
        [&](int64_t r, Value j) -> Value {
          return memref::LoadOp::create(b, loc, w.sT,
                                        ValueRange{j, rowOf[r]});
        },
        [&](int64_t c, Value j) {
          return loadVector(b, loc, v, vecType, j, colOf[c]);
        });
  });
}

/// p.v on pair dots: p rounded to bf16 query-major into pRows
/// (as on AMX tiles and in PyTorch's flash attention; the row sums stay
/// those of the f32 p), the value block packed in bf16 pairs of keys into
/// vPack (an odd last key paired with zero, padding columns zero), then
/// acc = acc * alpha + the pair tiles over ceil(keys / 2) pairs, each p
/// pair one 32-bit broadcast from a row of pRows.
void PairFlashKernel::emitBlockPv(WorkItem &w, Value kv0, Value keys) {
  Value lanes = idx(t.lanes);
  Value paddedKeys =
      mul(arith::CeilDivUIOp::create(b, loc, keys, lanes), lanes);
  // Rows of sT past the block's keys hold an earlier block's p or nothing:
  // zero, so that the transposes give p = 0 for them (the partner of an odd
  // last key reads one).
  zeroRows(b, loc, BlockView{w.sT}, vecType, keys, paddedKeys, idx(t.blockQ));
  emitProbabilityRows(w, paddedKeys);
  BlockView v = packPairBlock(
      b, loc, BlockView{buf.v, SmallVector<Value>(w.kvIdx), kv0, nullptr},
      w.vPack, t.lanes, keys, plan.ev, f.evPadded, /*transposed=*/false);
  BlockView p{w.pRows, {}, nullptr, nullptr};
  auto pairType = VectorType::get({2 * t.lanes}, b.getBF16Type());
  Value pairs = arith::CeilDivUIOp::create(b, loc, keys, idx(2));
  f.emitPv(w, [&](ArrayRef<Value> init, ArrayRef<Value> rowOf,
                ArrayRef<Value> colOf) {
    return buildPairDotTile(
        b, loc, idx(0), pairs, init, rowOf.size(), colOf.size(),
        [&](int64_t r, Value pair) {
          return loadPairBroadcast(b, loc, p, t.lanes, rowOf[r], pair,
                                   /*last=*/false);
        },
        [&](int64_t c, Value pair) {
          return loadVector(b, loc, v, pairType, pair, mul(colOf[c], idx(2)));
        });
  });
}


/// One key block on AMX tiles:
///   1. sT = K Q^T: the key block as A tiles (in place when the block is
///      whole, else zero-padded to whole tiles in kPack) times qPairs, C
///      tiles starting from zero;
///   2. the score step (applyScoreTransforms) and the block's row max, one
///      vector pass over sT;
///   3. the online-softmax step (emitSoftmaxStep), p in f32 in sT;
///   4. p rounded to bf16 query-major into pRows (as PyTorch's flash
///      attention rounds p to the element type before p.v; the row sums
///      stay those of the f32 p), keys past the block's zero;
///   5. acc = acc * alpha, then acc += pRows V on tiles, V packed in bf16
///      pairs of keys (vPack, zero past the block's keys).
void AmxFlashKernel::emitKeyBlock(WorkItem &w, Value kv0) {
  Type bf16 = b.getBF16Type();
  auto zeroRow = VectorType::get({kAmxStepK}, bf16);
  int64_t eSize = *getConstantIntValue(plan.e);
  int64_t evSize = *getConstantIntValue(plan.ev);
  Value keys = minu(arith::SubIOp::create(b, loc, plan.s, kv0),
                    idx(t.blockKV));
  Value steps = arith::CeilDivUIOp::create(b, loc, keys, idx(kAmxStepK));
  Value paddedKeys = mul(steps, idx(kAmxStepK));
  BlockView qPairs{w.qPairs, {}, nullptr, nullptr};
  auto scores = [&](const BlockView &k) {
    buildAmxBlockProduct(b, loc, k, qPairs, w.sT, paddedKeys, idx(t.blockQ),
                         idx(eSize / kAmxStepK), eSize / kAmxStepK,
                         /*zeroC=*/true);
  };
  BlockView k{buf.k, SmallVector<Value>(w.kvIdx), kv0, nullptr};
  auto whole = scf::IfOp::create(
      b, loc, TypeRange{},
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, keys,
                            idx(t.blockKV)),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(whole.thenBlock());
    scores(k);
    b.setInsertionPointToStart(whole.elseBlock());
    BlockView packed = packBlock(b, loc, k, w.kPack,
                                 VectorType::get({t.lanes}, bf16), keys,
                                 plan.e, plan.e);
    zeroRows(b, loc, BlockView{w.kPack}, zeroRow, keys, paddedKeys, plan.e);
    scores(packed);
  }
  f.emitScoreStepVersions([&](bool boundPositions) {
    emitScoreStep(w, kv0, keys, boundPositions);
  });
  f.emitSoftmaxStep(w, keys);
  // The padded keys' scores (0 * q, NaN for an infinite q) are no
  // probabilities: zero before the transposes read them.
  zeroRows(b, loc, BlockView{w.sT}, vecType, keys, paddedKeys, idx(t.blockQ));
  emitProbabilityRows(w, paddedKeys);
  Value ev = idx(evSize);
  packPairBlock(b, loc, BlockView{buf.v, SmallVector<Value>(w.kvIdx), kv0,
                                  nullptr},
                w.vPack, t.lanes, keys, ev, ev, /*transposed=*/false);
  zeroRows(b, loc, BlockView{w.vPack}, zeroRow,
           arith::CeilDivUIOp::create(b, loc, keys, idx(2)),
           mul(steps, idx(kAmxStepK / 2)), idx(2 * evSize));
  Value lanes = idx(t.lanes);
  forLoop(idx(0), idx(t.blockQ), idx(1), [&](Value i) {
    Value alpha = vector::BroadcastOp::create(
        b, loc, vecType, memref::LoadOp::create(b, loc, w.alpha, i));
    forLoop(idx(0), ev, lanes, [&](Value d) {
      Value acc = vector::LoadOp::create(b, loc, vecType, w.acc,
                                         ValueRange{i, d});
      vector::StoreOp::create(b, loc,
                              arith::MulFOp::create(b, loc, acc, alpha),
                              w.acc, ValueRange{i, d});
    });
  });
  buildAmxBlockProduct(b, loc, BlockView{w.pRows, {}, nullptr, nullptr},
                       BlockView{w.vPack, {}, nullptr, nullptr}, w.acc,
                       idx(t.blockQ), ev, steps, t.blockKV / kAmxStepK,
                       /*zeroC=*/false);
}

/// sT[j, i] = the score step of sT[j, i] and blockMax[i] = max_j sT[j, i]
/// for the block's keys: per vector of query rows, a pass down the keys
/// (`boundPositions`: see emitScores).
void AmxFlashKernel::emitScoreStep(WorkItem &w, Value kv0, Value keys,
                                   bool boundPositions) {
  Value row0 = w.row0;
  if (boundPositions) {
    row0 = arith::MinUIOp::create(b, loc, row0, idx(t.positionBound));
    kv0 = arith::MinUIOp::create(b, loc, kv0, idx(t.positionBound));
  }
  Value negInfVec = createFloatConstantOfType(
      b, loc, vecType, -std::numeric_limits<double>::infinity());
  forLoop(idx(0), idx(t.blockQ), idx(t.lanes), [&](Value i0) {
    Value rowBase = add(row0, i0);
    auto rows = scf::ForOp::create(
        b, loc, idx(0), keys, idx(1), ValueRange{negInfVec},
        [&](OpBuilder &, Location, Value j, ValueRange iter) {
          Value raw = vector::LoadOp::create(b, loc, vecType, w.sT,
                                             ValueRange{j, i0});
          Value score =
              f.applyScoreTransforms(w, raw, rowBase, add(kv0, j));
          vector::StoreOp::create(b, loc, score, w.sT, ValueRange{j, i0});
          scf::YieldOp::create(b, loc,
                               buildMaxIgnoringNaN(b, loc, score, iter[0]));
        });
    vector::StoreOp::create(b, loc, rows.getResult(0), w.blockMax,
                            ValueRange{i0});
  });
}

/// pRows[i, j] = bf16(sT[j, i]) for the block's padded keys (a multiple of
/// lanes): lanes x lanes blocks transposed in registers (as 32-bit words),
/// each row rounded to bf16 once.
void FlashKernel::emitProbabilityRows(WorkItem &w, Value paddedKeys) {
  Value lanes = idx(t.lanes);
  auto words = VectorType::get({t.lanes}, b.getI32Type());
  auto rowType = VectorType::get({t.lanes}, b.getBF16Type());
  forLoop(idx(0), idx(t.blockQ), lanes, [&](Value i0) {
    forLoop(idx(0), paddedKeys, lanes, [&](Value j0) {
      SmallVector<Value> block;
      for (int64_t r = 0; r < t.lanes; ++r) {
        Value p = vector::LoadOp::create(b, loc, vecType, w.sT,
                                         ValueRange{add(j0, idx(r)), i0});
        block.push_back(vector::BitCastOp::create(b, loc, words, p));
      }
      block = transposeInRegisters(b, loc, block);
      for (int64_t r = 0; r < t.lanes; ++r) {
        Value p = vector::BitCastOp::create(b, loc, vecType, block[r]);
        vector::StoreOp::create(b, loc, castFloat(b, loc, p, rowType),
                                w.pRows, ValueRange{add(i0, idx(r)), j0});
      }
    });
  });
}


/// Two versions of the score step where `positionsFit` is set: positions
/// bounded (32-bit after the narrowing) when the lengths allow, the 64-bit
/// code otherwise; one version without it.
void FlashLowering::emitScoreStepVersions(
    function_ref<void(bool boundPositions)> scoreStep) {
  if (!positionsFit) {
    scoreStep(/*boundPositions=*/false);
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, positionsFit, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scoreStep(/*boundPositions=*/true);
  b.setInsertionPointToStart(ifOp.elseBlock());
  scoreStep(/*boundPositions=*/false);
}

/// See `positionsFit`. A score_mod region's position term (ALiBi's
/// j - i, converted to f32 per score vector) is only narrowed to 32 bits by
/// arith-int-range-narrowing when the range analysis bounds the positions;
/// with dynamic lengths nothing does, and AVX2 has no packed i64 -> f32.
Value FlashLowering::positionsFitCheck() {
  Block *block = op.getScoreModBlock();
  if (!block)
    return Value();
  int64_t firstPosition = 1 + plan.numBatch;
  if (block->getArgument(firstPosition).use_empty() &&
      block->getArgument(firstPosition + 1).use_empty())
    return Value();
  Value fit;
  for (Value size : {plan.l, plan.s}) {
    if (getConstantIntValue(size))
      continue;
    Value le = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, size,
                                     idx(t.positionBound));
    fit = fit ? arith::AndIOp::create(b, loc, fit, le).getResult() : le;
  }
  return fit;
}

/// sT[j, i] = score step of (sum_e k[j, e] * qT[e, i]) for the block's keys
/// and all rows, and blockMax[i] = max_j sT[j, i]. With `boundPositions`
/// (only where positionsFit holds) the first row and key are clamped to
/// their bounds: no change of value, but the range analysis then bounds the
/// positions the score_mod region reads.
void FlashLowering::emitScores(WorkItem &w, Value kv0, Value keys,
                               bool boundPositions, ScoreTileFn tile) {
  Value row0 = w.row0;
  if (boundPositions) {
    row0 = arith::MinUIOp::create(b, loc, row0, idx(t.positionBound));
    kv0 = arith::MinUIOp::create(b, loc, kv0, idx(t.positionBound));
  }
  int64_t rowVecs = t.blockQ / t.lanes;
  forGroups(idx(0), keys, t.qkKeys, [&](Value j0, int64_t mr) {
    forGroups(idx(0), idx(rowVecs), t.qkRowVecs, [&](Value v0, int64_t nv) {
      Value i0 = mul(v0, idx(t.lanes));
      SmallVector<Value> rowOf, colOf;
      for (int64_t r = 0; r < mr; ++r)
        rowOf.push_back(add(j0, idx(r)));
      for (int64_t v = 0; v < nv; ++v)
        colOf.push_back(add(i0, idx(v * t.lanes)));
      SmallVector<Value> init(
          mr * nv, createFloatConstantOfType(b, loc, vecType, 0.0));
      SmallVector<Value> acc = tile(init, rowOf, colOf);
      emitScoreTileEpilogue(w, acc, rowOf, colOf, row0, kv0, mr, nv);
    });
  });
}

/// The raw scores of keys keyOf[r] (rows of the key block `k`, read in
/// place) and query rows colOf[v] + lanes on pair dots: each key pair one
/// 32-bit broadcast from its row, the queries' pairs vectors of qPairs; an
/// odd E's last element paired with zero.
SmallVector<Value> PairFlashKernel::scoreTile(WorkItem &w, const BlockView &k,
                                              ArrayRef<Value> init,
                                              ArrayRef<Value> keyOf,
                                              ArrayRef<Value> colOf) {
  int64_t eSize = *getConstantIntValue(plan.e);
  auto pairType = VectorType::get({2 * t.lanes}, b.getBF16Type());
  auto pairsFrom = [&](int64_t lo, int64_t hi, ArrayRef<Value> start,
                       bool last) {
    return buildPairDotTile(
        b, loc, idx(lo), idx(hi), start, keyOf.size(), colOf.size(),
        [&](int64_t r, Value p) {
          return loadPairBroadcast(b, loc, k, t.lanes, keyOf[r], p, last);
        },
        [&](int64_t v, Value p) {
          return vector::LoadOp::create(b, loc, pairType, w.qPairs,
                                        ValueRange{p, mul(colOf[v], idx(2))});
        });
  };
  SmallVector<Value> acc = pairsFrom(0, eSize / 2, init, false);
  if (eSize % 2 == 0)
    return acc;
  return pairsFrom(eSize / 2, eSize / 2 + 1, acc, true);
}

/// The scores of one register tile (keys keyOf[r], query rows rowOf[v] +
/// lanes) go through the score hook while still in registers, into sT, and
/// their per-row max into blockMax.
void FlashLowering::emitScoreTileEpilogue(WorkItem &w, ArrayRef<Value> acc,
                                          ArrayRef<Value> keyOf,
                                          ArrayRef<Value> rowOf, Value row0,
                                          Value kv0, int64_t mr, int64_t nv) {
  for (int64_t v = 0; v < nv; ++v) {
    Value rowBase = add(row0, rowOf[v]);
    Value max = vector::LoadOp::create(b, loc, vecType, w.blockMax,
                                       ValueRange{rowOf[v]});
    for (int64_t r = 0; r < mr; ++r) {
      Value s = applyScoreTransforms(w, acc[r * nv + v], rowBase,
                                     add(kv0, keyOf[r]));
      vector::StoreOp::create(b, loc, s, w.sT, ValueRange{keyOf[r], rowOf[v]});
      max = buildMaxIgnoringNaN(b, loc, s, max);
    }
    vector::StoreOp::create(b, loc, max, w.blockMax, ValueRange{rowOf[v]});
  }
}

/// The transposed copy of a score operand that varies along the query rows
/// (see `maskT`), or null. Made once per attn.sdpa, before the work items:
/// every head and key block then reads it as vectors.
Value FlashLowering::transposeAlongRows(Value buf, ArrayRef<bool> broadcast) {
  auto maskType = cast<MemRefType>(buf.getType());
  int64_t rank = maskType.getRank();
  if (rank < 2 || broadcast[rank - 2])
    return Value();
  bool isBool = maskType.getElementType().isInteger(1);
  Type elem = isBool ? Type(b.getI8Type()) : ct;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(maskType.isDynamicDim(d)
                        ? Value(memref::DimOp::create(b, loc, buf, d))
                        : idx(maskType.getDimSize(d)));
  Value rows = sizes[rank - 2], lanes = idx(t.lanes);
  SmallVector<OpFoldResult> tSizes;
  for (int64_t d = 0; d < rank - 2; ++d)
    tSizes.push_back(getAsOpFoldResult(sizes[d]));
  tSizes.push_back(getAsOpFoldResult(sizes[rank - 1]));
  // Rows of the copy are the mask's rows padded to whole vectors plus one
  // cache line: with a power-of-two L, rows 2^k bytes apart would share an
  // L1 set, and both the transposing stores and the score step's loads
  // (consecutive keys = consecutive rows of the copy) would conflict.
  int64_t pad = std::max<int64_t>(
      t.lanes, 64 / std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8));
  if (maskType.isDynamicDim(rank - 2))
    tSizes.push_back(add(
        mul(arith::CeilDivUIOp::create(b, loc, rows, lanes), lanes), idx(pad)));
  else
    tSizes.push_back(b.getIndexAttr(
        llvm::alignTo(maskType.getDimSize(rank - 2), t.lanes) + pad));
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(tSizes, dynamic, shape);
  Value transposed = memref::AllocOp::create(
      b, loc, MemRefType::get(shape, elem), dynamic, b.getI64IntegerAttr(64));
  // In 64 x 64 tiles, so that both the reads along mask rows and the
  // writes along transposed rows stay within a few cache lines.
  const int64_t tile = 64;
  Value cTile = idx(tile);
  SmallVector<Value> ivs;
  std::function<void(int64_t)> nest = [&](int64_t d) {
    if (d < rank - 2) {
      forLoop(idx(0), sizes[d], idx(1), [&](Value iv) {
        ivs.push_back(iv);
        nest(d + 1);
        ivs.pop_back();
      });
      return;
    }
    Value cols = sizes[rank - 1];
    forLoop(idx(0), rows, cTile, [&](Value r0) {
      forLoop(idx(0), cols, cTile, [&](Value c0) {
        Value rEnd = arith::MinUIOp::create(b, loc, add(r0, cTile), rows);
        Value cEnd = arith::MinUIOp::create(b, loc, add(c0, cTile), cols);
        forLoop(r0, rEnd, idx(1), [&](Value r) {
          forLoop(c0, cEnd, idx(1), [&](Value c) {
            SmallVector<Value> mIdx(ivs);
            mIdx.append({r, c});
            Value x = memref::LoadOp::create(b, loc, buf, mIdx);
            x = isBool
                    ? Value(arith::ExtUIOp::create(b, loc, b.getI8Type(), x))
                    : castFloat(b, loc, x, ct);
            SmallVector<Value> tIdx(ivs);
            tIdx.append({c, r});
            memref::StoreOp::create(b, loc, x, transposed, tIdx);
          });
        });
      });
    });
  };
  nest(0);
  return transposed;
}

/// The elements of a score operand (the mask, an extra operand of the
/// score_mod region; `broadcast` its plan flags) for rows [rowBase, rowBase +
/// lanes) at key `col`: one broadcast load when it does not vary along the
/// rows, one vector load from its `transposed` copy when it has one (padding
/// lanes read padding), else one load per row (rows past L, which only
/// padding lanes have, read row L - 1).
Value FlashLowering::loadOperandVector(WorkItem &w, Value buf,
                                       ArrayRef<bool> broadcast,
                                       Value transposed, Value rowBase,
                                       Value col) {
  auto bufType = cast<MemRefType>(buf.getType());
  int64_t rank = bufType.getRank();
  bool alongRows = rank >= 2 && !broadcast[rank - 2];
  if (!alongRows) {
    SmallVector<Value> indices =
        scoreOperandIndices(b, loc, plan, broadcast, w.qIdx, idx(0), col);
    Value x = memref::LoadOp::create(b, loc, buf, indices);
    return vector::BroadcastOp::create(
        b, loc, VectorType::get({t.lanes}, x.getType()), x);
  }
  if (transposed) {
    SmallVector<Value> indices =
        scoreOperandIndices(b, loc, plan, broadcast, w.qIdx, rowBase, col);
    std::swap(indices[rank - 2], indices[rank - 1]);
    Type elem = cast<MemRefType>(transposed.getType()).getElementType();
    Value x = vector::LoadOp::create(
        b, loc, VectorType::get({t.lanes}, elem), transposed, indices);
    if (!bufType.getElementType().isInteger(1))
      return x;
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(cast<ShapedType>(x.getType()),
                                       Attribute(b.getI8IntegerAttr(0))));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
  }
  Value lastRow = arith::SubIOp::create(b, loc, plan.l, idx(1));
  SmallVector<Value> elems;
  for (int64_t lane = 0; lane < t.lanes; ++lane) {
    Value row = arith::MinUIOp::create(b, loc, add(rowBase, idx(lane)),
                                       lastRow);
    SmallVector<Value> indices =
        scoreOperandIndices(b, loc, plan, broadcast, w.qIdx, row, col);
    elems.push_back(memref::LoadOp::create(b, loc, buf, indices));
  }
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({t.lanes}, bufType.getElementType()), elems);
}

/// THE SCORE HOOK. Everything the contract does to a raw score before the
/// softmax happens here and only here, on one vector of `lanes` f32 scores
/// of the [keys x rows] tile while it is in registers: query rows
/// [rowBase, rowBase + lanes) (global indices; lanes past L are padding
/// whose results are discarded) at key column `col` (global), batch indices
/// `w.qIdx` (query) and `w.kvIdx` (key/value). The score_mod region runs
/// here on the vector (buildMaskedScore clones its scalar code on vectors:
/// scalar operands broadcast, i as rowBase + vector.step). Whole key blocks are
/// outside the band (causal, window) are skipped by the loop bounds in
/// emitWorkItem, not here.
Value FlashLowering::applyScoreTransforms(WorkItem &w, Value scores,
                                          Value rowBase, Value col) {
  Value maskVec =
      buf.mask ? loadOperandVector(w, buf.mask, plan.maskBroadcast, maskT, rowBase,
                                  col)
              : Value();
  ScoreModInputs mod;
  bool hasMod = op.getScoreModBlock() != nullptr;
  if (hasMod) {
    mod.batch = w.qIdx;
    for (auto [buf, broadcast] : llvm::zip_equal(buf.extras, plan.extraBroadcast))
      mod.extras.push_back(
          loadOperandVector(w, buf, broadcast, Value(), rowBase, col));
  }
  Value rowVec, colVec;
  if (!plan.band.keepsAll() || hasMod || w.seq) {
    auto indexVec = VectorType::get({t.lanes}, b.getIndexType());
    Value step = vector::StepOp::create(b, loc, indexVec);
    rowVec = arith::AddIOp::create(
        b, loc, vector::BroadcastOp::create(b, loc, indexVec, rowBase), step);
    colVec = vector::BroadcastOp::create(b, loc, indexVec, col);
  }
  mod.row = rowVec;
  mod.col = colVec;
  Value seqKeep =
      w.seq ? buildSeqKeep(b, loc, *w.seq, rowVec, colVec) : Value();
  return buildMaskedScore(b, loc, plan, op, scores, maskVec, rowVec, colVec,
                          mod, seqKeep);
}

/// Per vector of query rows: the online-softmax statistics from the block
/// max, then p = exp(s - m) in place and the row sums.
///
/// With -inf scores the running max can be -inf (a row whose keys so far
/// are all masked); exp(s - m) would then be exp(-inf - -inf) = NaN. So the
/// subtrahend is buildSafeMax(m) (0 while m = -inf): p = 0, the row keeps
/// l = 0, acc = 0, and once a finite score arrives alpha = exp(-inf - m) = 0
/// discards nothing that mattered. A row whose scores are ALL -inf ends with
/// m = -inf: NaN at the end, as torch.softmax gives.
void FlashLowering::emitSoftmaxStep(WorkItem &w, Value keys) {
  Value c0 = idx(0), c1 = idx(1);
  Value zeroVec = createFloatConstantOfType(b, loc, vecType, 0.0);
  forLoop(c0, idx(t.blockQ), idx(t.lanes), [&](Value i0) {
    Value mOld = vector::LoadOp::create(b, loc, vecType, w.m, ValueRange{i0});
    Value blockMax =
        vector::LoadOp::create(b, loc, vecType, w.blockMax, ValueRange{i0});
    Value mNew = buildMaxIgnoringNaN(b, loc, blockMax, mOld);
    Value sub = buildSafeMax(b, loc, mNew);
    Value alpha = math::ExpOp::create(
        b, loc, arith::SubFOp::create(b, loc, mOld, sub));
    auto sumLoop = scf::ForOp::create(
        b, loc, c0, keys, c1, ValueRange{zeroVec},
        [&](OpBuilder &, Location, Value j, ValueRange iter) {
          Value s = vector::LoadOp::create(b, loc, vecType, w.sT,
                                           ValueRange{j, i0});
          Value p = math::ExpOp::create(
              b, loc, arith::SubFOp::create(b, loc, s, sub));
          vector::StoreOp::create(b, loc, p, w.sT, ValueRange{j, i0});
          scf::YieldOp::create(
              b, loc, Value(arith::AddFOp::create(b, loc, iter[0], p)));
        });
    Value lOld = vector::LoadOp::create(b, loc, vecType, w.l, ValueRange{i0});
    Value lNew = vector::FMAOp::create(b, loc, lOld, alpha,
                                       sumLoop.getResult(0));
    vector::StoreOp::create(b, loc, mNew, w.m, ValueRange{i0});
    vector::StoreOp::create(b, loc, lNew, w.l, ValueRange{i0});
    vector::StoreOp::create(b, loc, alpha, w.alpha, ValueRange{i0});
  });
}

/// acc[i, d] = acc[i, d] * alpha[i] + sum_j p[j, i] * v[j, d]: per register
/// tile of query rows rowOf x vectors of value columns colOf, `tile` adds
/// the block's products to the rescaled accumulators `init`.
void FlashLowering::emitPv(WorkItem &w, PvTileFn tile) {
  Value lanes = idx(t.lanes);
  Value colVecs = arith::DivUIOp::create(b, loc, evPadded, lanes);
  forGroups(idx(0), idx(t.blockQ), t.pvRows, [&](Value i0, int64_t mr) {
    SmallVector<Value> rowOf, alphaOf;
    for (int64_t r = 0; r < mr; ++r) {
      rowOf.push_back(add(i0, idx(r)));
      Value a = memref::LoadOp::create(b, loc, w.alpha, ValueRange{rowOf[r]});
      alphaOf.push_back(vector::BroadcastOp::create(b, loc, vecType, a));
    }
    forGroups(idx(0), colVecs, t.pvColVecs, [&](Value dv0, int64_t nv) {
      Value d0 = mul(dv0, lanes);
      SmallVector<Value> colOf, init;
      for (int64_t c = 0; c < nv; ++c)
        colOf.push_back(add(d0, idx(c * t.lanes)));
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t c = 0; c < nv; ++c)
          init.push_back(arith::MulFOp::create(
              b, loc,
              vector::LoadOp::create(b, loc, vecType, w.acc,
                                     ValueRange{rowOf[r], colOf[c]}),
              alphaOf[r]));
      SmallVector<Value> acc = tile(init, rowOf, colOf);
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t c = 0; c < nv; ++c)
          vector::StoreOp::create(b, loc, acc[r * nv + c], w.acc,
                                  ValueRange{rowOf[r], colOf[c]});
    });
  });
}

/// out = buildOnlineSoftmaxResult(acc, l, m) per row (the head's sink joins
/// there), rounded once to the element type.
void FlashLowering::emitOutput(WorkItem &w) {
  Value c0 = idx(0), c1 = idx(1);
  Value sink =
      plan.hasSinks ? loadSink(b, loc, plan, buf.sinks, w.qIdx) : Value();
  forLoop(c0, w.rows, c1, [&](Value i) {
    Value m = memref::LoadOp::create(b, loc, w.m, ValueRange{i});
    Value l = memref::LoadOp::create(b, loc, w.l, ValueRange{i});
    forLoop(c0, plan.ev, c1, [&](Value d) {
      Value acc = memref::LoadOp::create(b, loc, w.acc, ValueRange{i, d});
      Value r = buildOnlineSoftmaxResult(b, loc, plan, acc, l, m, sink);
      SmallVector<Value> indices(w.qIdx);
      indices.append({add(w.row0, i), d});
      memref::StoreOp::create(b, loc, castFloat(b, loc, r, plan.elementType),
                              buf.out, indices);
    });
  });
}

Value cpu::lowerSdpaFlash(OpBuilder &b, Location loc, SdpaOp op,
                          const SdpaPlan &plan,
                          const AttnCpuLoweringOptions &options) {
  FlashTiling tiling = chooseFlashTiling(plan, options);
  std::optional<FlashTiling> pairTiling =
      getPairFlashTiling(plan, options, tiling);
  return FlashLowering(b, loc, op, plan, tiling, pairTiling,
                       getAmxFlashTiling(plan, options, tiling))
      .emit();
}
