// A small CUDA thread-block emulator for CPU-only testing of the kernel bodies.
//
// Every CUDA thread of a block runs as a user-level fiber (ucontext). Warp
// collectives (ldmatrix, mma.sync, shuffles) and __syncthreads are rendezvous
// points: a fiber deposits its operands and yields until all participants have
// arrived; the result is then computed from everybody's operands exactly as
// the PTX ISA defines the fragment layouts. The scheduler resumes runnable
// fibers in a seeded random order, so warps interleave differently per seed.
//
// Checks performed (each failure aborts the test with a message):
//   * divergent collectives (lanes of a warp in different collectives),
//     deadlocks (e.g. a barrier not reached by every thread),
//   * ldmatrix / cp.async addresses: inside the block's smem, 16-byte aligned,
//   * global loads / stores inside registered buffers (right access kind),
//   * a shared-memory race detector at 16-byte granularity, with "epochs"
//     delimited by __syncthreads:
//       - read of a chunk whose cp.async is still in flight,
//       - read of a chunk written (cp.async completed by wait_group) by another
//         thread with no barrier in between,
//       - cp.async into a chunk that another thread read in the current epoch
//         (write-after-read without a barrier).
//   * cp.async can be completed eagerly at issue time or lazily at wait_group
//     time (both are legal hardware behaviours; tests run both).
// Shared memory starts filled with 0xFF bytes (NaN in f16 and bf16) so reading
// memory that was never written poisons the result.
#pragma once

#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fwd_params.h"
#include "kernel_common.h"

namespace emu {

[[noreturn]] inline void fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "EMULATOR ERROR: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  std::fflush(stderr);
  std::abort();
}

enum class Op : int { ShflXor, ShflIdx, Ldsm, LdsmT, MmaF16, MmaBF16, Syncwarp };
inline const char* op_name(Op o) {
  switch (o) {
    case Op::ShflXor: return "shfl_xor";
    case Op::ShflIdx: return "shfl_idx";
    case Op::Ldsm: return "ldmatrix.x4";
    case Op::LdsmT: return "ldmatrix.x4.trans";
    case Op::MmaF16: return "mma.f16";
    case Op::MmaBF16: return "mma.bf16";
    case Op::Syncwarp: return "syncwarp";
  }
  return "?";
}

struct Slot {
  uint32_t u[6];
  float f[4];
  const uint16_t* ptr;
  float fv;
  int iv;
};

struct WarpState {
  uint64_t gen = 0;
  int arrived = 0;
  Op op = Op::Syncwarp;
  Slot slots[2][32];
};

struct Copy {
  uint16_t* dst;
  const uint16_t* src;
  bool pred;
};

struct Fiber {
  ucontext_t ctx;
  std::vector<char> stack;
  bool done = false;
  int wait = 0;  // 0 runnable, 1 warp collective, 2 block barrier
  uint64_t wait_gen = 0;
  std::vector<Copy> pending;
  std::vector<size_t> groups;  // pending.size() at each commit
};

struct Region {
  const unsigned char* p;
  size_t n;
  bool writable;
  std::string name;
};

// Per 16-byte smem chunk race-detector state.
struct ChunkState {
  int inflight_owner = -1;  // thread with an issued, not yet completed cp.async into this chunk
  int writer = -1;          // thread whose cp.async last completed here
  uint64_t write_epoch = 0;
  int reader = -1;          // -1 none, >=0 single reader, -2 several readers in read_epoch
  uint64_t read_epoch = ~0ull;
};

struct Machine {
  // configuration
  bool eager_cp_async = false;
  uint32_t seed = 1;
  std::vector<Region> regions;

  // block state
  int nthreads = 0;
  std::vector<Fiber> fibers;
  std::vector<WarpState> warps;
  uint64_t bar_gen = 0;
  int bar_arrived = 0;
  std::vector<unsigned char> smem;
  std::vector<ChunkState> chunks;
  ucontext_t sched_ctx;
  int cur = -1;
  std::function<void(int, unsigned char*)> body;
  std::mt19937 rng;

