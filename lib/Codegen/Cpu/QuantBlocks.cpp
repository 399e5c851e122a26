//===- QuantBlocks.cpp - dequantizing quantized weights in registers ------===//
//
// Each decoder reads one vector of a unit: the bytes of its codes (a
// vector load of `lanes` i8, or of `lanes` bytes holding the nibbles),
// unpacked with vector integer ops (and 0x0F, shift right by 4, subtract
// the offset), converted to f32 and multiplied by the scale of its block
// or group widened to f32: exactly the order of operations of
// docs/quantization.md, so that every element is the dequantized value
// bit for bit. The scalar fields (f16 scales, sub-block scales, zero
// points) are loaded again for each vector of a unit; LLVM merges the
// loads of one unit.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/Cpu/QuantBlocks.h"

#include "attn/Codegen/Cpu/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

QuantDecoder::QuantDecoder(OpBuilder &b, Location loc,
                           const QuantizedWeight &weight, Value bytes,
                           int64_t lanes)
    : b(b), loc(loc), weight(weight), bytes(bytes), lanes(lanes),
      vecType(VectorType::get({lanes}, b.getF32Type())) {
  QuantScheme scheme = weight.format.getScheme();
  unit = scheme == QuantScheme::q4_k || scheme == QuantScheme::q6_k ? 256 : 32;
  assert(lanes >= 4 && lanes <= 16 && 16 % lanes == 0 &&
         "a vector is within one half of a 32-element chunk");
  FailureOr<QuantFormatAttr::Layout> l =
      weight.format.getLayout(weight.n, weight.k);
  assert(succeeded(l) && "the verifier checked the size");
  layout = *l;
}

Value QuantDecoder::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value QuantDecoder::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value QuantDecoder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}

Value QuantDecoder::loadBytes(Value offset, int64_t count) {
  auto type = VectorType::get({count}, b.getI8Type());
  return vector::LoadOp::create(b, loc, type, bytes, ValueRange{offset});
}

Value QuantDecoder::loadFloat(Value offset, bool f32) {
  Type ft = f32 ? Type(b.getF32Type()) : Type(b.getF16Type());
  Value raw = loadBytes(offset, f32 ? 4 : 2);
  Value cast = vector::BitCastOp::create(b, loc, VectorType::get({1}, ft), raw);
  Value x = vector::ExtractOp::create(b, loc, cast, ArrayRef<int64_t>{0});
  return f32 ? x : arith::ExtFOp::create(b, loc, b.getF32Type(), x);
}

Value QuantDecoder::loadByte(Value offset) {
  Value x = memref::LoadOp::create(b, loc, bytes, ValueRange{offset});
  return arith::ExtUIOp::create(b, loc, b.getI32Type(), x);
}

Value QuantDecoder::i8Splat(int64_t v, int64_t count) {
  auto type = VectorType::get({count}, b.getI8Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getI8IntegerAttr(v)));
}

Value QuantDecoder::concat(Value x, Value y) {
  int64_t n = cast<VectorType>(x.getType()).getNumElements();
  return vector::ShuffleOp::create(b, loc, x, y,
                                   llvm::to_vector(llvm::seq<int64_t>(0, 2 * n)));
}

Value QuantDecoder::flipSignBits(Value codes) {
  int64_t n = cast<VectorType>(codes.getType()).getNumElements();
  return arith::XOrIOp::create(b, loc, codes, i8Splat(-128, n));
}

Value QuantDecoder::q6Codes(Value ql, Value qh, int64_t q) {
  int64_t n = cast<VectorType>(ql.getType()).getNumElements();
  Value low = q < 2 ? Value(arith::AndIOp::create(b, loc, ql, i8Splat(15, n)))
                    : Value(arith::ShRUIOp::create(b, loc, ql, i8Splat(4, n)));
  if (q > 0)
    qh = arith::ShRUIOp::create(b, loc, qh, i8Splat(2 * q, n));
  Value high = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, qh, i8Splat(3, n)), i8Splat(4, n));
  return arith::OrIOp::create(b, loc, low, high);
}

Value QuantDecoder::loadNibbles(Value offset, bool high) {
  Value v = loadBytes(offset, lanes);
  if (high)
    return arith::ShRUIOp::create(b, loc, v, i8Splat(4));
  return arith::AndIOp::create(b, loc, v, i8Splat(15));
}

