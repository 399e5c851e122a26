//===- QuantizedMatmulToCpu.cpp - attn.quantized_matmul -------------------===//
//
// x . W^T for a weight W [N, K] stored quantized (#attn.quant,
// docs/quantization.md). The input's batch dims and M are one dim of rows
// R; the weight is never dequantized into a float copy:
//
// - R <= kQuantGemvMaxRows (a decode step): a GEMV that streams each
//   weight row's units (blocks) once per group of input rows,
//   dequantizes them in vector registers (QuantDecoder) and multiplies
//   them as they come:
//
//     bf16/f16 input rows widened to f32 once
//     scf.forall (blocks of nb weight rows; an scf.for for a small weight)
//       for each group of nr weight rows of the block
//         for each group of mr input rows (all of a static count)
//           scf.for over the units of K, in steps of whole 64-byte lines
//             of codes: the rows of the tile after next prefetched; per
//             vector of a unit, nr decoded weight vectors, mr input
//             vectors, mr x nr FMAs into f32 accumulators (two chains
//             each for a tile of fewer than 4 products)
//           the accumulators reduced, the last K % 32 elements of an
//           int8 row one by one, each output rounded once
//
//   With quantized-activations=int8, on a target with an integer dot
//   product (QuantDotKernel) and a weight of units of 32 with one scale
//   each (QuantDecoder::hasIntUnits), the rows are first quantized to int8
//   per block of 32 (scale max|x| / 127, codes round(x * 127 / max|x|)
//   to nearest even, and each block's sum of codes), and a unit's step is
//   integer: per weight row its 32 codes (unsigned, with an offset) and
//   scale, per input row an i32 dot of the codes and the row's block
//   (QuantDotKernel::accumulate, started from -offset * sum in lane 0),
//   converted to f32 and accumulated times weight scale * row scale.
//   On a wide kernel (AVX512-VNNI on zmm) a weight of units of 32 with
//   one scale whose rows have an even number of units steps through two
//   units at a time: one vpdpbusd of 64 codes and 64 activations started
//   from a per-row vector of the two blocks' -offset * sum (written once
//   with the quantized rows; for the asymmetric schemes -sum, times the
//   weight row's two zero points per step in one vpmaddwd),
//   converted to f32 and accumulated times the two units' weight scales
//   (lanes 0-7 and 8-15) times the row's two block scales, also vectors
//   written once per call. An int4_sym weight with K and group
//   multiples of 128 steps through four units: its 64 bytes of nibbles
//   read once, the low nibbles times the rows' codes 0-15 of each block
//   and the high nibbles times codes 16-31 (a copy of the rows in that
//   order, written once per call), two vpdpbusd into one i32 vector
//   whose lanes 4j .. 4j + 3 are unit j's. A q6_k weight has a scale per 16
//   elements: per 32-element group, per-lane scales and a per-lane start
//   (-32 times each i32 lane's 4 activation codes, written once per call).
//
// - more rows (prefill): the register-tiled GEMM of GemmToCpu.cpp, whose
//   pack step dequantizes each k block of nc weight rows into its f32
//   panel (packQuantizedBlock): per work item, the weight's block is
//   dequantized once into a kc x nc panel in cache and serves every row of
//   the work item.
//
//   With quantized-activations=int8, on a target whose integer dot is
//   VNNI's vpdpbusd (exact for every byte: AVX512-VNNI on zmm, or ymm
//   with AVX-VNNI / AVX512-VNNI at 256 bits) and a weight whose codes
//   have a fixed offset (units of 32 with one scale: q8_0, q4_0,
//   int8_sym, int4_sym; and the k-quants' groups of 32: q6_k, offset 32,
//   q4_k, none), the rows are first quantized as the GEMV quantizes them
//   (ActivationQuantizer, once per call, the rows in parallel; for q6_k
//   also each half block's code sum) and the GEMM multiplies in integers
//   (GemmKernel's IntDotGemmKernel): its pack step lays each k block of
//   the weight's codes out for vpdpbusd (4 k of a column per i32 lane)
//   beside their scales (q6_k's two per unit, and q4_k's mins), and its
//   tile sums each unit of 32 k (q6_k: each half) in i32 before scaling
//   it into f32 (q4_k: one more FMA of the mins). The asymmetric schemes
//   (int8_asym, int4_asym) read their codes without offset and take their
//   zero points as q4_k's mins (W = scale * code - scale * zero point).
//   Targets without VNNI (AVX2's vpmaddubsw path of the GEMV is exact only
//   for codes below 128) keep the f32 GEMM.
//
// A dynamic R chooses at run time.
//
//===----------------------------------------------------------------------===//

#include "GemmToCpu.h"

#include "attn/Codegen/Cpu/Emitter.h"
#include "attn/Codegen/Cpu/GemmKernel.h"
#include "attn/Codegen/Cpu/LoweringUtils.h"
#include "attn/Codegen/Cpu/QuantBlocks.h"
#include "attn/Codegen/Cpu/QuantDotKernel.h"

#include "attn/Conversion/AttnToCpu/AttnToCpu.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

/// Rows (batch dims x M) up to which the product runs as the GEMV: a
/// decode step's few tokens. More rows reuse a dequantized panel enough to
/// pay for writing it.
constexpr int64_t kQuantGemvMaxRows = 8;

/// The weight size (bytes) from which the GEMV's blocks of rows run in
/// parallel (below it, one thread reads the weight in about the time of
/// waking another).
constexpr int64_t kQuantGemvParallelMinBytes = 1 << 16;

/// The most bytes of per-row buffers (codes, block sums and scales) that an
/// asymmetric weight's wide steps read per tile of input rows: 3 bytes per
/// element and row (xq, and xinit and xdw's 4-byte lanes, 8 per block of
/// 32). Past it the tile's rows no longer stay in L1 across the weight
/// rows, and the 8-lane step (1.25 bytes per element) is faster (measured
/// on Zen 4, 32 KiB L1: 8 rows of K = 5632, 135 KiB, 0.8x the 8-lane
/// step's speed; 4 rows, 68 KiB, 1.17x).
constexpr int64_t kQuantAsymWideMaxRowBytes = 96 << 10;

/// The int8 activations of both products (llama.cpp's quantize_row_q8_0
/// on x86): each row of the input quantized per block of 32 along K, scale
/// d = max|x| / 127, codes round(x * (127 / max|x|)) to nearest even (0 for
/// a zero block), and each block's sum of codes.
class ActivationQuantizer : Emitter {
public:
  ActivationQuantizer(OpBuilder &b, Location loc)
      : Emitter(b, loc, b.getF32Type(), 1) {}

