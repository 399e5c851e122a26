//===- ScoreModToCuda.cpp - attn.sdpa score_mod regions as CUDA source ----===//
//
// One C++ statement per op of the region, in the helpers of
// kernels/src/score_mod.h (`m::` below). Values are held as:
//   f32, and f16/bf16 (rounded to their type after every op)  float
//   f64                                                       double
//   iN, index (64 bits, as the CPU lowering's index)          uint64_t, the low N bits
// Anything else (another type, an op without a translation below) makes the
// whole region untranslatable: the op stays on the CPU with the reason.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToCuda/ScoreModToCuda.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/xxhash.h"

#include "attn/kernels/sdpa_contract.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// How a region value is held in the generated code.
enum class Repr { F16, BF16, F32, F64, Int };
struct ValueType {
  Repr repr;
  unsigned width; // bits of an Int
};

std::string hex(uint64_t v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format_hex(v, 2);
  return s;
}

/// Emits the body of a modifier's `apply` from the region of an attn.sdpa.
class ScoreModEmitter {
public:
  explicit ScoreModEmitter(SdpaOp op) : op(op) {}

  /// The statements of `apply`, or failure with `reason` set.
  LogicalResult emit(std::string &body, std::string &reason);

private:
  FailureOr<ValueType> classify(Type type, Operation *user);
  FailureOr<ValueType> typeOf(Value v, Operation *user) {
    return classify(v.getType(), user);
  }
  std::string cType(ValueType t) {
    return t.repr == Repr::F64 ? "double"
           : t.repr == Repr::Int ? "uint64_t"
                                 : "float";
  }
  LogicalResult emitArguments();
  LogicalResult emitOp(Operation *inner);
  FailureOr<std::string> translate(Operation *inner, ValueType result);
  FailureOr<std::string> translateFloat(Operation *inner, ValueType result);
  FailureOr<std::string> translateMath(Operation *inner, ValueType result);
  FailureOr<std::string> translateInt(Operation *inner, ValueType result);
  FailureOr<std::string> translateCast(Operation *inner, ValueType result);
  std::string constant(Attribute value, ValueType t);
  std::string cmpf(arith::CmpFPredicate pred, const std::string &a,
                   const std::string &b);
  std::string cmpi(arith::CmpIPredicate pred, const std::string &a,
                   const std::string &b, unsigned w);
  std::string define(Value v, ValueType t, const std::string &expr,
                     StringRef comment);
  std::string name(Value v) { return names.lookup(v); }
  std::string operand(Operation *inner, unsigned i) {
    return name(inner->getOperand(i));
  }
  unsigned widthOf(Value v) { return classify(v.getType(), nullptr)->width; }
  LogicalResult unsupported(const Twine &why) {
    reason = why.str();
    return failure();
  }

  SdpaOp op;
  llvm::DenseMap<Value, std::string> names;
  std::string body;
  llvm::raw_string_ostream os{body};
  std::string reason;
  unsigned next = 0;
};

} // namespace

FailureOr<ValueType> ScoreModEmitter::classify(Type type, Operation *user) {
  if (type.isF16())
    return ValueType{Repr::F16, 16};
  if (type.isBF16())
    return ValueType{Repr::BF16, 16};
  if (type.isF32())
    return ValueType{Repr::F32, 32};
  if (type.isF64())
    return ValueType{Repr::F64, 64};
  if (type.isIndex())
    return ValueType{Repr::Int, 64};
  if (auto it = dyn_cast<IntegerType>(type); it && it.getWidth() <= 64)
    return ValueType{Repr::Int, it.getWidth()};
  std::string t;
  llvm::raw_string_ostream(t) << type;
  (void)unsupported("the score_mod " +
                    (user ? "op '" + user->getName().getStringRef() + "'"
                          : Twine("region")) +
                    " has a value of type " + t +
                    " (no CUDA translation)");
  return failure();
}

std::string ScoreModEmitter::define(Value v, ValueType t,
                                    const std::string &expr,
                                    StringRef comment) {
  std::string n = "v" + std::to_string(next++);
  names[v] = n;
  os << "    const " << cType(t) << " " << n << " = " << expr << ";";
  if (!comment.empty())
    os << "  // " << comment;
  os << "\n";
  return n;
}