Value QuantDecoder::splat(Value scalar) {
  return vector::BroadcastOp::create(b, loc, vecType, scalar);
}

Value QuantDecoder::toF32(Value codes, bool isSigned) {
  if (isSigned)
    return arith::SIToFPOp::create(b, loc, vecType, codes);
  return arith::UIToFPOp::create(b, loc, vecType, codes);
}

/// q8_0: `f16 d; int8 qs[32]`, w = f32(q) * f32(d).
Value QuantDecoder::decodeQ8_0(Value row, Value u, int64_t e) {
  Value block = add(mul(row, idx(weight.k / 32)), u);
  Value base = mul(block, idx(34));
  Value d = loadFloat(base, false);
  Value q = toF32(loadBytes(add(base, idx(2 + e)), lanes), true);
  return arith::MulFOp::create(b, loc, q, splat(d));
}

/// q4_0: `f16 d; u8 qs[16]`, element j in the low nibble of byte j, j + 16
/// in its high nibble; w = f32(nibble - 8) * f32(d).
Value QuantDecoder::decodeQ4_0(Value row, Value u, int64_t e) {
  Value block = add(mul(row, idx(weight.k / 32)), u);
  Value base = mul(block, idx(18));
  Value d = loadFloat(base, false);
  Value nibbles = loadNibbles(add(base, idx(2 + e % 16)), e >= 16);
  return arith::MulFOp::create(b, loc, centredNibbles(nibbles), splat(d));
}

/// f32(u - 8) of 4-bit codes u: the subtraction on the bytes (in -8..7),
/// then a signed conversion; the scale is one product after it, per
/// vector, with nothing per block but the scale's broadcast.
Value QuantDecoder::centredNibbles(Value nibbles) {
  return toF32(arith::SubIOp::create(b, loc, nibbles, i8Splat(8)), true);
}

/// q4_k: `f16 d; f16 dmin; u8 scales[12]; u8 qs[128]`; sub-block s = e / 32
/// has a 6-bit scale and min; w = (f32(d) * sc) * f32(q) - f32(dmin) * m.
Value QuantDecoder::decodeQ4_K(Value row, Value u, int64_t e) {
  Value base = getQ4KBase(row, u);
  int64_t s = e / 32;
  // The super-block's scales and mins (one decode per super-block once
  // CSE merges the vectors'), lane s.
  auto [scales, mins] = decodeQ4KScales(row, u);
  Value d1 = vector::ExtractOp::create(b, loc, scales, s);
  Value m1 = vector::ExtractOp::create(b, loc, mins, s);
  Value nibbles =
      loadNibbles(add(base, idx(16 + 32 * (s / 2) + e % 32)), s % 2 == 1);
  Value w = arith::MulFOp::create(b, loc, splat(d1), toF32(nibbles, false));
  return arith::SubFOp::create(b, loc, w, splat(m1));
}

Value QuantDecoder::getQ4KBase(Value row, Value sb) {
  return mul(add(mul(row, idx(weight.k / 256)), sb), idx(144));
}

/// q6_k: `u8 ql[128]; u8 qh[64]; int8 scales[16]; f16 d`; the 32 elements
/// of quarter q of half h take 4 bits of ql and 2 of qh; element e has the
/// scale scales[e / 16]; w = (f32(d) * f32(scale)) * f32(code - 32).
Value QuantDecoder::decodeQ6_K(Value row, Value u, int64_t e) {
  Value block = add(mul(row, idx(weight.k / 256)), u);
  Value base = mul(block, idx(210));
  int64_t h = e / 128, q = (e % 128) / 32, l = e % 32;
  Value ql = loadBytes(add(base, idx(64 * h + 32 * (q % 2) + l)), lanes);
  Value qh = loadBytes(add(base, idx(128 + 32 * h + l)), lanes);
  Value code = q6Codes(ql, qh, q);
  Value value = toF32(arith::SubIOp::create(b, loc, code, i8Splat(32)), true);
  Value scaleByte = memref::LoadOp::create(
      b, loc, bytes, ValueRange{add(base, idx(192 + e / 16))});
  Value scale = arith::MulFOp::create(
      b, loc, loadFloat(add(base, idx(208)), false),
      arith::SIToFPOp::create(b, loc, b.getF32Type(), scaleByte));
  return arith::MulFOp::create(b, loc, splat(scale), value);
}