  /// The buffers of `rows` x `k` quantized elements (k a multiple of 32),
  /// with `halfSums` the code sums of each half block too.
  QuantizedRows allocate(OpFoldResult rows, int64_t k, bool halfSums = false) {
    int64_t blocks = k / QuantDotKernel::kStepBytes;
    QuantizedRows q;
    q.codes =
        allocAligned(b, loc, b.getIntegerType(8), {rows, b.getIndexAttr(k)});
    q.scales =
        allocAligned(b, loc, b.getF32Type(), {rows, b.getIndexAttr(blocks)});
    q.sums =
        allocAligned(b, loc, b.getI32Type(), {rows, b.getIndexAttr(blocks)});
    if (halfSums)
      q.halfSums = allocAligned(b, loc, b.getI32Type(),
                                {rows, b.getIndexAttr(2 * blocks)});
    return q;
  }

  /// Called per block with its codes (vector<32xi32>), scale and code
  /// sum, after they are stored.
  using BlockFn = function_ref<void(Value row, Value block, Value codes,
                                    Value d, Value sum)>;
  /// Quantizes rows [0, rows) of `x` ([R, k], any float type, read as f32)
  /// into `q`, one row after the other.
  void fill(const QuantizedRows &q, Value x, Value rows, int64_t k,
            BlockFn extra = nullptr) {
    forLoop(idx(0), rows, idx(1),
            [&](Value row) { fillRow(q, x, row, k, extra); });
  }

  /// fill with the rows in parallel (an scf.forall over them): the GEMM's
  /// rows, whose quantization would otherwise run alone before the
  /// parallel product.
  void fillInParallel(const QuantizedRows &q, Value x, Value rows, int64_t k) {
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{getAsOpFoldResult(rows)}, ValueRange{},
        std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getBody()->getTerminator());
    fillRow(q, x, forall.getInductionVars()[0], k, nullptr);
  }

private:
  /// The code sums of the two halves of block `block` (its codes a
  /// vector<32xi32>, their sum `sum`) at 2 block and 2 block + 1 of
  /// q.halfSums: the first half reduced, the second sum - first.
  void storeHalfSums(const QuantizedRows &q, Value row, Value block,
                     Value codes, Value sum) {
    int64_t half = QuantDotKernel::kStepBytes / 2;
    Value first = vector::ReductionOp::create(
        b, loc, vector::CombiningKind::ADD,
        vector::ExtractStridedSliceOp::create(
            b, loc, codes, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{half},
            ArrayRef<int64_t>{1}));
    Value at = mul(block, idx(2));
    memref::StoreOp::create(b, loc, first, q.halfSums, ValueRange{row, at});
    memref::StoreOp::create(b, loc, arith::SubIOp::create(b, loc, sum, first),
                            q.halfSums, ValueRange{row, add(at, idx(1))});
  }

  void fillRow(const QuantizedRows &q, Value x, Value row, int64_t k,
               BlockFn extra) {
    Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getIntegerType(8);
    auto type = VectorType::get({QuantDotKernel::kStepBytes}, f32);
    forLoop(
        idx(0), idx(k / QuantDotKernel::kStepBytes), idx(1), [&](Value block) {
          Value col = mul(block, idx(QuantDotKernel::kStepBytes));
          Type et = cast<MemRefType>(x.getType()).getElementType();
          Value block32 = castFloat(
              b, loc,
              vector::LoadOp::create(
                  b, loc, VectorType::get({QuantDotKernel::kStepBytes}, et), x,
                  ValueRange{row, col}),
              type);
          Value amax = vector::ReductionOp::create(
              b, loc, vector::CombiningKind::MAXNUMF,
              math::AbsFOp::create(b, loc, block32));
          // llama.cpp's quantize_row_q8_0 (x86): d = amax / 127, codes
          // round(x * (127 / amax)) to nearest even, 0 for a zero block.
          Value c127 = fconst(127.0);
          Value d = arith::DivFOp::create(b, loc, amax, c127);
          Value nonzero = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::ONE, amax, fconst(0.0));
          Value id = arith::SelectOp::create(
              b, loc, nonzero, arith::DivFOp::create(b, loc, c127, amax),
              fconst(0.0));
          Value scaled = arith::MulFOp::create(
              b, loc, block32, vector::BroadcastOp::create(b, loc, type, id));
          auto i32Type = VectorType::get({QuantDotKernel::kStepBytes}, i32);
          Value codes = arith::FPToSIOp::create(
              b, loc, i32Type, math::RoundEvenOp::create(b, loc, scaled));
          Value sum = vector::ReductionOp::create(
              b, loc, vector::CombiningKind::ADD, codes);
          vector::StoreOp::create(
              b, loc,
              arith::TruncIOp::create(
                  b, loc, VectorType::get({QuantDotKernel::kStepBytes}, i8),
                  codes),
              q.codes, ValueRange{row, col});
          memref::StoreOp::create(b, loc, d, q.scales, ValueRange{row, block});
          memref::StoreOp::create(b, loc, sum, q.sums, ValueRange{row, block});
          if (q.halfSums)
            storeHalfSums(q, row, block, codes, sum);
          if (extra)
            extra(row, block, codes, d, sum);
        });
  }
};

class QuantGemvLowering : Emitter {
public:
  QuantGemvLowering(OpBuilder &b, Location loc, const QuantizedWeight &weight,
                    const Target &target, RankedTensorType resultType,
                    QuantizedActivations activations)
      : Emitter(b, loc, b.getF32Type(), target.getLanes(b.getF32Type())),
        weight(weight), resultType(resultType), lanes(vecType.getDimSize(0)) {
    chooseTile(target);
    q6 = weight.format.getScheme() == QuantScheme::q6_k;
    q4k = weight.format.getScheme() == QuantScheme::q4_k;
    if (activations == QuantizedActivations::Int8 &&
        (QuantDecoder::hasIntUnits(weight) || q6 || q4k)) {
      Type i8 = b.getIntegerType(8);
      dot = QuantDotKernel::create(
          b, loc, target.getProductKernels(i8, i8, b.getI32Type()));
      // 8-bit codes (q8_0, int8_*) need a kernel exact for every byte.
      bool fullBytes = weight.format.getScheme() == QuantScheme::q8_0 ||
                       (!weight.format.isGguf() && weight.format.getBits() == 8);
      if (dot && fullBytes && !dot->takesFullBytes())
        dot.reset();
      wide = dot && dot->isWide() &&
             (q6 || q4k ||
              (QuantDecoder::hasIntPairs(weight) &&
               (!weight.format.hasZeroPoints() ||
                mr * weight.k * 3 <= kQuantAsymWideMaxRowBytes)));
      quad = wide && QuantDecoder::hasIntQuads(weight);
      rowScale = wide && !quad && !q6 && !q4k && !weight.format.isGguf() &&
                 weight.format.getGroup() == weight.k;
    }
  }

