// CPU emulation test: runs the *actual* kernel bodies (flash_fwd_core.h,
// generic_fwd_core.h) on the CPU through the warp emulator (emu/warp_emu.h),
// whose ldmatrix / mma.sync / shuffle / cp.async semantics follow the PTX ISA
// fragment definitions, and compares against the double-precision reference.
// This checks fragment layouts, index math, masking, boundary handling, the
// online softmax and the smem synchronisation (race detector) without a GPU.
//
// It cannot check: real PTX syntax/encoding (nvcc/ptxas do), hardware exp2
// approximation error, performance.
//
// Usage: attn_kernels_emu_test [--filter SUBSTR] [--full] [--all] [--seeds N]
//   default: the small case list, one scheduling seed per case, one (tile
//   shape, cp.async model) combination per case; --all runs all four
//   combinations per case; --full uses the GPU test's (larger) case list.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "emu_launch.h"

using namespace attn::detail;

namespace {

using attn_test::g_failed;
using attn_test::g_passed;

// ---------------------------------------------------------------------------
// f16 / bf16 conversions (the emulator and the reference rely on them)
// ---------------------------------------------------------------------------
void test_conversions() {
  // f16 -> f32 -> f16 is the identity for every non-NaN pattern.
  int bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_bits_to_f32(static_cast<uint16_t>(h));
    const uint16_t back = f32_to_f16_bits(f);
    const bool is_nan = ((h >> 10) & 0x1F) == 0x1F && (h & 0x3FF) != 0;
    if (is_nan ? !std::isnan(f) || !std::isnan(f16_bits_to_f32(back)) : back != h) ++bad;
  }
  CHECK(bad == 0, "%d f16 round-trip mismatches", bad);
  bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_bits_to_f32(static_cast<uint16_t>(h));
    const uint16_t back = f32_to_bf16_bits(f);
    if (std::isnan(f) ? !std::isnan(bf16_bits_to_f32(back)) : back != h) ++bad;
  }
  CHECK(bad == 0, "%d bf16 round-trip mismatches", bad);
  struct C {
    float in;
    uint16_t f16;
  };
  const C cases[] = {
      {1.0f, 0x3C00},         {-2.0f, 0xC000},        {65504.f, 0x7BFF},     {65519.f, 0x7BFF},
      {65520.f, 0x7C00},      {1e9f, 0x7C00},         {-1e9f, 0xFC00},       {5.9604645e-8f, 0x0001},
      {2.9802322e-8f, 0x0000} /* 2^-25 ties to even (0) */,                   {2.9802326e-8f, 0x0001},
      {6.1035156e-5f, 0x0400}, {1.0009766f, 0x3C01},  {1.00048828125f, 0x3C00} /* tie -> even */,
      {1.00146484375f, 0x3C02} /* tie -> even (up) */, {-INFINITY, 0xFC00},   {-10000.f, 0xF0E2},
  };
  for (const C& c : cases) {
    CHECK(f32_to_f16_bits(c.in) == c.f16, "f32_to_f16(%.9g) = 0x%04x, want 0x%04x", static_cast<double>(c.in),
          f32_to_f16_bits(c.in), c.f16);
  }
  CHECK(f32_to_bf16_bits(1.0f) == 0x3F80, "bf16(1)");
  CHECK(f32_to_bf16_bits(-1e9f) == 0xCE6E, "bf16(-1e9) = 0x%04x", f32_to_bf16_bits(-1e9f));
  CHECK(f32_to_bf16_bits(1.00390625f) == 0x3F80, "bf16 tie to even (down)");
  CHECK(f32_to_bf16_bits(1.01171875f) == 0x3F82, "bf16 tie to even (up)");
  CHECK(f32_to_bf16_bits(3.4e38f) == 0x7F80, "bf16 overflow to inf: 0x%04x", f32_to_bf16_bits(3.4e38f));
}

bool run_case(const sdpa_test::Case& c, uint32_t sched_seed, bool eager, bool m32) {
  if (c.score_mod) return attn_emu::emu_run_case<sdpa_test::TestScoreMod>(c, sched_seed, eager, m32);
  return attn_emu::emu_run_case<NoScoreMod>(c, sched_seed, eager, m32);
}

}  // namespace

int main(int argc, char** argv) {
  const char* filter = nullptr;
  bool full = false, all = false;
  int seeds = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else if (!std::strcmp(argv[i], "--full")) full = true;
    else if (!std::strcmp(argv[i], "--all")) all = true;
    else if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--filter SUBSTR] [--full] [--all] [--seeds N]\n", argv[0]);
      return 2;
    }
  }
  test_conversions();

  std::vector<sdpa_test::Case> cases = sdpa_test::make_cases(!full);
  // Score modifiers exist only as generated kernels, so only here, not on the GPU test's list.
  for (const sdpa_test::Case& c : sdpa_test::make_score_mod_cases()) cases.push_back(c);
  for (const sdpa_test::Case& c : sdpa_test::make_length_cases()) cases.push_back(c);
  int idx = 0;
  for (const auto& c : cases) {
    ++idx;
    if (filter && sdpa_test::describe(c).find(filter) == std::string::npos) continue;
    for (int s = 0; s < seeds; ++s) {
      const uint32_t seed = static_cast<uint32_t>(idx * 7919 + s);
      if (all) {
        // every tile shape x both cp.async completion models
        for (int v = 0; v < 2; ++v)
          for (int eager = 0; eager < 2; ++eager) run_case(c, seed, eager != 0, v != 0);
        continue;
      }
      // Default (CI) run: one combination per case, chosen so that every case
      // name meets both tile shapes (M16/M32: across dtypes and head dims) and
      // both cp.async models (eager/lazy: f16 and bf16 variants of a case are an
      // even number of cases apart and get different modes).
      const bool m32 = c.bf16 != (c.E == 128);
      const bool eager = ((idx + s + (c.bf16 ? 1 : 0)) & 1) != 0;
      run_case(c, seed, eager, m32);
    }
  }
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