std::pair<Value, Value> QuantDecoder::loadGroupParams(Value row, Value group) {
  QuantFormatAttr f = weight.format;
  Value i = add(mul(row, idx(weight.k / f.getGroup())), group);
  Value scale =
      loadFloat(add(idx(layout.scales), mul(i, idx(f.getScaleBytes()))),
                f.getScale().isF32());
  Value zero;
  if (f.hasZeroPoints())
    zero = arith::UIToFPOp::create(b, loc, b.getF32Type(),
                                   loadByte(add(idx(layout.zeroPoints), i)));
  return {scale, zero};
}

std::pair<Value, Value> QuantDecoder::loadLaneParams(Value row, Value k) {
  SmallVector<Value> scales, zeros;
  for (int64_t i = 0; i < lanes; ++i) {
    Value group = arith::DivUIOp::create(b, loc, add(k, idx(i)),
                                         idx(weight.format.getGroup()));
    auto [scale, zero] = loadGroupParams(row, group);
    scales.push_back(scale);
    if (zero)
      zeros.push_back(zero);
  }
  Value zero;
  if (!zeros.empty())
    zero = vector::FromElementsOp::create(b, loc, vecType, zeros);
  return {vector::FromElementsOp::create(b, loc, vecType, scales), zero};
}

/// The int schemes: codes (int8, uint8, or nibbles of 32-element chunks
/// as q4_0's) minus the zero point, times the group's scale.
Value QuantDecoder::decodeInt(Value row, Value u, int64_t e) {
  QuantFormatAttr f = weight.format;
  bool sym = !f.hasZeroPoints();
  Value k = add(mul(u, idx(32)), idx(e));
  Value value;
  if (f.getBits() == 8) {
    Value codes = loadBytes(add(mul(row, idx(weight.k)), k), lanes);
    value = toF32(codes, sym);
  } else {
    Value at =
        add(add(mul(row, idx(weight.k / 2)), mul(u, idx(16))), idx(e % 16));
    Value nibbles = loadNibbles(at, e >= 16);
    value = sym ? centredNibbles(nibbles) : toF32(nibbles, false);
  }
  int64_t group = f.getGroup();
  Value scale, zero;
  if (group == weight.k || group % lanes == 0) {
    auto [s, z] =
        loadGroupParams(row, arith::DivUIOp::create(b, loc, k, idx(group)));
    scale = splat(s);
    zero = z ? splat(z) : Value();
  } else {
    std::tie(scale, zero) = loadLaneParams(row, k);
  }
  if (zero)
    value = arith::SubFOp::create(b, loc, value, zero);
  return arith::MulFOp::create(b, loc, value, scale);
}

Value QuantDecoder::decodeVector(Value row, Value u, int64_t v) {
  int64_t e = v * lanes;
  switch (weight.format.getScheme()) {
  case QuantScheme::q8_0:
    return decodeQ8_0(row, u, e);
  case QuantScheme::q4_0:
    return decodeQ4_0(row, u, e);
  case QuantScheme::q4_k:
    return decodeQ4_K(row, u, e);
  case QuantScheme::q6_k:
    return decodeQ6_K(row, u, e);
  default:
    return decodeInt(row, u, e);
  }
}

int64_t QuantDecoder::getUnitBytes() const {
  QuantFormatAttr f = weight.format;
  if (f.isGguf())
    return f.getBlockBytes() * (unit / f.getGroup());
  return unit * f.getBits() / 8;
}

