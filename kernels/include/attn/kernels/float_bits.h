//===- float_bits.h - f32 <-> f16/bf16 bit conversions ----------*- C++ -*-===//
//
// Bit-exact IEEE conversions between f32 and the bits of f16 and bf16, round
// to nearest even, NaNs made quiet. Host code only: the kernel library
// rounds masked values with them and the kernel tests build their inputs and
// reference with them (the device code uses the CUDA intrinsics, and
// tests/test_abi_validation.cpp compares the two), and attn-run reads and
// writes f16/bf16 tensors with them. Plain C++: no CUDA and no LLVM headers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_KERNELS_FLOAT_BITS_H
#define ATTN_KERNELS_FLOAT_BITS_H

#include <cstdint>
#include <cstring>

namespace attn {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t f32_to_bf16_bits(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7FC0u);  // NaN
  u += 0x7FFFu + ((u >> 16) & 1u);  // RNE; overflow carries into the exponent -> inf
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_bits_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

inline uint16_t f32_to_f16_bits(float f) {
  uint32_t x = f32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7FFFFFFFu;
  if (x >= 0x7F800000u) return static_cast<uint16_t>(sign | (x > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (x >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {                                             // below 2^-14: f16 subnormal or 0
    if (x < 0x33000000u) return static_cast<uint16_t>(sign);         // < 2^-25 (2^-25 ties to 0 below)
    const uint32_t mant = (x & 0x7FFFFFu) | 0x800000u;
    const int exp = static_cast<int>(x >> 23);  // 102..112
    const int shift = 126 - exp;                // value / 2^-24 = mant >> shift
    uint32_t r = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = (x >> 13) - (112u << 10);  // rebias exponent 127 -> 15, keep 10 mantissa bits
  const uint32_t rem = x & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

inline float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1Fu) return bits_f32(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_f32(sign);
    // subnormal: mant * 2^-24
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

}  // namespace attn

#endif  // ATTN_KERNELS_FLOAT_BITS_H