  /// The [R, N] product of `x` [R, K] (R = `rows`) and the weight's
  /// `bytes`.
  Value emit(Value x, Value bytes, Value rows);

private:
  /// Input rows i0 .. i0 + rows times weight rows c0 .. c0 + cols.
  struct Tile {
    Value i0, c0;
    int64_t rows, cols;
  };
  /// Weight rows per work item.
  static constexpr int64_t nb = 32;

  /// mr and nr: mr x nr accumulators in half the vector registers (the
  /// other half holds decoded weights and inputs), all the rows of a
  /// static count in one tile (each weight vector is decoded once per
  /// tile) and as many weight rows (up to 4) as fit beside them.
  void chooseTile(const Target &target);
  /// x[row, col ..] in f32: a vector of `lanes`, or one element.
  Value loadX(Value row, Value col, bool vector);
  void emitWorkItem(Value item);
  void emitTile(const Tile &t);
  /// The tile's dot products over the whole units of K, one f32 each.
  SmallVector<Value> emitUnits(const Tile &t);
  /// acc += the tile's products over unit `u` (`chains` accumulators per
  /// product, vector v of the unit into chain v % chains).
  void accumulateUnit(const Tile &t, Value u, SmallVectorImpl<Value> &acc,
                      int64_t chains);
  /// The integer path: xq[r, k] (i8), xd[r, k / 32] (f32) and xs[r, k /
  /// 32] (i32), the int8 codes, scale and code sum of each block of 32 of
  /// the input rows.
  void quantizeRows();
  /// The per-lane terms of block `block` of input row `row` that the wide
  /// and k-quant steps start from (xdw, xinit, xlane, xsd; see below), from
  /// its codes (vector<32xi32>), scale `d` and code sum `sum`.
  void writeLaneTerms(Value row, Value block, Value codes, Value d, Value sum);
  /// writeLaneTerms of the quad path: block `block`'s codes in xq4, its
  /// scale and starting dot in xd4 and xinit4.
  void writeQuadTerms(Value row, Value block, Value codes, Value d, Value sum);
  /// `scalar` in the first lane of a vector of `type` whose other lanes
  /// are 0, stored at buffer[row, at].
  void storeInFirstLane(Value scalar, VectorType type, Value buffer, Value row,
                        Value at);
  /// acc + f32(dot->accumulate(init, codes, x)) * scale, `scale` a vector
  /// of acc's type: the step every integer path ends with.
  Value addScaledDot(Value acc, Value init, Value codes, Value x, Value scale);
  /// The integer path's accumulateUnit: acc (vector<8xf32>, one per
  /// product) += f32(dot(codes - offset, xq)) * (scale * xd).
  void accumulateIntUnit(const Tile &t, Value u, SmallVectorImpl<Value> &acc);
  /// The wide integer path's step over units u and u + 1: acc
  /// (vector<16xf32>, one per product) += f32(dot(codes, xq) + start) *
  /// (scales * xdw), start xinit, or for an asymmetric weight xinit times
  /// the units' zero points.
  void accumulateIntPair(const Tile &t, Value u, SmallVectorImpl<Value> &acc);
  /// The wide integer path's step over units u .. u + 3 (u a multiple of
  /// 4) of an int4_sym weight (QuantDecoder::hasIntQuads): acc
  /// (vector<16xf32>, one per product) += f32(dot(high codes, xhigh) +
  /// dot(low codes, xlow) + xinit4) * (scale * xd4), the i32 lanes 4j ..
  /// 4j + 3 unit u + j's.
  void accumulateIntQuad(const Tile &t, Value u, SmallVectorImpl<Value> &acc);
  /// The integer path of the k-quants over super-block `sb`: per
  /// 32-element group (two per step on a wide kernel), acc += f32(dot(codes,
  /// xq) + start) * (lane scales * row scale), start xlane for q6_k and 0
  /// for q4_k, and for q4_k once per super-block acc -= mins * xsd (its 8
  /// groups' mins in the first 8 lanes).
  void accumulateKQuantBlock(const Tile &t, Value sb,
                             SmallVectorImpl<Value> &acc);

  const QuantizedWeight &weight;
  RankedTensorType resultType;
  int64_t lanes;
  /// Input rows and weight rows per tile.
  int64_t mr = 1, nr = 1;
  std::optional<QuantDecoder> decoder;
  /// The integer dot product, or null for the f32 path.
  std::unique_ptr<QuantDotKernel> dot;
  /// The wide integer path over four units per step (accumulateIntQuad).
  bool quad = false;
  /// The wide integer path (accumulateIntPair, two groups per step of
  /// accumulateKQuantBlock).
  bool wide = false;
  /// The wide pairs of an int scheme with one group per row: the steps
  /// scale the dots by the input rows' scales only, and each product's
  /// sum is multiplied by the weight row's scale once (emitTile).
  bool rowScale = false;
  /// A q6_k weight: on the integer path its groups of 32 have a scale per
  /// 16 elements, so the offset's term is per i32 lane (xlane).
  bool q6 = false;
  /// A q4_k weight: codes without offset, a scale and a min per 32
  /// elements (the min's term through xsd).
  bool q4k = false;
  Value xBuf, outBuf, m;
  Value xq, xd, xs;
  /// The wide path's per-lane row scales and starting dots: xdw[r, 8b + i]
  /// = xd[r, b], xinit[r, 8b] = -offset * xs[r, b] (-xs[r, b] for an
  /// asymmetric weight) and xinit[r, 8b + i] = 0 for 0 < i < 8.
  Value xdw, xinit;
  /// The quad path's input rows (accumulateIntQuad): xq4[r, 128q + 16j +
  /// i] = xq[r, 128q + 32j + i] and xq4[r, 128q + 64 + 16j + i] = xq[r,
  /// 128q + 32j + 16 + i] (i < 16, j < 4: the low nibbles' elements of
  /// a step's four units, then the high nibbles'); xd4[r, 4b + i] = xd[r,
  /// b]; xinit4[r, 4b] = -8 * xs[r, b] and xinit4[r, 4b + i] = 0 for 0 <
  /// i < 4.
  Value xq4, xd4, xinit4;
  /// q6_k's starting dots: xlane[r, k / 4] = -32 * the sum of the 4 codes
  /// of xq[r, k .. k + 3] (k a multiple of 4).
  Value xlane;
  /// q4_k's min terms, a vector of the accumulators' lanes (L: 16 on a
  /// wide kernel, else 8) per super-block: xsd[r, L sb + j] = xd[r, 8 sb +
  /// j] * f32(xs[r, 8 sb + j]) for its 8 blocks j, and 0 in lanes 8 .. L.
  Value xsd;
  /// The lanes of the k-quants' accumulators: two groups of 8 lanes per
  /// step on a wide kernel, one otherwise.
  int64_t getKQuantLanes() const {
    return QuantDotKernel::kAccLanes * (wide ? 2 : 1);
  }
};

} // namespace

