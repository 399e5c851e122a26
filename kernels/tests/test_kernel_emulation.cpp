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
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "emu/warp_emu.h"
#include "decode_fwd_core.h"
#include "flash_fwd_core.h"
#include "generic_fwd_core.h"
#include "sdpa_testlib.h"

using namespace attn::detail;

#include "test_check.h"

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

// ---------------------------------------------------------------------------
// Emulated launches (mirror the __global__ wrappers in flash_fwd_launch.cuh
// and generic_fwd.cu)
// ---------------------------------------------------------------------------
template <bool kBF16, class Cfg, bool kHasMask, class Mod>
void emu_launch_tc(emu::Machine& m, const FwdParams& p) {
  const int gx = ceil_div(p.L, Cfg::kBlockM);
  for (int z = 0; z < p.B; ++z)
    for (int y = 0; y < p.Hq; ++y)
      for (int x = 0; x < gx; ++x) {
        const int m_block = p.is_causal ? gx - 1 - x : x;
        emu::run_block(m, kTcThreads, Cfg::kSmemBytes, [&](int tid, unsigned char* smem) {
          flash_fwd_tc_block<emu::EmuOps, kBF16, Cfg, kHasMask, Mod>(p, m_block, y, z, tid,
                                                                reinterpret_cast<uint16_t*>(smem));
        });
      }
}

template <bool kBF16, int D, class Mod>
void emu_launch_tc_variant(emu::Machine& m, const FwdParams& p, bool m32) {
  const bool mask = p.mask_kind != ATTN_MASK_NONE;
  if (m32) {
    if (mask) emu_launch_tc<kBF16, TcConfigM32<D>, true, Mod>(m, p);
    else emu_launch_tc<kBF16, TcConfigM32<D>, false, Mod>(m, p);
  } else {
    if (mask) emu_launch_tc<kBF16, TcConfigM16<D>, true, Mod>(m, p);
    else emu_launch_tc<kBF16, TcConfigM16<D>, false, Mod>(m, p);
  }
}

template <bool kBF16, bool kF32, class Mod>
void emu_launch_generic(emu::Machine& m, const FwdParams& p) {
  const int gx = ceil_div(p.L, kGenWarps);
  for (int z = 0; z < p.B; ++z)
    for (int y = 0; y < p.Hq; ++y)
      for (int x = 0; x < gx; ++x) {
        emu::run_block(m, kGenThreads, kGenSmemBytes, [&](int tid, unsigned char* smem) {
          const int warp = tid >> 5, lane = tid & 31;
          const int row = x * kGenWarps + warp;
          if (row >= p.L) return;
          generic_fwd_row<emu::EmuOps, kBF16, kF32, Mod>(p, row, y, z, lane,
                                              reinterpret_cast<float*>(smem) + warp * kGenMaxHeadDim);
        });
      }
}

template <bool kBF16, bool kF32, class Mod>
void emu_launch_decode(emu::Machine& m, const FwdParams& p) {
  const int row_blocks = ceil_div(p.group * p.L, kDecRows);
  const int smem = decode_smem_bytes(p.E, p.Ev, kF32 ? 4 : 2);
  for (int z = 0; z < p.B; ++z)
    for (int y = 0; y < p.Hkv; ++y)
      for (int x = 0; x < row_blocks * p.n_splits; ++x) {
        emu::run_block(m, kDecThreads, smem, [&](int tid, unsigned char* s) {
          decode_split_block<emu::EmuOps, kBF16, kF32, Mod>(p, x % p.n_splits, x / p.n_splits, y, z, tid, s);
        });
      }
  const int rows = p.Hq * p.L;
  for (int z = 0; z < p.B; ++z)
    for (int x = 0; x < ceil_div(rows, kDecThreads / 32); ++x) {
      emu::run_block(m, kDecThreads, 0, [&](int tid, unsigned char*) {
        const int row = x * (kDecThreads / 32) + (tid >> 5);
        if (row >= rows) return;
        decode_combine_row<emu::EmuOps, kBF16, kF32>(p, row % p.L, row / p.L, z, tid & 31);
      });
    }
}

template <bool kBF16, class Mod>
void emu_dispatch_dtype(emu::Machine& m, const FwdParams& p, bool m32) {
  if (p.path == KernelPath::Decode) return emu_launch_decode<kBF16, false, Mod>(m, p);
  if (p.path == KernelPath::Generic) return emu_launch_generic<kBF16, false, Mod>(m, p);
  if (p.E == 64) return emu_launch_tc_variant<kBF16, 64, Mod>(m, p, m32);
  return emu_launch_tc_variant<kBF16, 128, Mod>(m, p, m32);
}