  // statistics
  uint64_t n_collectives = 0, n_mma = 0, n_ldsm = 0, n_cp = 0, n_bar = 0;

  void add_region(const void* p, size_t n, bool writable, const std::string& name) {
    regions.push_back({static_cast<const unsigned char*>(p), n, writable, name});
  }
};

inline Machine*& current_machine() {
  static Machine* m = nullptr;
  return m;
}

inline void fiber_entry() {
  Machine& m = *current_machine();
  const int tid = m.cur;
  m.body(tid, m.smem.data());
  Fiber& f = m.fibers[tid];
  if (!f.groups.empty() || !f.pending.empty()) {
    // Legal on hardware, but our kernels always wait for their copies.
    fatal("thread %d exited with %zu cp.async copies outstanding", tid, f.pending.size());
  }
  f.done = true;
  // returning resumes uc_link (the scheduler)
}

inline void yield() {
  Machine& m = *current_machine();
  swapcontext(&m.fibers[m.cur].ctx, &m.sched_ctx);
}

// Runs one thread block of `nthreads` threads (a multiple of 32) with
// `smem_bytes` of shared memory. body(tid, smem) is the per-thread code.
inline void run_block(Machine& m, int nthreads, size_t smem_bytes, std::function<void(int, unsigned char*)> body) {
  if (nthreads % 32 != 0) fatal("block size must be a multiple of 32");
  current_machine() = &m;
  m.nthreads = nthreads;
  m.body = std::move(body);
  m.smem.assign(smem_bytes + 16, 0xFF);
  m.chunks.assign((smem_bytes + 15) / 16 + 1, ChunkState{});
  m.bar_gen = 0;
  m.bar_arrived = 0;
  m.warps.assign(nthreads / 32, WarpState{});
  if (static_cast<int>(m.fibers.size()) != nthreads) m.fibers.resize(nthreads);
  constexpr size_t kStack = 256 * 1024;
  for (int t = 0; t < nthreads; ++t) {
    Fiber& f = m.fibers[t];
    f.done = false;
    f.wait = 0;
    f.pending.clear();
    f.groups.clear();
    if (f.stack.size() != kStack) f.stack.assign(kStack, 0);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = f.stack.size();
    f.ctx.uc_link = &m.sched_ctx;
    makecontext(&f.ctx, fiber_entry, 0);
  }
  std::vector<int> order(nthreads);
  for (int i = 0; i < nthreads; ++i) order[i] = i;
  for (;;) {
    std::shuffle(order.begin(), order.end(), m.rng);
    bool progress = false, all_done = true;
    for (int t : order) {
      Fiber& f = m.fibers[t];
      if (f.done) continue;
      all_done = false;
      if (f.wait == 1 && m.warps[t / 32].gen <= f.wait_gen) continue;
      if (f.wait == 2 && m.bar_gen <= f.wait_gen) continue;
      f.wait = 0;
      m.cur = t;
      swapcontext(&m.sched_ctx, &f.ctx);
      progress = true;
    }
    if (all_done) break;
    if (!progress) {
      std::string desc;
      for (int t = 0; t < nthreads; ++t) {
        const Fiber& f = m.fibers[t];
        if (f.done) continue;
        char buf[96];
        std::snprintf(buf, sizeof(buf), " t%d:%s", t, f.wait == 1 ? op_name(m.warps[t / 32].op) : "barrier");
        desc += buf;
        if (desc.size() > 600) break;
      }
      fatal("deadlock: no runnable thread; waiting:%s", desc.c_str());
    }
  }
  m.cur = -1;
}

// ---------------------------------------------------------------------------
// helpers used by EmuOps
// ---------------------------------------------------------------------------
inline size_t smem_offset(const void* p, size_t len, const char* what) {
  Machine& m = *current_machine();
  const unsigned char* c = static_cast<const unsigned char*>(p);
  const unsigned char* base = m.smem.data();
  if (c < base || c + len > base + m.smem.size() - 16) {
    fatal("thread %d: %s address %p outside shared memory [%p, +%zu)", m.cur, what, p, static_cast<const void*>(base),
          m.smem.size() - 16);
  }
  const size_t off = static_cast<size_t>(c - base);
  if (off % 16 != 0) fatal("thread %d: %s address smem+%zu is not 16-byte aligned", m.cur, what, off);
  return off;
}