void QuantGemvLowering::chooseTile(const Target &target) {
  // Two thirds of the target's accumulator registers (half of all): the
  // decoded weight vectors of a step, their scales and offsets take more
  // registers than a GEMM step's loads and broadcasts.
  int64_t accumulators = target.getAccumulatorRegisters() * 2 / 3;
  int64_t rows = resultType.getDimSize(0);
  mr = ShapedType::isDynamic(rows)
           ? kQuantGemvMaxRows / 2
           : std::clamp<int64_t>(rows, 1, kQuantGemvMaxRows);
  mr = std::min(mr, accumulators);
  nr = std::clamp<int64_t>(accumulators / mr, 1, 4);
}

Value QuantGemvLowering::emit(Value x, Value bytes, Value rows) {
  xBuf = toBuffer(x);
  if (cast<MemRefType>(xBuf.getType()).getElementType() != ct) {
    // bf16 and f16 rows widened once (R x K, small) rather than for each
    // weight row that reads them.
    Value wide = alloc({resultType.isDynamicDim(0)
                            ? OpFoldResult(rows)
                            : b.getIndexAttr(resultType.getDimSize(0)),
                        b.getIndexAttr(weight.k)});
    packBlock(b, loc, BlockView{xBuf, {}, nullptr, nullptr}, wide, vecType,
              rows, idx(weight.k), idx(weight.k));
    xBuf = wide;
  }
  Value wBuf = toBuffer(bytes);
  decoder.emplace(b, loc, weight, wBuf, lanes);
  m = rows;
  if (dot)
    quantizeRows();
  SmallVector<OpFoldResult> sizes = {
      resultType.isDynamicDim(0) ? OpFoldResult(rows)
                                 : b.getIndexAttr(resultType.getDimSize(0)),
      b.getIndexAttr(weight.n)};
  outBuf = allocAligned(b, loc, resultType.getElementType(), sizes);
  Value items = idx(llvm::divideCeil(weight.n, nb));
  int64_t weightBytes = cast<ShapedType>(bytes.getType()).getDimSize(0);
  if (weightBytes < kQuantGemvParallelMinBytes) {
    forLoop(idx(0), items, idx(1), [&](Value item) { emitWorkItem(item); });
  } else {
    auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{items},
                                        ValueRange{}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getBody()->getTerminator());
    emitWorkItem(forall.getInductionVars()[0]);
  }
  return bufferization::ToTensorOp::create(b, loc, resultType, outBuf,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value QuantGemvLowering::loadX(Value row, Value col, bool vector) {
  if (!vector)
    return castFloat(
        b, loc, memref::LoadOp::create(b, loc, xBuf, ValueRange{row, col}), ct);
  Type et = cast<MemRefType>(xBuf.getType()).getElementType();
  Value v = vector::LoadOp::create(b, loc, VectorType::get({lanes}, et), xBuf,
                                   ValueRange{row, col});
  return castFloat(b, loc, v, vecType);
}

void QuantGemvLowering::quantizeRows() {
  OpFoldResult r = resultType.isDynamicDim(0)
                       ? OpFoldResult(m)
                       : b.getIndexAttr(resultType.getDimSize(0));
  int64_t blocks = weight.k / QuantDotKernel::kStepBytes;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  ActivationQuantizer quantizer(b, loc);
  QuantizedRows q = quantizer.allocate(r, weight.k);
  xq = q.codes;
  xd = q.scales;
  xs = q.sums;
  int64_t lanesPerBlock = QuantDotKernel::kAccLanes;
  if (quad) {
    int64_t quadLanes = QuantDotKernel::kWideAccLanes / 4;
    xq4 = allocAligned(b, loc, b.getIntegerType(8),
                       {r, b.getIndexAttr(weight.k)});
    xd4 = allocAligned(b, loc, f32, {r, b.getIndexAttr(blocks * quadLanes)});
    xinit4 =
        allocAligned(b, loc, i32, {r, b.getIndexAttr(blocks * quadLanes)});
  }
  if (wide && !quad)
    xdw = allocAligned(b, loc, f32, {r, b.getIndexAttr(blocks * lanesPerBlock)});
  if (wide && !q6 && !quad)
    xinit =
        allocAligned(b, loc, i32, {r, b.getIndexAttr(blocks * lanesPerBlock)});
  if (q6)
    xlane =
        allocAligned(b, loc, i32, {r, b.getIndexAttr(blocks * lanesPerBlock)});
  if (q4k)
    xsd = allocAligned(b, loc, f32,
                       {r, b.getIndexAttr(blocks / 8 * getKQuantLanes())});
  quantizer.fill(q, xBuf, m, weight.k,
                 [&](Value row, Value block, Value codes, Value d, Value sum) {
                   writeLaneTerms(row, block, codes, d, sum);
                 });
}

void QuantGemvLowering::writeLaneTerms(Value row, Value block, Value codes,
                                       Value d, Value sum) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  int64_t lanes = QuantDotKernel::kAccLanes;
  auto laneF = VectorType::get({lanes}, f32);
  auto laneI = VectorType::get({lanes}, i32);
  Value at = mul(block, idx(lanes));
  auto storeFirstLane = [&](Value scalar, VectorType type, Value buffer) {
    storeInFirstLane(scalar, type, buffer, row, at);
  };
  if (quad) {
    writeQuadTerms(row, block, codes, d, sum);
    return;
  }
  if (wide)
    vector::StoreOp::create(b, loc,
                            vector::BroadcastOp::create(b, loc, laneF, d), xdw,
                            ValueRange{row, at});
  if (q4k) {
    // Block j of super-block sb at lane j of the super-block's vector, and
    // a zero in lane 8 + j of a wide one.
    Value j = arith::RemUIOp::create(b, loc, block, idx(8));
    Value first = add(mul(arith::DivUIOp::create(b, loc, block, idx(8)),
                          idx(getKQuantLanes())),
                      j);
    memref::StoreOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, d,
                              arith::SIToFPOp::create(b, loc, f32, sum)),
        xsd, ValueRange{row, first});
    if (wide)
      memref::StoreOp::create(b, loc, createFloatConstant(b, loc, f32, 0.0),
                              xsd, ValueRange{row, add(first, idx(8))});
  } else if (q6) {
    // The 4 codes of each i32 lane summed (code j of every lane as one
    // vector, four added), times -32.
    Value sums;
    for (int64_t j = 0; j < 4; ++j) {
      SmallVector<int64_t> picks;
      for (int64_t l = 0; l < lanes; ++l)
        picks.push_back(4 * l + j);
      Value part = vector::ShuffleOp::create(b, loc, codes, codes, picks);
      sums = j ? arith::AddIOp::create(b, loc, sums, part).getResult() : part;
    }
    Value minus32 = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(laneI, b.getI32IntegerAttr(-32)));
    vector::StoreOp::create(b, loc,
                            arith::MulIOp::create(b, loc, sums, minus32), xlane,
                            ValueRange{row, at});
  } else if (wide) {
    // An asymmetric weight's zero points multiply the sum per weight row
    // (accumulateIntPair).
    std::optional<int64_t> offset = QuantDecoder::getFixedIntOffset(weight);
    if (offset)
      storeFirstLane(arith::MulIOp::create(
                         b, loc, sum,
                         arith::ConstantIntOp::create(b, loc, i32, -*offset)),
                     laneI, xinit);
    else // -sum as the pair (-sum, 0) of i16 (|sum| <= 32 * 127).
      storeFirstLane(
          arith::ExtUIOp::create(
              b, loc, i32,
              arith::TruncIOp::create(
                  b, loc, b.getI16Type(),
                  arith::SubIOp::create(
                      b, loc, arith::ConstantIntOp::create(b, loc, i32, 0),
                      sum))),
          laneI, xinit);
  }
}