/// The score, the indices (the trailing ones of b, h, i, j: the bridge views
/// a rank-R problem as [1, ..., 1, dims]) and the extra operands' elements.
LogicalResult ScoreModEmitter::emitArguments() {
  Block *block = op.getScoreModBlock();
  unsigned rank = op.getQuery().getType().getRank();
  names[block->getArgument(0)] = "s";
  static const char *const kIndices[4] = {"b", "h", "i", "j"};
  for (unsigned d = 0; d < rank; ++d)
    if (!block->getArgument(1 + d).use_empty())
      define(block->getArgument(1 + d), {Repr::Int, 64},
           "static_cast<uint64_t>(static_cast<int64_t>(" +
               std::string(kIndices[4 - rank + d]) + "))",
           "index of score dim " + std::to_string(d));
  for (auto [t, extra] : llvm::enumerate(op.getExtras())) {
    BlockArgument arg = block->getArgument(1 + rank + t);
    Type et = arg.getType();
    std::string at = "(p, " + std::to_string(t) + ", b, h, i, j)";
    std::string load = et.isF32()    ? "m::load_f32<Ops>" + at
                       : et.isF16()  ? "m::load_16<Ops, false>" + at
                       : et.isBF16() ? "m::load_16<Ops, true>" + at
                       : et.isInteger(1) ? "m::load_i1<Ops>" + at
                                         : "";
    if (load.empty()) {
      std::string s;
      llvm::raw_string_ostream(s) << et;
      return unsupported("score_mod extra operand " + Twine(t) +
                         " has element type " + s +
                         " (the CUDA kernels read f16, bf16, f32 and i1)");
    }
    if (!arg.use_empty())
      define(arg, *typeOf(arg, nullptr), load,
             "extra operand " + std::to_string(t));
  }
  return success();
}

std::string ScoreModEmitter::constant(Attribute value, ValueType t) {
  if (auto f = dyn_cast<FloatAttr>(value)) {
    APFloat v = f.getValue();
    if (t.repr == Repr::F64)
      return "m::f64(" + hex(v.bitcastToAPInt().getZExtValue()) + "ull)";
    bool lostInfo = false;
    // f16 and bf16 values are exact in f32.
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lostInfo);
    return "m::f32(" + hex(v.bitcastToAPInt().getZExtValue()) + "u)";
  }
  APInt i = cast<IntegerAttr>(value).getValue();
  return "uint64_t{" + hex(i.getZExtValue()) + "u}";
}

std::string ScoreModEmitter::cmpf(arith::CmpFPredicate pred,
                                  const std::string &a, const std::string &b) {
  using P = arith::CmpFPredicate;
  std::string lt = a + " < " + b, gt = a + " > " + b;
  std::string le = a + " <= " + b, ge = a + " >= " + b;
  std::string ord = "(" + a + " == " + a + " && " + b + " == " + b + ")";
  switch (pred) {
  case P::AlwaysFalse:
    return "false";
  case P::OEQ:
    return a + " == " + b;
  case P::OGT:
    return gt;
  case P::OGE:
    return ge;
  case P::OLT:
    return lt;
  case P::OLE:
    return le;
  case P::ONE:
    return "(" + lt + " || " + gt + ")";
  case P::ORD:
    return ord;
  case P::UEQ:
    return "!(" + lt + " || " + gt + ")";
  case P::UGT:
    return "!(" + le + ")";
  case P::UGE:
    return "!(" + lt + ")";
  case P::ULT:
    return "!(" + ge + ")";
  case P::ULE:
    return "!(" + gt + ")";
  case P::UNE:
    return a + " != " + b;
  case P::UNO:
    return "!" + ord;
  case P::AlwaysTrue:
    return "true";
  }
  llvm_unreachable("covered switch");
}