// Every kernel the problem's path selects, instantiated with the score modifier Mod.
template <class Mod>
void emu_dispatch(emu::Machine& m, const FwdParams& fp, bool m32) {
  if (fp.is_f32 && fp.path == KernelPath::Decode) emu_launch_decode<false, true, Mod>(m, fp);
  else if (fp.is_f32) emu_launch_generic<false, true, Mod>(m, fp);
  else if (fp.is_bf16) emu_dispatch_dtype<true, Mod>(m, fp, m32);
  else emu_dispatch_dtype<false, Mod>(m, fp, m32);
}

std::string path_name(const FwdParams& p, bool m32) {
  if (p.path == KernelPath::Decode) return "decode/" + std::to_string(p.n_splits);
  return p.path == KernelPath::Generic ? "generic" : m32 ? "tc-m32" : "tc-m16";
}

bool run_case(const sdpa_test::Case& c, uint32_t sched_seed, bool eager, bool m32) {
  using namespace sdpa_test;
  Problem p = make_problem(c);
  compute_reference(p);
  void* mask_ptr = c.mask_kind == ATTN_MASK_BOOL ? static_cast<void*>(p.mask.bytes.data())
                                                  : static_cast<void*>(p.mask.data.data());
  attn_sdpa_fwd_args args = make_args(p, p.q.data.data(), p.k.data.data(), p.v.data.data(), p.out.data.data(),
                                      mask_ptr, p.lse.empty() ? nullptr : p.lse.data(), nullptr);
  // The workspace that lets decode shapes split their keys (what the runtime bridge gives).
  std::vector<float> ws;
  if (c.workspace) {
    ws.resize(attn_cuda_sdpa_fwd_workspace_size(&args) / sizeof(float));
    args.workspace = ws.empty() ? nullptr : ws.data();
    args.workspace_bytes = ws.size() * sizeof(float);
  }
  char err[512];
  FwdParams fp;
  const attn_status st = prepare_fwd_params(&args, &fp, err, sizeof(err));
  CHECK(st == ATTN_OK, "%s: prepare failed: %s", c.name.c_str(), err);
  if (st != ATTN_OK) return false;

  emu::Machine m;
  m.eager_cp_async = eager;
  m.rng.seed(sched_seed);
  m.add_region(p.q.data.data(), p.q.data.size() * 2, false, "q");
  m.add_region(p.k.data.data(), p.k.data.size() * 2, false, "k");
  m.add_region(p.v.data.data(), p.v.data.size() * 2, false, "v");
  m.add_region(p.out.data.data(), p.out.data.size() * 2, true, "out");
  if (c.mask_kind == ATTN_MASK_BOOL) m.add_region(p.mask.bytes.data(), p.mask.bytes.size(), false, "mask");
  if (c.mask_kind == ATTN_MASK_ADDITIVE) m.add_region(p.mask.data.data(), p.mask.data.size() * 2, false, "mask");
  if (!p.lse.empty()) m.add_region(p.lse.data(), p.lse.size() * 4, true, "lse");
  if (!ws.empty()) m.add_region(ws.data(), ws.size() * 4, true, "workspace");

  const auto t0 = std::chrono::steady_clock::now();
  if (c.score_mod) emu_dispatch<sdpa_test::TestScoreMod>(m, fp, m32);
  else emu_dispatch<NoScoreMod>(m, fp, m32);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const CompareResult r = compare(p);
  std::printf("%s %-110s path=%s cp.async=%s max_err=%.2e nan_rows=%lld mma=%llu (%.2fs)%s%s\n", r.ok ? "ok  " : "FAIL",
              describe(c).c_str(), path_name(fp, m32).c_str(), eager ? "eager" : "lazy",
              r.max_err, static_cast<long long>(r.n_nan_rows), static_cast<unsigned long long>(m.n_mma), secs,
              r.ok ? "" : "\n     first mismatch: ", r.ok ? "" : r.first_bad.c_str());
  std::fflush(stdout);
  CHECK(r.ok, "%s: %lld mismatches", c.name.c_str(), static_cast<long long>(r.n_bad));
  return r.ok;
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
