// Emulation test of generated score modifiers: the CUDA source that
// `attn-compile --target=cuda --cuda-source` generates from the regions of
// score_mods.mlir (the build writes it and names it ATTN_GENERATED_SCORE_MODS)
// is included here as host C++ (its CUDA part is behind __CUDACC__), and
// each modifier runs in every kernel that its problem can take (tensor-core
// tile shapes, generic, f32, split-key decode) in the warp emulator, against
// a double reference of the region written here from score_mods.mlir.
// The modifiers read their captured tensors through the kernel library's
// prepare_mod_tensors, as on the GPU; the emulator checks every such read
// against the tensor's bounds.
//
// Usage: attn_kernels_emu_generated_test [--all]  (--all: both cp.async models)
#include <cstdlib>
#include <cstring>
#include <vector>

// Binds each generated modifier as GenMod_<function> (before score_mod.h,
// which defines the macro as nothing otherwise).
#define ATTN_SCORE_MOD_GENERATED(T, fn) using GenMod_##fn = T;
#include "emu_launch.h"
#include ATTN_GENERATED_SCORE_MODS

using namespace attn_emu;
using sdpa_test::Case;

namespace {

bool g_all = false;

// Runs `c` with modifier Mod in both tile shapes (when the tensor cores take
// it) and the cp.async model(s).
template <class Mod>
void run(const Case& c, const std::vector<EmuModTensor>& mods = {}) {
  static uint32_t seed = 1;
  for (int m32 = 0; m32 < 2; ++m32) {
    if (g_all) {
      for (int eager = 0; eager < 2; ++eager) emu_run_case<Mod>(c, seed++, eager != 0, m32 != 0, mods);
    } else {
      emu_run_case<Mod>(c, seed, (seed & 1) != 0, m32 != 0, mods);
      ++seed;
    }
  }
}

double f16(double x) { return sdpa_test::round_to_dtype(static_cast<float>(x), false); }

// @softcap: 5 * tanh(s / 5), f16 causal (tensor cores), f32 (generic f32),
// and a decode shape.
void softcap() {
  Case c;
  c.name = "gen_softcap";
  c.B = 1;
  c.Hq = c.Hkv = 4;
  c.L = 70;
  c.S = 100;
  c.causal = true;
  c.lse = true;
  c.amp = 3.f;  // scores beyond the cap
  c.ref_mod = [](double s, int, int, int, int) { return 5.0 * std::tanh(s / 5.0); };
  run<GenMod_softcap>(c);
  Case d = c;
  d.name = "gen_softcap_decode";
  d.causal = false;
  d.L = 4;
  d.S = 500;
  run<GenMod_softcap>(d);
  Case f = c;
  f.name = "gen_softcap_f32";
  f.f32 = true;
  run<GenMod_softcap>(f);
}

// @alibi: s + slope[h] * (j - i), the slopes a captured [1, H, 1, 1] f32
// tensor; bf16, head dim 128, GQA, and a decode shape.
void alibi() {
  static float slopes[4] = {0.5f, 0.25f, 0.125f, 0.0625f};
  EmuModTensor t{sdpa_test::contiguous(slopes, 1, 4, 1, 1), sizeof(slopes)};
  Case c;
  c.name = "gen_alibi";
  c.bf16 = true;
  c.B = 2;
  c.Hq = 4;
  c.Hkv = 2;
  c.L = 40;
  c.S = 130;
  c.E = c.Ev = 128;
  c.lse = true;
  c.ref_mod = [](double s, int, int h, int i, int j) { return s + slopes[h] * static_cast<double>(j - i); };
  run<GenMod_alibi>(c, {t});
  Case d = c;
  d.name = "gen_alibi_decode";
  d.L = 3;
  d.S = 400;
  run<GenMod_alibi>(d, {t});
}

// @position_mask: -inf where |i - j| > 8, at key 0 of odd heads, or where
// the [B, 1, 1, S] i1 padding tensor is true; else f16(f16(s) + bias[i][j])
// with an f16 [L, S] bias. f16, E = 80, Ev = 32 (generic kernel); then
// with safe_softmax and a fully padded batch.
void position_mask() {
  constexpr int B = 2, L = 30, S = 70;
  static uint8_t pad[B * S];
  static uint16_t bias[L * S];
  std::mt19937 rng(7);
  for (uint8_t& p : pad) p = (rng() % 5 == 0) ? 1 : 0;
  for (uint16_t& e : bias)
    e = sdpa_test::f32_to_dtype_bits(std::uniform_real_distribution<float>(-2.f, 2.f)(rng), false);
  std::vector<EmuModTensor> mods = {{sdpa_test::contiguous(pad, B, 1, 1, S), sizeof(pad)},
                                    {sdpa_test::contiguous(bias, 1, 1, L, S), sizeof(bias)}};
  Case c;
  c.name = "gen_position_mask";
  c.B = B;
  c.Hq = c.Hkv = 2;
  c.L = L;
  c.S = S;
  c.E = 80;
  c.Ev = 32;
  c.lse = true;
  c.ref_mod = [](double s, int b, int h, int i, int j) -> double {
    const bool drop = std::abs(i - j) > 8 || (h % 2 == 1 && j == 0) || pad[b * S + j] != 0;
    if (drop) return -INFINITY;
    return f16(f16(s) + static_cast<double>(sdpa_test::dtype_bits_to_f32(bias[i * S + j], false)));
  };
  run<GenMod_position_mask>(c, mods);
  // safe_softmax: the second batch all padding, so its rows see no key and
  // give 0 (lse -inf); the region yields the -inf, not a mask or the band.
  for (int j = 0; j < S; ++j) pad[S + j] = 1;
  Case s = c;
  s.name = "gen_position_mask_safe";
  s.safe_softmax = true;
  run<GenMod_position_mask>(s, mods);
}

// @finfo_min_fill: -FLT_MAX where the [1, 1, L, S] i1 mask is set (whole
// rows in places), f32 (generic f32 kernel): fully masked rows average v.
void finfo_min_fill() {
  constexpr int L = 33, S = 90;
  static uint8_t mask[L * S];
  std::mt19937 rng(11);
  for (int i = 0; i < L; ++i)
    for (int j = 0; j < S; ++j) mask[i * S + j] = (i % 7 == 3 || rng() % 3 == 0) ? 1 : 0;
  Case c;
  c.name = "gen_finfo_min_fill";
  c.f32 = true;
  c.B = 2;
  c.Hq = c.Hkv = 2;
  c.L = L;
  c.S = S;
  c.lse = false;  // a clamped row's lse is -FLT_MAX ln 2, not exact (attn.sdpa has no lse)
  c.ref_mod = [](double s, int, int, int i, int j) -> double {
    return mask[i * S + j] ? -3.4028234663852886e38 : s;
  };
  run<GenMod_finfo_min_fill>(c, {{sdpa_test::contiguous(mask, 1, 1, L, S), sizeof(mask)}});
}

// @two_masks: no region in the source; the and of a masked_fill mask (true
// = masked) and a keep mask became one in attn-lower-sdpa-to-cuda. The
// masked value -1e9 (bf16: -998244352) replaces the score where either
// drops it; causal on top (the kernel's, with the same finite value), so
// rows whose keys are all masked average v uniformly.
void two_masks() {
  constexpr int B = 2, L = 64, S = 64;
  static uint8_t pad[B * L * S], keep[B * L * S];
  std::mt19937 rng(5);
  for (int x = 0; x < B * L * S; ++x) {
    const int i = (x / S) % L;
    pad[x] = (i == 9 || rng() % 4 == 0) ? 1 : 0;  // row 9 fully masked
    keep[x] = rng() % 5 != 0 ? 1 : 0;
  }
  Case c;
  c.name = "gen_two_masks";
  c.bf16 = true;
  c.B = B;
  c.Hq = c.Hkv = 4;
  c.L = L;
  c.S = S;
  c.causal = true;
  c.masked_value = -1e9f;
  c.lse = true;
  c.ref_mod = [](double s, int b, int, int i, int j) -> double {
    const int x = (b * L + i) * S + j;
    return (pad[x] || !keep[x]) ? static_cast<double>(sdpa_test::round_to_dtype(-1e9f, true)) : s;
  };
  run<GenMod_two_masks>(c, {{sdpa_test::contiguous(pad, B, 1, L, S), sizeof(pad)},
                            {sdpa_test::contiguous(keep, B, 1, L, S), sizeof(keep)}});
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--all")) {
      g_all = true;
    } else {
      std::fprintf(stderr, "usage: %s [--all]\n", argv[0]);
      return 2;
    }
  }
  softcap();
  alibi();
  position_mask();
  finfo_min_fill();
  two_masks();
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
