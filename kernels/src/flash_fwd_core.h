// Internal: FlashAttention-2 style forward, one thread block per
// (query tile, head, batch), 4 warps x (16 or 32) query rows, tensor cores
// through mma.sync.m16n8k16 (f32 accumulate). The tile shape is a TcConfig
// (fwd_params.h). Templated over the Ops policy
// (see kernel_common.h) so the identical body runs on the GPU and in the CPU
// emulator.
//
// Data flow per block (Br query rows, Bc keys per tile, D = head dim):
//
//   smem: sQ[Br][D+8], sK[Bc][D+8], sV[Bc][D+8]  (16-byte pad per row: the 8
//         row addresses of one ldmatrix phase then fall into 8 different
//         16-byte bank groups, so ldmatrix is conflict free without a swizzle)
//
//   cp.async Q, K_0                         ; commit ; wait ; sync
//   Q -> registers (ldmatrix, A fragments)  ; kept for the whole block (or
//                                             re-read from sQ per tile, kQInRegs=false)
//   for each key tile n:
//     (n > first) wait K_n ; sync               ; also: every warp is done with V_{n-1}
//     cp.async V_n -> sV ; commit           ; overlaps with S = Q K^T and softmax
//     S = Q K_n^T   (ldmatrix K, non-transposed: K rows are the mma "col" operand)
//     mask, online softmax in registers (log2 domain, exp2)
//     wait V_n ; sync                       ; also: every warp is done with sK
//     cp.async K_{n+1} -> sK ; commit       ; overlaps with O += P V
//     O += P V_n    (P re-used from the S accumulators as A fragments,
//                    V through ldmatrix.trans)
//   O /= l, write out (and LSE)
//
// K and V each have one smem buffer, but their loads are interleaved so that
// one is always in flight while the other is consumed (the FA2 schedule: a
// two-stage pipeline over the K/V pair). This keeps smem at 3 tiles
// (27-36 KiB for D=64, 51 KiB for D=128) so that several blocks fit per SM.
//
// Fragment layouts used (PTX ISA "Matrix Fragments for mma.m16n8k16", with
// g = lane / 4 and t = lane % 4):
//   A (16x16, row):  a0=(g, 2t..2t+1)  a1=(g+8, 2t..)  a2=(g, 2t+8..)  a3=(g+8, 2t+8..)
//   B (16x8, col):   b0=(k=2t..2t+1, n=g)  b1=(k=2t+8.., n=g)
//   C (16x8, f32):   c0,c1=(g, 2t..2t+1)  c2,c3=(g+8, 2t..2t+1)
//   ldmatrix.x4: lanes 8i..8i+7 give the row addresses of matrix i; register i
//   of lane l receives row l/4, columns 2(l%4), 2(l%4)+1 of matrix i (.trans:
//   rows 2(l%4), 2(l%4)+1 of column l/4).
#pragma once

#include "fwd_params.h"
#include "kernel_common.h"
#include "score_mod.h"
#include "seq_view.h"

