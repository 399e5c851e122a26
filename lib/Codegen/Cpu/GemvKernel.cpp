//===- GemvKernel.cpp - the instruction families of the CPU GEMV ----------===//
//
// FmaGemvKernel: each step loads `lanes` elements of a row and widens them
// to the compute type, then one FMA per pair of rows. PairGemvKernel: each
// step loads 2 x lanes bf16 of a row as stored and adds their pair
// products with one x86vector.avx512.dot (vdpbf16ps), instead of widening
// both rows (two instructions per vector of each, which make a decode step
// compute-bound). AmxGemvKernel: the transposed product out^T = W . lhs^T,
// the weight read in place as A tiles (16 rows x 32 k), the lhs rows packed
// once per call into pairs of k as the B tile (16 columns, zero past M),
// two 16 x 16 C tiles per block of 32 weight rows: one tdpbf16ps per KiB
// of weight, so that the product runs at the rate the weight streams from
// memory, for 1 to 16 rows alike.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/GemvKernel.h"

#include "attn/Codegen/Cpu/AmxTile.h"
#include "attn/Codegen/Cpu/PairDotTile.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

GemvKernel::~GemvKernel() = default;

namespace {

/// FMAs on steps of `lanes` elements widened to the compute type.
class FmaGemvKernel : public GemvKernel {
public:
  using GemvKernel::GemvKernel;
  int64_t getStepElements() const override { return lanes; }
  Value loadStep(Value mem, Value row, Value col) override {
    Type et = cast<MemRefType>(mem.getType()).getElementType();
    Value v = vector::LoadOp::create(b, loc, VectorType::get({lanes}, et),
                                     mem, ValueRange{row, col});
    return castFloat(b, loc, v, vecType);
  }
  Value accumulate(Value acc, Value x, Value w) override {
    return vector::FMAOp::create(b, loc, x, w, acc);
  }
};

/// Pair dots on steps of 2 x lanes bf16 as stored.
class PairGemvKernel : public GemvKernel {
public:
  using GemvKernel::GemvKernel;
  int64_t getStepElements() const override { return 2 * lanes; }
  Value loadStep(Value mem, Value row, Value col) override {
    auto pairType = VectorType::get({2 * lanes}, b.getBF16Type());
    return vector::LoadOp::create(b, loc, pairType, mem,
                                  ValueRange{row, col});
  }
  Value accumulate(Value acc, Value x, Value w) override {
    return x86vector::DotBF16Op::create(b, loc, vecType, acc, x, w);
  }
};

/// Steps (32 k each) per block of AMX code whose C tiles stay in registers
/// (tiles cannot cross blocks): their load and store are 4 KiB per 16 KiB
/// of weight.
constexpr int64_t kGemvAmxGroup = 16;

/// Blocks of 32 weight rows on AMX tiles; the dot products (the weight's
/// last rows, and where the process may not use the tiles) are the
/// fallback's.
class AmxGemvKernel : public GemvKernel {
public:
  AmxGemvKernel(OpBuilder &b, Location loc, Type ct, int64_t lanes,
                const GemvKernelOperands &operands,
                std::unique_ptr<GemvKernel> fallback)
      : GemvKernel(b, loc, ct, lanes, operands),
        fallback(std::move(fallback)) {}

  void emitVersions(function_ref<void(GemvKernel &)> emit) override {
    buildAmxBranch(b, loc, [&](bool onTiles) {
      emit(onTiles ? *this : *fallback);
    });
  }
  int64_t getStepElements() const override {
    return fallback->getStepElements();
  }
  Value loadStep(Value mem, Value row, Value col) override {
    return fallback->loadStep(mem, row, col);
  }
  Value accumulate(Value acc, Value x, Value w) override {
    return fallback->accumulate(acc, x, w);
  }
  int64_t getTileBlockRows() const override { return kAmxBlock; }
  Value packTileRows() override;
  Value emitTileBlock(Value n0, Value packedRows) override;

private:
  std::unique_ptr<GemvKernel> fallback;
};

} // namespace