inline void check_global(const void* p, size_t len, bool write, const char* what) {
  Machine& m = *current_machine();
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (const Region& r : m.regions) {
    if (c >= r.p && c + len <= r.p + r.n) {
      if (write && !r.writable) fatal("thread %d: %s writes read-only buffer %s", m.cur, what, r.name.c_str());
      if (reinterpret_cast<uintptr_t>(p) % len != 0) fatal("thread %d: %s misaligned (%p, %zu bytes)", m.cur, what, p, len);
      return;
    }
  }
  fatal("thread %d: %s of %zu bytes at %p is outside every registered buffer", m.cur, what, len, p);
}

// Race detector: a thread reads smem chunk `ci`.
inline void note_smem_read(size_t ci, const char* what) {
  Machine& m = *current_machine();
  ChunkState& c = m.chunks[ci];
  const int me = m.cur;
  if (c.inflight_owner >= 0) {
    fatal("thread %d: %s reads smem+%zu while thread %d's cp.async into it is still in flight (missing wait_group)", me,
          what, ci * 16, c.inflight_owner);
  }
  if (c.writer >= 0 && c.writer != me && c.write_epoch == m.bar_gen) {
    fatal("thread %d: %s reads smem+%zu written by thread %d without an intervening __syncthreads", me, what, ci * 16,
          c.writer);
  }
  if (c.read_epoch != m.bar_gen) {
    c.read_epoch = m.bar_gen;
    c.reader = me;
  } else if (c.reader != me) {
    c.reader = -2;
  }
}

inline void complete_copy(const Copy& cp) {
  Machine& m = *current_machine();
  if (cp.pred) {
    std::memcpy(cp.dst, cp.src, 16);
  } else {
    std::memset(cp.dst, 0, 16);
  }
  const size_t ci = static_cast<size_t>(reinterpret_cast<unsigned char*>(cp.dst) - m.smem.data()) / 16;
  ChunkState& c = m.chunks[ci];
  c.inflight_owner = -1;
  c.writer = m.cur;
  c.write_epoch = m.bar_gen;
}

// Warp rendezvous: deposit `in`, wait for the 31 other lanes, return the
// arrived operand set (valid until this lane's next collective).
inline const Slot* warp_collective(Op op, const Slot& in) {
  Machine& m = *current_machine();
  const int tid = m.cur;
  WarpState& w = m.warps[tid / 32];
  const uint64_t gen = w.gen;
  const int buf = static_cast<int>(gen & 1);
  if (w.arrived == 0) {
    w.op = op;
  } else if (w.op != op) {
    fatal("divergent warp collective: thread %d calls %s while its warp is in %s", tid, op_name(op), op_name(w.op));
  }
  w.slots[buf][tid % 32] = in;
  ++m.n_collectives;
  if (++w.arrived == 32) {
    w.arrived = 0;
    ++w.gen;
  } else {
    Fiber& f = m.fibers[tid];
    f.wait = 1;
    f.wait_gen = gen;
    yield();
  }
  return w.slots[buf];
}

// ---------------------------------------------------------------------------
// The Ops policy
// ---------------------------------------------------------------------------
struct EmuOps {
  static void sync() {
    Machine& m = *current_machine();
    ++m.n_bar;
    const uint64_t gen = m.bar_gen;
    if (++m.bar_arrived == m.nthreads) {
      m.bar_arrived = 0;
      ++m.bar_gen;
    } else {
      Fiber& f = m.fibers[m.cur];
      f.wait = 2;
      f.wait_gen = gen;
      yield();
    }
  }
  static void syncwarp() {
    Slot s{};
    warp_collective(Op::Syncwarp, s);
  }
  static float shfl_xor(float v, int lane_mask) {
    Slot s{};
    s.fv = v;
    s.iv = lane_mask;
    const int lane = current_machine()->cur % 32;
    const Slot* all = warp_collective(Op::ShflXor, s);
    return all[(lane ^ lane_mask) & 31].fv;
  }
  static float shfl_idx(float v, int src) {
    Slot s{};
    s.fv = v;
    s.iv = src;
    const Slot* all = warp_collective(Op::ShflIdx, s);
    return all[src & 31].fv;
  }

