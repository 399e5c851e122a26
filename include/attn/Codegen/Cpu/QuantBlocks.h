//===- QuantBlocks.h - dequantizing quantized weights in registers --------===//
//
// The microkernels of attn.quantized_matmul: reading a quantized [N, K]
// weight (docs/quantization.md, #attn.quant) from its bytes into f32
// vectors in registers, never into a float copy of the weight. The decode
// GEMV streams a row's blocks through QuantDecoder and multiplies them as
// they come; the prefill GEMM dequantizes one k block of rows at a time
// into its packed panel (packQuantizedBlock, the GEMM's pack step for a
// quantized rhs).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_QUANTBLOCKS_H
#define ATTN_CODEGEN_CPU_QUANTBLOCKS_H

#include "attn/Codegen/Cpu/RegisterTile.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::attn::cpu {

/// A quantized [n, k] weight (nn.Linear's layout: n rows of k elements
/// along the contraction) in `format`; k is a multiple of the format's
/// group (attn.quantized_matmul's verifier).
struct QuantizedWeight {
  QuantFormatAttr format;
  int64_t n = 0, k = 0;
};

/// The largest unit (QuantDecoder::getUnitElements) of any format: a
/// k-quant super-block. A k block of the GEMM is a multiple of it.
constexpr int64_t kMaxQuantUnit = 256;

/// Emits the dequantization of a weight's bytes, `bytes` (a 1-D i8 buffer
/// of the layout's size), into vectors of `lanes` f32 (lanes 4, 8 or 16).
/// A row is read in units: a GGUF block (32 elements; a k-quant's
/// super-block of 256) or a chunk of 32 codes of the int schemes; each unit
/// is unit / lanes vectors, each of whose scale, zero point or min is
/// loaded with it (LLVM keeps one load per unit). int8 rows of K not a
/// multiple of 32 end with K % 32 elements read one by one
/// (decodeScalar). Every value is the exact dequantized weight of
/// docs/quantization.md (the products rounded to f32 as written there).
class QuantDecoder {
public:
  QuantDecoder(OpBuilder &b, Location loc, const QuantizedWeight &weight,
               Value bytes, int64_t lanes);

  /// Elements per unit: 32, or 256 for q4_k and q6_k.
  int64_t getUnitElements() const { return unit; }
  /// Whole units per row (K / unit, rounded down).
  int64_t getWholeUnits() const { return weight.k / unit; }
  /// The vectors of a unit.
  int64_t getVectorsPerUnit() const { return unit / lanes; }
  /// W[row, u * unit + v * lanes + i] for i < lanes as vector<lanes x f32>
  /// (`row` and `u` index values, v < getVectorsPerUnit()).
  Value decodeVector(Value row, Value u, int64_t v);
  /// W[row, k] as an f32 scalar, for the elements past the whole units
  /// (int8 schemes only: the others have none).
  Value decodeScalar(Value row, Value k);
  /// The bytes of one unit of a row's codes (GGUF: its blocks, scales
  /// included).
  int64_t getUnitBytes() const;
  /// Prefetches (into L2) the codes of units u .. u + count of `row`, one
  /// prefetch per 64 bytes.
  void prefetchUnits(Value row, Value u, int64_t count);

  /// A unit of 32 elements as integers, for the integer dot products of
  /// the GEMV with int8 activations: W[row, 32u + j] = f32(codes[j] -
  /// offset) * scale exactly, with `codes` a vector<32xi8> of unsigned
  /// codes in element order, `offset` an i32 and `scale` an f32. Signed
  /// int8 codes (q8_0, int8_sym) come with their sign bit flipped (c + 128)
  /// and offset 128; 4-bit codes with offset 8 (q4_0, int4_sym) or their
  /// group's zero point (int4_asym), as int8_asym's 8-bit codes.
  struct IntUnit {
    Value codes, offset, scale;
  };
  IntUnit decodeIntUnit(Value row, Value u);
  /// Whether decodeIntUnit reads `weight`: q8_0, q4_0, the int4 schemes,
  /// and the int8 schemes whose K and group are multiples of 32 (one scale
  /// per unit, no tail).
  static bool hasIntUnits(const QuantizedWeight &weight);
  /// The offset of decodeIntUnit's codes where it is the same for every
  /// unit (q8_0 and int8_sym 128, q4_0 and int4_sym 8), else none (the
  /// asymmetric schemes' zero points).
  static std::optional<int64_t> getFixedIntOffset(const QuantizedWeight &weight);
  /// The int schemes' scale and zero point (f32; null without one) of row
  /// `row`, group `group`.
  std::pair<Value, Value> loadGroupParams(Value row, Value group);
  /// Whether decodeIntPair reads `weight`: hasIntUnits and an even number
  /// of units per row.
  static bool hasIntPairs(const QuantizedWeight &weight);

