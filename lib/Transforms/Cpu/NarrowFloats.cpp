//===- NarrowFloats.cpp - f16/bf16 conversions without libcalls -----------===//
//
// attn-cpu-expand-narrow-floats: the float conversions LLVM's x86 backend
// would turn into compiler-rt calls (__truncdfbf2, __truncdfhf2, f32 <-> bf16
// without AVX512-BF16, and without F16C __extendhfsf2/__truncsfhf2) become
// integer and f32 code, so that a compiled library needs only libc, libm,
// libomp and the AttnFuse runtime on any x86-64 host of its target.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/Cpu/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUEXPANDNARROWFLOATS
#include "attn/Transforms/Cpu/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

/// `type` (a scalar or a vector of scalars) with element type `element`.
static Type withElement(Type type, Type element) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(element);
  return element;
}

namespace {
/// Integer code on scalars or vectors of one shape.
struct BitBuilder {
  PatternRewriter &b;
  Location loc;
  Type i32;

  /// A constant of the bit pattern `v`.
  Value cst(uint32_t v) {
    return createScalarOrSplatConstant(b, loc, i32, APInt(32, v));
  }
  Value bits(Value floatValue) {
    return arith::BitcastOp::create(b, loc, i32, floatValue);
  }
  Value andi(Value x, uint32_t m) {
    return arith::AndIOp::create(b, loc, x, cst(m));
  }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, int64_t s) { return arith::ShLIOp::create(b, loc, x, cst(s)); }
  Value shr(Value x, int64_t s) {
    return arith::ShRUIOp::create(b, loc, x, cst(s));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, uint32_t c) {
    return arith::CmpIOp::create(b, loc, p, x, cst(c));
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  }
};

/// f64 -> f16/bf16 in two steps that round once: f64 -> f32 rounded to odd
/// (toward zero, then the last bit set if anything was lost), then f32 ->
/// the result rounded to nearest even. Round-to-odd into a format with at
/// least two more significand bits than the result's is innocuous.
struct TruncF64ToNarrow : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    Type to = getElementTypeOrSelf(op.getType());
    if (!from.isF64() || !(to.isF16() || to.isBF16()) ||
        op.getRoundingmodeAttr())
      return failure();
    Location loc = op.getLoc();
    Type wide = op.getIn().getType();
    Type f32 = withElement(wide, rewriter.getF32Type());
    Type i64 = withElement(wide, rewriter.getI64Type());
    BitBuilder bb{rewriter, loc, withElement(wide, rewriter.getI32Type())};
    Value x = op.getIn();
    Value nearest = arith::TruncFOp::create(rewriter, loc, f32, x);
    Value back = arith::ExtFOp::create(rewriter, loc, wide, nearest);
    // NaN compares unordered: it keeps `nearest`, a quiet NaN.
    Value inexact = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::ONE, back, x);
    // Magnitudes compare as their bit patterns without the sign.
    auto magnitude = [&](Value v) -> Value {
      Value bits = arith::BitcastOp::create(rewriter, loc, i64, v);
      return arith::AndIOp::create(
          rewriter, loc, bits,
          createScalarOrSplatConstant(rewriter, loc, i64, INT64_MAX));
    };
    Value roundedAway = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ugt, magnitude(back),
        magnitude(x));
    Value bits = bb.bits(nearest);
    Value towardZero = bb.select(
        roundedAway, arith::SubIOp::create(rewriter, loc, bits, bb.cst(1)),
        bits);
    Value odd = bb.select(inexact, bb.ori(towardZero, bb.cst(1)), bits);
    Value narrowed = arith::BitcastOp::create(rewriter, loc, f32, odd);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), narrowed);
    return success();
  }
};

/// f16/bf16 -> f64 through f32 (both steps exact).
struct ExtNarrowToF64 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    Type to = getElementTypeOrSelf(op.getType());
    if (!(from.isF16() || from.isBF16()) || !to.isF64())
      return failure();
    Type f32 = withElement(op.getType(), rewriter.getF32Type());
    Value mid = arith::ExtFOp::create(rewriter, op.getLoc(), f32, op.getIn());
    rewriter.replaceOpWithNewOp<arith::ExtFOp>(op, op.getType(), mid);
    return success();
  }
};

