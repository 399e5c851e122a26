// Internal: score modifiers, the kernel side of attn.sdpa's `score_mod`
// region, and the scalar helpers that generated modifiers are written in.
//
// A modifier is a type with
//   static constexpr bool kIdentity;
//   template <class Ops>
//   static float apply(const FwdParams& p, float s, int b, int h, int i, int j);
// mapping the scaled score s = q.k * scale of query i / key j of query head
// h, batch b (natural units, as the op's contract defines the region) to the
// modified score; masks, causal and the window apply afterwards. It reads
// the region's extra operands from p.mods (mod_load_*). NoScoreMod is the
// attribute form and compiles to exactly the unmodified code. Modifiers are
// generated from regions by `attn-lower-sdpa-to-cuda`
// (lib/Conversion/AttnToCuda/ScoreModToCuda.cpp) in the helpers below, which
// compute each op as the CPU lowering does: IEEE operations rounded to
// nearest even and never contracted into an FMA (nvcc contracts a * b + c
// by default), f16/bf16 values held in a float and rounded after each op,
// NaN-propagating maximumf/minimumf, integers as two's complement bit
// patterns in uint64_t (the low `w` bits), wrapping as arith's do.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "fwd_params.h"
#include "kernel_common.h"

namespace attn {
namespace detail {

struct NoScoreMod {
  static constexpr bool kIdentity = true;
  template <class Ops>
  ATTN_HD static float apply(const FwdParams&, float s, int, int, int, int) { return s; }
};

// The score of one pair in the log2 domain the kernels work in. The kernels
// also score padding rows and keys (i >= L, j >= S), which they discard; a
// modifier is not called for them, so it never reads its tensors out of range.
// A finite modified score stays finite in the log2 domain: beyond
// +-FLT_MAX / log2(e) (e.g. Hugging Face's finfo(f32).min fill) it is clamped
// to +-FLT_MAX, as the masked value is, so a row of such scores averages v
// as on the CPU instead of turning into -inf (a NaN row).
template <class Ops, class Mod>
ATTN_DEV float modified_score_log2(const FwdParams& p, float qk, int b, int h, int i, int j) {
  if constexpr (Mod::kIdentity) {
    return qk * p.scale_log2;
  } else {
    constexpr float kFltMax = 3.40282346638528859812e+38f;
    if (i >= p.L || j >= p.S) return -INFINITY;
    const float x = Mod::template apply<Ops>(p, qk * p.scale, b, h, i, j);
    const float y = x * kLog2e;
    if (y > kFltMax && x <= kFltMax) return kFltMax;     // x finite, y overflowed
    if (y < -kFltMax && x >= -kFltMax) return -kFltMax;
    return y;
  }
}

namespace mod {

// ---- constants, by their bit patterns (exact, inf and NaN included) -------
ATTN_DEV float f32(uint32_t u) { return bit_cast_f32(u); }
ATTN_DEV double f64(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, 8);
  return d;
#endif
}

// ---- extra operands -------------------------------------------------------
ATTN_HD int64_t offset(const ModTensor& t, int b, int h, int i, int j) {
  return b * t.sb + h * t.sh + static_cast<int64_t>(i) * t.sl + static_cast<int64_t>(j) * t.ss;
}
template <class Ops>
ATTN_DEV float load_f32(const FwdParams& p, int t, int b, int h, int i, int j) {
  return Ops::ld_f32(static_cast<const float*>(p.mods[t].data) + offset(p.mods[t], b, h, i, j));
}
template <class Ops, bool kBF16>
ATTN_DEV float load_16(const FwdParams& p, int t, int b, int h, int i, int j) {
  return Ops::template to_float<kBF16>(
      Ops::ld_u16(static_cast<const uint16_t*>(p.mods[t].data) + offset(p.mods[t], b, h, i, j)));
}
template <class Ops>
ATTN_DEV uint64_t load_i1(const FwdParams& p, int t, int b, int h, int i, int j) {
  return Ops::ld_u8(static_cast<const uint8_t*>(p.mods[t].data) + offset(p.mods[t], b, h, i, j)) != 0 ? 1u : 0u;
}

// ---- f16 / bf16: values held in a float, rounded to nearest even ----------
template <class Ops, bool kBF16>
ATTN_DEV float round16(float x) {
  return Ops::template to_float<kBF16>(static_cast<uint16_t>(Ops::template pack2<kBF16>(x, 0.f) & 0xFFFFu));
}

// ---- IEEE arithmetic, rounded once, never contracted ----------------------
// On the device the _rn intrinsics (nvcc never fuses them); on the host (the
// emulator) each result goes through a volatile, which no compiler fuses.
#if defined(__CUDA_ARCH__)
#define ATTN_MOD_OP(dev, host) return dev
#else
#define ATTN_MOD_OP(dev, host) \
  volatile auto r_ = host;     \
  return r_
#endif
ATTN_DEV float add(float a, float b) { ATTN_MOD_OP(__fadd_rn(a, b), a + b); }
ATTN_DEV float sub(float a, float b) { ATTN_MOD_OP(__fsub_rn(a, b), a - b); }
ATTN_DEV float mul(float a, float b) { ATTN_MOD_OP(__fmul_rn(a, b), a * b); }
ATTN_DEV float div(float a, float b) { ATTN_MOD_OP(__fdiv_rn(a, b), a / b); }
ATTN_DEV float sqrt(float a) { ATTN_MOD_OP(__fsqrt_rn(a), std::sqrt(a)); }
ATTN_DEV float fma(float a, float b, float c) { ATTN_MOD_OP(__fmaf_rn(a, b, c), std::fma(a, b, c)); }
ATTN_DEV double add(double a, double b) { ATTN_MOD_OP(__dadd_rn(a, b), a + b); }
ATTN_DEV double sub(double a, double b) { ATTN_MOD_OP(__dsub_rn(a, b), a - b); }
ATTN_DEV double mul(double a, double b) { ATTN_MOD_OP(__dmul_rn(a, b), a * b); }
ATTN_DEV double div(double a, double b) { ATTN_MOD_OP(__ddiv_rn(a, b), a / b); }
ATTN_DEV double sqrt(double a) { ATTN_MOD_OP(__dsqrt_rn(a), std::sqrt(a)); }
ATTN_DEV double fma(double a, double b, double c) { ATTN_MOD_OP(__fma_rn(a, b, c), std::fma(a, b, c)); }
#undef ATTN_MOD_OP
template <class T> ATTN_DEV T rsqrt(T a) { return div(T(1), sqrt(a)); }  // as arith-expand-ops writes it

// arith.maximumf / minimumf: a NaN operand gives NaN, -0 < +0 (for equal
// operands only zeros can differ, in their sign: 1 / -0 = -inf).
template <class T> ATTN_DEV T maximum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return (a == T(0) && div(T(1), a) < T(0)) ? b : a;
  return a > b ? a : b;
}
template <class T> ATTN_DEV T minimum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return (a == T(0) && div(T(1), a) < T(0)) ? a : b;
  return a < b ? a : b;
}
// arith.maxnumf / minnumf: a NaN operand gives the other one.
template <class T> ATTN_DEV T maxnum(T a, T b) { return a != a ? b : b != b ? a : (a > b ? a : b); }
template <class T> ATTN_DEV T minnum(T a, T b) { return a != a ? b : b != b ? a : (a < b ? a : b); }