/// The lhs rows (at most 16) in pairs of k, the B tiles of every step:
/// pairs[p, 2 r + e] = lhs[r, 2 p + e], zero for r >= M.
Value AmxGemvKernel::packTileRows() {
  static_assert(kGemvTileMaxRows <= kAmxTileCols,
                "the rows fit one B tile's columns");
  auto weight = cast<ShapedType>(ops.weight.getType());
  int64_t pairRows = weight.getDimSize(1) / 2;
  Type bf16 = b.getBF16Type();
  Value pairs = allocAligned(
      b, loc, bf16,
      {b.getIndexAttr(pairRows), b.getIndexAttr(2 * kAmxTileCols)});
  auto rowType = VectorType::get({2 * kAmxTileCols}, bf16);
  Value zero = createFloatConstantOfType(b, loc, rowType, 0.0);
  forLoop(idx(0), idx(pairRows), idx(1), [&](Value p) {
    vector::StoreOp::create(b, loc, zero, pairs, ValueRange{p, idx(0)});
  });
  auto pairType = VectorType::get({2}, bf16);
  forLoop(idx(0), ops.m, idx(1), [&](Value r) {
    Value col = mul(r, idx(2));
    forLoop(idx(0), idx(pairRows), idx(1), [&](Value p) {
      Value v = vector::LoadOp::create(b, loc, pairType, ops.lhs,
                                       ValueRange{r, mul(p, idx(2))});
      vector::StoreOp::create(b, loc, v, pairs, ValueRange{p, col});
    });
  });
  return pairs;
}

/// Two C tiles (16 weight rows x 16 lhs rows each) over every step, stored
/// into acc [32, 16] between blocks of kGemvAmxGroup steps.
Value AmxGemvKernel::emitTileBlock(Value n0, Value pairs) {
  int64_t steps =
      cast<ShapedType>(ops.weight.getType()).getDimSize(1) / kAmxStepK;
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();
  auto cType = amx::TileType::get({kAmxTileRows, kAmxTileCols}, f32);
  auto abType = amx::TileType::get({kAmxTileRows, kAmxStepK}, bf16);
  Value acc = allocAligned(
      b, loc, f32, {b.getIndexAttr(kAmxBlock), b.getIndexAttr(kAmxTileCols)});
  auto block = [&](Value s0, int64_t count, bool zeroC) {
    Value c[2];
    for (int64_t t = 0; t < 2; ++t)
      c[t] = zeroC ? amx::TileZeroOp::create(b, loc, cType).getResult()
                   : amx::TileLoadOp::create(
                         b, loc, cType, acc,
                         ValueRange{idx(t * kAmxTileRows), idx(0)})
                         .getResult();
    for (int64_t u = 0; u < count; ++u) {
      Value s = add(s0, idx(u));
      Value x = amx::TileLoadOp::create(
          b, loc, abType, pairs,
          ValueRange{mul(s, idx(kAmxStepK / 2)), idx(0)});
      for (int64_t t = 0; t < 2; ++t) {
        Value w = amx::TileLoadOp::create(
            b, loc, abType, ops.weight,
            ValueRange{add(n0, idx(t * kAmxTileRows)),
                       mul(s, idx(kAmxStepK))});
        c[t] = amx::TileMulFOp::create(b, loc, cType, w, x, c[t]);
      }
    }
    for (int64_t t = 0; t < 2; ++t)
      amx::TileStoreOp::create(b, loc, acc,
                               ValueRange{idx(t * kAmxTileRows), idx(0)},
                               c[t]);
  };
  // Steps are static: a first block from zero tiles, whole blocks, the
  // rest.
  int64_t group = std::min(steps, kGemvAmxGroup);
  int64_t whole = steps / group * group;
  block(idx(0), group, /*zeroC=*/true);
  if (whole > group)
    forLoop(idx(group), idx(whole), idx(group),
            [&](Value s0) { block(s0, group, false); });
  if (whole < steps)
    block(idx(whole), steps - whole, false);
  return acc;
}

/// Both operands' rows are contiguous: what the tiles and the pair loads
/// read.
static bool hasDenseRows(const GemvKernelOperands &operands) {
  return cast<MemRefType>(operands.lhs.getType()).isLastDimUnitStride() &&
         cast<MemRefType>(operands.weight.getType()).isLastDimUnitStride();
}

std::unique_ptr<GemvKernel>
GemvKernel::create(OpBuilder &b, Location loc, Type ct, int64_t lanes,
                   const GemvKernelOperands &operands,
                   ProductKernels kernels) {
  bool dense = hasDenseRows(operands);
  std::unique_ptr<GemvKernel> vector;
  if (kernels.vector == VectorKernel::PairDot && dense)
    vector.reset(new PairGemvKernel(b, loc, ct, lanes, operands));
  else
    vector.reset(new FmaGemvKernel(b, loc, ct, lanes, operands));
  // Tiles: a static [N, K] weight of at least a block of rows and whole
  // 32-k steps.
  auto weight = cast<ShapedType>(operands.weight.getType());
  if (!kernels.amxTiles || !weight.hasStaticShape() ||
      weight.getDimSize(0) < kAmxBlock || weight.getDimSize(1) <= 0 ||
      weight.getDimSize(1) % kAmxStepK != 0 || !dense)
    return vector;
  return std::make_unique<AmxGemvKernel>(b, loc, ct, lanes, operands,
                                         std::move(vector));
}