  // ldmatrix.x4: lanes 8i..8i+7 hold the row addresses of matrix i. Without
  // .trans lane l receives (row l/4, cols 2(l%4), 2(l%4)+1) of each matrix;
  // with .trans it receives (rows 2(l%4), 2(l%4)+1, col l/4).
  static void ldsm_impl(uint32_t (&r)[4], const uint16_t* row, bool trans) {
    Machine& m = *current_machine();
    ++m.n_ldsm;
    const size_t off = smem_offset(row, 16, trans ? "ldmatrix.trans" : "ldmatrix");
    note_smem_read(off / 16, "ldmatrix");
    Slot s{};
    s.ptr = row;
    const int lane = m.cur % 32;
    const Slot* all = warp_collective(trans ? Op::LdsmT : Op::Ldsm, s);
    const int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; ++i) {
      uint16_t lo, hi;
      if (!trans) {
        const uint16_t* rp = all[i * 8 + g].ptr;
        lo = rp[2 * t];
        hi = rp[2 * t + 1];
      } else {
        lo = all[i * 8 + 2 * t].ptr[g];
        hi = all[i * 8 + 2 * t + 1].ptr[g];
      }
      r[i] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
  }
  static void ldsm_x4(uint32_t (&r)[4], const uint16_t* row) { ldsm_impl(r, row, false); }
  static void ldsm_x4_t(uint32_t (&r)[4], const uint16_t* row) { ldsm_impl(r, row, true); }