void QuantDecoder::prefetchUnits(Value row, Value u, int64_t count) {
  int64_t size = getUnitBytes();
  Value start = add(mul(row, idx(weight.k / unit * size)), mul(u, idx(size)));
  for (int64_t offset = 0; offset < count * size; offset += 64)
    memref::PrefetchOp::create(b, loc, bytes,
                               ValueRange{add(start, idx(offset))},
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
}

Value QuantDecoder::decodeScalar(Value row, Value k) {
  QuantFormatAttr f = weight.format;
  assert(f.getBits() == 8 && !f.isGguf() && "only int8 rows have a tail");
  Type f32 = b.getF32Type();
  Value code = memref::LoadOp::create(
      b, loc, bytes, ValueRange{add(mul(row, idx(weight.k)), k)});
  bool sym = !f.hasZeroPoints();
  Value value = sym ? arith::SIToFPOp::create(b, loc, f32, code).getResult()
                    : arith::UIToFPOp::create(b, loc, f32, code).getResult();
  auto [scale, zero] = loadGroupParams(
      row, arith::DivUIOp::create(b, loc, k, idx(f.getGroup())));
  if (zero)
    value = arith::SubFOp::create(b, loc, value, zero);
  return arith::MulFOp::create(b, loc, value, scale);
}

Value QuantDecoder::loadNibbles32(Value offset) {
  Value v = loadBytes(offset, 16);
  Value low = arith::AndIOp::create(b, loc, v, i8Splat(15, 16));
  Value high = arith::ShRUIOp::create(b, loc, v, i8Splat(4, 16));
  return vector::ShuffleOp::create(
      b, loc, low, high, llvm::to_vector(llvm::seq<int64_t>(0, 32)));
}

bool QuantDecoder::hasIntUnits(const QuantizedWeight &weight) {
  QuantFormatAttr f = weight.format;
  switch (f.getScheme()) {
  case QuantScheme::q8_0:
  case QuantScheme::q4_0:
    return true;
  case QuantScheme::q4_k:
  case QuantScheme::q6_k:
    return false;
  default:
    return f.getBits() == 4 ||
           (weight.k % 32 == 0 && f.getGroup() % 32 == 0);
  }
}

QuantDecoder::IntUnit QuantDecoder::decodeIntUnit(Value row, Value u) {
  assert(hasIntUnits(weight) && "a unit of 32 elements with one scale");
  QuantFormatAttr f = weight.format;
  Type i32 = b.getI32Type();
  auto i32Const = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
  };
  IntUnit unit;
  switch (f.getScheme()) {
  case QuantScheme::q8_0: {
    Value base = mul(add(mul(row, idx(weight.k / 32)), u), idx(34));
    unit.scale = loadFloat(base, false);
    unit.codes = flipSignBits(loadBytes(add(base, idx(2)), 32));
    unit.offset = i32Const(128);
    return unit;
  }
  case QuantScheme::q4_0: {
    Value base = mul(add(mul(row, idx(weight.k / 32)), u), idx(18));
    unit.scale = loadFloat(base, false);
    unit.codes = loadNibbles32(add(base, idx(2)));
    unit.offset = i32Const(8);
    return unit;
  }
  default:
    break;
  }
  Value k = mul(u, idx(32));
  Value i = add(mul(row, idx(weight.k / f.getGroup())),
                arith::DivUIOp::create(b, loc, k, idx(f.getGroup())));
  unit.scale =
      loadFloat(add(idx(layout.scales), mul(i, idx(f.getScaleBytes()))),
                f.getScale().isF32());
  bool sym = !f.hasZeroPoints();
  if (f.getBits() == 8) {
    Value codes = loadBytes(add(mul(row, idx(weight.k)), k), 32);
    unit.codes = sym ? flipSignBits(codes) : codes;
    unit.offset = sym ? i32Const(128) : loadByte(add(idx(layout.zeroPoints), i));
  } else {
    unit.codes =
        loadNibbles32(add(mul(row, idx(weight.k / 2)), mul(u, idx(16))));
    unit.offset = sym ? i32Const(8) : loadByte(add(idx(layout.zeroPoints), i));
  }
  return unit;
}

std::optional<int64_t>
QuantDecoder::getFixedIntOffset(const QuantizedWeight &weight) {
  if (!hasIntUnits(weight) || weight.format.hasZeroPoints())
    return std::nullopt;
  switch (weight.format.getScheme()) {
  case QuantScheme::q8_0:
    return 128;
  case QuantScheme::q4_0:
    return 8;
  default:
    return weight.format.getBits() == 8 ? 128 : 8;
  }
}