void QuantGemvLowering::writeQuadTerms(Value row, Value block, Value codes,
                                       Value d, Value sum) {
  Type i8 = b.getIntegerType(8), i32 = b.getI32Type();
  int64_t half = QuantDotKernel::kStepBytes / 2;
  int64_t quadLanes = QuantDotKernel::kWideAccLanes / 4;
  Value bytes = arith::TruncIOp::create(
      b, loc, VectorType::get({QuantDotKernel::kStepBytes}, i8), codes);
  // Block b = 4q + j: its first 16 codes at 128q + 16j, the others 64
  // further.
  Value j = arith::RemUIOp::create(b, loc, block, idx(4));
  Value quadStart = mul(arith::SubIOp::create(b, loc, block, j), idx(32));
  Value first = add(quadStart, mul(j, idx(half)));
  for (int64_t h = 0; h < 2; ++h) {
    Value part = vector::ExtractStridedSliceOp::create(
        b, loc, bytes, ArrayRef<int64_t>{h * half}, ArrayRef<int64_t>{half},
        ArrayRef<int64_t>{1});
    vector::StoreOp::create(b, loc, part, xq4,
                            ValueRange{row, add(first, idx(h * 64))});
  }
  Value at = mul(block, idx(quadLanes));
  auto laneF = VectorType::get({quadLanes}, b.getF32Type());
  vector::StoreOp::create(b, loc, vector::BroadcastOp::create(b, loc, laneF, d),
                          xd4, ValueRange{row, at});
  Value start = arith::MulIOp::create(
      b, loc, sum, arith::ConstantIntOp::create(b, loc, i32, -8));
  storeInFirstLane(start, VectorType::get({quadLanes}, i32), xinit4, row, at);
}

void QuantGemvLowering::storeInFirstLane(Value scalar, VectorType type,
                                         Value buffer, Value row, Value at) {
  Value zeros =
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
  Value vector =
      vector::InsertOp::create(b, loc, scalar, zeros, ArrayRef<int64_t>{0});
  vector::StoreOp::create(b, loc, vector, buffer, ValueRange{row, at});
}

Value QuantGemvLowering::addScaledDot(Value acc, Value init, Value codes,
                                      Value x, Value scale) {
  Value ints = dot->accumulate(init, codes, x);
  Value dots = arith::SIToFPOp::create(b, loc, acc.getType(), ints);
  return vector::FMAOp::create(b, loc, dots, scale, acc);
}

void QuantGemvLowering::accumulateIntUnit(const Tile &t, Value u,
                                          SmallVectorImpl<Value> &acc) {
  Type i32 = b.getI32Type(), i8 = b.getIntegerType(8);
  auto accType = VectorType::get({QuantDotKernel::kAccLanes}, i32);
  auto fType = VectorType::get({QuantDotKernel::kAccLanes}, b.getF32Type());
  SmallVector<QuantDecoder::IntUnit> w;
  for (int64_t c = 0; c < t.cols; ++c)
    w.push_back(decoder->decodeIntUnit(add(t.c0, idx(c)), u));
  Value col = mul(u, idx(QuantDotKernel::kStepBytes));
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getI32IntegerAttr(0)));
  for (int64_t r = 0; r < t.rows; ++r) {
    Value row = add(t.i0, idx(r));
    Value x = vector::LoadOp::create(
        b, loc, VectorType::get({QuantDotKernel::kStepBytes}, i8), xq,
        ValueRange{row, col});
    Value d = memref::LoadOp::create(b, loc, xd, ValueRange{row, u});
    Value sum = memref::LoadOp::create(b, loc, xs, ValueRange{row, u});
    for (int64_t c = 0; c < t.cols; ++c) {
      // sum_j (code_j - offset) * x_j = sum_j code_j * x_j - offset * sum_j
      // x_j, exact in i32 (|.| < 2^20).
      Value correction = arith::SubIOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, i32, 0),
          arith::MulIOp::create(b, loc, w[c].offset, sum));
      Value init = vector::InsertOp::create(b, loc, correction, zero,
                                            ArrayRef<int64_t>{0});
      Value scale = vector::BroadcastOp::create(
          b, loc, fType, arith::MulFOp::create(b, loc, w[c].scale, d));
      int64_t a = r * t.cols + c;
      acc[a] = addScaledDot(acc[a], init, w[c].codes, x, scale);
    }
  }
}