  /// Units u and u + 1 of a row as one wide step of the integer dots (a
  /// weight with getFixedIntOffset or zero points, hasIntUnits): `codes`
  /// is vector<64xi8>, unit u's 32 codes of decodeIntUnit then unit u +
  /// 1's; `scales` is vector<16xf32>, unit u's scale in lanes 0-7 and unit
  /// u + 1's in lanes 8-15 (the i32 lanes of vpdpbusd on zmm that each
  /// unit's codes reach); `zeroPoints` (asymmetric schemes only, else
  /// null) is vector<16xi32>, the two units' zero points in the same lanes.
  struct IntPair {
    Value codes, scales, zeroPoints;
  };
  IntPair decodeIntPair(Value row, Value u);

  /// Units 4q .. 4q + 3 of a row as one step of two wide integer dots (a
  /// weight with hasIntQuads: 4-bit codes of offset 8 and one scale over
  /// the 128 elements): the row's 64 bytes of codes read at once, `low`
  /// their low nibbles (vector<64xi8>: unit j's elements 0-15 at bytes
  /// 16j .. 16j + 15) and `high` their high nibbles (unit j's elements
  /// 16-31 at the same bytes), `scale` the group's scale (f32).
  struct IntQuad {
    Value low, high, scale;
  };
  IntQuad decodeIntQuad(Value row, Value q);
  /// Whether decodeIntQuad reads `weight`: int4_sym with K and the group
  /// multiples of 128 (the 4 units of a step share one scale).
  static bool hasIntQuads(const QuantizedWeight &weight);