// ---- integers: the low w bits of a uint64_t -------------------------------
ATTN_HD uint64_t bits(uint64_t v, int w) { return w >= 64 ? v : (v & ((uint64_t{1} << w) - 1)); }
ATTN_HD int64_t sext(uint64_t v, int w) {
  if (w >= 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (w - 1);
  return static_cast<int64_t>((bits(v, w) ^ sign) - sign);
}
// Division by zero (and INT_MIN / -1) is undefined in arith; these give 0 /
// the wrapped value instead of trapping.
ATTN_HD uint64_t divsi(uint64_t a, uint64_t b, int w) {
  const int64_t x = sext(a, w), y = sext(b, w);
  if (y == 0) return 0;
  if (y == -1) return bits(uint64_t{0} - static_cast<uint64_t>(x), w);
  return bits(static_cast<uint64_t>(x / y), w);
}
ATTN_HD uint64_t remsi(uint64_t a, uint64_t b, int w) {
  const int64_t x = sext(a, w), y = sext(b, w);
  if (y == 0 || y == -1) return 0;
  return bits(static_cast<uint64_t>(x % y), w);
}
ATTN_HD uint64_t divui(uint64_t a, uint64_t b, int w) { return bits(b, w) == 0 ? 0 : bits(a, w) / bits(b, w); }
ATTN_HD uint64_t remui(uint64_t a, uint64_t b, int w) { return bits(b, w) == 0 ? 0 : bits(a, w) % bits(b, w); }
ATTN_HD uint64_t floordivsi(uint64_t a, uint64_t b, int w) {
  const int64_t x = sext(a, w), y = sext(b, w);
  if (y == 0) return 0;
  if (y == -1) return bits(uint64_t{0} - static_cast<uint64_t>(x), w);
  const int64_t q = x / y;
  return bits(static_cast<uint64_t>((x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q), w);
}
ATTN_HD uint64_t ceildivsi(uint64_t a, uint64_t b, int w) {
  const int64_t x = sext(a, w), y = sext(b, w);
  if (y == 0) return 0;
  if (y == -1) return bits(uint64_t{0} - static_cast<uint64_t>(x), w);
  const int64_t q = x / y;
  return bits(static_cast<uint64_t>((x % y != 0 && ((x < 0) == (y < 0))) ? q + 1 : q), w);
}
ATTN_HD uint64_t ceildivui(uint64_t a, uint64_t b, int w) {
  const uint64_t x = bits(a, w), y = bits(b, w);
  return y == 0 ? 0 : x / y + (x % y != 0 ? 1 : 0);
}
// Shifts by w or more are poison in arith; they give 0 (or the sign) here.
ATTN_HD uint64_t shli(uint64_t a, uint64_t b, int w) { return bits(b, w) >= uint64_t(w) ? 0 : bits(a << bits(b, w), w); }
ATTN_HD uint64_t shrui(uint64_t a, uint64_t b, int w) { return bits(b, w) >= uint64_t(w) ? 0 : bits(a, w) >> bits(b, w); }
ATTN_HD uint64_t shrsi(uint64_t a, uint64_t b, int w) {
  const uint64_t n = bits(b, w) >= uint64_t(w) ? uint64_t(w - 1) : bits(b, w);
  return bits(static_cast<uint64_t>(sext(a, w) >> n), w);
}
// fptosi / fptoui: out-of-range values are poison in arith; these saturate
// (NaN gives 0), what the GPU's conversion instructions do.
template <class T> ATTN_DEV uint64_t fptosi(T x, int w) {
  if (x != x) return 0;
  const double hi = static_cast<double>(uint64_t{1} << (w - 1)), lo = -hi;
  if (static_cast<double>(x) <= lo) return bits(static_cast<uint64_t>(static_cast<int64_t>(lo)), w);
  if (static_cast<double>(x) >= hi) return bits(static_cast<uint64_t>(static_cast<int64_t>(hi - 1)), w);
  return bits(static_cast<uint64_t>(static_cast<int64_t>(x)), w);
}
template <class T> ATTN_DEV uint64_t fptoui(T x, int w) {
  if (x != x || x <= T(0)) return 0;
  const double hi = 2.0 * static_cast<double>(uint64_t{1} << (w - 1));
  if (static_cast<double>(x) >= hi) return bits(~uint64_t{0}, w);
  return static_cast<uint64_t>(x);
}

}  // namespace mod
}  // namespace detail
}  // namespace attn

// A generated source names each modifier T it defines, with the function
// `fn` that holds its attn.sdpa, through this macro, so that a test that
// includes the source can bind it (test_generated_score_mod.cpp defines it as
// `using GenMod_##fn = T;`). Empty by default.
#ifndef ATTN_SCORE_MOD_GENERATED
#define ATTN_SCORE_MOD_GENERATED(T, fn)
#endif
