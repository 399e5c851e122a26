// Internal: generic (CUDA-core, no tensor cores) forward used for head dims
// the tensor-core kernel does not cover: any E, Ev that are multiples of 8 and
// <= 256 (including E != Ev). Correctness first; it is several times slower
// than the tensor-core path and exists so that the compiler never has to
// reject a legal `attn.sdpa` with a small or odd head dim.
//
// One warp per query row. Keys are processed 32 at a time, one key per lane:
// each lane computes a full q.k dot product (q row in smem as f32, k row read
// with 16-byte loads), the warp does an online-softmax update with butterfly
// max, then P is broadcast lane by lane (shfl) and every lane accumulates the
// output channels c = lane + 32 i (coalesced V reads). Same semantics as the
// tensor-core kernel, except that P stays in f32 (no rounding to the input
// dtype before P.V).
//
// It is also the f32 kernel: with kF32 every element is a 4-byte float and
// all the math is f32 FMA (no rounding to tf32/bf16 anywhere), so f32 models
// get f32 accuracy (errors ~1e-6 relative) at CUDA-core speed.
#pragma once

#include "fwd_params.h"
#include "kernel_common.h"
#include "score_mod.h"
#include "seq_view.h"

namespace attn {
namespace detail {

// Element access by storage type: 16-bit (f16, or bf16 with kBF16) or f32.
// Indices are in elements; `load8` needs 8 elements starting 16-byte aligned.
template <class Ops, bool kBF16, bool kF32>
struct GenElem {
  static ATTN_DEV float load(const void* base, int64_t i) {
    if constexpr (kF32) return Ops::ld_f32(static_cast<const float*>(base) + i);
    else return Ops::template to_float<kBF16>(Ops::ld_u16(static_cast<const uint16_t*>(base) + i));
  }
  static ATTN_DEV void load8(const void* base, int64_t i, float (&out)[8]) {
    if constexpr (kF32) {
      const float* f = static_cast<const float*>(base) + i;
      ATTN_UNROLL
      for (int h = 0; h < 2; ++h) {
        const U4 u = Ops::ld_u4(reinterpret_cast<const uint16_t*>(f + 4 * h));
        const uint32_t w[4] = {u.x, u.y, u.z, u.w};
        ATTN_UNROLL
        for (int k = 0; k < 4; ++k) out[4 * h + k] = bit_cast_f32(w[k]);
      }
    } else {
      const U4 u = Ops::ld_u4(static_cast<const uint16_t*>(base) + i);
      const uint32_t w[4] = {u.x, u.y, u.z, u.w};
      ATTN_UNROLL
      for (int k = 0; k < 4; ++k) {
        out[2 * k] = Ops::template to_float<kBF16>(static_cast<uint16_t>(w[k] & 0xFFFFu));
        out[2 * k + 1] = Ops::template to_float<kBF16>(static_cast<uint16_t>(w[k] >> 16));
      }
    }
  }
  // Elements i and i + 1 (i even): one 32-bit store of a 16-bit pair, or two f32 stores.
  static ATTN_DEV void store2(void* base, int64_t i, float a, float b) {
    if constexpr (kF32) {
      Ops::st_f32(static_cast<float*>(base) + i, a);
      Ops::st_f32(static_cast<float*>(base) + i + 1, b);
    } else {
      Ops::st_u32(static_cast<uint16_t*>(base) + i, Ops::template pack2<kBF16>(a, b));
    }
  }
};

// The masks and the band applied to score x (log2 domain) of query `row`,
// key j; `mrow` is the mask offset of the row.
template <class Ops, class Elem>
ATTN_DEV float masked_score(const FwdParams& p, float x, int64_t mrow, int row, int j) {
  if (p.mask_kind == ATTN_MASK_BOOL) {
    if (bool_mask_removes(Ops::ld_u8(static_cast<const uint8_t*>(p.mask) + mrow + j), p.mask_drop)) x = p.masked_log2;
  } else if (p.mask_kind == ATTN_MASK_ADDITIVE) {
    x += Elem::load(p.mask, mrow + j) * kLog2e;
  }
  if (outside_band(row, j, p.win_left, p.win_right)) x = p.masked_log2;
  return x;
}

// One online-softmax step of a row whose next 32 scores are spread one per
// lane: updates the running max and this lane's partial sum, rescales the
// accumulators, and returns this lane's exp2(x - max). While every score so
// far is -inf the offset is 0 (exp2(-inf) = 0, not NaN); the caller decides
// at the end whether the whole row was -inf.
template <class Ops>
ATTN_DEV float online_softmax_step(float x, float& m_run, float& l_run, float (&o)[kGenMaxHeadDim / 32]) {
  float cmax = x;
  ATTN_UNROLL
  for (int off = 16; off > 0; off >>= 1) cmax = fmaxf(cmax, Ops::shfl_xor(cmax, off));
  const float m_new = fmaxf(m_run, cmax);
  const float m_use = (m_new == -INFINITY) ? 0.f : m_new;
  const float alpha = Ops::exp2(m_run - m_use);
  const float pj = Ops::exp2(x - m_use);
  m_run = m_new;
  l_run = l_run * alpha + pj;
  ATTN_UNROLL
  for (int i = 0; i < kGenMaxHeadDim / 32; ++i) o[i] *= alpha;
  return pj;
}

// Writes output row (b, h, row) (a memory row) held as kGenMaxHeadDim / 32 channels per
// lane (channel lane + 32 i), times `inv` (dead_row_inv for a dead row), and
// its lse (natural log) from the log2-domain `lse2`; a dead row's lse is -inf. Pairs
// of channels go out as one store by the lane owning the even channel; the
// odd channel's value comes from lane + 1 (c + 1 = lane+1 + 32 i).
template <class Ops, class Elem>
ATTN_DEV void store_out_row(const FwdParams& p, const float (&o)[kGenMaxHeadDim / 32], float inv, bool dead,
                            float lse2, int b, int h, int row, int lane) {
  const int64_t orow = b * p.o_sb + h * p.o_sh + static_cast<int64_t>(row) * p.o_sl;
  ATTN_UNROLL
  for (int i = 0; i < kGenMaxHeadDim / 32; ++i) {
    const float mine = o[i] * inv;
    const float next = Ops::shfl_xor(mine, 1);
    const int c = lane + 32 * i;
    if ((lane & 1) == 0 && c < p.Ev) Elem::store2(p.out, orow + c, mine, next);
  }
  if (p.lse != nullptr && lane == 0) {
    const float lse = dead ? -INFINITY : lse2 * kLn2;
    Ops::st_f32(p.lse + (static_cast<int64_t>(b) * p.Hq + h) * p.L + row, lse);
  }
}

// Computes one output row: coordinate row `row` (seq_view.h) of grid z
// (batch, or batch x sequence). `row < p.L` must hold (the caller branches
// on it uniformly per warp); a row past its sequence (packed) is left alone,
// a padded row written 0. `sq` is this warp's smem scratch of >= p.E floats.
template <class Ops, bool kBF16, bool kF32 = false, class Mod = NoScoreMod>
ATTN_DEV void generic_fwd_row(const FwdParams& p, int row, int h, int z, int lane, float* sq) {
  using Elem = GenElem<Ops, kBF16, kF32>;
  constexpr int kMaxOut = kGenMaxHeadDim / 32;  // output channels per lane
  const float kNegInf = -INFINITY;
  const int hk = h / p.group;
  const SeqView sv = seq_view<Ops>(p, z);
  if (row >= sv.n_rows) return;  // warp-uniform
  const int b = sv.b;
  const int mem_row = sv.q_row0 + row;

  float o[kMaxOut];
  ATTN_UNROLL
  for (int i = 0; i < kMaxOut; ++i) o[i] = 0.f;
  if (!seq_row_real(sv, row)) {  // a padded query row: 0, lse -inf
    store_out_row<Ops, Elem>(p, o, 1.f, true, 0.f, b, h, mem_row, lane);
    return;
  }

  // Element offsets (the storage type is only known to Elem).
  const int64_t qrow = b * p.q_sb + h * p.q_sh + static_cast<int64_t>(mem_row) * p.q_sl;
  const int64_t kb = b * p.k_sb + hk * p.k_sh + static_cast<int64_t>(sv.k_row0) * p.k_sl;
  const int64_t vb = b * p.v_sb + hk * p.v_sh + static_cast<int64_t>(sv.k_row0) * p.v_sl;
  const int64_t mrow = b * p.m_sb + h * p.m_sh + static_cast<int64_t>(row) * p.m_sl;

  for (int e = lane; e < p.E; e += 32) sq[e] = Elem::load(p.q, qrow + e);
  Ops::syncwarp();

  float m_run = kNegInf;  // log2 domain
  float l_run = 0.f;      // this lane's partial sum

  // The sequence's real keys; with a band (causal, window) and
  // masked_value == -inf keys outside it contribute 0, so only the band is
  // visited.
  int j_begin = sv.k_lo, j_end = sv.k_hi;
  if (p.band_skip) {
    int b0, b1;
    band_key_tiles(row, row, p.win_left, p.win_right, sv.k_hi, 1, &b0, &b1);
    j_begin = j_begin > b0 ? j_begin : b0;
    j_end = imin(j_end, b1);
  }
  for (int j0 = j_begin; j0 < j_end; j0 += 32) {
    const int j = j0 + lane;
    float x = kNegInf;
    if (j < j_end) {
      const int64_t krow = kb + static_cast<int64_t>(j) * p.k_sl;
      float dot = 0.f;
      for (int e = 0; e < p.E; e += 8) {
        float kv[8];
        Elem::load8(p.k, krow + e, kv);
        ATTN_UNROLL
        for (int i = 0; i < 8; ++i) dot += sq[e + i] * kv[i];
      }
      x = masked_score<Ops, Elem>(p, modified_score_log2<Ops, Mod>(p, dot, b, h, row, j), mrow, row, j);
    }
    const float pj = online_softmax_step<Ops>(x, m_run, l_run, o);
    const int n_valid = imin(32, j_end - j0);
    for (int jj = 0; jj < n_valid; ++jj) {
      const float pb = Ops::shfl_idx(pj, jj);
      const int64_t vrow = vb + static_cast<int64_t>(j0 + jj) * p.v_sl;
      ATTN_UNROLL
      for (int i = 0; i < kMaxOut; ++i) {
        const int c = lane + 32 * i;
        if (c < p.Ev) o[i] += pb * Elem::load(p.v, vrow + c);
      }
    }
  }

  float l = l_run;
  ATTN_UNROLL
  for (int off = 16; off > 0; off >>= 1) l += Ops::shfl_xor(l, off);
  const bool dead = (m_run == kNegInf);  // every score -inf -> NaN row (torch semantics), or o with safe_softmax
  const float inv = dead ? dead_row_inv(p.safe_softmax) : 1.f / l;
  store_out_row<Ops, Elem>(p, o, inv, dead, dead ? 0.f : m_run + Ops::log2(l), b, h, mem_row, lane);
}

}  // namespace detail
}  // namespace attn