  /// q6_k's 32-element groups g .. g + count of super-block `sb` of a row
  /// (g static, count 1 or 2 within one half of the super-block) for the
  /// integer dots: `codes` is vector<32 count x i8> of the 6-bit codes
  /// (0..63, offset 32) in element order; `scales` vector<8 count x f32>,
  /// each i32 lane's scale f32(d) * f32(scales[e / 16]) of the 16
  /// elements its 4 codes are among.
  IntPair decodeQ6Groups(Value row, Value sb, int64_t g, int64_t count);
  /// q4_k's 8 sub-block scales f32(d) * sc and mins f32(dmin) * m of
  /// super-block `sb` of a row, each vector<8xf32>: the 12 bytes of 6-bit
  /// values decoded together with vector shuffles and shifts.
  std::pair<Value, Value> decodeQ4KScales(Value row, Value sb);
  /// q4_k's sub-blocks g .. g + count of super-block `sb` (g static, count
  /// 1, or 2 with g even: the two sub-blocks of one 32 bytes of codes):
  /// `codes` vector<32 count x i8> of the 4-bit codes (0..15, no offset),
  /// `scales` vector<8 count x f32> each sub-block's f32(d) * sc over its
  /// 8 lanes, from `scales8`, the first of decodeQ4KScales of the same row
  /// and super-block (W = scale * code - min, the mins its second).
  IntPair decodeQ4KGroups(Value row, Value sb, int64_t g, int64_t count,
                          Value scales8);
  /// The codes of decodeQ4KGroups alone.
  Value decodeQ4KCodes(Value row, Value sb, int64_t g, int64_t count);

private:
  Value idx(int64_t v);
  Value add(Value x, Value y);
  Value mul(Value x, Value y);
  /// `count` bytes at `offset` as vector<count x i8> (or one i8 for 1).
  Value loadBytes(Value offset, int64_t count);
  /// The f16 (or, with `f32`, f32) little-endian value at `offset`, as f32.
  Value loadFloat(Value offset, bool f32);
  /// The byte at `offset` as an unsigned i32.
  Value loadByte(Value offset);
  /// `lanes` nibbles from `count` bytes at `offset`, low or high, as i8 in
  /// 0..15.
  Value loadNibbles(Value offset, bool high);
  Value splat(Value scalar);
  Value i8Splat(int64_t v) { return i8Splat(v, lanes); }
  /// vector<count x i8> of `v`.
  Value i8Splat(int64_t v, int64_t count);
  /// x and y (vectors of one type) as one vector of twice the elements.
  Value concat(Value x, Value y);
  /// Signed int8 codes with their sign bit flipped (c + 128, unsigned).
  Value flipSignBits(Value codes);
  /// q6_k's 6-bit codes of quarter q of a half: 4 bits of `ql` (low
  /// nibbles for q < 2, else high) and 2 of `qh` (bits 2q, 2q + 1), any
  /// vector width.
  Value q6Codes(Value ql, Value qh, int64_t q);
  /// f32 of an i8 vector, signed or unsigned.
  Value toF32(Value codes, bool isSigned);
  /// f32(u - 8) for a vector of 4-bit codes u (i8 in 0..15).
  Value centredNibbles(Value nibbles);
  /// The 32 nibbles of 16 bytes at `offset` in q4_0's element order (low
  /// nibbles, then high nibbles) as vector<32xi8> in 0..15.
  Value loadNibbles32(Value offset);
  /// loadNibbles32 of two units' 16 bytes, `a` and `b` (vector<16xi8>),
  /// as one vector<64xi8>: each 16 bytes spread over two 128-bit lanes,
  /// the second shifted right by 4, then the low nibbles kept.
  Value spreadNibbles64(Value a, Value b);
  /// The scales at `a` and `b` (f16, or f32 with `f32`) as vector<16xf32>:
  /// a's in lanes 0-7, b's in lanes 8-15.
  Value loadScalePair(Value a, Value b, bool f32);
  /// The bytes at `a` and `b` as vector<16xi32>: a's in lanes 0-7, b's in
  /// lanes 8-15.
  Value loadBytePair(Value a, Value b);

  Value decodeQ8_0(Value row, Value u, int64_t e);
  Value decodeQ4_0(Value row, Value u, int64_t e);
  Value decodeQ4_K(Value row, Value u, int64_t e);
  /// The first byte of q4_k super-block `sb` of a row.
  Value getQ4KBase(Value row, Value sb);
  Value decodeQ6_K(Value row, Value u, int64_t e);
  Value decodeInt(Value row, Value u, int64_t e);
  /// The int8 schemes' per-lane scales and zero points of the vector at
  /// element `k` of `row` where its lanes span groups.
  std::pair<Value, Value> loadLaneParams(Value row, Value k);

  OpBuilder &b;
  Location loc;
  QuantizedWeight weight;
  Value bytes;
  int64_t lanes, unit;
  QuantFormatAttr::Layout layout;
  VectorType vecType;
};

/// The GEMM's pack step for a quantized rhs (GemmOperands::quantizedRhs):
/// pack[j, c] = W[n0 + c, k0 + j] for j < depth, c < cols, dequantized
/// from `bytes`, and pack[j, c] = 0 for cols <= c < paddedCols (a multiple
/// of the vector's lanes). k0 is a multiple of kMaxQuantUnit and depth one
/// too unless the block ends the row. Groups of `lanes` rows are decoded
/// a unit at a time and transposed in registers. Returns the view of the
/// packed block.
BlockView packQuantizedBlock(OpBuilder &b, Location loc,
                             const QuantizedWeight &weight, Value bytes,
                             Value pack, VectorType vecType, Value n0, Value k0,
                             Value depth, Value cols, Value paddedCols);

} // namespace mlir::attn::cpu

#endif // ATTN_CODEGEN_CPU_QUANTBLOCKS_H