Value QuantDecoder::spreadNibbles64(Value a, Value b16) {
  // [a, a, b, b] in 128-bit lanes; the odd lanes' bytes shifted right by 4
  // as i16 (the bits a byte takes from its neighbour are masked off).
  SmallVector<int64_t> spread;
  for (int64_t half : {0, 16})
    for (int64_t copy = 0; copy < 2; ++copy)
      for (int64_t i = 0; i < 16; ++i)
        spread.push_back(half + i);
  Value v = vector::ShuffleOp::create(b, loc, a, b16, spread);
  auto i16Type = VectorType::get({32}, b.getI16Type());
  SmallVector<int16_t> shifts;
  for (int64_t lane = 0; lane < 4; ++lane)
    shifts.append(8, lane % 2 ? 4 : 0);
  Value shifted = arith::ShRUIOp::create(
      b, loc, vector::BitCastOp::create(b, loc, i16Type, v),
      arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(i16Type, ArrayRef<int16_t>(shifts))));
  auto type = VectorType::get({64}, b.getI8Type());
  return arith::AndIOp::create(
      b, loc, vector::BitCastOp::create(b, loc, type, shifted), i8Splat(15, 64));
}

Value QuantDecoder::loadScalePair(Value a, Value b8, bool f32) {
  Type ft = f32 ? Type(b.getF32Type()) : Type(b.getF16Type());
  auto eight = VectorType::get({8}, ft);
  auto splat = [&](Value offset) {
    Value raw = loadBytes(offset, f32 ? 4 : 2);
    Value one =
        vector::BitCastOp::create(b, loc, VectorType::get({1}, ft), raw);
    return vector::BroadcastOp::create(b, loc, eight, one).getResult();
  };
  Value first = splat(a), second = splat(b8);
  Value pair = vector::ShuffleOp::create(
      b, loc, first, second, llvm::to_vector(llvm::seq<int64_t>(0, 16)));
  if (f32)
    return pair;
  return arith::ExtFOp::create(b, loc, VectorType::get({16}, b.getF32Type()),
                               pair);
}

Value QuantDecoder::loadBytePair(Value a, Value b8) {
  auto eight = VectorType::get({8}, b.getI32Type());
  Value first = vector::BroadcastOp::create(b, loc, eight, loadByte(a));
  Value second = vector::BroadcastOp::create(b, loc, eight, loadByte(b8));
  return vector::ShuffleOp::create(b, loc, first, second,
                                   llvm::to_vector(llvm::seq<int64_t>(0, 16)));
}

bool QuantDecoder::hasIntPairs(const QuantizedWeight &weight) {
  return hasIntUnits(weight) && weight.k / 32 % 2 == 0;
}

QuantDecoder::IntPair QuantDecoder::decodeIntPair(Value row, Value u) {
  assert(hasIntPairs(weight) && "whole pairs of units of 32 with one scale");
  QuantFormatAttr f = weight.format;
  IntPair pair;
  switch (f.getScheme()) {
  case QuantScheme::q8_0: {
    Value base = mul(add(mul(row, idx(weight.k / 32)), u), idx(34));
    Value next = add(base, idx(34));
    pair.scales = loadScalePair(base, next, false);
    Value first = loadBytes(add(base, idx(2)), 32);
    Value second = loadBytes(add(next, idx(2)), 32);
    pair.codes = flipSignBits(concat(first, second));
    return pair;
  }
  case QuantScheme::q4_0: {
    Value base = mul(add(mul(row, idx(weight.k / 32)), u), idx(18));
    Value next = add(base, idx(18));
    pair.scales = loadScalePair(base, next, false);
    Value first = loadBytes(add(base, idx(2)), 16);
    Value second = loadBytes(add(next, idx(2)), 16);
    pair.codes = spreadNibbles64(first, second);
    return pair;
  }
  default:
    break;
  }
  Value k = mul(u, idx(32));
  // The index of the group of element kk of the row.
  auto groupAt = [&](Value kk) {
    return add(mul(row, idx(weight.k / f.getGroup())),
               arith::DivUIOp::create(b, loc, kk, idx(f.getGroup())));
  };
  auto scaleAt = [&](Value kk) {
    return add(idx(layout.scales), mul(groupAt(kk), idx(f.getScaleBytes())));
  };
  Value next = add(k, idx(32));
  pair.scales = loadScalePair(scaleAt(k), scaleAt(next), f.getScale().isF32());
  bool sym = !f.hasZeroPoints();
  if (!sym)
    pair.zeroPoints = loadBytePair(add(idx(layout.zeroPoints), groupAt(k)),
                                   add(idx(layout.zeroPoints), groupAt(next)));
  if (f.getBits() == 8) {
    Value codes = loadBytes(add(mul(row, idx(weight.k)), k), 64);
    pair.codes = sym ? flipSignBits(codes) : codes;
  } else {
    Value v = loadBytes(add(mul(row, idx(weight.k / 2)), mul(u, idx(16))), 32);
    auto half = [&](int64_t start) {
      return vector::ShuffleOp::create(
                 b, loc, v, v, llvm::to_vector(llvm::seq<int64_t>(start, start + 16)))
          .getResult();
    };
    pair.codes = spreadNibbles64(half(0), half(16));
  }
  return pair;
}