void QuantGemvLowering::accumulateIntPair(const Tile &t, Value u,
                                          SmallVectorImpl<Value> &acc) {
  Type i32 = b.getI32Type(), i8 = b.getIntegerType(8), f32 = b.getF32Type();
  auto accType = VectorType::get({QuantDotKernel::kWideAccLanes}, i32);
  auto fType = VectorType::get({QuantDotKernel::kWideAccLanes}, f32);
  SmallVector<QuantDecoder::IntPair> w;
  for (int64_t c = 0; c < t.cols; ++c)
    w.push_back(decoder->decodeIntPair(add(t.c0, idx(c)), u));
  Value col = mul(u, idx(QuantDotKernel::kStepBytes));
  Value lane = mul(u, idx(QuantDotKernel::kAccLanes));
  for (int64_t r = 0; r < t.rows; ++r) {
    Value row = add(t.i0, idx(r));
    Value x = vector::LoadOp::create(
        b, loc, VectorType::get({QuantDotKernel::kWideStepBytes}, i8), xq,
        ValueRange{row, col});
    Value init =
        vector::LoadOp::create(b, loc, accType, xinit, ValueRange{row, lane});
    Value d = vector::LoadOp::create(b, loc, fType, xdw, ValueRange{row, lane});
    for (int64_t c = 0; c < t.cols; ++c) {
      Value scales =
          rowScale ? d : arith::MulFOp::create(b, loc, w[c].scales, d);
      // sum_j (code_j - zp) * x_j = sum_j code_j * x_j - zp * sum_j x_j,
      // exact in i32 (|zp * sum| <= 255 * 32 * 127): -zp * sum is the
      // product of the i16 pairs (-sum, 0) and (zp, 0).
      Value start = w[c].zeroPoints
                        ? dot->multiplyPairs(init, w[c].zeroPoints)
                        : init;
      int64_t a = r * t.cols + c;
      acc[a] = addScaledDot(acc[a], start, w[c].codes, x, scales);
    }
  }
}

void QuantGemvLowering::accumulateIntQuad(const Tile &t, Value u,
                                          SmallVectorImpl<Value> &acc) {
  Type i32 = b.getI32Type(), i8 = b.getIntegerType(8), f32 = b.getF32Type();
  auto accType = VectorType::get({QuantDotKernel::kWideAccLanes}, i32);
  auto fType = VectorType::get({QuantDotKernel::kWideAccLanes}, f32);
  auto xType = VectorType::get({QuantDotKernel::kWideStepBytes}, i8);
  Value q = arith::DivUIOp::create(b, loc, u, idx(4));
  SmallVector<QuantDecoder::IntQuad> w;
  for (int64_t c = 0; c < t.cols; ++c)
    w.push_back(decoder->decodeIntQuad(add(t.c0, idx(c)), q));
  Value col = mul(u, idx(QuantDotKernel::kStepBytes));
  Value lane = mul(q, idx(QuantDotKernel::kWideAccLanes));
  for (int64_t r = 0; r < t.rows; ++r) {
    Value row = add(t.i0, idx(r));
    Value low =
        vector::LoadOp::create(b, loc, xType, xq4, ValueRange{row, col});
    Value high = vector::LoadOp::create(
        b, loc, xType, xq4,
        ValueRange{row, add(col, idx(QuantDotKernel::kWideStepBytes))});
    Value init =
        vector::LoadOp::create(b, loc, accType, xinit4, ValueRange{row, lane});
    Value d = vector::LoadOp::create(b, loc, fType, xd4, ValueRange{row, lane});
    for (int64_t c = 0; c < t.cols; ++c) {
      Value scales = arith::MulFOp::create(
          b, loc, vector::BroadcastOp::create(b, loc, fType, w[c].scale), d);
      Value ints = dot->accumulate(init, w[c].low, low);
      int64_t a = r * t.cols + c;
      acc[a] = addScaledDot(acc[a], ints, w[c].high, high, scales);
    }
  }
}

void QuantGemvLowering::accumulateKQuantBlock(const Tile &t, Value sb,
                                              SmallVectorImpl<Value> &acc) {
  Type i32 = b.getI32Type(), i8 = b.getIntegerType(8), f32 = b.getF32Type();
  int64_t step = wide ? 2 : 1;
  auto accType = VectorType::get({QuantDotKernel::kAccLanes * step}, i32);
  auto fType = VectorType::get({QuantDotKernel::kAccLanes * step}, f32);
  auto xType = VectorType::get({QuantDotKernel::kStepBytes * step}, i8);
  // q4_k: each weight row's 8 scales and mins, decoded once per
  // super-block, and the min's term of the super-block's 8 groups: acc -=
  // mins * xsd (on a wide kernel the mins in lanes 0-7, zeros after).
  SmallVector<std::pair<Value, Value>> q4kScales;
  if (q4k) {
    auto minType = VectorType::get({getKQuantLanes()}, f32);
    Value zeros = createFloatConstantOfType(
        b, loc, VectorType::get({QuantDotKernel::kAccLanes}, f32), 0.0);
    SmallVector<Value> negMins;
    for (int64_t c = 0; c < t.cols; ++c) {
      q4kScales.push_back(decoder->decodeQ4KScales(add(t.c0, idx(c)), sb));
      Value mins = arith::NegFOp::create(b, loc, q4kScales.back().second);
      negMins.push_back(wide ? vector::ShuffleOp::create(
                                   b, loc, mins, zeros,
                                   llvm::to_vector(llvm::seq<int64_t>(0, 16)))
                                   .getResult()
                             : mins);
    }
    for (int64_t r = 0; r < t.rows; ++r) {
      Value terms = vector::LoadOp::create(
          b, loc, minType, xsd,
          ValueRange{add(t.i0, idx(r)), mul(sb, idx(getKQuantLanes()))});
      for (int64_t c = 0; c < t.cols; ++c) {
        int64_t a = r * t.cols + c;
        acc[a] = vector::FMAOp::create(b, loc, negMins[c], terms, acc[a]);
      }
    }
  }
  for (int64_t g = 0; g < 8; g += step) {
    SmallVector<QuantDecoder::IntPair> w;
    for (int64_t c = 0; c < t.cols; ++c) {
      Value row = add(t.c0, idx(c));
      w.push_back(q6 ? decoder->decodeQ6Groups(row, sb, g, step)
                     : decoder->decodeQ4KGroups(row, sb, g, step,
                                                q4kScales[c].first));
    }
    // Block (of 32) `unit` of the input rows.
    Value unit = add(mul(sb, idx(8)), idx(g));
    Value col = mul(unit, idx(QuantDotKernel::kStepBytes));
    Value lane = mul(unit, idx(QuantDotKernel::kAccLanes));
    for (int64_t r = 0; r < t.rows; ++r) {
      Value row = add(t.i0, idx(r));
      Value x = vector::LoadOp::create(b, loc, xType, xq, ValueRange{row, col});
      Value init =
          q6 ? vector::LoadOp::create(b, loc, accType, xlane,
                                      ValueRange{row, lane})
                   .getResult()
             : arith::ConstantOp::create(
                   b, loc, DenseElementsAttr::get(accType, b.getI32IntegerAttr(0)))
                   .getResult();
      Value d =
          wide ? vector::LoadOp::create(b, loc, fType, xdw, ValueRange{row, lane})
                     .getResult()
               : vector::BroadcastOp::create(
                     b, loc, fType,
                     memref::LoadOp::create(b, loc, xd, ValueRange{row, unit}))
                     .getResult();
      for (int64_t c = 0; c < t.cols; ++c) {
        Value scales = arith::MulFOp::create(b, loc, w[c].scales, d);
        int64_t a = r * t.cols + c;
        acc[a] = addScaledDot(acc[a], init, w[c].codes, x, scales);
      }
    }
  }
}

