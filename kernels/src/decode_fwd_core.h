// Internal: split-key decode (Flash-Decoding) for short query blocks
// (L <= kDecMaxL) against long key sequences, on CUDA cores.
//
// A plain launch has only B x Hq x ceil(L / Br) blocks, far too few to fill a
// GPU when B and the head count are small, and every block streams all S keys.
// Here the keys are split into `n_splits` ranges processed by separate blocks,
// each writing a partial result (the output normalised by its own row sum,
// and that sum's log2-domain log-sum-exp) to a caller-provided f32 workspace;
// a combine kernel then merges the splits of every row:
//   M = max_s lse_s,  w_s = exp2(lse_s - M),  out = sum_s w_s o_s / sum_s w_s,
//   lse = M + log2(sum_s w_s).
// A split that sees no key (masked, or outside the band) has lse -inf and
// weight 0; a row whose splits are all -inf is NaN (lse -inf), like every
// other path, or 0 with safe_softmax. A NaN partial (NaN score) makes the
// row NaN.
//
// GQA without repeating K/V: the query rows of all `group` heads sharing one
// kv head are packed into one row space of group x L rows (packed row
// r = (h % group) * L + i), so each K/V tile is read from memory once per kv
// head and used by all of them. A block holds kDecRows packed rows (4 warps x
// kDecRowsPerWarp) and walks its split in tiles of kDecTileN = 32 keys
// (one key per lane for the scores, as in the generic kernel), staged in shared
// memory with cp.async.
//
// Semantics and rounding are the generic kernel's (P stays in f32).
#pragma once

#include "fwd_params.h"
#include "generic_fwd_core.h"
#include "kernel_common.h"
#include "seq_view.h"

