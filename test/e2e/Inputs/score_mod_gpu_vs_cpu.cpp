// Runs score-mod-gpu.mlir compiled for CUDA (generated score_mod kernels)
// and for the CPU on the same inputs and compares the results: every
// element within 4e-3 + 4e-3 |cpu| (f16 results, |v| <= 1: the tensor-core
// kernel rounds the probabilities to f16 before P.V, as FlashAttention does),
// NaN exactly where the CPU has NaN (batch 1 pads every key of the decode
// shape, so its rows are NaN). The two libraries are dlopen'ed side by side
// (RTLD_LOCAL: each keeps its own runtime); the header is the CUDA one.
//
//   score_mod_gpu_vs_cpu CUDA.so CPU.so    prints one line per function
#include "score-mod-gpu.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fwd_params.h" // host f16 conversions of the kernels

namespace {

using attn::detail::f16_bits_to_f32;
using attn::detail::f32_to_f16_bits;

template <class T, class Elem> T dense(Elem *data, const int64_t (&sizes)[4]) {
  T d;
  d.allocated = d.aligned = data;
  d.offset = 0;
  int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    d.sizes[i] = sizes[i];
    d.strides[i] = stride;
    stride *= sizes[i];
  }
  return d;
}

int64_t numel(const int64_t (&s)[4]) { return s[0] * s[1] * s[2] * s[3]; }

template <class T> T *toDevice(const std::vector<T> &h) {
  T *d = nullptr;
  if (cudaMalloc(&d, h.size() * sizeof(T)) != cudaSuccess ||
      cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice) !=
          cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc/cudaMemcpy failed\n");
    std::exit(1);
  }
  return d;
}

using Fn = void (*)(attn_memref_f16_4d *, const attn_memref_f16_4d *,
                    const attn_memref_f16_4d *, const attn_memref_f16_4d *,
                    const attn_memref_f32_4d *, const attn_memref_i1_4d *);

/// One function: inputs from `seed`, the CPU and CUDA results compared.
bool compare(const char *name, Fn cpu, Fn cuda, void (*cudaFree_)(void *),
             const int64_t (&qs)[4], const int64_t (&ks)[4], unsigned seed) {
  const int64_t ss[4] = {1, qs[1], 1, 1}, ps[4] = {qs[0], 1, 1, ks[2]};
  std::vector<uint16_t> q(numel(qs)), k(numel(ks)), v(numel(ks));
  std::vector<float> slope(numel(ss));
  std::vector<uint8_t> pad(numel(ps));
  unsigned x = seed;
  auto rnd = [&] {
    x = x * 1664525u + 1013904223u;
    return static_cast<float>((x >> 8) & 0xFFFF) / 32768.f - 1.f;
  };
  for (auto *t : {&q, &k})
    for (uint16_t &e : *t)
      e = f32_to_f16_bits(2.f * rnd());
  for (uint16_t &e : v)
    e = f32_to_f16_bits(rnd());
  for (int64_t h = 0; h < qs[1]; ++h)
    slope[h] = std::ldexp(1.f, -static_cast<int>(h + 1));
  for (int64_t b = 0; b < ps[0]; ++b)
    for (int64_t j = 0; j < ps[3]; ++j)
      pad[b * ps[3] + j] = (b == 1 && qs[2] <= 16) || rnd() > 0.6f;

  // CPU: host memory.
  attn_memref_f16_4d hq = dense<attn_memref_f16_4d>(q.data(), qs),
                     hk = dense<attn_memref_f16_4d>(k.data(), ks),
                     hv = dense<attn_memref_f16_4d>(v.data(), ks), ho;
  attn_memref_f32_4d hs = dense<attn_memref_f32_4d>(slope.data(), ss);
  attn_memref_i1_4d hp =
      dense<attn_memref_i1_4d>(reinterpret_cast<bool *>(pad.data()), ps);
  cpu(&ho, &hq, &hk, &hv, &hs, &hp);

  // CUDA: device memory; the result is managed memory.
  uint16_t *dq = toDevice(q), *dk = toDevice(k), *dv = toDevice(v);
  float *ds = toDevice(slope);
  uint8_t *dp = toDevice(pad);
  attn_memref_f16_4d gq = dense<attn_memref_f16_4d>(dq, qs),
                     gk = dense<attn_memref_f16_4d>(dk, ks),
                     gv = dense<attn_memref_f16_4d>(dv, ks), go;
  attn_memref_f32_4d gs = dense<attn_memref_f32_4d>(ds, ss);
  attn_memref_i1_4d gp =
      dense<attn_memref_i1_4d>(reinterpret_cast<bool *>(dp), ps);
  cuda(&go, &gq, &gk, &gv, &gs, &gp);

  double maxErr = 0;
  long bad = 0, nans = 0;
  const int64_t n = qs[0] * qs[1] * qs[2] * qs[3];
  for (int64_t i = 0; i < n; ++i) {
    const double c = f16_bits_to_f32(ho.aligned[i]);
    const double g = f16_bits_to_f32(go.aligned[i]);
    nans += std::isnan(c);
    if (std::isnan(c) || std::isnan(g)) {
      bad += std::isnan(c) != std::isnan(g);
      continue;
    }
    maxErr = std::fmax(maxErr, std::fabs(g - c));
    bad += std::fabs(g - c) > 4e-3 + 4e-3 * std::fabs(c);
  }
  std::printf("%s: max_abs_err=%.3g nan=%ld mismatches=%ld %s\n", name, maxErr,
              nans, bad, bad == 0 ? "ok" : "FAIL");
  std::free(ho.allocated);
  cudaFree_(go.allocated);
  for (void *d : {static_cast<void *>(dq), static_cast<void *>(dk),
                  static_cast<void *>(dv), static_cast<void *>(ds),
                  static_cast<void *>(dp)})
    cudaFree(d);
  return bad == 0;
}

void *openLibrary(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
  return h;
}

template <class T> T sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    std::fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
    std::exit(1);
  }
  return reinterpret_cast<T>(p);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CUDA.so CPU.so\n", argv[0]);
    return 2;
  }
  void *cudaLib = openLibrary(argv[1]), *cpuLib = openLibrary(argv[2]);
  if (!cudaLib || !cpuLib)
    return 1;
  auto free_ = sym<void (*)(void *)>(cudaLib, "attnrt_cuda_free");
  const int64_t pq[4] = {2, 8, 200, 64}, pk[4] = {2, 4, 300, 64};
  const int64_t dq[4] = {2, 8, 4, 64}, dk[4] = {2, 4, 1000, 64};
  bool ok = compare("prefill", sym<Fn>(cpuLib, "_mlir_ciface_prefill"),
                    sym<Fn>(cudaLib, "_mlir_ciface_prefill"), free_, pq, pk, 1);
  ok &= compare("decode", sym<Fn>(cpuLib, "_mlir_ciface_decode"),
                sym<Fn>(cudaLib, "_mlir_ciface_decode"), free_, dq, dk, 2);
  return ok ? 0 : 1;
}