void QuantGemvLowering::emitWorkItem(Value item) {
  Value n0 = mul(item, idx(nb));
  Value n1 = minu(add(n0, idx(nb)), idx(weight.n));
  forGroups(n0, n1, nr, [&](Value c0, int64_t cols) {
    forGroups(idx(0), m, mr, [&](Value i0, int64_t rows) {
      emitTile(Tile{i0, c0, rows, cols});
    });
  });
}

void QuantGemvLowering::accumulateUnit(const Tile &t, Value u,
                                       SmallVectorImpl<Value> &acc,
                                       int64_t chains) {
  Value k0 = mul(u, idx(decoder->getUnitElements()));
  for (int64_t v = 0; v < decoder->getVectorsPerUnit(); ++v) {
    SmallVector<Value> w;
    for (int64_t c = 0; c < t.cols; ++c)
      w.push_back(decoder->decodeVector(add(t.c0, idx(c)), u, v));
    Value col = add(k0, idx(v * lanes));
    for (int64_t r = 0; r < t.rows; ++r) {
      Value x = loadX(add(t.i0, idx(r)), col, true);
      for (int64_t c = 0; c < t.cols; ++c) {
        int64_t a = (r * t.cols + c) * chains + v % chains;
        acc[a] = vector::FMAOp::create(b, loc, x, w[c], acc[a]);
      }
    }
  }
}

SmallVector<Value> QuantGemvLowering::emitUnits(const Tile &t) {
  // Enough independent FMA chains to cover the FMA latency (the integer
  // path has one per product: its dots' latency is in their own chains).
  int64_t chains = t.rows * t.cols >= 4 || dot ? 1 : 2;
  VectorType accType =
      wide ? VectorType::get({QuantDotKernel::kWideAccLanes}, b.getF32Type())
      : dot ? VectorType::get({QuantDotKernel::kAccLanes}, b.getF32Type())
            : vecType;
  Value zero = createFloatConstantOfType(b, loc, accType, 0.0);
  SmallVector<Value> init(t.rows * t.cols * chains, zero);
  // Units in steps of whole 64-byte lines of codes (a unit of q4_0 is 18
  // bytes: 3 per step), each step prefetching the rows of the tile after
  // next at its position (GemvToCpu.cpp prefetches the same way): the
  // hardware prefetchers alone stream the weight well below the memory's
  // rate, and a prefetch per unit would issue several per line. Past the
  // last row the addresses are out of the weight; a prefetch never faults.
  // The wide path steps through pairs of units (a whole number of them
  // per step; its rows have an even number of units).
  int64_t perStep = quad ? 4 : wide && !q6 && !q4k ? 2 : 1;
  int64_t group =
      perStep * std::max<int64_t>(1, 64 / (perStep * decoder->getUnitBytes()));
  int64_t whole = decoder->getWholeUnits();
  int64_t grouped = whole / group * group;
  auto steps = scf::ForOp::create(
      b, loc, idx(0), idx(grouped), idx(group), init,
      [&](OpBuilder &, Location, Value u0, ValueRange acc) {
        SmallVector<Value> next(acc);
        for (int64_t c = 0; c < t.cols; ++c)
          decoder->prefetchUnits(add(t.c0, idx(2 * t.cols + c)), u0, group);
        for (int64_t g = 0; g < group; g += perStep)
          if ((q6 || q4k) && dot)
            accumulateKQuantBlock(t, add(u0, idx(g)), next);
          else if (quad)
            accumulateIntQuad(t, add(u0, idx(g)), next);
          else if (wide)
            accumulateIntPair(t, add(u0, idx(g)), next);
          else if (dot)
            accumulateIntUnit(t, add(u0, idx(g)), next);
          else
            accumulateUnit(t, add(u0, idx(g)), next, chains);
        scf::YieldOp::create(b, loc, next);
      });
  SmallVector<Value> sums(steps.getResults());
  if (grouped < whole) {
    auto rest =
        scf::ForOp::create(b, loc, idx(grouped), idx(whole), idx(perStep), sums,
                           [&](OpBuilder &, Location, Value u, ValueRange acc) {
                             SmallVector<Value> next(acc);
                             if ((q6 || q4k) && dot)
                               accumulateKQuantBlock(t, u, next);
                             else if (quad)
                               accumulateIntQuad(t, u, next);
                             else if (wide)
                               accumulateIntPair(t, u, next);
                             else if (dot)
                               accumulateIntUnit(t, u, next);
                             else
                               accumulateUnit(t, u, next, chains);
                             scf::YieldOp::create(b, loc, next);
                           });
    sums.assign(rest.getResults().begin(), rest.getResults().end());
  }
  SmallVector<Value> dots;
  for (int64_t p = 0; p < t.rows * t.cols; ++p) {
    Value sum = sums[p * chains];
    for (int64_t j = 1; j < chains; ++j)
      sum = arith::AddFOp::create(b, loc, sum, sums[p * chains + j]);
    dots.push_back(vector::ReductionOp::create(b, loc,
                                               vector::CombiningKind::ADD, sum,
                                               arith::FastMathFlags::reassoc));
  }
  return dots;
}