std::string ScoreModEmitter::cmpi(arith::CmpIPredicate pred,
                                  const std::string &a, const std::string &b,
                                  unsigned w) {
  using P = arith::CmpIPredicate;
  std::string sa = "m::sext(" + a + ", " + std::to_string(w) + ")";
  std::string sb = "m::sext(" + b + ", " + std::to_string(w) + ")";
  switch (pred) {
  case P::eq:
    return a + " == " + b;
  case P::ne:
    return a + " != " + b;
  case P::slt:
    return sa + " < " + sb;
  case P::sle:
    return sa + " <= " + sb;
  case P::sgt:
    return sa + " > " + sb;
  case P::sge:
    return sa + " >= " + sb;
  case P::ult:
    return a + " < " + b;
  case P::ule:
    return a + " <= " + b;
  case P::ugt:
    return a + " > " + b;
  case P::uge:
    return a + " >= " + b;
  }
  llvm_unreachable("covered switch");
}

/// `expr` rounded to a 16-bit result type (a no-op for f32 and f64).
static std::string rounded(ValueType t, const std::string &expr) {
  if (t.repr == Repr::F16)
    return "m::round16<Ops, false>(" + expr + ")";
  if (t.repr == Repr::BF16)
    return "m::round16<Ops, true>(" + expr + ")";
  return expr;
}

/// arith's float arithmetic: the IEEE op in f32 (f64), rounded once to the
/// result type (for f16/bf16 the f32 result is exact or correctly rounded
/// twice, which for + - * / gives the correctly rounded result, as LLVM's
/// promotion of half arithmetic on the CPU does).
FailureOr<std::string> ScoreModEmitter::translateFloat(Operation *inner,
                                                       ValueType result) {
  auto binary = [&](StringRef fn) -> std::string {
    return rounded(result, ("m::" + fn + "(" + operand(inner, 0) + ", " +
                            operand(inner, 1) + ")")
                               .str());
  };
  bool f64 = result.repr == Repr::F64;
  return TypeSwitch<Operation *, FailureOr<std::string>>(inner)
      .Case([&](arith::AddFOp) { return binary("add"); })
      .Case([&](arith::SubFOp) { return binary("sub"); })
      .Case([&](arith::MulFOp) { return binary("mul"); })
      .Case([&](arith::DivFOp) { return binary("div"); })
      .Case([&](arith::RemFOp) {
        return rounded(result, (f64 ? "fmod(" : "fmodf(") +
                                   operand(inner, 0) + ", " +
                                   operand(inner, 1) + ")");
      })
      .Case([&](arith::MaximumFOp) { return binary("maximum"); })
      .Case([&](arith::MinimumFOp) { return binary("minimum"); })
      .Case([&](arith::MaxNumFOp) { return binary("maxnum"); })
      .Case([&](arith::MinNumFOp) { return binary("minnum"); })
      .Case([&](arith::NegFOp) { return "-" + operand(inner, 0); })
      .Default([&](Operation *) -> FailureOr<std::string> {
        return translateMath(inner, result);
      });
}

/// math ops: the CUDA math library's function of the same name in f32 (f64),
/// rounded to a 16-bit result type as LLVM's promotion does on the CPU.
/// The exact ones (abs, copysign, floor, ...), sqrt and fma are correctly
/// rounded on both sides; the others are within the libraries' ulp bounds.
FailureOr<std::string> ScoreModEmitter::translateMath(Operation *inner,
                                                      ValueType result) {
  bool f64 = result.repr == Repr::F64;
  auto libm = [&](StringRef fn) -> std::string {
    std::string call = fn.str() + (f64 ? "" : "f") + "(";
    for (unsigned i = 0; i < inner->getNumOperands(); ++i)
      call += (i ? ", " : "") + operand(inner, i);
    return rounded(result, call + ")");
  };
  auto helper = [&](StringRef fn) -> std::string {
    std::string call = "m::" + fn.str() + "(";
    for (unsigned i = 0; i < inner->getNumOperands(); ++i)
      call += (i ? ", " : "") + operand(inner, i);
    return rounded(result, call + ")");
  };
  return TypeSwitch<Operation *, FailureOr<std::string>>(inner)
      .Case([&](math::AbsFOp) { return libm("fabs"); })
      .Case([&](math::CopySignOp) { return libm("copysign"); })
      .Case([&](math::FloorOp) { return libm("floor"); })
      .Case([&](math::CeilOp) { return libm("ceil"); })
      .Case([&](math::TruncOp) { return libm("trunc"); })
      .Case([&](math::RoundOp) { return libm("round"); })
      .Case([&](math::RoundEvenOp) { return libm("rint"); })
      .Case([&](math::SqrtOp) { return helper("sqrt"); })
      .Case([&](math::RsqrtOp) { return helper("rsqrt"); })
      .Case([&](math::FmaOp) { return helper("fma"); })
      .Case([&](math::TanhOp) { return libm("tanh"); })
      .Case([&](math::ExpOp) { return libm("exp"); })
      .Case([&](math::Exp2Op) { return libm("exp2"); })
      .Case([&](math::ExpM1Op) { return libm("expm1"); })
      .Case([&](math::LogOp) { return libm("log"); })
      .Case([&](math::Log2Op) { return libm("log2"); })
      .Case([&](math::Log10Op) { return libm("log10"); })
      .Case([&](math::Log1pOp) { return libm("log1p"); })
      .Case([&](math::SinOp) { return libm("sin"); })
      .Case([&](math::CosOp) { return libm("cos"); })
      .Case([&](math::TanOp) { return libm("tan"); })
      .Case([&](math::AtanOp) { return libm("atan"); })
      .Case([&](math::Atan2Op) { return libm("atan2"); })
      .Case([&](math::ErfOp) { return libm("erf"); })
      .Case([&](math::CbrtOp) { return libm("cbrt"); })
      .Case([&](math::PowFOp) { return libm("pow"); })
      .Default([&](Operation *) -> FailureOr<std::string> {
        return failure();
      });
}