/// f16 -> f32 in integer code: normal numbers rebias the exponent, Inf/NaN
/// keep their payload, subnormals are mantissa * 2^-24 (exact in f32).
struct ExtF16ToF32 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type to = getElementTypeOrSelf(op.getType());
    if (!getElementTypeOrSelf(op.getIn().getType()).isF16() || !to.isF32())
      return failure();
    Location loc = op.getLoc();
    Type i16 = withElement(op.getType(), rewriter.getI16Type());
    BitBuilder bb{rewriter, loc, withElement(op.getType(), rewriter.getI32Type())};
    Value half = arith::BitcastOp::create(rewriter, loc, i16, op.getIn());
    Value w = arith::ExtUIOp::create(rewriter, loc, bb.i32, half);
    Value sign = bb.shl(bb.andi(w, 0x8000), 16);
    Value exponent = bb.andi(bb.shr(w, 10), 0x1f);
    Value mantissa = bb.andi(w, 0x3ff);
    Value shiftedMantissa = bb.shl(mantissa, 13);
    Value normal = bb.ori(
        sign, bb.ori(bb.shl(bb.add(exponent, bb.cst(112)), 23), shiftedMantissa));
    Value infOrNan = bb.ori(sign, bb.ori(bb.cst(0x7f800000), shiftedMantissa));
    Value scaled = arith::MulFOp::create(
        rewriter, loc,
        arith::UIToFPOp::create(rewriter, loc, op.getType(), mantissa),
        createScalarOrSplatConstant(rewriter, loc, op.getType(),
                                    APFloat(0x1p-24f)));
    Value subnormal = bb.ori(bb.bits(scaled), sign);
    Value result = bb.select(
        bb.cmp(arith::CmpIPredicate::eq, exponent, 0), subnormal,
        bb.select(bb.cmp(arith::CmpIPredicate::eq, exponent, 0x1f), infOrNan,
                  normal));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), result);
    return success();
  }
};

/// f32 -> f16 rounded to nearest even in integer code: overflow gives Inf,
/// NaN a quiet NaN; results below the smallest normal are rounded by an f32
/// addition that aligns their mantissa bits (exact in round-to-nearest-even
/// arithmetic); normal results add the rounding bias and drop 13 bits.
struct TruncF32ToF16 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    if (!from.isF32() || !getElementTypeOrSelf(op.getType()).isF16() ||
        op.getRoundingmodeAttr())
      return failure();
    Location loc = op.getLoc();
    Type f32 = op.getIn().getType();
    BitBuilder bb{rewriter, loc, withElement(f32, rewriter.getI32Type())};
    Value u = bb.bits(op.getIn());
    Value sign = bb.andi(u, 0x80000000);
    Value magnitude = arith::XOrIOp::create(rewriter, loc, u, sign);
    // |x| >= 65536: Inf, or a quiet NaN.
    Value tooBig = bb.cmp(arith::CmpIPredicate::uge, magnitude, 0x47800000);
    Value infOrNan =
        bb.select(bb.cmp(arith::CmpIPredicate::ugt, magnitude, 0x7f800000),
                  bb.cst(0x7e00), bb.cst(0x7c00));
    // |x| < 2^-14: 0.5f puts the f16 subnormal's bits at the bottom.
    Value tiny = bb.cmp(arith::CmpIPredicate::ult, magnitude, 0x38800000);
    Value aligned = arith::AddFOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, f32, magnitude),
        createScalarOrSplatConstant(rewriter, loc, f32, APFloat(0.5f)));
    Value subnormal = arith::SubIOp::create(rewriter, loc, bb.bits(aligned),
                                            bb.cst(0x3f000000));
    // Normal: rebias (-112 << 23), add 0xfff plus the kept lowest bit.
    Value lowestKept = bb.andi(bb.shr(magnitude, 13), 1);
    Value biased = bb.add(bb.add(magnitude, bb.cst(0xc8000fff)),
                          lowestKept);
    Value normal = bb.shr(biased, 13);
    Value result =
        bb.select(tooBig, infOrNan, bb.select(tiny, subnormal, normal));
    result = bb.ori(result, bb.shr(sign, 16));
    Type i16 = withElement(f32, rewriter.getI16Type());
    Value half = arith::TruncIOp::create(rewriter, loc, i16, result);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), half);
    return success();
  }
};