void QuantGemvLowering::emitTile(const Tile &t) {
  SmallVector<Value> dots = emitUnits(t);
  if (rowScale) {
    for (int64_t c = 0; c < t.cols; ++c) {
      Value scale = decoder->loadGroupParams(add(t.c0, idx(c)), idx(0)).first;
      for (int64_t r = 0; r < t.rows; ++r)
        dots[r * t.cols + c] =
            arith::MulFOp::create(b, loc, dots[r * t.cols + c], scale);
    }
  }
  int64_t whole = decoder->getWholeUnits() * decoder->getUnitElements();
  if (whole < weight.k) {
    // The last K % 32 elements of an int8 row, one by one.
    auto tail = scf::ForOp::create(
        b, loc, idx(whole), idx(weight.k), idx(1), dots,
        [&](OpBuilder &, Location, Value k, ValueRange acc) {
          SmallVector<Value> w, next;
          for (int64_t c = 0; c < t.cols; ++c)
            w.push_back(decoder->decodeScalar(add(t.c0, idx(c)), k));
          for (int64_t r = 0; r < t.rows; ++r) {
            Value x = loadX(add(t.i0, idx(r)), k, false);
            for (int64_t c = 0; c < t.cols; ++c)
              next.push_back(arith::AddFOp::create(
                  b, loc, acc[r * t.cols + c],
                  arith::MulFOp::create(b, loc, x, w[c])));
          }
          scf::YieldOp::create(b, loc, next);
        });
    dots = SmallVector<Value>(tail.getResults());
  }
  Type et = resultType.getElementType();
  for (int64_t r = 0; r < t.rows; ++r)
    for (int64_t c = 0; c < t.cols; ++c)
      memref::StoreOp::create(
          b, loc, castFloat(b, loc, dots[r * t.cols + c], et), outBuf,
          ValueRange{add(t.i0, idx(r)), add(t.c0, idx(c))});
}

namespace {

/// attn.quantized_matmul: the rows of every batch as one [R, K] matrix,
/// the GEMV or the GEMM on it, the result's batch dims again.
struct QuantizedMatmulOpLowering : OpRewritePattern<QuantizedMatmulOp> {
  QuantizedMatmulOpLowering(MLIRContext *ctx,
                            const AttnCpuLoweringOptions &options)
      : OpRewritePattern(ctx), target(options.target),
        activations(options.quantizedActivations) {}

  LogicalResult matchAndRewrite(QuantizedMatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = op.getInput().getType();
    int64_t rank = inType.getRank();
    SmallVector<ReassociationIndices> merge = {
        llvm::to_vector(llvm::seq<int64_t>(0, rank - 1)), {rank - 1}};
    Value x = op.getInput();
    if (rank > 2)
      x = tensor::CollapseShapeOp::create(rewriter, loc, x, merge);
    auto xType = cast<RankedTensorType>(x.getType());
    auto flatType = RankedTensorType::get({xType.getDimSize(0), op.getN()},
                                          inType.getElementType());
    Value rows = getDimSize(rewriter, loc, x, 0);
    QuantizedWeight weight{op.getFormat(), op.getN(), op.getK()};
    auto gemv = [&](OpBuilder &b, Location l) {
      return QuantGemvLowering(b, l, weight, target, flatType, activations)
          .emit(x, op.getWeight(), rows);
    };
    auto gemm = [&](OpBuilder &b, Location l) {
      GemmOperands g{x, op.getWeight(), nullptr, nullptr, flatType, {}};
      g.resultSizes = {rows, arith::ConstantIndexOp::create(b, l, op.getN())};
      g.quantizedRhs = &weight;
      std::unique_ptr<QuantDotKernel> dot = getGemmDot(b, l, weight);
      QuantizedRows q;
      if (dot) {
        ActivationQuantizer quantizer(b, l);
        // q6_k's scales per 16 elements take the offset's term per half
        // block.
        bool q6 = weight.format.getScheme() == QuantScheme::q6_k;
        q = quantizer.allocate(flatType.isDynamicDim(0)
                                   ? OpFoldResult(rows)
                                   : b.getIndexAttr(flatType.getDimSize(0)),
                               weight.k, q6);
        quantizer.fillInParallel(q, toReadOnlyBuffer(b, l, x), rows, weight.k);
        q.offset = *getGemmIntOffset(weight);
        q.dot = dot.get();
        g.quantizedLhs = &q;
      }
      return buildGemm(b, l, g, target);
    };
    Value flat =
        buildRowCountChoice(rewriter, loc, flatType.getDimSize(0), rows,
                            kQuantGemvMaxRows, gemv, gemm);
    if (rank > 2) {
      SmallVector<OpFoldResult> shape;
      for (int64_t i = 0; i < rank - 1; ++i)
        shape.push_back(
            getAsOpFoldResult(getDimSize(rewriter, loc, op.getInput(), i)));
      shape.push_back(rewriter.getIndexAttr(op.getN()));
      flat = buildExpandShape(rewriter, loc, op.getType(), flat, merge, shape);
    }
    rewriter.replaceOp(op, flat);
    return success();
  }

  /// The fixed offset of the codes the integer GEMM reads: that of a
  /// weight of units of 32 codes with one scale (q8_0, q4_0, int8_sym,
  /// int4_sym), q6_k's 32, and 0 for q4_k (its groups of decodeQ4KGroups)
  /// and the asymmetric schemes' units (their zero points become a min
  /// per unit, scale * zero point, as q4_k's); none for other weights.
  static std::optional<int64_t>
  getGemmIntOffset(const QuantizedWeight &weight) {
    switch (weight.format.getScheme()) {
    case QuantScheme::q6_k:
      return 32;
    case QuantScheme::q4_k:
      return 0;
    default:
      if (weight.format.hasZeroPoints())
        return QuantDecoder::hasIntUnits(weight) ? std::optional<int64_t>(0)
                                                 : std::nullopt;
      return QuantDecoder::getFixedIntOffset(weight);
    }
  }

  /// The integer dot of the GEMM with int8 activations: a VNNI vpdpbusd
  /// (exact for every byte) on a weight of codes with a fixed offset
  /// (getGemmIntOffset); else null (the GEMM dequantizes into f32
  /// panels).
  std::unique_ptr<QuantDotKernel>
  getGemmDot(OpBuilder &b, Location loc, const QuantizedWeight &weight) const {
    if (activations != QuantizedActivations::Int8 || !getGemmIntOffset(weight))
      return nullptr;
    Type i8 = b.getIntegerType(8);
    std::unique_ptr<QuantDotKernel> dot = QuantDotKernel::create(
        b, loc, target.getProductKernels(i8, i8, b.getI32Type()));
    if (dot && !dot->takesFullBytes())
      dot.reset();
    return dot;
  }

  cpu::Target target;
  QuantizedActivations activations;
};

} // namespace

void mlir::attn::populateAttnQuantizedMatmulToCpuPatterns(
    RewritePatternSet &patterns, const AttnCpuLoweringOptions &options) {
  patterns.add<QuantizedMatmulOpLowering>(patterns.getContext(), options);
}
