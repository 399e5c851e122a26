// The emulated launches of every kernel (mirroring the __global__ wrappers
// in flash_fwd_launch.cuh, generic_fwd_launch.cuh, decode_fwd_launch.cuh and
// decode_fwd.cu) and one emulated, checked run of a test case. Shared by the
// emulation tests (test_kernel_emulation.cpp, test_generated_score_mod.cpp).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "emu/warp_emu.h"
#include "decode_fwd_core.h"
#include "flash_fwd_core.h"
#include "generic_fwd_core.h"
#include "sdpa_testlib.h"
#include "test_check.h"

namespace attn_emu {

using namespace attn::detail;
using attn_test::g_failed;
using attn_test::g_passed;

// A tensor a generated score modifier reads: its [B, H, L, S] view and the
// bytes of its storage (registered with the emulator's bounds checks).
struct EmuModTensor {
  attn_tensor4 view;
  size_t bytes;
};

template <bool kBF16, class Cfg, bool kHasMask, class Mod>
void emu_launch_tc(emu::Machine& m, const FwdParams& p) {
  const int gx = ceil_div(p.L, Cfg::kBlockM);
  for (int z = 0; z < p.Z; ++z)
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
  for (int z = 0; z < p.Z; ++z)
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
  for (int z = 0; z < p.Z; ++z)
    for (int y = 0; y < p.Hkv; ++y)
      for (int x = 0; x < row_blocks * p.n_splits; ++x) {
        emu::run_block(m, kDecThreads, smem, [&](int tid, unsigned char* s) {
          decode_split_block<emu::EmuOps, kBF16, kF32, Mod>(p, x % p.n_splits, x / p.n_splits, y, z, tid, s);
        });
      }
  const int rows = p.Hq * p.L;
  for (int z = 0; z < p.Z; ++z)
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

// FNV-1a over the bytes of the output and the LSE: equal digests mean
// bit-identical results, so a change to a kernel body can show that it
// changes no bit of any case.
inline uint64_t result_digest(const sdpa_test::Problem& p) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, size_t bytes) {
    const unsigned char* b = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  mix(p.out.data.data(), p.out.data.size() * sizeof(p.out.data[0]));
  mix(p.lse.data(), p.lse.size() * sizeof(float));
  return h;
}

std::string path_name(const FwdParams& p, bool m32) {
  if (p.path == KernelPath::Decode) return "decode/" + std::to_string(p.n_splits);
  return p.path == KernelPath::Generic ? "generic" : m32 ? "tc-m32" : "tc-m16";
}

// Runs case `c` in the emulator with score modifier Mod (reading `mods`, the
// extra operands of a generated one, as the kernel library passes them) and
// compares the result with the double reference. One line per run.
template <class Mod>
bool emu_run_case(const sdpa_test::Case& c, uint32_t sched_seed, bool eager, bool m32,
                  const std::vector<EmuModTensor>& mods = {}) {
  using namespace sdpa_test;
  Problem p = make_problem(c);
  compute_reference(p);
  void* mask_ptr = c.mask_kind == ATTN_MASK_BOOL ? static_cast<void*>(p.mask.bytes.data())
                                                  : static_cast<void*>(p.mask.data.data());
  attn_sdpa_fwd_args args = make_args(p, p.q.data.data(), p.k.data.data(), p.v.data.data(), p.out.data.data(),
                                      mask_ptr, p.lse.empty() ? nullptr : p.lse.data(), nullptr);
  set_length_args(p, host_q_lengths(p), host_kv_lengths(p), &args);
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
  std::vector<attn_tensor4> mod_views;
  for (const EmuModTensor& t : mods) mod_views.push_back(t.view);
  const attn_status mst = prepare_mod_tensors(mod_views.data(), static_cast<int>(mod_views.size()), &fp, err, sizeof(err));
  CHECK(mst == ATTN_OK, "%s: prepare_mod_tensors failed: %s", c.name.c_str(), err);
  if (mst != ATTN_OK) return false;

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
  if (!c.q_lens.empty()) m.add_region(host_q_lengths(p), lengths_bytes(c.q_lens, c), false, "q_lengths");
  if (!c.kv_lens.empty()) m.add_region(host_kv_lengths(p), lengths_bytes(c.kv_lens, c), false, "kv_lengths");
  for (const EmuModTensor& t : mods) m.add_region(t.view.data, t.bytes, false, "score_mod tensor");

  const auto t0 = std::chrono::steady_clock::now();
  emu_dispatch<Mod>(m, fp, m32);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const CompareResult r = compare(p);
  std::printf("%s %-110s path=%s cp.async=%s max_err=%.2e nan_rows=%lld mma=%llu digest=%016llx (%.2fs)%s%s\n",
              r.ok ? "ok  " : "FAIL", describe(c).c_str(), path_name(fp, m32).c_str(), eager ? "eager" : "lazy",
              r.max_err, static_cast<long long>(r.n_nan_rows), static_cast<unsigned long long>(m.n_mma),
              static_cast<unsigned long long>(result_digest(p)), secs,
              r.ok ? "" : "\n     first mismatch: ", r.ok ? "" : r.first_bad.c_str());
  std::fflush(stdout);
  CHECK(r.ok, "%s: %lld mismatches", c.name.c_str(), static_cast<long long>(r.n_bad));
  return r.ok;
}

}  // namespace attn_emu