bool QuantDecoder::hasIntQuads(const QuantizedWeight &weight) {
  QuantFormatAttr f = weight.format;
  return !f.isGguf() && f.getBits() == 4 && !f.hasZeroPoints() &&
         weight.k % 128 == 0 && f.getGroup() % 128 == 0;
}

QuantDecoder::IntQuad QuantDecoder::decodeIntQuad(Value row, Value q) {
  assert(hasIntQuads(weight) && "4-bit codes of one scale per 128");
  QuantFormatAttr f = weight.format;
  IntQuad quad;
  // A row's codes are k / 2 bytes, 16 per unit: a quad's are 64.
  Value v = loadBytes(add(mul(row, idx(weight.k / 2)), mul(q, idx(64))), 64);
  quad.low = arith::AndIOp::create(b, loc, v, i8Splat(15, 64));
  quad.high = arith::ShRUIOp::create(b, loc, v, i8Splat(4, 64));
  Value group = arith::DivUIOp::create(b, loc, mul(q, idx(128)),
                                       idx(f.getGroup()));
  Value i = add(mul(row, idx(weight.k / f.getGroup())), group);
  quad.scale =
      loadFloat(add(idx(layout.scales), mul(i, idx(f.getScaleBytes()))),
                f.getScale().isF32());
  return quad;
}