namespace attn {
namespace detail {

// Issues the cp.async copies of a [kRows x D] tile starting at global row
// `row0` (rows outside [lo, hi) are zero-filled: out-of-range or padded keys
// then produce score 0 before masking and, more importantly, V rows of
// exactly 0 so that P(=0) * V never creates NaN from stale smem or padding).
template <class Ops, int D, int kRows>
ATTN_DEV void tc_load_tile(uint16_t* s, const uint16_t* g, int64_t row_stride, int row0, int lo, int hi, int tid) {
  constexpr int kChunksPerRow = D / 8;  // 16-byte chunks
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kTcThreads == 0, "tile must split evenly over the block");
  ATTN_UNROLL
  for (int i = 0; i < kChunks / kTcThreads; ++i) {
    const int c = tid + i * kTcThreads;
    const int r = c / kChunksPerRow;
    const int cc = c % kChunksPerRow;
    const int grow = row0 + r;
    const bool pred = grow >= lo && grow < hi;
    const uint16_t* src = pred ? g + static_cast<int64_t>(grow) * row_stride + cc * 8 : g;
    Ops::cp_async_16(s + r * (D + kTcSmemPad) + cc * 8, src, pred);
  }
}

// The register fragments of one thread of a Cfg block (in FA2's terms: the
// accumulators of the two gemms, the softmax statistics and Q's A operand).
// In mma row tile mt a thread owns query rows warp_row0 + 16 mt + g
// (accumulator elements 0, 1) and warp_row0 + 16 mt + g + 8 (elements 2, 3).
template <class Cfg>
struct TcFrags {
  static constexpr int kMT = Cfg::kMT;        // 16-row mma tiles per warp
  static constexpr int kDSteps = Cfg::D / 16;  // k-steps of Q K^T (and pairs of n8 tiles of O)
  static constexpr int kSTiles = Cfg::kBlockN / 8;  // n8 tiles of S per mma row tile
  static constexpr int kOTiles = Cfg::D / 8;        // n8 tiles of O per mma row tile
  static constexpr int kPSteps = Cfg::kBlockN / 16;  // k-steps of P V
  using S = float[kMT][kSTiles][4];    // scores, then probabilities, of one key tile
  using O = float[kMT][kOTiles][4];    // the output accumulator
  using Rows = float[kMT][2];          // one value per owned row
  using P = uint32_t[kMT][kPSteps][4];  // probabilities as A fragments of P V
  // Q as A fragments, when kept in registers.
  using Q = uint32_t[Cfg::kQInRegs ? kMT : 1][Cfg::kQInRegs ? kDSteps : 1][4];
};

// Where one thread sits in the mma tiles of its block.
struct TcThread {
  int lane;
  int g;          // mma "groupID": row within the 8-row half
  int t;          // mma "threadID_in_group": column pair
  int warp_q;     // first row of this thread's warp inside the block tile
  int warp_row0;  // ... as a query index
};

template <class Cfg>
ATTN_DEV TcThread tc_thread(int tid, int q0) {
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int warp_q = warp * 16 * Cfg::kMT;
  return TcThread{lane, lane >> 2, lane & 3, warp_q, q0 + warp_q};
}

// The A fragments of Q's rows of this warp for k-step kc. ldmatrix.x4
// matrices: 0 = rows 0-7 / cols 0-7 of the 16x16 block, 1 = rows 8-15 /
// cols 0-7, 2 = rows 0-7 / cols 8-15, 3 = rows 8-15 / cols 8-15, which is
// exactly a0..a3. Lane l addresses row l % 16, column half l / 16.
template <class Ops, class Cfg>
ATTN_DEV void tc_load_q_frag(uint32_t (&a)[4], const uint16_t* sQ, const TcThread& th, int mt, int kc) {
  Ops::ldsm_x4(a, sQ + (th.warp_q + 16 * mt + (th.lane & 15)) * Cfg::kStride + kc * 16 + (th.lane >> 4) * 8);
}

// ---- S = Q K^T ---------------------------------------------------------
// B operand = K^T: b0 = K[key g][d 2t..2t+1] = row g, cols 2t.. of the 8x8
// block with rows = keys and cols = d, i.e. a plain (non-.trans) ldmatrix of
// K as stored. One x4 covers keys np*16..+15 x d kc*16..+15: matrix 0 =
// keys 0-7/d 0-7 (b0 of n-tile 2np), 1 = keys 0-7/d 8-15 (b1), 2 = keys
// 8-15/d 0-7 (b0 of n-tile 2np+1), 3 = keys 8-15/d 8-15 (b1). Each K
// fragment is used by all kMT row tiles of the warp.
template <class Ops, bool kBF16, class Cfg>
ATTN_DEV void tc_gemm_qk(typename TcFrags<Cfg>::S& s, const typename TcFrags<Cfg>::Q& qf, const uint16_t* sQ,
                         const uint16_t* sK, const TcThread& th) {
  using F = TcFrags<Cfg>;
  ATTN_UNROLL
  for (int mt = 0; mt < F::kMT; ++mt) {
    ATTN_UNROLL
    for (int i = 0; i < F::kSTiles; ++i) s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.f;
  }
  ATTN_UNROLL
  for (int kc = 0; kc < F::kDSteps; ++kc) {
    uint32_t a[F::kMT][4];
    ATTN_UNROLL
    for (int mt = 0; mt < F::kMT; ++mt) {
      if constexpr (Cfg::kQInRegs) {
        a[mt][0] = qf[mt][kc][0];
        a[mt][1] = qf[mt][kc][1];
        a[mt][2] = qf[mt][kc][2];
        a[mt][3] = qf[mt][kc][3];
      } else {
        tc_load_q_frag<Ops, Cfg>(a[mt], sQ, th, mt, kc);
      }
    }
    ATTN_UNROLL
    for (int np = 0; np < F::kSTiles / 2; ++np) {
      uint32_t kf[4];
      Ops::ldsm_x4(kf, sK + (np * 16 + (th.lane & 7) + ((th.lane >> 4) << 3)) * Cfg::kStride + kc * 16 +
                           ((th.lane >> 3) & 1) * 8);
      ATTN_UNROLL
      for (int mt = 0; mt < F::kMT; ++mt) {
        Ops::template mma<kBF16>(s[mt][2 * np], a[mt], kf[0], kf[1]);
        Ops::template mma<kBF16>(s[mt][2 * np + 1], a[mt], kf[2], kf[3]);
      }
    }
  }
}

// ---- scale, masks, bounds (log2 domain) ---------------------------------
// The scores of key tile k0: scaled into the log2 domain, modified, masked
// (mask operand, band) and bounded (keys outside [k_lo, k_hi), past S or
// padding, are -inf). Element e of
// n-tile nt of row tile mt sits at query row warp_row0 + 16 mt + g + 8 (e / 2)
// and key k0 + 8 nt + 2t + e % 2. A tile that needs no per-element check
// is only scaled.
template <class Ops, bool kBF16, class Cfg, bool kHasMask, class Mod>
ATTN_DEV void tc_mask_scores(const FwdParams& p, typename TcFrags<Cfg>::S& s, const int64_t (&mask_off)[Cfg::kMT][2],
                             int b, int h, int k0, int k_lo, int k_hi, const TcThread& th) {
  using F = TcFrags<Cfg>;
  const bool need_kbound = k0 < k_lo || k0 + Cfg::kBlockN > k_hi;
  // Whether some (row, key) pair of this warp's rows and this tile lies
  // outside the band: the extreme differences key - row are checked.
  const bool need_band = p.has_band && (k0 + Cfg::kBlockN - 1 - th.warp_row0 > p.win_right ||
                                        k0 - (th.warp_row0 + 16 * F::kMT - 1) < -p.win_left);
  if (!Mod::kIdentity || kHasMask || need_kbound || need_band) {
    ATTN_UNROLL
    for (int mt = 0; mt < F::kMT; ++mt) {
      ATTN_UNROLL
      for (int nt = 0; nt < F::kSTiles; ++nt) {
        ATTN_UNROLL
        for (int e = 0; e < 4; ++e) {
          const int row = th.warp_row0 + 16 * mt + th.g + (e >> 1) * 8;
          const int col = k0 + nt * 8 + 2 * th.t + (e & 1);
          float x = modified_score_log2<Ops, Mod>(p, s[mt][nt][e], b, h, row, col);
          if (kHasMask && row < p.L && col < p.S) {
            if (p.mask_kind == ATTN_MASK_BOOL) {
              const uint8_t byte = Ops::ld_u8(static_cast<const uint8_t*>(p.mask) + mask_off[mt][e >> 1] + col);
              if (bool_mask_removes(byte, p.mask_drop)) x = p.masked_log2;
            } else {
              x += Ops::template to_float<kBF16>(
                       Ops::ld_u16(static_cast<const uint16_t*>(p.mask) + mask_off[mt][e >> 1] + col)) *
                   kLog2e;
            }
          }
          if (outside_band(row, col, p.win_left, p.win_right)) x = p.masked_log2;  // replaces, like masked_fill
          if (col < k_lo || col >= k_hi) x = -INFINITY;  // keys past S or padding never count
          s[mt][nt][e] = x;
        }
      }
    }
  } else {
    ATTN_UNROLL
    for (int mt = 0; mt < F::kMT; ++mt) {
      ATTN_UNROLL
      for (int nt = 0; nt < F::kSTiles; ++nt) {
        ATTN_UNROLL
        for (int e = 0; e < 4; ++e) s[mt][nt][e] *= p.scale_log2;
      }
    }
  }
}

// ---- online softmax ----------------------------------------------------
// Turns the tile's scores into unnormalised probabilities exp2(s - m) and
// rescales the running sum and the output by exp2(m_old - m_new). A row is
// spread over the 4 lanes of a quad (same g): reduce with shfl_xor 1 and 2.
// If every score seen so far is -inf the exponent offset is taken as 0 so
// that exp2(-inf - 0) = 0 instead of NaN; whether the *whole* row was -inf is
// decided in the epilogue (m_run == -inf -> NaN), because a later tile may
// still bring a finite score.
template <class Ops, class Cfg>
ATTN_DEV void tc_softmax_rescale(typename TcFrags<Cfg>::S& s, typename TcFrags<Cfg>::Rows& m_run,
                                 typename TcFrags<Cfg>::Rows& l_run, typename TcFrags<Cfg>::O& o) {
  using F = TcFrags<Cfg>;
  const float kNegInf = -INFINITY;
  ATTN_UNROLL
  for (int mt = 0; mt < F::kMT; ++mt) {
    ATTN_UNROLL
    for (int r = 0; r < 2; ++r) {
      float mx = kNegInf;
      ATTN_UNROLL
      for (int nt = 0; nt < F::kSTiles; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
      mx = fmaxf(mx, Ops::shfl_xor(mx, 1));
      mx = fmaxf(mx, Ops::shfl_xor(mx, 2));
      const float m_new = fmaxf(m_run[mt][r], mx);
      const float m_use = (m_new == kNegInf) ? 0.f : m_new;
      const float alpha = Ops::exp2(m_run[mt][r] - m_use);
      m_run[mt][r] = m_new;
      float rs = 0.f;
      ATTN_UNROLL
      for (int nt = 0; nt < F::kSTiles; ++nt) {
        const float p0 = Ops::exp2(s[mt][nt][2 * r] - m_use);
        const float p1 = Ops::exp2(s[mt][nt][2 * r + 1] - m_use);
        s[mt][nt][2 * r] = p0;
        s[mt][nt][2 * r + 1] = p1;
        rs += p0 + p1;
      }
      l_run[mt][r] = l_run[mt][r] * alpha + rs;
      ATTN_UNROLL
      for (int ot = 0; ot < F::kOTiles; ++ot) {
        o[mt][ot][2 * r] *= alpha;
        o[mt][ot][2 * r + 1] *= alpha;
      }
    }
  }
}

// P as A fragments of P V (k = keys), rounded to the input type: the
// accumulator of n-tile j holds (g, 8j+2t..), (g+8, 8j+2t..); A k-step kk
// needs columns 16kk..16kk+15, i.e. n-tiles 2kk (a0, a1) and 2kk+1 (a2, a3).
template <class Ops, bool kBF16, class Cfg>
ATTN_DEV void tc_pack_p(typename TcFrags<Cfg>::P& pf, const typename TcFrags<Cfg>::S& s) {
  using F = TcFrags<Cfg>;
  ATTN_UNROLL
  for (int mt = 0; mt < F::kMT; ++mt) {
    ATTN_UNROLL
    for (int kk = 0; kk < F::kPSteps; ++kk) {
      pf[mt][kk][0] = Ops::template pack2<kBF16>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      pf[mt][kk][1] = Ops::template pack2<kBF16>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      pf[mt][kk][2] = Ops::template pack2<kBF16>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      pf[mt][kk][3] = Ops::template pack2<kBF16>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
  }
}

// ---- O += P V ------------------------------------------------------------
// B operand = V (k = key, n = d): b0 = V[key 2t..2t+1][d g], which is the
// .trans ldmatrix of the 8x8 block (rows = keys, cols = d). One x4.trans
// covers keys kk*16..+15 x d dp*16..+15: matrix 0 = keys 0-7/d 0-7 (b0 of
// d-tile 2dp), 1 = keys 8-15/d 0-7 (b1), 2 = keys 0-7/d 8-15 (b0 of d-tile
// 2dp+1), 3 = keys 8-15/d 8-15 (b1).
template <class Ops, bool kBF16, class Cfg>
ATTN_DEV void tc_gemm_pv(typename TcFrags<Cfg>::O& o, const typename TcFrags<Cfg>::P& pf, const uint16_t* sV,
                         const TcThread& th) {
  using F = TcFrags<Cfg>;
  ATTN_UNROLL
  for (int kk = 0; kk < F::kPSteps; ++kk) {
    ATTN_UNROLL
    for (int dp = 0; dp < F::kDSteps; ++dp) {
      uint32_t vf[4];
      Ops::ldsm_x4_t(vf, sV + (kk * 16 + (th.lane & 7) + ((th.lane >> 3) & 1) * 8) * Cfg::kStride + dp * 16 +
                             (th.lane >> 4) * 8);
      ATTN_UNROLL
      for (int mt = 0; mt < F::kMT; ++mt) {
        Ops::template mma<kBF16>(o[mt][2 * dp], pf[mt][kk], vf[0], vf[1]);
        Ops::template mma<kBF16>(o[mt][2 * dp + 1], pf[mt][kk], vf[2], vf[3]);
      }
    }
  }
}

// ---- epilogue ------------------------------------------------------------
// out = o / l, rounded to the input type once, and the row's LSE. Every
// score of a row was -inf: torch.softmax gives exp(-inf - -inf) = NaN for
// the whole row, so do we (o is 0 here; 0 * NaN = NaN); with safe_softmax
// the row is o itself (0, or NaN after a NaN score). Of the sequence's
// rows (sv.n_rows) only the real ones get o / l; the padded ones are 0,
// their lse -inf.
template <class Ops, bool kBF16, class Cfg>
ATTN_DEV void tc_epilogue(const FwdParams& p, const typename TcFrags<Cfg>::O& o,
                          const typename TcFrags<Cfg>::Rows& m_run, const typename TcFrags<Cfg>::Rows& l_run,
                          const SeqView& sv, int h, const TcThread& th) {
  using F = TcFrags<Cfg>;
  const float kNegInf = -INFINITY;
  const int b = sv.b;
  uint16_t* og = static_cast<uint16_t*>(p.out) + b * p.o_sb + h * p.o_sh + static_cast<int64_t>(sv.q_row0) * p.o_sl;
  ATTN_UNROLL
  for (int mt = 0; mt < F::kMT; ++mt) {
    ATTN_UNROLL
    for (int r = 0; r < 2; ++r) {
      float l = l_run[mt][r];
      l += Ops::shfl_xor(l, 1);
      l += Ops::shfl_xor(l, 2);
      const int row = th.warp_row0 + 16 * mt + th.g + 8 * r;
      const bool real = seq_row_real(sv, row);
      const bool dead = !real || (m_run[mt][r] == kNegInf);
      const float inv = dead ? dead_row_inv(p.safe_softmax) : 1.f / l;
      if (row < sv.n_rows) {
        uint16_t* orow = og + static_cast<int64_t>(row) * p.o_sl;
        ATTN_UNROLL
        for (int ot = 0; ot < F::kOTiles; ++ot) {
          const float v0 = real ? o[mt][ot][2 * r] * inv : 0.f;  // a padded row is 0, whatever o holds
          const float v1 = real ? o[mt][ot][2 * r + 1] * inv : 0.f;
          Ops::st_u32(orow + ot * 8 + 2 * th.t, Ops::template pack2<kBF16>(v0, v1));
        }
        if (p.lse != nullptr && th.t == 0) {
          const float lse = dead ? kNegInf : (m_run[mt][r] + Ops::log2(l)) * kLn2;
          Ops::st_f32(p.lse + (static_cast<int64_t>(b) * p.Hq + h) * p.L + sv.q_row0 + row, lse);
        }
      }
    }
  }
}

// One thread block of the tensor-core kernel.
//   Cfg: a TcConfig (fwd_params.h). m_block: index of the Cfg::kBlockM-row
//   query tile, h: query head, z: batch (x sequence, see seq_view.h), tid: thread index in [0, 128),
//   smem: Cfg::kSmemBytes bytes, 16-byte aligned.
// The body is the pipeline (the cp.async schedule of the file comment); the
// steps are the helpers above.
template <class Ops, bool kBF16, class Cfg, bool kHasMask, class Mod = NoScoreMod>
ATTN_DEV void flash_fwd_tc_block(const FwdParams& p, int m_block, int h, int z, int tid, uint16_t* smem) {
  using F = TcFrags<Cfg>;
  constexpr int D = Cfg::D;
  constexpr int kBr = Cfg::kBlockM;
  constexpr int kBc = Cfg::kBlockN;
  static_assert(D % 16 == 0 && D >= 16 && D <= 256, "head dim must be a multiple of 16");
  static_assert(kBc % 16 == 0, "key tile must be a multiple of 16");
  static_assert(kBr == 16 * Cfg::kMT * (kTcThreads / 32), "block rows = warps x 16 x kMT");

  uint16_t* sQ = smem;
  uint16_t* sK = sQ + kBr * Cfg::kStride;
  uint16_t* sV = sK + kBc * Cfg::kStride;

  const int hk = h / p.group;  // GQA: query head h reads kv head h / (Hq / Hkv)
  const int q0 = m_block * kBr;
  const SeqView sv = seq_view<Ops>(p, z);
  if (q0 >= sv.n_rows) return;  // packed: past this sequence's rows (the grid covers the longest)
  const int b = sv.b;
  const TcThread th = tc_thread<Cfg>(tid, q0);

  const uint16_t* qg =
      static_cast<const uint16_t*>(p.q) + b * p.q_sb + h * p.q_sh + static_cast<int64_t>(sv.q_row0) * p.q_sl;
  const uint16_t* kg =
      static_cast<const uint16_t*>(p.k) + b * p.k_sb + hk * p.k_sh + static_cast<int64_t>(sv.k_row0) * p.k_sl;
  const uint16_t* vg =
      static_cast<const uint16_t*>(p.v) + b * p.v_sb + hk * p.v_sh + static_cast<int64_t>(sv.k_row0) * p.v_sl;

  // Key tiles to visit: those holding the sequence's real keys [k_lo, k_hi)
  // (all S keys without lengths), none when the block has no real row. With
  // a band (causal and/or sliding window) and masked_value == -inf, keys
  // outside it contribute exp(-inf) = 0, so only the tiles some real row of
  // this block can see are visited. With a finite masked_value they take
  // part (with that score) and must be visited.
  const int row_lo = q0 > sv.r_lo ? q0 : sv.r_lo;
  const int row_hi = imin(q0 + kBr, sv.r_hi);  // real rows [row_lo, row_hi)
  int n_begin = sv.k_lo / kBc, n_end = ceil_div(sv.k_hi, kBc);
  if (row_lo >= row_hi || sv.k_lo >= sv.k_hi) n_end = n_begin;
  if (p.band_skip && n_begin < n_end) {
    int b0, b1;
    band_key_tiles(row_lo, row_hi - 1, p.win_left, p.win_right, sv.k_hi, kBc, &b0, &b1);
    n_begin = n_begin > b0 ? n_begin : b0;
    n_end = imin(n_end, b1);
  }
  const bool work = n_begin < n_end;  // else every row of the block is 0: no load, no key tile

  if (work) {
    tc_load_tile<Ops, D, kBr>(sQ, qg, p.q_sl, q0, sv.r_lo, sv.r_hi, tid);
    Ops::cp_async_commit();
    tc_load_tile<Ops, D, kBc>(sK, kg, p.k_sl, n_begin * kBc, sv.k_lo, sv.k_hi, tid);
    Ops::cp_async_commit();
  }

  int64_t mask_off[F::kMT][2];  // the mask row of each owned row
  typename F::O o;
  typename F::Rows m_run;  // running row max (log2 domain)
  typename F::Rows l_run;  // this thread's partial row sum of exp2(s - m)
  ATTN_UNROLL
  for (int mt = 0; mt < F::kMT; ++mt) {
    ATTN_UNROLL
    for (int r = 0; r < 2; ++r) {
      const int row = th.warp_row0 + 16 * mt + th.g + 8 * r;
      mask_off[mt][r] = kHasMask ? b * p.m_sb + h * p.m_sh + static_cast<int64_t>(row) * p.m_sl : 0;
    }
    ATTN_UNROLL
    for (int i = 0; i < F::kOTiles; ++i) o[mt][i][0] = o[mt][i][1] = o[mt][i][2] = o[mt][i][3] = 0.f;
    m_run[mt][0] = m_run[mt][1] = -INFINITY;
    l_run[mt][0] = l_run[mt][1] = 0.f;
  }

  Ops::cp_async_wait_all();
  Ops::sync();

  typename F::Q qf;
  if constexpr (Cfg::kQInRegs) {
    ATTN_UNROLL
    for (int mt = 0; mt < F::kMT; ++mt) {
      ATTN_UNROLL
      for (int kc = 0; kc < F::kDSteps; ++kc) {
        if (work) tc_load_q_frag<Ops, Cfg>(qf[mt][kc], sQ, th, mt, kc);
      }
    }
  }

  for (int n = n_begin; n < n_end; ++n) {
    if (n > n_begin) {
      Ops::cp_async_wait_all();  // K_n (issued during the previous iteration) has landed
      Ops::sync();               // ...for every thread; and every warp finished reading sV
    }
    const int k0 = n * kBc;
    tc_load_tile<Ops, D, kBc>(sV, vg, p.v_sl, k0, sv.k_lo, sv.k_hi, tid);
    Ops::cp_async_commit();

    typename F::S s;
    tc_gemm_qk<Ops, kBF16, Cfg>(s, qf, sQ, sK, th);
    tc_mask_scores<Ops, kBF16, Cfg, kHasMask, Mod>(p, s, mask_off, b, h, k0, sv.k_lo, sv.k_hi, th);
    tc_softmax_rescale<Ops, Cfg>(s, m_run, l_run, o);
    typename F::P pf;
    tc_pack_p<Ops, kBF16, Cfg>(pf, s);

    Ops::cp_async_wait_all();  // V_n has landed
    Ops::sync();               // ...for every thread; and every warp finished reading sK
    if (n + 1 < n_end) {
      tc_load_tile<Ops, D, kBc>(sK, kg, p.k_sl, k0 + kBc, sv.k_lo, sv.k_hi, tid);
      Ops::cp_async_commit();
    }
    tc_gemm_pv<Ops, kBF16, Cfg>(o, pf, sV, th);
  }

  tc_epilogue<Ops, kBF16, Cfg>(p, o, m_run, l_run, sv, h, th);
}

}  // namespace detail
}  // namespace attn