/// Integer and index ops on the low `w` bits of a uint64_t: + - * & | ^
/// wrap in uint64_t and are truncated; the others are helpers.
FailureOr<std::string> ScoreModEmitter::translateInt(Operation *inner,
                                                     ValueType result) {
  std::string w = std::to_string(result.width);
  auto a = [&] { return operand(inner, 0); };
  auto b = [&] { return operand(inner, 1); };
  auto wrap = [&](StringRef sym) {
    return "m::bits(" + a() + " " + sym.str() + " " + b() + ", " + w + ")";
  };
  auto helper = [&](StringRef fn) {
    return "m::" + fn.str() + "(" + a() + ", " + b() + ", " + w + ")";
  };
  auto pick = [&](arith::CmpIPredicate pred) {
    return "(" + cmpi(pred, a(), b(), result.width) + ") ? " + a() + " : " +
           b();
  };
  using P = arith::CmpIPredicate;
  return TypeSwitch<Operation *, FailureOr<std::string>>(inner)
      .Case([&](arith::AddIOp) { return wrap("+"); })
      .Case([&](arith::SubIOp) { return wrap("-"); })
      .Case([&](arith::MulIOp) { return wrap("*"); })
      .Case([&](arith::AndIOp) { return a() + " & " + b(); })
      .Case([&](arith::OrIOp) { return a() + " | " + b(); })
      .Case([&](arith::XOrIOp) { return a() + " ^ " + b(); })
      .Case([&](arith::DivSIOp) { return helper("divsi"); })
      .Case([&](arith::DivUIOp) { return helper("divui"); })
      .Case([&](arith::RemSIOp) { return helper("remsi"); })
      .Case([&](arith::RemUIOp) { return helper("remui"); })
      .Case([&](arith::FloorDivSIOp) { return helper("floordivsi"); })
      .Case([&](arith::CeilDivSIOp) { return helper("ceildivsi"); })
      .Case([&](arith::CeilDivUIOp) { return helper("ceildivui"); })
      .Case([&](arith::ShLIOp) { return helper("shli"); })
      .Case([&](arith::ShRUIOp) { return helper("shrui"); })
      .Case([&](arith::ShRSIOp) { return helper("shrsi"); })
      .Case([&](arith::MaxSIOp) { return pick(P::sgt); })
      .Case([&](arith::MinSIOp) { return pick(P::slt); })
      .Case([&](arith::MaxUIOp) { return pick(P::ugt); })
      .Case([&](arith::MinUIOp) { return pick(P::ult); })
      .Default([&](Operation *) -> FailureOr<std::string> {
        return failure();
      });
}

