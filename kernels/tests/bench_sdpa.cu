// Benchmark of attn_cuda_sdpa_fwd: B=4, H=16, D in {64,128}, L=S in {512,
// 2048, 8192}, causal and not, f16 and bf16. Median of cudaEvent-timed
// iterations after warm-up; TFLOP/s = 4*B*H*L*S*D / time (halved for causal).
// Prints the device name and a markdown table; --csv PATH also writes
// machine-readable rows (used by kernels/bench/torch_sdpa_bench.py to print
// ours/flash ratios). Exits 77 when there is no GPU.
//
// Options: --csv PATH, --quick (L=S in {512, 2048} only), --min-ms MS (time per
// config, default 300), --variants all|default (tensor-core tile shapes
// M16/M32, see src/attn_internal.h; default: the library default only)
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

// Uniform(-1, 1) values, written as f16 or bf16 bits (hash based, deterministic).
__global__ void init_kernel(uint16_t* p, size_t n, uint32_t seed, int bf16) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    const float f = (x >> 8) * (2.0f / 16777216.0f) - 1.0f;
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

}  // namespace

int main(int argc, char** argv) {
  const char* csv_path = nullptr;
  bool quick = false;
  double min_ms = 300.0;
  bool all_variants = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
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
  std::vector<int> lens = {512, 2048, 8192};
  if (quick) lens = {512, 2048};
  const size_t max_elems = static_cast<size_t>(B) * H * lens.back() * 128;
  uint16_t *q, *k, *v, *o;
  CUDA_OK(cudaMalloc(&q, max_elems * 2));
  CUDA_OK(cudaMalloc(&k, max_elems * 2));
  CUDA_OK(cudaMalloc(&v, max_elems * 2));
  CUDA_OK(cudaMalloc(&o, max_elems * 2));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t ev0, ev1;
  CUDA_OK(cudaEventCreate(&ev0));
  CUDA_OK(cudaEventCreate(&ev1));

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
          // warm-up (also estimates the per-call time)
          float warm_ms = 0.f;
          bool ok = true;
          for (int w = 0; w < 3 && ok; ++w) {
            CUDA_OK(cudaEventRecord(ev0, stream));
            ok = attn_cuda_sdpa_fwd(&a, err, sizeof(err)) == ATTN_OK;
            CUDA_OK(cudaEventRecord(ev1, stream));
            CUDA_OK(cudaEventSynchronize(ev1));
            CUDA_OK(cudaEventElapsedTime(&warm_ms, ev0, ev1));
          }
          if (!ok) {
            std::printf("| %s | %s | %d | %d | %d | error: %s | |\n", vname, bf16 ? "bf16" : "f16", D, L, causal, err);
            ++failures;
            continue;
          }
          const int iters = std::max(10, std::min(200, static_cast<int>(min_ms / std::max(warm_ms, 1e-3f))));
          std::vector<float> times;
          for (int it = 0; it < iters; ++it) {
            CUDA_OK(cudaEventRecord(ev0, stream));
            attn_cuda_sdpa_fwd(&a, err, sizeof(err));
            CUDA_OK(cudaEventRecord(ev1, stream));
            CUDA_OK(cudaEventSynchronize(ev1));
            float ms = 0.f;
            CUDA_OK(cudaEventElapsedTime(&ms, ev0, ev1));
            times.push_back(ms);
          }
          CUDA_OK(cudaGetLastError());
          std::sort(times.begin(), times.end());
          const double med = times[times.size() / 2];
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
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(o);
  return failures ? 1 : 0;
}