  // mma.m16n8k16.row.col, fragment layouts from the PTX ISA:
  //   A: a_i (i = 0..7, 2 per register): row = g (+8 for i in {2,3,6,7}),
  //      col = 2t + (i&1) (+8 for i >= 4)
  //   B: b_i (i = 0..3): row(k) = 2t + (i&1) (+8 for i >= 2), col(n) = g
  //   C/D: c_i: row = g (+8 for i >= 2), col = 2t + (i&1)
  template <bool kBF16>
  static void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    Machine& m = *current_machine();
    ++m.n_mma;
    Slot s{};
    for (int i = 0; i < 4; ++i) s.u[i] = a[i];
    s.u[4] = b0;
    s.u[5] = b1;
    const int lane = m.cur % 32;
    const Slot* all = warp_collective(kBF16 ? Op::MmaBF16 : Op::MmaF16, s);
    auto elem = [](uint32_t reg, int half) {
      return attn::detail::dtype_bits_to_f32(static_cast<uint16_t>(half ? reg >> 16 : reg & 0xFFFFu), kBF16);
    };
    float A[16][16], B[16][8];
    for (int ln = 0; ln < 32; ++ln) {
      const int g = ln >> 2, t = ln & 3;
      for (int i = 0; i < 8; ++i) {
        const int row = g + ((i & 2) ? 8 : 0);
        const int col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
        A[row][col] = elem(all[ln].u[i / 2], i & 1);
      }
      for (int i = 0; i < 4; ++i) {
        const int k = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);
        B[k][g] = elem(all[ln].u[4 + i / 2], i & 1);
      }
    }
    const int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; ++i) {
      const int row = g + (i >= 2 ? 8 : 0);
      const int col = 2 * t + (i & 1);
      double acc = 0.0;
      for (int k = 0; k < 16; ++k) acc += static_cast<double>(A[row][k]) * static_cast<double>(B[k][col]);
      d[i] = static_cast<float>(static_cast<double>(d[i]) + acc);
    }
  }

  static void cp_async_16(uint16_t* smem, const uint16_t* gmem, bool pred) {
    Machine& m = *current_machine();
    ++m.n_cp;
    const size_t off = smem_offset(smem, 16, "cp.async dst");
    if (pred) check_global(gmem, 16, false, "cp.async src");
    ChunkState& c = m.chunks[off / 16];
    if (c.read_epoch == m.bar_gen && c.reader != m.cur && c.reader != -1) {
      fatal("thread %d: cp.async overwrites smem+%zu read by %s in the same barrier epoch (missing __syncthreads)", m.cur,
            off, c.reader == -2 ? "several threads" : "another thread");
    }
    if (c.inflight_owner >= 0) fatal("thread %d: cp.async into smem+%zu which already has a copy in flight", m.cur, off);
    const Copy cp{smem, gmem, pred};
    if (m.eager_cp_async) {
      complete_copy(cp);
    } else {
      c.inflight_owner = m.cur;
      m.fibers[m.cur].pending.push_back(cp);
    }
  }
  static void cp_async_commit() {
    Machine& m = *current_machine();
    Fiber& f = m.fibers[m.cur];
    f.groups.push_back(f.pending.size());
  }
  static void cp_async_wait_all() {
    Machine& m = *current_machine();
    Fiber& f = m.fibers[m.cur];
    if (f.groups.empty()) return;
    const size_t n = f.groups.back();  // only committed copies are waited for
    for (size_t i = 0; i < n; ++i) complete_copy(f.pending[i]);
    f.pending.erase(f.pending.begin(), f.pending.begin() + static_cast<std::ptrdiff_t>(n));
    f.groups.clear();
  }

  static float exp2(float x) { return std::exp2(x); }
  static float log2(float x) { return std::log2(x); }

  template <bool kBF16>
  static uint32_t pack2(float lo, float hi) {
    return static_cast<uint32_t>(attn::detail::f32_to_dtype_bits(lo, kBF16)) |
           (static_cast<uint32_t>(attn::detail::f32_to_dtype_bits(hi, kBF16)) << 16);
  }
  template <bool kBF16>
  static float to_float(uint16_t bits) {
    return attn::detail::dtype_bits_to_f32(bits, kBF16);
  }

  static uint8_t ld_u8(const uint8_t* p) {
    check_global(p, 1, false, "ld_u8");
    return *p;
  }
  static uint16_t ld_u16(const uint16_t* p) {
    check_global(p, 2, false, "ld_u16");
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  static attn::detail::U4 ld_u4(const uint16_t* p) {
    check_global(p, 16, false, "ld_u4");
    attn::detail::U4 v;
    std::memcpy(&v, p, 16);
    return v;
  }
  // Plain shared-memory loads (the CUDA-core kernels), race-checked like
  // ldmatrix on the 16-byte chunk they touch.
  static size_t lds_check(const void* p, size_t len, const char* what) {
    Machine& m = *current_machine();
    const unsigned char* c = static_cast<const unsigned char*>(p);
    const unsigned char* base = m.smem.data();
    if (c < base || c + len > base + m.smem.size() - 16) fatal("thread %d: %s outside shared memory", m.cur, what);
    const size_t off = static_cast<size_t>(c - base);
    if (off % len != 0) fatal("thread %d: %s at smem+%zu misaligned (%zu bytes)", m.cur, what, off, len);
    note_smem_read(off / 16, what);
    return off;
  }
  static attn::detail::U4 lds_u4(const void* p) {
    lds_check(p, 16, "ld.shared.v4");
    attn::detail::U4 v;
    std::memcpy(&v, p, 16);
    return v;
  }
  static uint16_t lds_u16(const uint16_t* p) {
    lds_check(p, 2, "ld.shared.u16");
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  static float lds_f32(const float* p) {
    lds_check(p, 4, "ld.shared.f32");
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static int32_t ld_i32(const int32_t* p) {
    check_global(p, 4, false, "ld_i32");
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static int64_t ld_i64(const int64_t* p) {
    check_global(p, 8, false, "ld_i64");
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static float ld_f32(const float* p) {
    check_global(p, 4, false, "ld_f32");
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static void st_u32(uint16_t* p, uint32_t v) {
    check_global(p, 4, true, "st_u32");
    std::memcpy(p, &v, 4);
  }
  static void st_f32(float* p, float v) {
    check_global(p, 4, true, "st_f32");
    std::memcpy(p, &v, 4);
  }
};

}  // namespace emu