/// The conversions translateCast handles (for some of their types).
static bool isTranslatedCast(Operation *op) {
  return isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
             arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp,
             arith::IndexCastOp, arith::ExtUIOp, arith::TruncIOp,
             arith::IndexCastUIOp>(op);
}

/// Conversions between the representations. Int -> f16/bf16 and f64 ->
/// f16/bf16 would round twice through f32, and a truncf rounding other than
/// to nearest even has no counterpart, so they have no translation.
FailureOr<std::string> ScoreModEmitter::translateCast(Operation *inner,
                                                      ValueType result) {
  FailureOr<ValueType> from = typeOf(inner->getOperand(0), inner);
  if (failed(from))
    return failure();
  std::string a = operand(inner, 0);
  bool to16 = result.repr == Repr::F16 || result.repr == Repr::BF16;
  std::string to = cType(result);
  std::string w = std::to_string(result.width);
  std::string fw = std::to_string(from->width);
  auto intToFloat = [&](const std::string &v) -> FailureOr<std::string> {
    if (to16)
      return failure();
    return "static_cast<" + to + ">(" + v + ")";
  };
  return TypeSwitch<Operation *, FailureOr<std::string>>(inner)
      .Case([&](arith::ExtFOp) -> FailureOr<std::string> {
        return result.repr == Repr::F64 ? "static_cast<double>(" + a + ")" : a;
      })
      .Case([&](arith::TruncFOp t) -> FailureOr<std::string> {
        if (t.getRoundingmode() &&
            *t.getRoundingmode() != arith::RoundingMode::to_nearest_even)
          return failure();
        if (to16 && from->repr == Repr::F64)
          return failure();
        return rounded(result, result.repr == Repr::F32 || to16
                                   ? "static_cast<float>(" + a + ")"
                                   : a);
      })
      .Case([&](arith::SIToFPOp) {
        return intToFloat("m::sext(" + a + ", " + fw + ")");
      })
      .Case([&](arith::UIToFPOp) { return intToFloat(a); })
      .Case([&](arith::FPToSIOp) -> FailureOr<std::string> {
        return "m::fptosi(" + a + ", " + w + ")";
      })
      .Case([&](arith::FPToUIOp) -> FailureOr<std::string> {
        return "m::fptoui(" + a + ", " + w + ")";
      })
      .Case<arith::ExtSIOp, arith::IndexCastOp>(
          [&](Operation *) -> FailureOr<std::string> {
            // Sign-extends when widening, truncates when narrowing.
            return "m::bits(static_cast<uint64_t>(m::sext(" + a + ", " + fw +
                   ")), " + w + ")";
          })
      .Case<arith::ExtUIOp, arith::TruncIOp, arith::IndexCastUIOp>(
          [&](Operation *) -> FailureOr<std::string> {
            return "m::bits(" + a + ", " + w + ")";
          })
      .Default([&](Operation *) -> FailureOr<std::string> {
        return failure();
      });
}

FailureOr<std::string> ScoreModEmitter::translate(Operation *inner,
                                                  ValueType result) {
  if (auto c = dyn_cast<arith::ConstantOp>(inner))
    return constant(c.getValue(), result);
  if (auto sel = dyn_cast<arith::SelectOp>(inner))
    return "(" + operand(inner, 0) + " != 0) ? " + operand(inner, 1) + " : " +
           operand(inner, 2);
  if (auto c = dyn_cast<arith::CmpFOp>(inner))
    return "(" + cmpf(c.getPredicate(), operand(inner, 0), operand(inner, 1)) +
           ") ? uint64_t{1} : uint64_t{0}";
  if (auto c = dyn_cast<arith::CmpIOp>(inner))
    return "(" +
           cmpi(c.getPredicate(), operand(inner, 0), operand(inner, 1),
                widthOf(c.getLhs())) +
           ") ? uint64_t{1} : uint64_t{0}";
  if (isa<CastOpInterface>(inner))
    return translateCast(inner, result);
  if (result.repr == Repr::Int)
    return translateInt(inner, result);
  return translateFloat(inner, result);
}

