// Internal: the sequence a thread block works on (attn_sdpa_fwd_args'
// q_lengths / kv_lengths / padding_side), shared by every kernel body so
// that they all read the lengths the same way.
//
// A block's grid z indexes (batch slice, sequence) = (z / n_seqs, z % n_seqs).
// Its rows and keys are given in "coordinates": the padded-layout indices
// (right / left padding, or no lengths), or the positions within the
// sequence (packed), which are what is_causal, the window, the mask and a
// score modifier see. Memory row = coordinate + q_row0 (k_row0 for keys).
//   rows [0, n_rows) of the coordinate space are this block's to write;
//   of them [r_lo, r_hi) are real (the others are written 0, lse -inf);
//   keys [k_lo, k_hi) are real (the others take no part).
// Without lengths: rows [0, L) all real, keys [0, S) all real.
#pragma once

#include "fwd_params.h"
#include "kernel_common.h"

namespace attn {
namespace detail {

struct SeqView {
  int b;                  // batch slice (tensor dim 0)
  int q_row0, k_row0;     // memory row of coordinate 0 (packed: the prefix sums; else 0)
  int n_rows;             // coordinate rows to write: L (padded) or the sequence's length (packed)
  int r_lo, r_hi;         // real query rows
  int k_lo, k_hi;         // real keys
  bool lengths;           // lengths given: rows left with no key are 0 (the softmax is safe)
};

template <class Ops>
ATTN_DEV int64_t load_seq_length(const void* base, int i, int is_i64) {
  return is_i64 ? Ops::ld_i64(static_cast<const int64_t*>(base) + i) : Ops::ld_i32(static_cast<const int32_t*>(base) + i);
}

// Clamps v to [lo, hi] (out-of-range lengths must never index outside the tensors).
ATTN_HD int clamp_len(int64_t v, int lo, int hi) { return static_cast<int>(v < lo ? lo : (v > hi ? hi : v)); }

template <class Ops>
ATTN_DEV SeqView seq_view(const FwdParams& p, int z) {
  SeqView v;
  v.lengths = p.q_len != nullptr || p.kv_len != nullptr;
  v.q_row0 = v.k_row0 = 0;
  if (p.pad_side == ATTN_PAD_PACKED) {
    const int seq = z % p.n_seqs;
    v.b = z / p.n_seqs;
    // Exclusive prefix sums, clamped to the tensors' extents.
    int64_t qo = 0, ko = 0;
    for (int s = 0; s < seq; ++s) {
      qo += clamp_len(load_seq_length<Ops>(p.q_len, s, p.len_i64), 0, p.L);
      ko += clamp_len(load_seq_length<Ops>(p.kv_len, s, p.len_i64), 0, p.S);
    }
    v.q_row0 = clamp_len(qo, 0, p.L);
    v.k_row0 = clamp_len(ko, 0, p.S);
    v.n_rows = clamp_len(load_seq_length<Ops>(p.q_len, seq, p.len_i64), 0, p.L - v.q_row0);
    v.r_lo = 0;
    v.r_hi = v.n_rows;
    v.k_lo = 0;
    v.k_hi = clamp_len(load_seq_length<Ops>(p.kv_len, seq, p.len_i64), 0, p.S - v.k_row0);
    return v;
  }
  v.b = z;
  v.n_rows = p.L;
  const bool left = p.pad_side == ATTN_PAD_LEFT;
  const int nq = p.q_len ? clamp_len(load_seq_length<Ops>(p.q_len, z, p.len_i64), 0, p.L) : p.L;
  const int nk = p.kv_len ? clamp_len(load_seq_length<Ops>(p.kv_len, z, p.len_i64), 0, p.S) : p.S;
  v.r_lo = left ? p.L - nq : 0;
  v.r_hi = left ? p.L : nq;
  v.k_lo = left ? p.S - nk : 0;
  v.k_hi = left ? p.S : nk;
  return v;
}

// Whether coordinate row `row` of the view is a real query row.
ATTN_HD bool seq_row_real(const SeqView& v, int row) { return row >= v.r_lo && row < v.r_hi; }

}  // namespace detail
}  // namespace attn
