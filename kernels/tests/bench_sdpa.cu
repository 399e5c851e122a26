// Benchmark of attn_cuda_sdpa_fwd: B=4, H=16, D in {64,128}, L=S in {512,
// 2048, 8192, 16384}, causal and not, f16 and bf16. Median of cudaEvent-timed
// iterations after warm-up; TFLOP/s = 4*B*H*L*S*D / time (halved for causal).
// Then the other kernels (--extra-csv): sliding-window causal prefill (flops
// of the band only), f32 inputs (generic kernel), and decode shapes (L in
// {1, 4, 16}, long S, MHA and GQA) with and without the split-key workspace,
// in GB/s of q/k/v/out traffic. Prints the device name and markdown tables;
// --csv PATH also writes machine-readable rows (used by
// kernels/bench/torch_sdpa_bench.py to print ours/flash ratios). Exits 77
// when there is no GPU.
//
// Options: --csv PATH, --extra-csv PATH, --quick (L=S in {512, 2048} only,
// fewer decode shapes), --min-ms MS (time per config, default 300),
// --variants all|default (tensor-core tile shapes M16/M32, see
// src/attn_internal.h; default: the library default only)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attn/kernels/attn_cuda.h"
#include "attn_internal.h"
#include "sdpa_testlib.h"

#define CUDA_OK(expr)                                                                                  \
  do {                                                                                                 \
    cudaError_t e__ = (expr);                                                                          \
    if (e__ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorString(e__), __FILE__, __LINE__, \
                   #expr);                                                                             \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)

namespace {

// Uniform(-1, 1) value of element i (hash based, deterministic).
__device__ float hash_unit(size_t i, uint32_t seed) {
  uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return (x >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

// Uniform(-1, 1) values, written as f16 or bf16 bits.
__global__ void init_kernel(uint16_t* p, size_t n, uint32_t seed, int bf16) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float f = hash_unit(i, seed);
    if (bf16) {
      const __nv_bfloat16 b = __float2bfloat16_rn(f);
      p[i] = *reinterpret_cast<const uint16_t*>(&b);
    } else {
      const __half h = __float2half_rn(f);
      p[i] = *reinterpret_cast<const uint16_t*>(&h);
    }
  }
}

using sdpa_test::contiguous;

// Median time (ms) of attn_cuda_sdpa_fwd(a) over >= 10 runs (>= min_ms in
// all) after 3 warm-up runs; negative (with `err` set) if the call fails.
double time_sdpa(const attn_sdpa_fwd_args& a, cudaStream_t stream, double min_ms, char* err, size_t err_len) {
  cudaEvent_t ev0, ev1;
  CUDA_OK(cudaEventCreate(&ev0));
  CUDA_OK(cudaEventCreate(&ev1));
  float warm_ms = 0.f;
  for (int w = 0; w < 3; ++w) {
    CUDA_OK(cudaEventRecord(ev0, stream));
    if (attn_cuda_sdpa_fwd(&a, err, err_len) != ATTN_OK) {
      CUDA_OK(cudaEventDestroy(ev0));
      CUDA_OK(cudaEventDestroy(ev1));
      return -1.0;
    }
    CUDA_OK(cudaEventRecord(ev1, stream));
    CUDA_OK(cudaEventSynchronize(ev1));
    CUDA_OK(cudaEventElapsedTime(&warm_ms, ev0, ev1));
  }
  const int iters = std::max(10, std::min(200, static_cast<int>(min_ms / std::max(warm_ms, 1e-3f))));
  std::vector<float> times;
  for (int it = 0; it < iters; ++it) {
    CUDA_OK(cudaEventRecord(ev0, stream));
    attn_cuda_sdpa_fwd(&a, err, err_len);
    CUDA_OK(cudaEventRecord(ev1, stream));
    CUDA_OK(cudaEventSynchronize(ev1));
    float ms = 0.f;
    CUDA_OK(cudaEventElapsedTime(&ms, ev0, ev1));
    times.push_back(ms);
  }
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaEventDestroy(ev0));
  CUDA_OK(cudaEventDestroy(ev1));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Uniform(-1, 1) f32 values (hash based, deterministic).
__global__ void init_f32_kernel(float* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = hash_unit(i, seed);
  }
}

// Key/query pairs a causal sliding window of `left` keys back keeps in an
// L x L problem: sum_i min(i + 1, left + 1).
double window_pairs(int64_t L, int64_t left) {
  double n = 0;
  for (int64_t i = 0; i < L; ++i) n += static_cast<double>(std::min(i + 1, left + 1));
  return n;
}

// The other kernels: windowed prefill, f32, decode. Rows to `csv` as
// kind,dtype,D,B,Hq,Hkv,L,S,variant,ms,tflops,gbps.
int bench_extra(void* q, void* k, void* v, void* o, size_t max_bytes, cudaStream_t stream, double min_ms, bool quick,
                FILE* csv) {
  int failures = 0;
  char err[256];
  auto row = [&](const char* kind, const char* dt, int D, int B, int Hq, int Hkv, int L, int S, const char* variant,
                 double ms, double tflops, double gbps) {
    std::printf("| %s | %s | %d | %d | %d | %d | %d | %d | %s | %.4f | %.1f | %.0f |\n", kind, dt, D, B, Hq, Hkv, L, S,
                variant, ms, tflops, gbps);
    std::fflush(stdout);
    if (csv)
      std::fprintf(csv, "%s,%s,%d,%d,%d,%d,%d,%d,%s,%.5f,%.3f,%.1f\n", kind, dt, D, B, Hq, Hkv, L, S, variant, ms, tflops,
                   gbps);
  };
  std::printf("\n| kind | dtype | D | B | Hq | Hkv | L | S | variant | median ms | TFLOP/s | GB/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  auto fail = [&](const char* what) {
    std::printf("| %s | error: %s |\n", what, err);
    ++failures;
  };

  // Sliding window (causal, 1024 keys back): only the band's tiles are visited.
  for (int L : quick ? std::vector<int>{4096} : std::vector<int>{4096, 16384}) {
    const int B = 4, H = 16, D = 128;
    attn_sdpa_fwd_args a;
    attn_sdpa_fwd_args_init(&a);
    a.dtype = ATTN_DTYPE_BF16;
    a.q = contiguous(q, B, H, L, D);
    a.k = contiguous(k, B, H, L, D);
    a.v = contiguous(v, B, H, L, D);
    a.out = contiguous(o, B, H, L, D);
    a.scale = 1.0f / std::sqrt(static_cast<float>(D));
    a.is_causal = 1;
    a.window_left = 1023;
    a.stream = stream;
    const double ms = time_sdpa(a, stream, min_ms, err, sizeof(err));
    if (ms < 0) { fail("window"); continue; }
    const double flops = 4.0 * B * H * window_pairs(L, 1023) * D;
    row("window1024", "bf16", D, B, H, H, L, L, "-", ms, flops / (ms * 1e-3) / 1e12, 0.0);
  }

  // f32 inputs (generic kernel, f32 math).
  {
    const int B = 4, H = 16, L = 2048;
    for (int D : {64, 128}) {
      attn_sdpa_fwd_args a;
      attn_sdpa_fwd_args_init(&a);
      a.dtype = ATTN_DTYPE_F32;
      init_f32_kernel<<<1024, 256, 0, stream>>>(static_cast<float*>(q), max_bytes / 4, 11u);
      init_f32_kernel<<<1024, 256, 0, stream>>>(static_cast<float*>(k), max_bytes / 4, 12u);
      init_f32_kernel<<<1024, 256, 0, stream>>>(static_cast<float*>(v), max_bytes / 4, 13u);
      a.q = contiguous(q, B, H, L, D);
      a.k = contiguous(k, B, H, L, D);
      a.v = contiguous(v, B, H, L, D);
      a.out = contiguous(o, B, H, L, D);
      a.scale = 1.0f / std::sqrt(static_cast<float>(D));
      a.stream = stream;
      const double ms = time_sdpa(a, stream, min_ms, err, sizeof(err));
      if (ms < 0) { fail("f32"); continue; }
      row("f32", "f32", D, B, H, H, L, L, "-", ms, 4.0 * B * H * L * L * D / (ms * 1e-3) / 1e12, 0.0);
    }
  }

  // Decode: f16, D = 128, with (split) and without (nosplit) the workspace.
  // GB/s = (q + k + v + out bytes) / time: K/V dominate, the HBM-bound part.
  struct Shape {
    int B, Hq, Hkv, L, S;
  };
  std::vector<Shape> shapes = {{1, 32, 8, 1, 32768}, {8, 32, 8, 1, 8192}, {1, 32, 32, 1, 32768},
                               {4, 32, 8, 4, 16384}, {1, 32, 8, 16, 32768}, {8, 32, 32, 16, 4096}};
  if (quick) shapes.resize(3);
  for (void* p : {q, k, v}) init_kernel<<<1024, 256, 0, stream>>>(static_cast<uint16_t*>(p), max_bytes / 2, 21u, 0);
  CUDA_OK(cudaGetLastError());
  void* ws = nullptr;
  size_t ws_bytes = 0;
  for (const Shape& sh : shapes) {
    const int D = 128;
    const double bytes = 2.0 * D * (2.0 * sh.B * sh.Hq * sh.L + 2.0 * sh.B * sh.Hkv * sh.S);
    if (2.0 * D * sh.B * std::max(sh.Hkv * sh.S, sh.Hq * sh.L) > static_cast<double>(max_bytes)) continue;
    attn_sdpa_fwd_args a;
    attn_sdpa_fwd_args_init(&a);
    a.dtype = ATTN_DTYPE_F16;
    a.q = contiguous(q, sh.B, sh.Hq, sh.L, D);
    a.k = contiguous(k, sh.B, sh.Hkv, sh.S, D);
    a.v = contiguous(v, sh.B, sh.Hkv, sh.S, D);
    a.out = contiguous(o, sh.B, sh.Hq, sh.L, D);
    a.scale = 1.0f / std::sqrt(static_cast<float>(D));
    a.stream = stream;
    for (int split = 0; split < 2; ++split) {
      if (split) {
        const size_t need = attn_cuda_sdpa_fwd_workspace_size(&a);
        if (need == 0) continue;
        if (need > ws_bytes) {
          if (ws) CUDA_OK(cudaFree(ws));
          CUDA_OK(cudaMalloc(&ws, need));
          ws_bytes = need;
        }
        a.workspace = ws;
        a.workspace_bytes = ws_bytes;
      }
      const double ms = time_sdpa(a, stream, min_ms, err, sizeof(err));
      if (ms < 0) { fail("decode"); continue; }
      const double flops = 4.0 * sh.B * sh.Hq * sh.L * static_cast<double>(sh.S) * D;
      row("decode", "f16", D, sh.B, sh.Hq, sh.Hkv, sh.L, sh.S, split ? "split" : "nosplit", ms,
          flops / (ms * 1e-3) / 1e12, bytes / (ms * 1e-3) / 1e9);
    }
  }
  if (ws) CUDA_OK(cudaFree(ws));
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const char* csv_path = nullptr;
  const char* extra_csv_path = nullptr;
  bool quick = false;
  double min_ms = 300.0;
  bool all_variants = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
    else if (!std::strcmp(argv[i], "--extra-csv") && i + 1 < argc) extra_csv_path = argv[++i];
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--min-ms") && i + 1 < argc) min_ms = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--variants") && i + 1 < argc) all_variants = !std::strcmp(argv[++i], "all");
  }
  using attn::detail::TcVariant;
  std::vector<TcVariant> variants = {attn::detail::effective_tc_variant()};
  if (all_variants) variants = {TcVariant::M16, TcVariant::M32};
  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);

  FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
  if (csv_path && !csv) {
    std::fprintf(stderr, "cannot open %s\n", csv_path);
    return 1;
  }
  if (csv) std::fprintf(csv, "variant,dtype,D,L,causal,ms,tflops\n");

  const int B = 4, H = 16;
  std::vector<int> lens = {512, 2048, 8192, 16384};
  if (quick) lens = {512, 2048};
  // Sized for the largest shape of either table (16384 x 128 per head).
  const size_t max_elems = static_cast<size_t>(B) * H * 16384 * 128;
  uint16_t *q, *k, *v, *o;
  CUDA_OK(cudaMalloc(&q, max_elems * 2));
  CUDA_OK(cudaMalloc(&k, max_elems * 2));
  CUDA_OK(cudaMalloc(&v, max_elems * 2));
  CUDA_OK(cudaMalloc(&o, max_elems * 2));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("| kernel | dtype | D | L=S | causal | median ms | TFLOP/s |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    init_kernel<<<1024, 256, 0, stream>>>(q, max_elems, 1u, bf16);
    init_kernel<<<1024, 256, 0, stream>>>(k, max_elems, 2u, bf16);
    init_kernel<<<1024, 256, 0, stream>>>(v, max_elems, 3u, bf16);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaStreamSynchronize(stream));
    for (int D : {64, 128}) {
      for (int L : lens) {
        for (int causal = 0; causal < 2; ++causal) {
          for (TcVariant variant : variants) {
          attn::detail::set_tc_variant(variant);
          const char* vname = attn::detail::tc_variant_name(variant);
          attn_sdpa_fwd_args a;
          attn_sdpa_fwd_args_init(&a);
          a.dtype = bf16 ? ATTN_DTYPE_BF16 : ATTN_DTYPE_F16;
          a.q = contiguous(q, B, H, L, D);
          a.k = contiguous(k, B, H, L, D);
          a.v = contiguous(v, B, H, L, D);
          a.out = contiguous(o, B, H, L, D);
          a.mask_kind = ATTN_MASK_NONE;
          a.scale = 1.0f / std::sqrt(static_cast<float>(D));
          a.is_causal = causal;
          a.masked_value = -INFINITY;
          a.stream = stream;
          char err[256];
          const double med = time_sdpa(a, stream, min_ms, err, sizeof(err));
          if (med < 0) {
            std::printf("| %s | %s | %d | %d | %d | error: %s | |\n", vname, bf16 ? "bf16" : "f16", D, L, causal, err);
            ++failures;
            continue;
          }
          double flops = 4.0 * B * H * static_cast<double>(L) * L * D;
          if (causal) flops *= 0.5;
          const double tflops = flops / (med * 1e-3) / 1e12;
          std::printf("| %s | %s | %d | %d | %s | %.3f | %.1f |\n", vname, bf16 ? "bf16" : "f16", D, L, causal ? "yes" : "no",
                      med, tflops);
          std::fflush(stdout);
          if (csv) std::fprintf(csv, "%s,%s,%d,%d,%d,%.5f,%.3f\n", vname, bf16 ? "bf16" : "f16", D, L, causal, med, tflops);
          }
        }
      }
    }
  }
  std::printf("\nB=%d H=%d, median over >= 10 iterations (>= %.0f ms per config) after 3 warm-up runs\n", B, H, min_ms);
  if (csv) std::fclose(csv);

  FILE* extra_csv = extra_csv_path ? std::fopen(extra_csv_path, "w") : nullptr;
  if (extra_csv) std::fprintf(extra_csv, "kind,dtype,D,B,Hq,Hkv,L,S,variant,ms,tflops,gbps\n");
  failures += bench_extra(q, k, v, o, max_elems * 2, stream, min_ms, quick, extra_csv);
  if (extra_csv) std::fclose(extra_csv);
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(o);
  return failures ? 1 : 0;
}