LogicalResult ScoreModEmitter::emitOp(Operation *inner) {
  StringRef opName = inner->getName().getStringRef();
  if (inner->getNumResults() != 1 || inner->getNumRegions() != 0)
    return unsupported("the score_mod op '" + opName +
                       "' (no CUDA translation)");
  for (Value v : inner->getOperands())
    if (failed(typeOf(v, inner)))
      return failure();
  FailureOr<ValueType> result = typeOf(inner->getResult(0), inner);
  if (failed(result))
    return failure();
  FailureOr<std::string> expr = translate(inner, *result);
  if (failed(expr) && isTranslatedCast(inner)) {
    std::string types;
    llvm::raw_string_ostream(types)
        << " from " << inner->getOperand(0).getType() << " to "
        << inner->getResult(0).getType();
    return unsupported("the score_mod op '" + opName + "'" + types +
                       " (no exact CUDA translation)");
  }
  if (failed(expr))
    return unsupported("the score_mod op '" + opName +
                       "' (no CUDA translation)");
  define(inner->getResult(0), *result, *expr, opName);
  return success();
}

LogicalResult ScoreModEmitter::emit(std::string &out, std::string &why) {
  Block *block = op.getScoreModBlock();
  LogicalResult ok = emitArguments();
  for (Operation &inner : block->without_terminator()) {
    if (failed(ok))
      break;
    ok = emitOp(&inner);
  }
  if (failed(ok)) {
    why = reason;
    return failure();
  }
  os << "    return " << name(cast<YieldOp>(block->getTerminator()).getScore())
     << ";\n";
  out = body;
  return success();
}

//===----------------------------------------------------------------------===//
// The source file
//===----------------------------------------------------------------------===//

/// The template arguments of launch_fwd_with_mod: the op's static facts.
static std::string getLaunchConfig(SdpaOp op, StringRef mod) {
  RankedTensorType q = op.getQuery().getType();
  Type et = q.getElementType();
  int64_t e = q.getShape().back();
  int64_t ev = op.getValue().getType().getShape().back();
  int64_t l = q.getShape()[q.getRank() - 2];
  attn_dtype dtype = et.isF32()    ? ATTN_DTYPE_F32
                     : et.isBF16() ? ATTN_DTYPE_BF16
                                   : ATTN_DTYPE_F16;
  bool tc = ::attn::cuda::uses_tensor_cores(dtype, e, ev);
  bool mayDecode =
      ShapedType::isDynamic(l) || l <= ::attn::cuda::kDecodeMaxQueries;
  return (mod + ", " + (et.isBF16() ? "true" : "false") + ", " +
          (et.isF32() ? "true" : "false") + ", " + Twine(tc ? e : 0) + ", " +
          (op.getMask() ? "true" : "false") + ", " +
          (mayDecode ? "true" : "false"))
      .str();
}

/// The C entry point: the bridge's tensors for the op's mask kind, one
/// unranked memref per extra operand, then the attributes' memref.
static std::string getEntryPoint(SdpaOp op, StringRef symbol, StringRef mod) {
  Type et = op.getQuery().getType().getElementType();
  std::string dtype = et.isF16()    ? "ATTN_DTYPE_F16"
                      : et.isBF16() ? "ATTN_DTYPE_BF16"
                                    : "ATTN_DTYPE_F32";
  std::string maskKind = op.hasBoolMask()       ? "ATTN_MASK_BOOL"
                         : op.hasAdditiveMask() ? "ATTN_MASK_ADDITIVE"
                                                : "ATTN_MASK_NONE";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "extern \"C\" int32_t " << symbol
     << "(int64_t qr, void *qd, int64_t kr, void *kd, int64_t vr, void *vd, ";
  if (op.getMask())
    os << "int64_t mr, void *md, ";
  os << "int64_t outr, void *outd, ";
  unsigned n = op.getExtras().size();
  for (unsigned t = 0; t < n; ++t)
    os << "int64_t x" << t << "r, void *x" << t << "d, ";
  os << "int64_t ar, void *ad) {\n"
     << "  attnrt::SdpaCall call;\n"
     << "  call.dtype = " << dtype << ";\n"
     << "  call.maskKind = " << maskKind << ";\n"
     << "  call.q = {qr, qd};\n  call.k = {kr, kd};\n  call.v = {vr, vd};\n"
     << (op.getMask() ? "  call.mask = {mr, md};\n" : "")
     << "  call.out = {outr, outd};\n";
  if (n > 0) {
    os << "  const attnrt::Memref extras[] = {";
    for (unsigned t = 0; t < n; ++t)
      os << (t ? ", " : "") << "{x" << t << "r, x" << t << "d}";
    os << "};\n  static const size_t kExtraSizes[] = {";
    for (auto [t, extra] : llvm::enumerate(op.getExtras())) {
      Type xt = cast<RankedTensorType>(extra.getType()).getElementType();
      os << (t ? ", " : "") << (xt.isInteger(1) ? 1 : xt.isF32() ? 4 : 2);
    }
    os << "};\n  call.extras = extras;\n  call.extraElementSizes = "
          "kExtraSizes;\n  call.numExtras = "
       << n << ";\n";
  }
  os << "  call.attrs = {ar, ad};\n"
     << "  call.launch = launch_" << mod << ";\n"
     << "  return attnrt::runSdpa(call);\n}\n";
  return s;
}