QuantDecoder::IntPair QuantDecoder::decodeQ6Groups(Value row, Value sb,
                                                  int64_t g, int64_t count) {
  assert(weight.format.getScheme() == QuantScheme::q6_k && g % count == 0 &&
         g / 4 == (g + count - 1) / 4 && "groups of one half");
  Value base = mul(add(mul(row, idx(weight.k / 256)), sb), idx(210));
  Value d = loadFloat(add(base, idx(208)), false);
  int64_t h = g / 4;
  Value qh = loadBytes(add(base, idx(128 + 32 * h)), 32);
  SmallVector<Value> codes, scales;
  for (int64_t i = 0; i < count; ++i) {
    int64_t q = (g + i) % 4;
    Value ql = loadBytes(add(base, idx(64 * h + 32 * (q % 2))), 32);
    codes.push_back(q6Codes(ql, qh, q));
    // The two sub-block scales of the group, each over 4 i32 lanes.
    Value pair = loadBytes(add(base, idx(192 + 8 * h + 2 * q)), 2);
    Value f = arith::SIToFPOp::create(
        b, loc, VectorType::get({2}, b.getF32Type()), pair);
    f = arith::MulFOp::create(
        b, loc,
        vector::BroadcastOp::create(b, loc, VectorType::get({2}, b.getF32Type()),
                                    d),
        f);
    scales.push_back(vector::ShuffleOp::create(
        b, loc, f, f, ArrayRef<int64_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  }
  if (count == 1)
    return {codes[0], scales[0]};
  return {concat(codes[0], codes[1]), concat(scales[0], scales[1])};
}

std::pair<Value, Value> QuantDecoder::decodeQ4KScales(Value row, Value sb) {
  assert(weight.format.getScheme() == QuantScheme::q4_k && "a q4_k weight");
  Value base = getQ4KBase(row, sb);
  // The 12 bytes of 6-bit values (bytes 4-15) and 4 bytes of codes after
  // them, which the shuffles leave out.
  Value raw = loadBytes(add(base, idx(4)), 16);
  auto i32x8 = VectorType::get({8}, b.getI32Type());
  auto pick = [&](ArrayRef<int64_t> lanes) {
    Value v = vector::ShuffleOp::create(b, loc, raw, raw, lanes);
    return arith::ExtUIOp::create(b, loc, i32x8, v).getResult();
  };
  auto constant = [&](ArrayRef<int32_t> values) {
    return arith::ConstantOp::create(
               b, loc, DenseElementsAttr::get(i32x8, values))
        .getResult();
  };
  auto splat32 = [&](int32_t v) {
    return constant({v, v, v, v, v, v, v, v});
  };
  // Sub-block j < 4: scale = byte j & 63, min = byte j + 4 & 63. j >= 4:
  // scale = (byte j + 4 & 15) | (byte j - 4 >> 6) << 4, min = (byte j + 4
  // >> 4) | (byte j >> 6) << 4.
  Value low = pick({0, 1, 2, 3, 8, 9, 10, 11});
  Value lowMins = pick({4, 5, 6, 7, 8, 9, 10, 11});
  Value highScales = pick({0, 0, 0, 0, 0, 1, 2, 3});
  Value highMins = pick({4, 4, 4, 4, 4, 5, 6, 7});
  Value lowMask = constant({63, 63, 63, 63, 15, 15, 15, 15});
  Value highMask = constant({0, 0, 0, 0, 48, 48, 48, 48});
  auto top = [&](Value x) {
    Value bits = arith::ShLIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, x, splat32(6)), splat32(4));
    return arith::AndIOp::create(b, loc, bits, highMask).getResult();
  };
  Value sc = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, low, lowMask), top(highScales));
  Value shifted = arith::ShRUIOp::create(b, loc, lowMins,
                                         constant({0, 0, 0, 0, 4, 4, 4, 4}));
  Value m = arith::OrIOp::create(
      b, loc, arith::AndIOp::create(b, loc, shifted, lowMask), top(highMins));
  auto f8 = VectorType::get({8}, b.getF32Type());
  auto scaled = [&](Value codes, Value factor) {
    return arith::MulFOp::create(
        b, loc, vector::BroadcastOp::create(b, loc, f8, factor),
        arith::UIToFPOp::create(b, loc, f8, codes));
  };
  return {scaled(sc, loadFloat(base, false)),
          scaled(m, loadFloat(add(base, idx(2)), false))};
}

Value QuantDecoder::decodeQ4KCodes(Value row, Value sb, int64_t g,
                                   int64_t count) {
  assert(weight.format.getScheme() == QuantScheme::q4_k && g % count == 0 &&
         "one sub-block, or the pair of one 32 bytes of codes");
  Value qs = loadBytes(add(getQ4KBase(row, sb), idx(16 + 32 * (g / 2))), 32);
  SmallVector<Value> codes;
  for (int64_t s = g; s < g + count; ++s)
    codes.push_back(
        s % 2 ? Value(arith::ShRUIOp::create(b, loc, qs, i8Splat(4, 32)))
              : Value(arith::AndIOp::create(b, loc, qs, i8Splat(15, 32))));
  return count == 1 ? codes[0] : concat(codes[0], codes[1]);
}

QuantDecoder::IntPair
QuantDecoder::decodeQ4KGroups(Value row, Value sb, int64_t g, int64_t count,
                              Value scales8) {
  // Each sub-block's scale over its 8 lanes.
  SmallVector<int64_t> lanes;
  for (int64_t s = g; s < g + count; ++s)
    lanes.append(8, s);
  Value scales = vector::ShuffleOp::create(b, loc, scales8, scales8, lanes);
  return {decodeQ4KCodes(row, sb, g, count), scales, nullptr};
}

//===----------------------------------------------------------------------===//
// packQuantizedBlock
//===----------------------------------------------------------------------===//

namespace {
/// The GEMM's pack of a k block of a quantized rhs (see the header).
struct QuantPanelPack {
  OpBuilder &b;
  Location loc;
  const QuantizedWeight &weight;
  QuantDecoder decoder;
  Value pack, n0, k0, depth, cols;
  int64_t lanes;