namespace attn {
namespace detail {

// Shared memory of one decode block (bytes); K/V rows are padded by 16 bytes
// so that the 16-byte row reads of a quarter warp hit distinct banks.
ATTN_HD int decode_smem_row_bytes(int dim, int esize) { return dim * esize + 16; }
ATTN_HD int decode_smem_bytes(int E, int Ev, int esize) {
  return kDecRows * E * 4 + kDecTileN * (decode_smem_row_bytes(E, esize) + decode_smem_row_bytes(Ev, esize));
}

// cp.async of keys [k0, k0 + kDecTileN) of one head's K or V (rows of `dim`
// elements) into `s`; keys outside [k_start, k_end) (another split's, beyond
// S, or padding) are zero-filled so that they never contribute.
template <class Ops>
ATTN_DEV void decode_load_tile(unsigned char* s, const void* g, int64_t base, int64_t row_stride, int dim, int esize,
                               int k0, int k_start, int k_end, int tid) {
  const int chunks_per_row = dim * esize / 16;
  const int row_bytes = decode_smem_row_bytes(dim, esize);
  for (int c = tid; c < kDecTileN * chunks_per_row; c += kTcThreads) {
    const int r = c / chunks_per_row;
    const int cc = c % chunks_per_row;
    const bool pred = k0 + r >= k_start && k0 + r < k_end;
    const unsigned char* src = static_cast<const unsigned char*>(g) + base * esize;
    if (pred) src += (static_cast<int64_t>(k0 + r) * row_stride) * esize + cc * 16;
    Ops::cp_async_16(reinterpret_cast<uint16_t*>(s + r * row_bytes + cc * 16), reinterpret_cast<const uint16_t*>(src),
                     pred);
  }
}

// Element `i` of a K/V row staged in shared memory.
template <class Ops, bool kBF16, bool kF32>
ATTN_DEV float decode_smem_elem(const unsigned char* row, int i) {
  if constexpr (kF32) return Ops::lds_f32(reinterpret_cast<const float*>(row) + i);
  else return Ops::template to_float<kBF16>(Ops::lds_u16(reinterpret_cast<const uint16_t*>(row) + i));
}

// q . k for a q row in f32 (smem, this warp's) and a staged key row.
template <class Ops, bool kBF16, bool kF32>
ATTN_DEV float decode_dot(const float* q, const unsigned char* krow, int E) {
  float dot = 0.f;
  for (int e = 0; e < E; e += 16 / (kF32 ? 4 : 2)) {
    const U4 u = Ops::lds_u4(krow + e * (kF32 ? 4 : 2));
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
    ATTN_UNROLL
    for (int k = 0; k < 4; ++k) {
      if constexpr (kF32) {
        dot += q[e + k] * bit_cast_f32(w[k]);
      } else {
        dot += q[e + 2 * k] * Ops::template to_float<kBF16>(static_cast<uint16_t>(w[k] & 0xFFFFu));
        dot += q[e + 2 * k + 1] * Ops::template to_float<kBF16>(static_cast<uint16_t>(w[k] >> 16));
      }
    }
  }
  return dot;
}

// The query index range [*i_lo, *i_hi] of packed rows [r0, r1) (r1 > r0).
ATTN_HD void decode_query_range(int r0, int r1, int L, int* i_lo, int* i_hi) {
  if (r1 - r0 >= L || r0 / L != (r1 - 1) / L) {
    *i_lo = 0;
    *i_hi = L - 1;
  } else {
    *i_lo = r0 % L;
    *i_hi = (r1 - 1) % L;
  }
}

// This warp's rows of the block starting at packed row r_block (of R):
// packed row r -> query head h_of, query index i_of (a coordinate of sv;
// live: r < R and a real row of the sequence), and their q rows into sq (f32).
template <class Ops, bool kBF16, bool kF32>
ATTN_DEV void decode_load_q_rows(const FwdParams& p, const SeqView& sv, int R, int r_block, int hk, int warp, int lane,
                                 float* sq,
                                 int (&h_of)[kDecRowsPerWarp], int (&i_of)[kDecRowsPerWarp],
                                 bool (&live)[kDecRowsPerWarp]) {
  using Elem = GenElem<Ops, kBF16, kF32>;
  ATTN_UNROLL
  for (int w = 0; w < kDecRowsPerWarp; ++w) {
    const int r = r_block + warp * kDecRowsPerWarp + w;
    live[w] = r < R && seq_row_real(sv, r % p.L) && r % p.L < sv.n_rows;
    h_of[w] = hk * p.group + (live[w] ? r / p.L : 0);
    i_of[w] = live[w] ? r % p.L : 0;
    if (live[w]) {
      const int64_t qrow =
          sv.b * p.q_sb + h_of[w] * p.q_sh + (static_cast<int64_t>(sv.q_row0) + i_of[w]) * p.q_sl;
      float* sqr = sq + (warp * kDecRowsPerWarp + w) * p.E;
      for (int e = lane; e < p.E; e += 32) sqr[e] = Elem::load(p.q, qrow + e);
    }
  }
  Ops::syncwarp();
}

// The split's partial results of this warp's live rows: o / l and the
// log2-domain lse; a split that saw no finite score writes o = 0 and
// lse = -inf (weight 0 in the combine).
template <class Ops>
ATTN_DEV void decode_write_partials(const FwdParams& p, int R, int split, int r_block, int hk, int z, int warp,
                                    int lane, const bool (&live)[kDecRowsPerWarp],
                                    const float (&o)[kDecRowsPerWarp][kGenMaxHeadDim / 32],
                                    const float (&m_run)[kDecRowsPerWarp], const float (&l_run)[kDecRowsPerWarp]) {
  constexpr int kMaxOut = kGenMaxHeadDim / 32;
  const float kNegInf = -INFINITY;
  ATTN_UNROLL
  for (int w = 0; w < kDecRowsPerWarp; ++w) {
    if (!live[w]) continue;
    float l = l_run[w];
    ATTN_UNROLL
    for (int off = 16; off > 0; off >>= 1) l += Ops::shfl_xor(l, off);
    const bool empty = m_run[w] == kNegInf;
    const float inv = empty ? 0.f : 1.f / l;
    const int r = r_block + warp * kDecRowsPerWarp + w;
    const int64_t prow = ((static_cast<int64_t>(z) * p.Hkv + hk) * p.n_splits + split) * R + r;
    ATTN_UNROLL
    for (int c = 0; c < kMaxOut; ++c) {
      const int ch = lane + 32 * c;
      if (ch < p.Ev) Ops::st_f32(p.ws_o + prow * p.Ev + ch, o[w][c] * inv);
    }
    if (lane == 0) Ops::st_f32(p.ws_lse + prow, empty ? kNegInf : m_run[w] + Ops::log2(l));
  }
}

// One block of the split pass: packed rows [rb * kDecRows, +kDecRows) of kv
// head hk, grid z (batch, or batch x sequence: seq_view.h), keys of split
// `split`. smem: decode_smem_bytes.
template <class Ops, bool kBF16, bool kF32, class Mod = NoScoreMod>
ATTN_DEV void decode_split_block(const FwdParams& p, int split, int rb, int hk, int z, int tid, unsigned char* smem) {
  using Elem = GenElem<Ops, kBF16, kF32>;
  constexpr int kMaxOut = kGenMaxHeadDim / 32;
  constexpr int esize = kF32 ? 4 : 2;
  const float kNegInf = -INFINITY;
  const int warp = tid >> 5, lane = tid & 31;
  const int R = p.group * p.L;  // packed rows of this kv head
  const int r_block = rb * kDecRows;
  const int r_block_end = imin(r_block + kDecRows, R);

  float* sq = reinterpret_cast<float*>(smem);  // [kDecRows][E]
  unsigned char* sK = smem + kDecRows * p.E * 4;
  unsigned char* sV = sK + kDecTileN * decode_smem_row_bytes(p.E, esize);
  const int k_row_bytes = decode_smem_row_bytes(p.E, esize);
  const int v_row_bytes = decode_smem_row_bytes(p.Ev, esize);

  const SeqView sv = seq_view<Ops>(p, z);
  const int b = sv.b;
  int h_of[kDecRowsPerWarp], i_of[kDecRowsPerWarp];
  bool live[kDecRowsPerWarp];
  decode_load_q_rows<Ops, kBF16, kF32>(p, sv, R, r_block, hk, warp, lane, sq, h_of, i_of, live);

  // Key tiles of this split, narrowed to the sequence's real keys and to the
  // band of the block's rows; none when the block holds no real row.
  const int k_begin = split * p.split_len;
  const int k_start = k_begin > sv.k_lo ? k_begin : sv.k_lo;
  const int k_end = imin(sv.k_hi, k_begin + p.split_len);
  int t_begin = k_start / kDecTileN, t_end = ceil_div(k_end, kDecTileN);
  int i_lo, i_hi;
  decode_query_range(r_block, r_block_end, p.L, &i_lo, &i_hi);
  const int real_hi = imin(sv.r_hi, sv.n_rows);
  if (k_start >= k_end || i_hi < sv.r_lo || i_lo >= real_hi) t_end = t_begin;
  if (p.band_skip && t_begin < t_end) {
    int b0, b1;
    band_key_tiles(i_lo > sv.r_lo ? i_lo : sv.r_lo, imin(i_hi, real_hi - 1), p.win_left, p.win_right, sv.k_hi,
                   kDecTileN, &b0, &b1);
    t_begin = t_begin > b0 ? t_begin : b0;
    t_end = imin(t_end, b1);
  }

  float o[kDecRowsPerWarp][kMaxOut];
  float m_run[kDecRowsPerWarp], l_run[kDecRowsPerWarp];
  ATTN_UNROLL
  for (int w = 0; w < kDecRowsPerWarp; ++w) {
    m_run[w] = kNegInf;
    l_run[w] = 0.f;
    ATTN_UNROLL
    for (int c = 0; c < kMaxOut; ++c) o[w][c] = 0.f;
  }

  const int64_t kbase = b * p.k_sb + hk * p.k_sh + static_cast<int64_t>(sv.k_row0) * p.k_sl;
  const int64_t vbase = b * p.v_sb + hk * p.v_sh + static_cast<int64_t>(sv.k_row0) * p.v_sl;
  for (int t = t_begin; t < t_end; ++t) {
    const int k0 = t * kDecTileN;
    Ops::sync();  // every warp is done with the previous tile
    decode_load_tile<Ops>(sK, p.k, kbase, p.k_sl, p.E, esize, k0, k_start, k_end, tid);
    decode_load_tile<Ops>(sV, p.v, vbase, p.v_sl, p.Ev, esize, k0, k_start, k_end, tid);
    Ops::cp_async_commit();
    Ops::cp_async_wait_all();
    Ops::sync();

    const int j = k0 + lane;
    const int n_valid = imin(kDecTileN, k_end - k0);
    ATTN_UNROLL
    for (int w = 0; w < kDecRowsPerWarp; ++w) {
      if (!live[w]) continue;  // warp-uniform
      const int row = i_of[w];
      float x = kNegInf;
      if (j >= k_start && j < k_end) {
        const float qk =
            decode_dot<Ops, kBF16, kF32>(sq + (warp * kDecRowsPerWarp + w) * p.E, sK + lane * k_row_bytes, p.E);
        const int64_t mrow = b * p.m_sb + h_of[w] * p.m_sh + static_cast<int64_t>(row) * p.m_sl;
        x = masked_score<Ops, Elem>(p, modified_score_log2<Ops, Mod>(p, qk, b, h_of[w], row, j), mrow,
                                    row, j);
      }
      const float pj = online_softmax_step<Ops>(x, m_run[w], l_run[w], o[w]);
      for (int jj = 0; jj < n_valid; ++jj) {
        const float pb = Ops::shfl_idx(pj, jj);
        const unsigned char* vrow = sV + jj * v_row_bytes;
        ATTN_UNROLL
        for (int c = 0; c < kMaxOut; ++c) {
          const int ch = lane + 32 * c;
          if (ch < p.Ev) o[w][c] += pb * decode_smem_elem<Ops, kBF16, kF32>(vrow, ch);
        }
      }
    }
  }

  decode_write_partials<Ops>(p, R, split, r_block, hk, z, warp, lane, live, o, m_run, l_run);
}

// The combine pass for output row (z, h, i) (i a coordinate of grid z's
// sequence, seq_view.h), one warp. A padded row is 0 (lse -inf) without
// reading the workspace, which holds nothing for it; a row past its
// sequence (packed) is another block's.
template <class Ops, bool kBF16, bool kF32>
ATTN_DEV void decode_combine_row(const FwdParams& p, int i, int h, int z, int lane) {
  using Elem = GenElem<Ops, kBF16, kF32>;
  constexpr int kMaxOut = kGenMaxHeadDim / 32;
  const float kNegInf = -INFINITY;
  const SeqView sv = seq_view<Ops>(p, z);
  if (i >= sv.n_rows) return;
  const int b = sv.b;
  const int hk = h / p.group;
  const int R = p.group * p.L;
  const int r = (h % p.group) * p.L + i;
  const int64_t row0 = (static_cast<int64_t>(z) * p.Hkv + hk) * p.n_splits * R + r;  // split s: row0 + s * R
  if (!seq_row_real(sv, i)) {
    float zero[kMaxOut];
    ATTN_UNROLL
    for (int c = 0; c < kMaxOut; ++c) zero[c] = 0.f;
    store_out_row<Ops, Elem>(p, zero, 1.f, true, 0.f, b, h, sv.q_row0 + i, lane);
    return;
  }

  float mx = kNegInf;
  for (int s = lane; s < p.n_splits; s += 32) mx = fmaxf(mx, Ops::ld_f32(p.ws_lse + row0 + static_cast<int64_t>(s) * R));
  ATTN_UNROLL
  for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, Ops::shfl_xor(mx, off));
  // No split saw a finite score: every weight is exp2(-inf - 0) = 0, so o
  // sums 0 * partial, which is 0 or NaN (a NaN score), as a dead row's
  // accumulator in the other kernels.
  const bool dead = mx == kNegInf;
  const float m_use = dead ? 0.f : mx;

  float o[kMaxOut];
  ATTN_UNROLL
  for (int c = 0; c < kMaxOut; ++c) o[c] = 0.f;
  float wsum = 0.f;
  for (int s = 0; s < p.n_splits; ++s) {
    const int64_t prow = row0 + static_cast<int64_t>(s) * R;
    const float w = Ops::exp2(Ops::ld_f32(p.ws_lse + prow) - m_use);
    wsum += w;
    ATTN_UNROLL
    for (int c = 0; c < kMaxOut; ++c) {
      const int ch = lane + 32 * c;
      if (ch < p.Ev) o[c] += w * Ops::ld_f32(p.ws_o + prow * p.Ev + ch);
    }
  }
  const float inv = dead ? dead_row_inv(p.safe_softmax) : 1.f / wsum;
  store_out_row<Ops, Elem>(p, o, inv, dead, dead ? 0.f : mx + Ops::log2(wsum), b, h, sv.q_row0 + i, lane);
}

}  // namespace detail
}  // namespace attn
