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
#pragma once

#include "fwd_params.h"
#include "kernel_common.h"

namespace attn {
namespace detail {

// Computes one output row. `row < p.L` must hold (the caller branches on it
// uniformly per warp). `sq` is this warp's smem scratch of >= p.E floats.
template <class Ops, bool kBF16>
ATTN_DEV void generic_fwd_row(const FwdParams& p, int row, int h, int b, int lane, float* sq) {
  constexpr int kMaxOut = kGenMaxHeadDim / 32;  // output channels per lane
  const float kNegInf = -INFINITY;
  const int hk = h / p.group;

  const uint16_t* qrow = static_cast<const uint16_t*>(p.q) + b * p.q_sb + h * p.q_sh + static_cast<int64_t>(row) * p.q_sl;
  const uint16_t* kb = static_cast<const uint16_t*>(p.k) + b * p.k_sb + hk * p.k_sh;
  const uint16_t* vb = static_cast<const uint16_t*>(p.v) + b * p.v_sb + hk * p.v_sh;
  const int64_t mrow = b * p.m_sb + h * p.m_sh + static_cast<int64_t>(row) * p.m_sl;

  for (int e = lane; e < p.E; e += 32) sq[e] = Ops::template to_float<kBF16>(Ops::ld_u16(qrow + e));
  Ops::syncwarp();

  float o[kMaxOut];
  ATTN_UNROLL
  for (int i = 0; i < kMaxOut; ++i) o[i] = 0.f;
  float m_run = kNegInf;  // log2 domain
  float l_run = 0.f;      // this lane's partial sum

  // Causal with masked_value == -inf: keys after `row` contribute 0, stop early.
  const int j_end = p.causal_skip ? imin(p.S, row + 1) : p.S;
  for (int j0 = 0; j0 < j_end; j0 += 32) {
    const int j = j0 + lane;
    float x = kNegInf;
    if (j < j_end) {
      const uint16_t* krow = kb + static_cast<int64_t>(j) * p.k_sl;
      float dot = 0.f;
      for (int e = 0; e < p.E; e += 8) {
        const U4 u = Ops::ld_u4(krow + e);
        const uint32_t w[4] = {u.x, u.y, u.z, u.w};
        ATTN_UNROLL
        for (int i = 0; i < 4; ++i) {
          dot += sq[e + 2 * i] * Ops::template to_float<kBF16>(static_cast<uint16_t>(w[i] & 0xFFFFu));
          dot += sq[e + 2 * i + 1] * Ops::template to_float<kBF16>(static_cast<uint16_t>(w[i] >> 16));
        }
      }
      x = dot * p.scale_log2;
      if (p.mask_kind == ATTN_MASK_BOOL) {
        if (Ops::ld_u8(static_cast<const uint8_t*>(p.mask) + mrow + j) == 0) x = p.masked_log2;
      } else if (p.mask_kind == ATTN_MASK_ADDITIVE) {
        x += Ops::template to_float<kBF16>(Ops::ld_u16(static_cast<const uint16_t*>(p.mask) + mrow + j)) * kLog2e;
      }
      if (p.is_causal && j > row) x = p.masked_log2;
    }
    float cmax = x;
    ATTN_UNROLL
    for (int off = 16; off > 0; off >>= 1) cmax = fmaxf(cmax, Ops::shfl_xor(cmax, off));
    const float m_new = fmaxf(m_run, cmax);
    const float m_use = (m_new == kNegInf) ? 0.f : m_new;
    const float alpha = Ops::exp2(m_run - m_use);
    const float pj = Ops::exp2(x - m_use);
    m_run = m_new;
    l_run = l_run * alpha + pj;
    ATTN_UNROLL
    for (int i = 0; i < kMaxOut; ++i) o[i] *= alpha;
    const int n_valid = imin(32, j_end - j0);
    for (int jj = 0; jj < n_valid; ++jj) {
      const float pb = Ops::shfl_idx(pj, jj);
      const uint16_t* vrow = vb + static_cast<int64_t>(j0 + jj) * p.v_sl;
      ATTN_UNROLL
      for (int i = 0; i < kMaxOut; ++i) {
        const int c = lane + 32 * i;
        if (c < p.Ev) o[i] += pb * Ops::template to_float<kBF16>(Ops::ld_u16(vrow + c));
      }
    }
  }

  float l = l_run;
  ATTN_UNROLL
  for (int off = 16; off > 0; off >>= 1) l += Ops::shfl_xor(l, off);
  const bool dead = (m_run == kNegInf);  // every score -inf -> NaN row (torch semantics)
  const float inv = dead ? NAN : 1.f / l;
  uint16_t* orow = static_cast<uint16_t*>(p.out) + b * p.o_sb + h * p.o_sh + static_cast<int64_t>(row) * p.o_sl;
  // Pairs of channels are written as one 32-bit store by the lane owning the
  // even channel; the odd channel's value comes from lane + 1 (c + 1 = lane+1 + 32 i).
  ATTN_UNROLL
  for (int i = 0; i < kMaxOut; ++i) {
    const float mine = o[i] * inv;
    const float next = Ops::shfl_xor(mine, 1);
    const int c = lane + 32 * i;
    if ((lane & 1) == 0 && c < p.Ev) Ops::st_u32(orow + c, Ops::template pack2<kBF16>(mine, next));
  }
  if (p.lse != nullptr && lane == 0) {
    const float lse = dead ? kNegInf : (m_run + Ops::log2(l)) * kLn2;
    Ops::st_f32(p.lse + (static_cast<int64_t>(b) * p.Hq + h) * p.L + row, lse);
  }
}

}  // namespace detail
}  // namespace attn