  Value idx(int64_t v) { return indexConstant(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }

  /// Columns c0 .. c0 + lanes of the panel (weight rows n0 + c0 + r): unit
  /// by unit, `lanes` rows decoded and transposed in registers. In a
  /// `partial` group the rows past `cols` are read clamped to the last
  /// weight row and replaced by zeros.
  void packGroup(Value c0, bool partial, Value wholeUnits) {
    int64_t unit = decoder.getUnitElements();
    Value zero = createFloatConstantOfType(
        b, loc, VectorType::get({lanes}, b.getF32Type()), 0.0);
    Value firstUnit = arith::DivUIOp::create(b, loc, k0, idx(unit));
    Value rest = arith::SubIOp::create(b, loc, cols, c0);
    buildForLoop(b, loc, idx(0), wholeUnits, idx(1), [&](Value uu) {
      Value u = add(firstUnit, uu);
      for (int64_t v = 0; v < decoder.getVectorsPerUnit(); ++v) {
        SmallVector<Value> rows;
        for (int64_t r = 0; r < lanes; ++r) {
          Value row = add(add(n0, c0), idx(r));
          if (partial)
            row = arith::MinUIOp::create(b, loc, row, idx(weight.n - 1));
          Value vec = decoder.decodeVector(row, u, v);
          if (partial)
            vec = arith::SelectOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, idx(r),
                                      rest),
                vec, zero);
          rows.push_back(vec);
        }
        rows = transposeInRegisters(b, loc, rows);
        Value j0 =
            add(arith::MulIOp::create(b, loc, uu, idx(unit)), idx(v * lanes));
        for (int64_t r = 0; r < lanes; ++r)
          vector::StoreOp::create(b, loc, rows[r], pack,
                                  ValueRange{add(j0, idx(r)), c0});
      }
    });
  }

  /// The elements of the block past its whole units (the end of an int8
  /// row of K not a multiple of 32), one by one.
  void packTail(Value from, Value paddedCols) {
    Value c1 = idx(1);
    Value zero = createFloatConstant(b, loc, b.getF32Type(), 0.0);
    buildForLoop(b, loc, from, depth, c1, [&](Value j) {
      buildForLoop(b, loc, idx(0), cols, c1, [&](Value c) {
        Value w = decoder.decodeScalar(add(n0, c), add(k0, j));
        memref::StoreOp::create(b, loc, w, pack, ValueRange{j, c});
      });
      buildForLoop(b, loc, cols, paddedCols, c1, [&](Value c) {
        memref::StoreOp::create(b, loc, zero, pack, ValueRange{j, c});
      });
    });
  }
};
} // namespace

BlockView cpu::packQuantizedBlock(OpBuilder &b, Location loc,
                                  const QuantizedWeight &weight, Value bytes,
                                  Value pack, VectorType vecType, Value n0,
                                  Value k0, Value depth, Value cols,
                                  Value paddedCols) {
  int64_t lanes = vecType.getNumElements();
  assert(vecType.getElementType().isF32() && "panels of f32");
  QuantPanelPack p{
      b,    loc,  weight, QuantDecoder(b, loc, weight, bytes, lanes),
      pack, n0,   k0,     depth,
      cols, lanes};
  int64_t unit = p.decoder.getUnitElements();
  Value wholeUnits = arith::DivUIOp::create(b, loc, depth, p.idx(unit));
  Value step = p.idx(lanes);
  Value fullCols = arith::SubIOp::create(
      b, loc, cols, arith::RemUIOp::create(b, loc, cols, step));
  buildForLoop(b, loc, p.idx(0), fullCols, step,
               [&](Value c0) { p.packGroup(c0, false, wholeUnits); });
  Value partial =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, fullCols, cols);
  scf::IfOp::create(b, loc, partial, [&](OpBuilder &, Location) {
    p.packGroup(fullCols, true, wholeUnits);
    scf::YieldOp::create(b, loc);
  });
  if (weight.k % unit)
    p.packTail(arith::MulIOp::create(b, loc, wholeUnits, p.idx(unit)),
               paddedCols);
  return BlockView{pack, {}, p.idx(0), nullptr};
}