/// f32 -> bf16 rounded to nearest even in integer code, as upstream's
/// pattern and PyTorch's c10::BFloat16 round: add 0x7fff plus the lowest
/// kept bit and drop 16 bits (overflow carries into Inf). A NaN is made
/// 0x7fc00000 (bf16's quiet NaN 0x7fc0) before the rounding instead of
/// being chosen after it: upstream's `select(isnan, 0x7fc0, rounded)` on
/// the 16 result bits reaches LLVM as a select on `bfloat` (InstCombine
/// moves the bitcast into the select), which LLVM legalises without native
/// bf16 by extending both values and truncating back through the
/// compiler-rt call __truncsfbf2. Here the select feeds the integer
/// rounding twice, so it stays an i32 select.
struct TruncF32ToBF16 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    if (!from.isF32() || !getElementTypeOrSelf(op.getType()).isBF16() ||
        op.getRoundingmodeAttr())
      return failure();
    Location loc = op.getLoc();
    Type f32 = op.getIn().getType();
    BitBuilder bb{rewriter, loc, withElement(f32, rewriter.getI32Type())};
    Value isNan = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO,
                                        op.getIn(), op.getIn());
    Value u = bb.select(isNan, bb.cst(0x7fc00000), bb.bits(op.getIn()));
    Value lowestKept = bb.andi(bb.shr(u, 16), 1);
    Value rounded = bb.shr(bb.add(bb.add(u, bb.cst(0x7fff)), lowestKept), 16);
    Type i16 = withElement(f32, rewriter.getI16Type());
    Value half = arith::TruncIOp::create(rewriter, loc, i16, rounded);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), half);
    return success();
  }
};

struct AttnCpuExpandNarrowFloatsPass
    : public attn::impl::AttnCpuExpandNarrowFloatsBase<
          AttnCpuExpandNarrowFloatsPass> {
  using Base::Base;

  void runOnOperation() override {
    // arith-emulate-unsupported-floats marks its conversions `contract`;
    // convert-arith-to-llvm would copy the arith attribute verbatim onto
    // llvm.fpext/fptrunc, which then no longer parse without the arith
    // dialect. Contraction means nothing for a conversion.
    getOperation()->walk([](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op))
        op->removeAttr("fastmath");
    });
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncF64ToNarrow, ExtNarrowToF64>(&getContext());
    if (expandF16)
      patterns.add<ExtF16ToF32, TruncF32ToF16>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
    expandBf16Conversions();
  }

  /// f32 <-> bf16 in integer code (upstream's patterns, those of
  /// arith-expand's include-bf16), except, with `native-bf16`, f32 -> bf16
  /// truncations of the default rounding, which LLVM lowers to
  /// vcvtneps2bf16 on an AVX512-BF16 target, and bf16 -> f32 extensions
  /// (a shift on every target). Both stay: an extension expanded here
  /// would read the truncation's bits through a bitcast, which makes LLVM
  /// round in integer code (7 instructions per vector) instead of
  /// vcvtneps2bf16 wherever a bf16 rounding is widened again (the
  /// exporter's rounding after each op of a bf16 model).
  void expandBf16Conversions() {
    SmallVector<Operation *> conversions;
    getOperation()->walk([&](Operation *op) {
      auto trunc = dyn_cast<arith::TruncFOp>(op);
      if (!trunc && !isa<arith::ExtFOp>(op))
        return;
      Type in = getElementTypeOrSelf(op->getOperand(0).getType());
      Type out = getElementTypeOrSelf(op->getResult(0).getType());
      bool native =
          nativeBf16 &&
          (trunc ? in.isF32() && out.isBF16() && !trunc.getRoundingmodeAttr()
                 : in.isBF16() && out.isF32());
      if ((in.isBF16() || out.isBF16()) && !native)
        conversions.push_back(op);
    });
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    // Ahead of upstream's f32 -> bf16 pattern.
    patterns.add<TruncF32ToBF16>(&getContext(), /*benefit=*/2);
    if (failed(applyOpPatternsGreedily(conversions, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
