// Shared by the GPU correctness test and the CPU emulation test: test cases,
// input generation (host buffers with arbitrary layouts), the double-precision
// reference of the attn.sdpa contract, and the comparison.
//
// Host-only C++ (no CUDA headers).
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/kernels/attn_cuda.h"
#include "fwd_params.h"
#include "kernel_common.h"
#include "score_mod.h"

namespace sdpa_test {

using attn::detail::dtype_bits_to_f32;
using attn::detail::f32_to_dtype_bits;
using attn::detail::round_to_dtype;

enum Layout {
  kBHLD = 0,        // contiguous [B, H, L, E]
  kBLHD = 1,        // [B, L, H, E] memory order (heads interleaved, like a fused qkv projection)
  kPadded = 2,      // [B, H, L, E] with row stride E + 8 (padding must stay untouched in `out`)
  kKVBcastB = 3,    // q/out contiguous, k/v batch-broadcast (stride 0 on B, one batch stored)
};

enum MaskShape {
  kMaskFull = 0,   // [B, Hq, L, S]
  kMask11LS = 1,   // [1, 1, L, S]
  kMaskB11S = 2,   // [B, 1, 1, S]
};

struct Case {
  std::string name;
  bool bf16 = false;
  bool f32 = false;        // f32 inputs (the generic kernel); overrides bf16
  int B = 1, Hq = 1, Hkv = 1, L = 1, S = 1, E = 64, Ev = 64;
  bool causal = false;
  attn_mask_kind mask_kind = ATTN_MASK_NONE;
  MaskShape mask_shape = kMaskFull;
  bool dead_rows = false;  // some rows fully masked (bool 0 / additive -inf)
  bool mask_drop = false;  // BOOL mask stored with ATTN_MASK_DROP polarity (nonzero = masked out)
  bool safe_softmax = false;  // a row whose scores are all -inf gives 0, not NaN (torch._safe_softmax)
  bool nan_in_dead = false;   // ADDITIVE dead rows hold one NaN (at key S/2): NaN rows even with safe_softmax
  int64_t window_left = ATTN_WINDOW_UNBOUNDED;  // sliding window (ATTN_WINDOW_UNBOUNDED = none)
  int64_t window_right = ATTN_WINDOW_UNBOUNDED;
  bool workspace = true;   // give the kernels a workspace (decode shapes then split their keys)
  bool score_mod = false;  // kernels instantiated with TestScoreMod (emulator only)
  // The reference of another score modifier (a generated one, emulator only):
  // the modified score of s at (b, h, i, j) in double; replaces test_score_mod.
  std::function<double(double s, int b, int h, int i, int j)> ref_mod;
  float masked_value = -INFINITY;
  float scale = 0.f;       // 0 -> 1/sqrt(E)
  float amp = 1.f;         // q/k amplitude (larger -> peakier softmax)
  bool lse = false;
  Layout layout = kBHLD;
  uint32_t seed = 1;
  // Sequence lengths (attn_sdpa_fwd_args.q_lengths / kv_lengths): empty =
  // none on that side. pad: ATTN_PAD_RIGHT / LEFT ([B] entries) or PACKED
  // (one entry per sequence, the same packing in every batch slice).
  std::vector<int64_t> q_lens, kv_lens;
  attn_padding_side pad = ATTN_PAD_RIGHT;
  bool len_i64 = false;  // the lengths as int64 (else int32)
};

inline bool has_lengths(const Case& c) { return !c.q_lens.empty() || !c.kv_lens.empty(); }

inline std::string describe_lengths(const Case& c) {
  if (!has_lengths(c)) return "";
  auto list = [](const std::vector<int64_t>& v) {
    if (v.empty()) return std::string("-");
    std::string r;
    for (size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
    return r;
  };
  const char* side = c.pad == ATTN_PAD_PACKED ? "packed" : c.pad == ATTN_PAD_LEFT ? "left" : "right";
  return std::string(" lens=") + side + (c.len_i64 ? "/i64" : "/i32") + " q=" + list(c.q_lens) + " kv=" + list(c.kv_lens);
}

inline std::string describe(const Case& c) {
  char win[64] = "";
  if (c.window_left != ATTN_WINDOW_UNBOUNDED || c.window_right != ATTN_WINDOW_UNBOUNDED) {
    auto side = [](int64_t w) { return w == ATTN_WINDOW_UNBOUNDED ? std::string("inf") : std::to_string(w); };
    std::snprintf(win, sizeof(win), " window=%s,%s", side(c.window_left).c_str(), side(c.window_right).c_str());
  }
  char buf[576];
  const char* mk = c.mask_kind == ATTN_MASK_NONE ? "none" : c.mask_kind == ATTN_MASK_BOOL ? "bool" : "add";
  const char* ms = c.mask_shape == kMaskFull ? "BHLS" : c.mask_shape == kMask11LS ? "11LS" : "B11S";
  std::snprintf(buf, sizeof(buf),
                "%s %s B=%d Hq=%d Hkv=%d L=%d S=%d E=%d Ev=%d causal=%d mask=%s%s%s%s mv=%g scale=%g amp=%g lse=%d layout=%d%s",
                (c.name + (c.score_mod ? "+mod" : "") + (c.safe_softmax ? "+safe" : "")).c_str(), c.f32 ? "f32" : c.bf16 ? "bf16" : "f16", c.B, c.Hq, c.Hkv, c.L, c.S, c.E, c.Ev, c.causal ? 1 : 0, mk,
                c.mask_kind == ATTN_MASK_NONE ? "" : ms, c.dead_rows ? "+dead" : "", c.mask_drop ? "+drop" : "",
                static_cast<double>(c.masked_value),
                static_cast<double>(c.scale), static_cast<double>(c.amp), c.lse ? 1 : 0, static_cast<int>(c.layout), win);
  return buf + describe_lengths(c);
}

// Element storage: a std::vector<uint16_t> holds 16-bit elements one per
// slot, f32 elements in two slots (so byte sizes are always 2 * size()).
inline int slots(const Case& c) { return c.f32 ? 2 : 1; }
inline float load_elem(const std::vector<uint16_t>& d, int64_t off, const Case& c) {
  if (!c.f32) return dtype_bits_to_f32(d[static_cast<size_t>(off)], c.bf16);
  float f;
  std::memcpy(&f, &d[static_cast<size_t>(2 * off)], 4);
  return f;
}
// Stores `v` rounded to the case's dtype.
inline void store_elem(std::vector<uint16_t>& d, int64_t off, float v, const Case& c) {
  if (c.f32) std::memcpy(&d[static_cast<size_t>(2 * off)], &v, 4);
  else d[static_cast<size_t>(off)] = f32_to_dtype_bits(v, c.bf16);
}
inline float round_to_case(float v, const Case& c) { return c.f32 ? v : round_to_dtype(v, c.bf16); }
inline uint32_t out_sentinel(const Case& c) {  // signalling-NaN patterns
  return c.f32 ? 0x7FB5B5B5u : c.bf16 ? 0xFF8Du : 0x7D5Au;
}
inline uint32_t elem_bits(const std::vector<uint16_t>& d, int64_t off, const Case& c) {
  if (!c.f32) return d[static_cast<size_t>(off)];
  uint32_t u;
  std::memcpy(&u, &d[static_cast<size_t>(2 * off)], 4);
  return u;
}

// The score modifier of the score_mod cases, as a generated functor would
// compute it from a region (f32): Gemma-2 style soft-capping plus an ALiBi
// bias with a per-head slope. test_score_mod is the same in double.
inline double test_score_mod(double s, int h, int i, int j) {
  return 5.0 * std::tanh(s / 5.0) - 0.0625 * (h + 1) * std::fabs(static_cast<double>(i - j));
}
struct TestScoreMod {
  static constexpr bool kIdentity = false;
  template <class Ops>
  static float apply(const attn::detail::FwdParams&, float s, int, int h, int i, int j) {
    return 5.f * std::tanh(s / 5.f) - 0.0625f * static_cast<float>(h + 1) * std::fabs(static_cast<float>(i - j));
  }
};

// A dense row-major [B, H, L, E] view of `data`.
inline attn_tensor4 contiguous(void* data, int64_t b, int64_t h, int64_t l, int64_t e) {
  attn_tensor4 t;
  t.data = data;
  t.sizes[0] = b;
  t.sizes[1] = h;
  t.sizes[2] = l;
  t.sizes[3] = e;
  t.strides[3] = 1;
  t.strides[2] = e;
  t.strides[1] = l * e;
  t.strides[0] = h * l * e;
  return t;
}

// A host tensor: storage + the attn_tensor4 view (data filled in by the user).
struct HostTensor {
  std::vector<uint16_t> data;  // 16-bit elements (or bytes packed for bool masks, see bytes)
  std::vector<uint8_t> bytes;  // used for bool masks
  int64_t sizes[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
  size_t numel_storage = 0;

  int64_t offset(int64_t b, int64_t h, int64_t l, int64_t e) const {
    return b * strides[0] + h * strides[1] + l * strides[2] + e * strides[3];
  }
  attn_tensor4 view(void* device_data) const {
    attn_tensor4 t;
    t.data = device_data;
    for (int i = 0; i < 4; ++i) {
      t.sizes[i] = sizes[i];
      t.strides[i] = strides[i];
    }
    return t;
  }
};

inline void set_layout(HostTensor& t, int64_t B, int64_t H, int64_t L, int64_t E, Layout layout, bool is_kv) {
  t.sizes[0] = B;
  t.sizes[1] = H;
  t.sizes[2] = L;
  t.sizes[3] = E;
  int64_t rs = E;
  switch (layout) {
    case kBLHD:
      t.strides[3] = 1;
      t.strides[1] = E;
      t.strides[2] = H * E;
      t.strides[0] = L * H * E;
      break;
    case kPadded:
      rs = E + 8;
      t.strides[3] = 1;
      t.strides[2] = rs;
      t.strides[1] = L * rs;
      t.strides[0] = H * L * rs;
      break;
    case kKVBcastB:
    case kBHLD:
    default:
      t.strides[3] = 1;
      t.strides[2] = E;
      t.strides[1] = L * E;
      t.strides[0] = (layout == kKVBcastB && is_kv) ? 0 : H * L * E;
      break;
  }
  int64_t n = 1;
  for (int i = 0; i < 4; ++i) n += (t.sizes[i] - 1) * t.strides[i];
  t.numel_storage = static_cast<size_t>(n);
}

inline uint32_t lse_sentinel() { return 0x7FA5A5A5u; }

struct Problem {
  Case c;
  float scale = 0.f;
  HostTensor q, k, v, out, mask;
  std::vector<float> lse;  // [B, Hq, L] (sentinel-filled)
  // The lengths as the kernels read them (the case's int32 or int64 values).
  std::vector<int32_t> q_len32, kv_len32;
  std::vector<int64_t> q_len64, kv_len64;
  // reference
  std::vector<double> ref_out;  // [B, Hq, L, Ev] (NaN for dead rows, 0 with safe_softmax)
  std::vector<double> ref_lse;  // [B, Hq, L]
};

inline Problem make_problem(const Case& c) {
  Problem p;
  p.c = c;
  p.scale = c.scale != 0.f ? c.scale : 1.0f / std::sqrt(static_cast<float>(c.E));
  std::mt19937 rng(c.seed * 2654435761u + 12345u);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  auto fill = [&](HostTensor& t, float amp) {
    t.data.resize(t.numel_storage * slots(c));
    for (size_t i = 0; i < t.numel_storage; ++i) store_elem(t.data, i, amp * uni(rng), c);  // padding too: junk
  };
  set_layout(p.q, c.B, c.Hq, c.L, c.E, c.layout, false);
  set_layout(p.k, c.B, c.Hkv, c.S, c.E, c.layout, true);
  set_layout(p.v, c.B, c.Hkv, c.S, c.Ev, c.layout, true);
  set_layout(p.out, c.B, c.Hq, c.L, c.Ev, c.layout == kKVBcastB ? kBHLD : c.layout, false);
  fill(p.q, c.amp);
  fill(p.k, c.amp);
  fill(p.v, 1.f);
  const uint32_t sent = out_sentinel(c);
  p.out.data.resize(p.out.numel_storage * slots(c));
  for (size_t i = 0; i < p.out.numel_storage; ++i) {
    if (c.f32) std::memcpy(&p.out.data[2 * i], &sent, 4);
    else p.out.data[i] = static_cast<uint16_t>(sent);
  }
  for (int64_t x : c.q_lens) {
    p.q_len32.push_back(static_cast<int32_t>(x));
    p.q_len64.push_back(x);
  }
  for (int64_t x : c.kv_lens) {
    p.kv_len32.push_back(static_cast<int32_t>(x));
    p.kv_len64.push_back(x);
  }
  if (c.lse) {
    p.lse.resize(static_cast<size_t>(c.B) * c.Hq * c.L);
    const float s = attn::detail::bits_f32(lse_sentinel());
    for (auto& x : p.lse) x = s;
  }

  if (c.mask_kind != ATTN_MASK_NONE) {
    HostTensor& m = p.mask;
    const int64_t mb = c.mask_shape == kMaskB11S || c.mask_shape == kMaskFull ? c.B : 1;
    const int64_t mh = c.mask_shape == kMaskFull ? c.Hq : 1;
    const int64_t ml = c.mask_shape == kMaskB11S ? 1 : c.L;
    m.sizes[0] = mb;
    m.sizes[1] = mh;
    m.sizes[2] = ml;
    m.sizes[3] = c.S;
    m.strides[3] = 1;
    m.strides[2] = c.S;
    m.strides[1] = ml * c.S;
    m.strides[0] = mh * ml * c.S;
    // size-1 dims get stride 0, like a broadcast view (expand) would have
    for (int i = 0; i < 3; ++i)
      if (m.sizes[i] == 1) m.strides[i] = 0;
    m.numel_storage = static_cast<size_t>(mb * mh * ml * c.S);
    std::uniform_real_distribution<float> u01(0.f, 1.f);
    if (c.mask_kind == ATTN_MASK_BOOL) m.bytes.resize(m.numel_storage);
    else m.data.resize(m.numel_storage * slots(c));
    for (int64_t b = 0; b < mb; ++b)
      for (int64_t h = 0; h < mh; ++h)
        for (int64_t l = 0; l < ml; ++l) {
          // dead rows: every 5th mask row (or the last batch for [B,1,1,S])
          const bool dead = c.dead_rows && (c.mask_shape == kMaskB11S ? (b == mb - 1) : (l % 5 == 2));
          // prefix rows: the first 70 keys (more than one 64-key tile, more than
          // two 32-key chunks) are masked, the rest is not: the running max is
          // -inf for a while and must recover once finite scores arrive.
          const bool prefix =
              c.dead_rows && (c.mask_shape == kMaskB11S ? (b == 0 && mb > 1) : (l % 5 == 4));
          const int64_t prefix_end = std::min<int64_t>(70, c.S - 1);
          for (int64_t s = 0; s < c.S; ++s) {
            const size_t idx = static_cast<size_t>(b * mh * ml * c.S + h * ml * c.S + l * c.S + s);
            const bool off = dead || (prefix && s < prefix_end);
            const bool keep_last = prefix && s == c.S - 1;
            if (c.mask_kind == ATTN_MASK_BOOL) {
              const bool keep = !off && (keep_last || u01(rng) < 0.7f);
              const uint8_t nonzero = static_cast<uint8_t>(1 + (rng() % 3));  // any nonzero byte counts
              m.bytes[idx] = keep != c.mask_drop ? nonzero : 0;
            } else {
              float val = 3.f * uni(rng);
              if (off || (!keep_last && u01(rng) < 0.15f)) val = -INFINITY;
              if (dead && c.nan_in_dead && s == c.S / 2) val = NAN;
              store_elem(m.data, static_cast<int64_t>(idx), val, c);
            }
          }
        }
  }
  return p;
}

// Where row i's sequence sits (the attn.sdpa contract of the lengths):
// whether the row is real, its real keys [k_lo, k_hi), and the offsets that
// turn memory indices into the positions is_causal and the window see
// (packed: the sequence's start; else 0).
struct RowSeq {
  bool real = true;
  int k_lo = 0, k_hi = 0;
  int q_off = 0, k_off = 0;
};
inline RowSeq row_seq(const Case& c, int b, int i) {
  RowSeq r;
  r.k_hi = c.S;
  if (c.pad == ATTN_PAD_PACKED && has_lengths(c)) {
    int64_t qo = 0, ko = 0;
    r.real = false;  // (lengths summing to L: every row has its sequence)
    for (size_t s = 0; s < c.q_lens.size(); ++s) {
      if (i >= qo && i < qo + c.q_lens[s]) {
        r.real = true;
        r.q_off = static_cast<int>(qo);
        r.k_off = static_cast<int>(ko);
        r.k_lo = static_cast<int>(ko);
        r.k_hi = static_cast<int>(ko + c.kv_lens[s]);
        break;
      }
      qo += c.q_lens[s];
      ko += c.kv_lens[s];
    }
    return r;
  }
  const bool left = c.pad == ATTN_PAD_LEFT;
  if (!c.q_lens.empty()) {
    const int64_t n = c.q_lens[static_cast<size_t>(b)];
    r.real = left ? i >= c.L - n : i < n;
  }
  if (!c.kv_lens.empty()) {
    const int64_t n = c.kv_lens[static_cast<size_t>(b)];
    r.k_lo = left ? static_cast<int>(c.S - n) : 0;
    r.k_hi = left ? c.S : static_cast<int>(n);
  }
  return r;
}

// Double-precision reference of the attn.sdpa contract.
inline void compute_reference(Problem& p) {
  const Case& c = p.c;
  const double mv = static_cast<double>(round_to_case(c.masked_value, c));
  const int group = c.Hq / c.Hkv;
  p.ref_out.assign(static_cast<size_t>(c.B) * c.Hq * c.L * c.Ev, 0.0);
  p.ref_lse.assign(static_cast<size_t>(c.B) * c.Hq * c.L, 0.0);
  std::vector<double> sc(c.S), pr(c.S);
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.Hq; ++h) {
      const int hk = h / group;
      for (int i = 0; i < c.L; ++i) {
        const RowSeq rs = row_seq(c, b, i);
        if (!rs.real) {  // a padded query row: 0, lse -inf
          const size_t ri = (static_cast<size_t>(b) * c.Hq + h) * c.L + i;
          p.ref_lse[ri] = -INFINITY;
          continue;
        }
        for (int j = 0; j < c.S; ++j) {
          if (j < rs.k_lo || j >= rs.k_hi) {  // padding, or another sequence's key: no part at all
            sc[j] = -INFINITY;
            continue;
          }
          const int ci = i - rs.q_off, cj = j - rs.k_off;  // the positions the band sees
          double dot = 0;
          for (int e = 0; e < c.E; ++e) {
            dot += static_cast<double>(load_elem(p.q.data, p.q.offset(b, h, i, e), c)) *
                   static_cast<double>(load_elem(p.k.data, p.k.offset(b, hk, j, e), c));
          }
          double s = dot * static_cast<double>(p.scale);
          if (c.ref_mod) s = c.ref_mod(s, b, h, i, j);
          else if (c.score_mod) s = test_score_mod(s, h, i, j);
          if (c.mask_kind != ATTN_MASK_NONE) {
            const HostTensor& m = p.mask;
            const int64_t off = (m.sizes[0] == 1 ? 0 : b) * m.strides[0] + (m.sizes[1] == 1 ? 0 : h) * m.strides[1] +
                                (m.sizes[2] == 1 ? 0 : i) * m.strides[2] + j;
            if (c.mask_kind == ATTN_MASK_BOOL) {
              if (attn::detail::bool_mask_removes(m.bytes[static_cast<size_t>(off)], c.mask_drop)) s = mv;
            } else {
              s += static_cast<double>(load_elem(m.data, off, c));
            }
          }
          if (c.causal && cj > ci) s = mv;
          // The window's bounds in exact 64-bit arithmetic (unbounded = INT64_MAX).
          const bool left_out = c.window_left != ATTN_WINDOW_UNBOUNDED && cj < ci - c.window_left;
          const bool right_out = c.window_right != ATTN_WINDOW_UNBOUNDED && cj > ci + c.window_right;
          if (left_out || right_out) s = mv;
          sc[j] = s;
        }
        double mx = -INFINITY;
        for (int j = 0; j < c.S; ++j) mx = std::max(mx, sc[j]);
        // safe_softmax, as the CPU lowering: a row whose max is -inf is its
        // unnormalised accumulator, exp(s - 0) . v: 0, or NaN after a NaN score.
        // With lengths the softmax is always safe (attn.sdpa).
        const bool safe_dead = (c.safe_softmax || has_lengths(c)) && mx == -INFINITY;
        double l = 0;
        for (int j = 0; j < c.S; ++j) {
          pr[j] = std::exp(sc[j] - (safe_dead ? 0.0 : mx));  // exp(-inf - -inf) = NaN for dead rows, as torch.softmax
          l += pr[j];
        }
        const size_t ri = (static_cast<size_t>(b) * c.Hq + h) * c.L + i;
        p.ref_lse[ri] = (mx == -INFINITY) ? -INFINITY : mx + std::log(l);
        for (int e = 0; e < c.Ev; ++e) {
          double acc = 0;
          for (int j = 0; j < c.S; ++j)
            acc += pr[j] * static_cast<double>(load_elem(p.v.data, p.v.offset(b, hk, j, e), c));
          p.ref_out[ri * c.Ev + e] = safe_dead ? acc : acc / l;
        }
      }
    }
}

// Error bound of f32 inputs (|v| <= 1): f32 math throughout, so a rounding
// of anything to bf16 (~4e-3) or f16 (~5e-4) on the way fails it.
constexpr double kF32Tol = 2e-5;

struct CompareResult {
  bool ok = true;
  double max_err = 0;
  int64_t n_bad = 0;
  int64_t n_nan_rows = 0;
  std::string first_bad;
};

// Compares p.out / p.lse (as filled by the kernel) against the reference.
inline CompareResult compare(const Problem& p) {
  const Case& c = p.c;
  CompareResult r;
  // f32: the generic kernel computes in f32 throughout (the documented bound).
  const double atol = c.f32 ? kF32Tol : c.bf16 ? 2e-2 : 4e-3;
  const double rtol = c.f32 ? kF32Tol : c.bf16 ? 2e-2 : 4e-3;
  auto bad = [&](const char* fmt, auto... args) {
    ++r.n_bad;
    r.ok = false;
    if (r.first_bad.empty()) {
      char buf[256];
      std::snprintf(buf, sizeof(buf), fmt, args...);
      r.first_bad = buf;
    }
  };
  const uint32_t sent = out_sentinel(c);
  for (int b = 0; b < c.B; ++b)
    for (int h = 0; h < c.Hq; ++h)
      for (int i = 0; i < c.L; ++i) {
        const size_t ri = (static_cast<size_t>(b) * c.Hq + h) * c.L + i;
        bool row_nan = false;
        for (int e = 0; e < c.Ev; ++e) {
          const int64_t oo = p.out.offset(b, h, i, e);
          const uint32_t bits = elem_bits(p.out.data, oo, c);
          const double got = load_elem(p.out.data, oo, c);
          const double want = p.ref_out[ri * c.Ev + e];
          if (bits == sent) {
            bad("out[%d,%d,%d,%d] never written", b, h, i, e);
            continue;
          }
          if (std::isnan(want)) {
            row_nan = true;
            if (!std::isnan(got)) bad("out[%d,%d,%d,%d]=%g, expected NaN (fully masked row)", b, h, i, e, got);
            continue;
          }
          const double err = std::fabs(got - want);
          if (!(err <= atol + rtol * std::fabs(want))) {
            bad("out[%d,%d,%d,%d]=%.6g, expected %.6g (err %.3g)", b, h, i, e, got, want, err);
          }
          if (err > r.max_err) r.max_err = err;
        }
        if (row_nan) ++r.n_nan_rows;
        if (c.lse) {
          const float gotf = p.lse[ri];
          const double want = p.ref_lse[ri];
          if (attn::detail::f32_bits(gotf) == lse_sentinel()) {
            bad("lse[%d,%d,%d] never written", b, h, i);
          } else if (std::isinf(want)) {
            if (!(std::isinf(gotf) && (gotf < 0) == (want < 0))) bad("lse[%d,%d,%d]=%g, expected %g", b, h, i, (double)gotf, want);
          } else if (!(std::fabs(gotf - want) <= 1e-3 + 1e-4 * std::fabs(want))) {
            bad("lse[%d,%d,%d]=%.7g, expected %.7g", b, h, i, static_cast<double>(gotf), want);
          }
        }
      }
  // Padding of a padded output must be untouched.
  if (c.layout == kPadded) {
    for (int b = 0; b < c.B; ++b)
      for (int h = 0; h < c.Hq; ++h)
        for (int i = 0; i < c.L; ++i)
          for (int e = c.Ev; e < c.Ev + 8; ++e) {
            const int64_t off = p.out.offset(b, h, i, 0) + e;
            if (off < static_cast<int64_t>(p.out.numel_storage) && elem_bits(p.out.data, off, c) != sent) {
              bad("out padding [%d,%d,%d,+%d] was overwritten", b, h, i, e);
            }
          }
  }
  return r;
}

// Fills the ABI struct given the (device or host) addresses of the buffers.
inline attn_sdpa_fwd_args make_args(const Problem& p, void* q, void* k, void* v, void* out, void* mask, float* lse,
                                    void* stream) {
  attn_sdpa_fwd_args a;
  attn_sdpa_fwd_args_init(&a);
  a.dtype = p.c.f32 ? ATTN_DTYPE_F32 : p.c.bf16 ? ATTN_DTYPE_BF16 : ATTN_DTYPE_F16;
  a.q = p.q.view(q);
  a.k = p.k.view(k);
  a.v = p.v.view(v);
  a.out = p.out.view(out);
  a.mask_kind = p.c.mask_kind;
  a.mask_polarity = p.c.mask_drop ? ATTN_MASK_DROP : ATTN_MASK_KEEP;
  if (p.c.mask_kind != ATTN_MASK_NONE) a.mask = p.mask.view(mask);
  a.scale = p.scale;
  a.is_causal = p.c.causal ? 1 : 0;
  a.masked_value = p.c.masked_value;
  a.lse = p.c.lse ? lse : nullptr;
  a.stream = stream;
  a.window_left = p.c.window_left;
  a.window_right = p.c.window_right;
  a.safe_softmax = p.c.safe_softmax ? 1 : 0;
  return a;
}

// The host addresses of the case's lengths (NULL for a side without), in its integer type.
inline const void* host_q_lengths(const Problem& p) {
  if (p.c.q_lens.empty()) return nullptr;
  return p.c.len_i64 ? static_cast<const void*>(p.q_len64.data()) : static_cast<const void*>(p.q_len32.data());
}
inline const void* host_kv_lengths(const Problem& p) {
  if (p.c.kv_lens.empty()) return nullptr;
  return p.c.len_i64 ? static_cast<const void*>(p.kv_len64.data()) : static_cast<const void*>(p.kv_len32.data());
}
inline size_t lengths_bytes(const std::vector<int64_t>& v, const Case& c) { return v.size() * (c.len_i64 ? 8 : 4); }

// Sets the length arguments given the (device or host) addresses of the lengths.
inline void set_length_args(const Problem& p, const void* q_lengths, const void* kv_lengths, attn_sdpa_fwd_args* a) {
  a->q_lengths = q_lengths;
  a->kv_lengths = kv_lengths;
  a->lengths_type = p.c.len_i64 ? ATTN_INDEX_I64 : ATTN_INDEX_I32;
  a->padding_side = p.c.pad;
  a->num_seqs = p.c.pad == ATTN_PAD_PACKED ? static_cast<int64_t>(p.c.q_lens.size()) : 0;
}

// ---------------------------------------------------------------------------
// Case lists
// ---------------------------------------------------------------------------
// Gives each case the next seed, so a case's data depends on its place in the
// list: the families below must keep their order for results to stay the same.
class CaseList {
 public:
  explicit CaseList(uint32_t first_seed, bool score_mod = false) : seed_(first_seed), score_mod_(score_mod) {}
  void operator()(Case c) {
    c.seed = seed_++;
    if (score_mod_) c.score_mod = true;
    cases_.push_back(std::move(c));
  }
  std::vector<Case> take() { return std::move(cases_); }

 private:
  std::vector<Case> cases_;
  uint32_t seed_;
  bool score_mod_;
};

inline Case sized(Case c, const char* name, int L, int S) {
  c.name = name;
  c.L = L;
  c.S = S;
  return c;
}

// Hq query heads over Hkv kv heads (GQA when Hq > Hkv, MQA when Hkv == 1).
inline Case heads(Case c, int Hq, int Hkv) {
  c.Hq = Hq;
  c.Hkv = Hkv;
  return c;
}

inline Case masked(Case c, attn_mask_kind kind, MaskShape shape, bool dead_rows) {
  c.mask_kind = kind;
  c.mask_shape = shape;
  c.dead_rows = dead_rows;
  return c;
}

// Tile edges, L != S both ways, a single query row, GQA.
inline void add_shape_cases(CaseList& add, const Case& c, bool small) {
  const int big = small ? 130 : 300;
  Case a = sized(c, "plain", 129, 129);  // L == S not a tile multiple
  a.B = 2;
  add(a);
  Case b = sized(c, "causal_L<S", 17, big);  // short queries
  b.causal = b.lse = true;
  add(b);
  Case b2 = sized(c, "causal_L>S", big, 17);
  b2.causal = true;
  add(b2);
  Case d = sized(c, "L1", 1, 129);
  d.lse = true;
  add(d);
  const int gqa = small ? 70 : 300;
  Case e = heads(sized(c, "gqa_causal", gqa, gqa), 8, 2);
  e.causal = e.lse = true;
  add(e);
}

// Bool and additive masks of every shape, dead rows, both polarities.
inline void add_mask_cases(CaseList& add, const Case& c, bool small) {
  Case f = masked(sized(c, "bool_dead_inf", 33, small ? 100 : 300), ATTN_MASK_BOOL, kMaskFull, true);
  f.causal = f.lse = true;
  add(f);
  // Dead and prefix-masked rows, not causal.
  Case f2 = masked(sized(c, "bool_prefix_inf", 40, small ? 140 : 300), ATTN_MASK_BOOL, kMaskFull, true);
  f2.lse = true;
  add(f2);
  Case f3 = f2;  // the DROP polarity (a masked_fill mask passed as it is), causal
  f3.name = "bool_drop_inf";
  f3.mask_drop = f3.causal = true;
  add(f3);
  Case f4 = f2;  // safe_softmax: the all-false mask rows give 0 (lse -inf), prefix rows recover
  f4.name = "safe_bool_dead";
  f4.safe_softmax = true;
  add(f4);
  Case g = masked(sized(c, "bool_dead_finite", 40, 90), ATTN_MASK_BOOL, kMask11LS, true);
  g.masked_value = -10000.f;
  g.causal = g.lse = true;
  add(g);
  Case h = masked(sized(c, "add_B11S_causal", small ? 65 : 129, small ? 80 : 200), ATTN_MASK_ADDITIVE, kMaskB11S, false);
  h.B = 2;
  h.causal = h.lse = true;
  add(h);
  Case i = masked(sized(c, "add_11LS_dead", 50, 75), ATTN_MASK_ADDITIVE, kMask11LS, true);  // -inf rows
  i.lse = true;
  add(i);
  Case i2 = i;  // safe_softmax: the -inf rows give 0, except that a NaN score keeps its row NaN
  i2.name = "safe_add_nan";
  i2.safe_softmax = i2.nan_in_dead = true;
  i2.mask_shape = kMaskFull;
  add(i2);
}

// Layouts, scales and masked values.
inline void add_layout_cases(CaseList& add, const Case& c, bool small) {
  const int peaky = small ? 96 : 200;
  Case j = sized(c, "blhd_peaky", peaky, peaky);
  j.layout = kBLHD;
  j.amp = 2.f;
  j.scale = 1.0f;
  j.lse = true;
  add(j);
  Case k = sized(c, "padded_mv1e9", 70, 70);  // -1e9 is inf in f16, finite in bf16
  k.layout = kPadded;
  k.masked_value = -1e9f;
  k.causal = k.lse = true;
  add(k);
  Case l = sized(c, "causal_mv0", 65, 100);  // masked keys take part with score 0
  l.masked_value = 0.f;
  l.causal = l.lse = true;
  add(l);
  Case m = heads(sized(c, "mqa_kvbcast", 20, 129), 3, 1);  // MQA with batch-broadcast k/v
  m.B = 2;
  m.layout = kKVBcastB;
  add(m);
  Case n = sized(c, "tile_multiple_causal", 128, 128);
  n.causal = true;
  add(n);
}

inline Case windowed(Case c, int64_t left, int64_t right) {
  c.window_left = left;
  c.window_right = right;
  return c;
}

// Sliding windows (band skipping: key tiles outside the band are not visited).
inline void add_window_cases(CaseList& add, const Case& c) {
  Case w1 = windowed(sized(c, "window_small", 130, 130), 5, 3);  // both sides under a tile
  w1.lse = true;
  add(w1);
  // Left side over a tile, causal (right side clipped to 0) and a bool mask.
  Case w2 = masked(windowed(sized(c, "window_causal_bool", 70, 200), 100, 40), ATTN_MASK_BOOL, kMask11LS, true);
  w2.causal = w2.lse = true;
  add(w2);
  // L > S: rows i > S - 1 + 2 see no key at all -> NaN rows, lse -inf.
  Case w3 = windowed(sized(c, "window_dead_rows", 150, 40), 2, 0);
  w3.lse = true;
  add(w3);
  Case w5 = w3;  // safe_softmax: the rows past the keys are 0, lse -inf
  w5.name = "safe_window_empty";
  w5.safe_softmax = true;
  add(w5);
  // Finite masked value: every key takes part, no skipping; right side only.
  Case w4 = windowed(sized(c, "window_finite_mv", 40, 100), ATTN_WINDOW_UNBOUNDED, 10);
  w4.masked_value = -10000.f;
  w4.lse = true;
  add(w4);
}

// Decode shapes (L <= 16, S >= 2 x 128): split keys + combine.
inline void add_decode_cases(CaseList& add, const Case& c, bool small) {
  Case d1 = heads(sized(c, "decode_L1_gqa", 1, small ? 700 : 4100), 8, 2);  // 4 query heads per kv head in one block
  d1.B = 2;
  d1.lse = true;
  add(d1);
  Case d2 = masked(sized(c, "decode_L16_bool", 16, small ? 520 : 3000), ATTN_MASK_BOOL, kMaskFull, true);
  d2.lse = true;
  add(d2);
  // group x L = 15 rows; additive mask and a window: most splits see nothing.
  Case d3 = masked(windowed(heads(sized(c, "decode_L5_add_window", 5, small ? 600 : 2000), 6, 2), 200, 150),
                   ATTN_MASK_ADDITIVE, kMaskB11S, false);
  d3.lse = true;
  add(d3);
  // Causal (top-left: only keys <= i), finite masked value keeps every key.
  Case d4 = heads(sized(c, "decode_L3_causal_mv", 3, small ? 400 : 1500), 4, 1);
  d4.causal = d4.lse = true;
  d4.masked_value = -10000.f;
  d4.layout = kBLHD;
  add(d4);
  // safe_softmax, a key-padding mask [B,1,1,S] whose last batch is all padding.
  Case d6 = masked(heads(sized(c, "safe_decode_padded", 2, small ? 520 : 3000), 4, 2), ATTN_MASK_BOOL, kMaskB11S, true);
  d6.B = 2;
  d6.safe_softmax = d6.lse = true;
  add(d6);
  Case d7 = d6;  // additive padding: the padded batch's rows hold one NaN score, so stay NaN
  d7.name = "safe_decode_add_nan";
  d7.mask_kind = ATTN_MASK_ADDITIVE;
  d7.nan_in_dead = true;
  add(d7);
  Case d5 = d1;  // without a workspace: no split
  d5.name = "decode_no_workspace";
  d5.workspace = false;
  d5.S = 300;  // still splits with a workspace; keeps the tensor-core emulation short
  add(d5);
}

// Long sequences: too slow for the emulator.
inline void add_long_cases(CaseList& add, const Case& c) {
  Case o = heads(sized(c, "long_causal", 1031, 1031), 4, 4);
  o.B = 2;
  o.causal = o.lse = true;
  add(o);
  Case o2 = masked(o, ATTN_MASK_BOOL, kMask11LS, true);
  o2.name = "long_bool";
  o2.causal = false;
  add(o2);
}

// f32 inputs: always the generic kernel, in f32.
inline void add_f32_cases(CaseList& add, bool small) {
  Case f = heads(Case(), 4, 2);
  f.f32 = true;
  for (int D : {64, 128}) {
    Case c = f;
    c.E = c.Ev = D;
    Case a = masked(sized(c, "f32_causal_bool", 70, 130), ATTN_MASK_BOOL, kMask11LS, true);
    a.causal = a.lse = true;
    add(a);
    Case b = masked(windowed(sized(c, "f32_add_blhd_window", 40, 100), 30, 5), ATTN_MASK_ADDITIVE, kMaskB11S, false);
    b.layout = kBLHD;
    b.lse = true;
    add(b);
    Case d = masked(sized(c, "f32_drop_padded_mv", 33, 70), ATTN_MASK_BOOL, kMaskFull, true);
    d.mask_drop = true;
    d.layout = kPadded;
    d.masked_value = -1e9f;
    add(d);
  }
  Case fs = masked(sized(f, "f32_safe_bool_dead", 40, 90), ATTN_MASK_BOOL, kMaskFull, true);
  fs.causal = fs.safe_softmax = fs.lse = true;
  add(fs);
  // Decode, E != Ev, GQA with 3 rows per kv head.
  Case fd = masked(sized(f, "f32_decode", 1, small ? 450 : 2000), ATTN_MASK_BOOL, kMaskB11S, false);
  fd = heads(fd, 6, 2);
  fd.E = 80;
  fd.Ev = 64;
  fd.mask_drop = fd.lse = true;
  add(fd);
  Case fds = fd;  // safe_softmax and a second batch that is all padding
  fds.name = "f32_safe_decode_padded";
  fds.B = 2;
  fds.dead_rows = fds.safe_softmax = true;
  add(fds);
  Case e = sized(f, "f32_E!=Ev", 20, 50);
  e.E = 80;
  e.Ev = 32;
  e.Hq = 2;
  e.causal = true;
  add(e);
}

// The generic (non tensor core) path: head dims the tensor-core kernels lack.
inline void add_generic_cases(CaseList& add, bool bf16, bool small) {
  struct HD {
    int E, Ev;
  };
  for (HD hd : {HD{32, 32}, HD{80, 80}, HD{64, 32}, HD{256, 256}}) {
    Case base;
    base.bf16 = bf16;
    base.E = hd.E;
    base.Ev = hd.Ev;
    base.Hq = 4;
    base.Hkv = 2;
    Case c = masked(sized(base, "generic", 37, small ? 70 : 129), ATTN_MASK_BOOL, kMask11LS, true);
    c.causal = c.lse = true;
    add(c);
    Case cd = c;
    cd.name = "generic_drop";
    cd.mask_drop = true;
    cd.mask_shape = kMaskFull;
    add(cd);
    Case cw = windowed(c, 20, 3);
    cw.name = "generic_window";
    cw.causal = false;
    add(cw);
    Case cs = c;  // safe_softmax: the dead mask rows give 0
    cs.name = "generic_safe";
    cs.safe_softmax = true;
    add(cs);
    Case c2 = masked(c, ATTN_MASK_ADDITIVE, kMaskB11S, true);
    c2.name = "generic_add_mv-5";
    c2.masked_value = -5.f;
    c2.layout = kBLHD;
    add(c2);
  }
}

// `small` keeps every case cheap enough for the CPU emulator.
inline std::vector<Case> make_cases(bool small) {
  CaseList add(100);
  for (int bf = 0; bf < 2; ++bf) {
    for (int D : {64, 128}) {
      Case c;
      c.bf16 = bf != 0;
      c.E = c.Ev = D;
      c.Hq = c.Hkv = 2;
      add_shape_cases(add, c, small);
      add_mask_cases(add, c, small);
      add_layout_cases(add, c, small);
      add_window_cases(add, c);
      add_decode_cases(add, c, small);
      if (!small) add_long_cases(add, c);
    }
    if (bf == 0) add_f32_cases(add, small);  // once, not per 16-bit dtype
    add_generic_cases(add, bf != 0, small);
  }
  return add.take();
}

inline Case with_lengths(Case c, attn_padding_side pad, std::vector<int64_t> q, std::vector<int64_t> kv) {
  c.pad = pad;
  c.q_lens = std::move(q);
  c.kv_lens = std::move(kv);
  return c;
}

// Sequence lengths (right, left and packed): lengths 0, 1, full and mixed,
// with causal, windows, masks and GQA, on every kernel: tensor cores (E 64
// and 128, f16 and bf16), generic head dims, f32 and the split-key decode.
// Their own seeds, after make_cases' (whose order they leave alone).
inline std::vector<Case> make_length_cases() {
  CaseList add(1100);
  for (int bf = 0; bf < 2; ++bf)
    for (int D : {64, 128}) {
      Case c;
      c.bf16 = bf != 0;
      c.E = c.Ev = D;
      c.Hq = c.Hkv = 2;
      c.lse = true;
      // Right padding: a row of length 0 on one side, 1 and full, mixed.
      Case r = with_lengths(sized(c, "len_right", 70, 90), ATTN_PAD_RIGHT, {70, 1, 33, 0}, {0, 90, 45, 64});
      r.B = 4;
      r.len_i64 = D == 128;
      add(r);
      // Left padding, causal: padded-layout indices (rows of a short sequence see few keys).
      Case l = with_lengths(sized(c, "len_left_causal", 70, 70), ATTN_PAD_LEFT, {70, 0, 40}, {70, 20, 1});
      l.B = 3;
      l.causal = true;
      add(l);
      // A window and GQA, right padding, keys past a tile.
      Case w = heads(windowed(with_lengths(sized(c, "len_right_window_gqa", 65, 130), ATTN_PAD_RIGHT, {65, 17},
                                           {130, 70}),
                              20, 5),
                     4, 2);
      w.B = 2;
      add(w);
      // Key lengths only, left padding, with a bool mask.
      Case m = masked(with_lengths(sized(c, "len_kv_left_bool", 33, 100), ATTN_PAD_LEFT, {}, {100, 37}), ATTN_MASK_BOOL,
                      kMaskFull, true);
      m.B = 2;
      add(m);
      // Packed: 4 sequences along L = 70 and S = 80, one without keys, one without rows; causal within each.
      Case pk = with_lengths(sized(c, "packed_causal", 70, 80), ATTN_PAD_PACKED, {30, 0, 1, 39}, {30, 5, 0, 45});
      pk.causal = true;
      add(pk);
      // Packed, two batch slices, GQA, a causal window, int64 lengths.
      Case pw = heads(with_lengths(sized(c, "packed_window_gqa", 70, 100), ATTN_PAD_PACKED, {50, 20}, {64, 36}), 4, 2);
      pw.B = 2;
      pw.causal = true;
      pw.window_left = 10;
      pw.len_i64 = true;
      add(pw);
      // Decode shapes (L <= 16, the keys split): left-padded kv lengths, GQA.
      Case d = heads(with_lengths(sized(c, "len_decode_left", 4, 520), ATTN_PAD_LEFT, {4, 2, 0}, {520, 130, 1}), 8, 2);
      d.B = 3;
      add(d);
      // Packed decode: three one-token queries against 300, 0 and 220 keys.
      Case pd = heads(with_lengths(sized(c, "packed_decode", 3, 520), ATTN_PAD_PACKED, {1, 1, 1}, {300, 0, 220}), 4, 1);
      add(pd);
    }
  // Generic head dims (f16, bf16) and f32.
  for (int kind = 0; kind < 3; ++kind) {
    Case c;
    c.bf16 = kind == 1;
    c.f32 = kind == 2;
    c.E = 80;
    c.Ev = kind == 2 ? 64 : 80;
    c.Hq = 4;
    c.Hkv = 2;
    c.lse = true;
    Case g = with_lengths(sized(c, "generic_len_left_causal", 37, 70), ATTN_PAD_LEFT, {37, 5, 0}, {70, 0, 33});
    g.B = 3;
    g.causal = true;
    add(g);
    // Sequences after an empty one; one with rows and no key.
    Case gp = with_lengths(sized(c, "generic_packed_window", 40, 70), ATTN_PAD_PACKED, {20, 0, 12, 8}, {40, 0, 30, 0});
    gp.window_left = 7;
    gp.window_right = 3;
    add(gp);
    Case gd = with_lengths(sized(c, "generic_len_decode", 2, 450), ATTN_PAD_RIGHT, {2, 1}, {450, 200});
    gd.B = 2;
    gd.len_i64 = true;
    add(gd);
  }
  return add.take();
}

// Cases with a score modifier: every kernel (both tensor-core tile shapes via
// the dtype/head-dim mix, generic, f32, decode), with masks and windows.
inline std::vector<Case> make_score_mod_cases() {
  CaseList add(900, /*score_mod=*/true);
  for (int bf = 0; bf < 2; ++bf) {
    Case c;
    c.bf16 = bf != 0;
    c.Hq = 4;
    c.Hkv = 2;
    c.lse = true;
    Case a = masked(sized(c, "mod_tc", 70, 100), ATTN_MASK_BOOL, kMask11LS, true);  // tensor cores
    a.causal = true;
    add(a);
    add(sized(c, "mod_tc_plain", 128, 128));  // the modifier alone forces the per-element path
    Case w = masked(windowed(sized(c, "mod_tc_window", 40, 130), 50, 10), ATTN_MASK_ADDITIVE, kMaskB11S, false);
    w.E = w.Ev = 128;
    add(w);
    Case g = sized(c, "mod_generic", 30, 70);  // generic head dims
    g.E = 80;
    g.Ev = 32;
    g.causal = true;
    add(g);
    Case d = sized(c, "mod_decode", 4, 500);  // split-key decode
    add(d);
    Case sa = a;  // safe_softmax with a modifier: the dead mask rows give 0
    sa.name = "mod_tc_safe";
    sa.safe_softmax = true;
    add(sa);
    // safe_softmax in the split-key decode: a key-padding mask, one batch all padding.
    Case sd = masked(d, ATTN_MASK_BOOL, kMaskB11S, true);
    sd.name = "mod_decode_safe";
    sd.B = 2;
    sd.safe_softmax = true;
    add(sd);
  }
  Case f = sized(Case(), "mod_f32", 33, 90);
  f.f32 = true;
  f.Hq = f.Hkv = 2;
  f.causal = f.lse = true;
  add(f);
  return add.take();
}

}  // namespace sdpa_test