/// The region as it was, as a comment heading the modifier.
static std::string getRegionComment(SdpaOp op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op.getScoreMod().front().front().print(os);
  std::string out;
  for (StringRef line : llvm::split(text, '\n'))
    if (!line.trim().empty())
      out += "//   " + line.rtrim().str() + "\n";
  return out;
}

/// The name of the function holding `op` as an identifier (for readers and
/// for tests binding the modifier with ATTN_SCORE_MOD_GENERATED).
static std::string getFunctionName(SdpaOp op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::string name = func ? func.getName().str() : "module";
  for (char &c : name)
    if (!llvm::isAlnum(c))
      c = '_';
  return name;
}

FailureOr<CudaScoreModKernel>
mlir::attn::generateCudaScoreModKernel(SdpaOp op, std::string &reason) {
  if (op.getExtras().size() > ::attn::cuda::kMaxModTensors) {
    reason = "a score_mod region with " +
             std::to_string(op.getExtras().size()) +
             " extra operands (the CUDA kernels read at most " +
             std::to_string(::attn::cuda::kMaxModTensors) + ")";
    return failure();
  }
  std::string body;
  if (failed(ScoreModEmitter(op).emit(body, reason)))
    return failure();
  std::string config = getLaunchConfig(op, "Mod");
  std::string entryShape = getEntryPoint(op, "entry", "mod");
  std::string hash =
      llvm::utohexstr(llvm::xxh3_64bits(body + config + entryShape), true,
                      16);
  std::string mod = "ScoreMod_" + hash;
  CudaScoreModKernel kernel;
  kernel.symbol = "attnrt_cuda_sdpa_mod_" + hash;
  std::string &s = kernel.source;
  s += "// ---- " + kernel.symbol + " ----\n";
  s += "// Generated by attn-lower-sdpa-to-cuda from the score_mod region of "
       "an attn.sdpa in @" +
       getFunctionName(op) + ":\n";
  s += getRegionComment(op);
  s += "#include \"score_mod.h\"\n\n";
  s += "struct " + mod + " {\n  static constexpr bool kIdentity = false;\n"
       "  template <class Ops>\n"
       "  ATTN_DEV static float apply(const ::attn::detail::FwdParams &p, "
       "float s, int b, int h, int i, int j) {\n"
       "    namespace m = ::attn::detail::mod;\n"
       "    (void)p, (void)b, (void)h, (void)i, (void)j;\n";
  s += body;
  s += "  }\n};\nATTN_SCORE_MOD_GENERATED(" + mod + ", " +
       getFunctionName(op) + ")\n\n";
  s += "#if defined(__CUDACC__)\n#include \"attnrt_cuda_call.h\"\n"
       "#include \"score_mod_launch.cuh\"\n\n";
  s += "static cudaError_t launch_" + mod +
       "(const ::attn::detail::FwdParams &p, cudaStream_t stream, "
       "::attn::detail::TcVariant variant) {\n"
       "  return ::attn::detail::launch_fwd_with_mod<" +
       getLaunchConfig(op, mod) + ">(p, stream, variant);\n}\n\n";
  s += getEntryPoint(op, kernel.symbol, mod);
  s += "#endif  // __CUDACC__\n";
  return kernel;
}
