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
#include "cuda_test_util.h"
#include "sdpa_testlib.h"

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

// Arguments of an unmasked problem with contiguous [B, H, L, E] tensors and
// the default scale.
attn_sdpa_fwd_args bench_args(attn_dtype dt, void* q, void* k, void* v, void* o, int B, int Hq, int Hkv, int L, int S,
                              int D, cudaStream_t stream) {
  attn_sdpa_fwd_args a;
  attn_sdpa_fwd_args_init(&a);
  a.dtype = dt;
  a.q = contiguous(q, B, Hq, L, D);
  a.k = contiguous(k, B, Hkv, S, D);
  a.v = contiguous(v, B, Hkv, S, D);
  a.out = contiguous(o, B, Hq, L, D);
  a.scale = 1.0f / std::sqrt(static_cast<float>(D));
  a.stream = stream;
  return a;
}

// The table of the other kernels, printed as markdown and written to `csv`
// as kind,dtype,D,B,Hq,Hkv,L,S,variant,ms,tflops,gbps.
struct ExtraTable {
  FILE* csv;
  double min_ms;
  cudaStream_t stream;
  int failures = 0;

  // Times `a` and prints its row; a failed call prints its error instead.
  void time_row(const attn_sdpa_fwd_args& a, const char* kind, const char* dt, int D, int B, int Hq, int Hkv, int L,
                int S, const char* variant, double flops, double bytes) {
    char err[256];
    const double ms = time_sdpa(a, stream, min_ms, err, sizeof(err));
    if (ms < 0) {
      std::printf("| %s | error: %s |\n", kind, err);
      ++failures;
      return;
    }
    const double tflops = flops / (ms * 1e-3) / 1e12, gbps = bytes / (ms * 1e-3) / 1e9;
    std::printf("| %s | %s | %d | %d | %d | %d | %d | %d | %s | %.4f | %.1f | %.0f |\n", kind, dt, D, B, Hq, Hkv, L, S,
                variant, ms, tflops, gbps);
    std::fflush(stdout);
    if (csv)
      std::fprintf(csv, "%s,%s,%d,%d,%d,%d,%d,%d,%s,%.5f,%.3f,%.1f\n", kind, dt, D, B, Hq, Hkv, L, S, variant, ms, tflops,
                   gbps);
  }
};

// Sliding window (causal, 1024 keys back): only the band's tiles are visited.
void bench_window(ExtraTable& t, void* q, void* k, void* v, void* o, bool quick) {
  for (int L : quick ? std::vector<int>{4096} : std::vector<int>{4096, 16384}) {
    const int B = 4, H = 16, D = 128;
    attn_sdpa_fwd_args a = bench_args(ATTN_DTYPE_BF16, q, k, v, o, B, H, H, L, L, D, t.stream);
    a.is_causal = 1;
    a.window_left = 1023;
    const double flops = 4.0 * B * H * window_pairs(L, 1023) * D;
    t.time_row(a, "window1024", "bf16", D, B, H, H, L, L, "-", flops, 0.0);
  }
}

// f32 inputs (generic kernel, f32 math).
void bench_f32(ExtraTable& t, void* q, void* k, void* v, void* o, size_t max_bytes) {
  const int B = 4, H = 16, L = 2048;
  for (int D : {64, 128}) {
    init_f32_kernel<<<1024, 256, 0, t.stream>>>(static_cast<float*>(q), max_bytes / 4, 11u);
    init_f32_kernel<<<1024, 256, 0, t.stream>>>(static_cast<float*>(k), max_bytes / 4, 12u);
    init_f32_kernel<<<1024, 256, 0, t.stream>>>(static_cast<float*>(v), max_bytes / 4, 13u);
    attn_sdpa_fwd_args a = bench_args(ATTN_DTYPE_F32, q, k, v, o, B, H, H, L, L, D, t.stream);
    t.time_row(a, "f32", "f32", D, B, H, H, L, L, "-", 4.0 * B * H * L * L * D, 0.0);
  }
}

// Decode: f16, D = 128, with (split) and without (nosplit) the workspace.
// GB/s = (q + k + v + out bytes) / time: K/V dominate, the HBM-bound part.
void bench_decode(ExtraTable& t, void* q, void* k, void* v, void* o, size_t max_bytes, bool quick) {
  struct Shape {
    int B, Hq, Hkv, L, S;
  };
  std::vector<Shape> shapes = {{1, 32, 8, 1, 32768}, {8, 32, 8, 1, 8192}, {1, 32, 32, 1, 32768},
                               {4, 32, 8, 4, 16384}, {1, 32, 8, 16, 32768}, {8, 32, 32, 16, 4096}};
  if (quick) shapes.resize(3);
  for (void* p : {q, k, v}) init_kernel<<<1024, 256, 0, t.stream>>>(static_cast<uint16_t*>(p), max_bytes / 2, 21u, 0);
  CUDA_OK(cudaGetLastError());
  void* ws = nullptr;
  size_t ws_bytes = 0;
  for (const Shape& sh : shapes) {
    const int D = 128;
    const double bytes = 2.0 * D * (2.0 * sh.B * sh.Hq * sh.L + 2.0 * sh.B * sh.Hkv * sh.S);
    if (2.0 * D * sh.B * std::max(sh.Hkv * sh.S, sh.Hq * sh.L) > static_cast<double>(max_bytes)) continue;
    attn_sdpa_fwd_args a = bench_args(ATTN_DTYPE_F16, q, k, v, o, sh.B, sh.Hq, sh.Hkv, sh.L, sh.S, D, t.stream);
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
      const double flops = 4.0 * sh.B * sh.Hq * sh.L * static_cast<double>(sh.S) * D;
      t.time_row(a, "decode", "f16", D, sh.B, sh.Hq, sh.Hkv, sh.L, sh.S, split ? "split" : "nosplit", flops, bytes);
    }
  }
  if (ws) CUDA_OK(cudaFree(ws));
}

// The other kernels: windowed prefill, f32, decode. Returns the number of
// failed calls.
int bench_extra(void* q, void* k, void* v, void* o, size_t max_bytes, cudaStream_t stream, double min_ms, bool quick,
                FILE* csv) {
  std::printf("\n| kind | dtype | D | B | Hq | Hkv | L | S | variant | median ms | TFLOP/s | GB/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  ExtraTable t{csv, min_ms, stream};
  bench_window(t, q, k, v, o, quick);
  bench_f32(t, q, k, v, o, max_bytes);
  bench_decode(t, q, k, v, o, max_bytes, quick);
  return t.failures;
}

struct BenchOptions {
  const char* csv_path = nullptr;
  const char* extra_csv_path = nullptr;
  bool quick = false;
  double min_ms = 300.0;
  bool all_variants = false;
};

BenchOptions parse_options(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) o.csv_path = argv[++i];
    else if (!std::strcmp(argv[i], "--extra-csv") && i + 1 < argc) o.extra_csv_path = argv[++i];
    else if (!std::strcmp(argv[i], "--quick")) o.quick = true;
    else if (!std::strcmp(argv[i], "--min-ms") && i + 1 < argc) o.min_ms = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--variants") && i + 1 < argc) o.all_variants = !std::strcmp(argv[++i], "all");
  }
  return o;
}

constexpr int kMainB = 4, kMainH = 16;

// One row of the main table: B=4, H=16, L=S, no mask. Returns false if the
// call fails.
bool bench_main_row(uint16_t* q, uint16_t* k, uint16_t* v, uint16_t* o, cudaStream_t stream, double min_ms, int bf16,
                    int D, int L, int causal, attn::detail::TcVariant variant, FILE* csv) {
  const int B = kMainB, H = kMainH;
  attn::detail::set_tc_variant(variant);
  const char* vname = attn::detail::tc_variant_name(variant);
  attn_sdpa_fwd_args a = bench_args(bf16 ? ATTN_DTYPE_BF16 : ATTN_DTYPE_F16, q, k, v, o, B, H, H, L, L, D, stream);
  a.is_causal = causal;
  char err[256];
  const double med = time_sdpa(a, stream, min_ms, err, sizeof(err));
  if (med < 0) {
    std::printf("| %s | %s | %d | %d | %d | error: %s | |\n", vname, bf16 ? "bf16" : "f16", D, L, causal, err);
    return false;
  }
  double flops = 4.0 * B * H * static_cast<double>(L) * L * D;
  if (causal) flops *= 0.5;
  const double tflops = flops / (med * 1e-3) / 1e12;
  std::printf("| %s | %s | %d | %d | %s | %.3f | %.1f |\n", vname, bf16 ? "bf16" : "f16", D, L, causal ? "yes" : "no", med,
              tflops);
  std::fflush(stdout);
  if (csv) std::fprintf(csv, "%s,%s,%d,%d,%d,%.5f,%.3f\n", vname, bf16 ? "bf16" : "f16", D, L, causal, med, tflops);
  return true;
}

// The main table: f16 and bf16, D in {64, 128}, every length, causal or not,
// each tensor-core variant asked for. Returns the number of failed calls.
int bench_main_table(uint16_t* q, uint16_t* k, uint16_t* v, uint16_t* o, size_t max_elems, cudaStream_t stream,
                     const BenchOptions& opt, FILE* csv) {
  using attn::detail::TcVariant;
  std::vector<TcVariant> variants = {attn::detail::effective_tc_variant()};
  if (opt.all_variants) variants = {TcVariant::M16, TcVariant::M32};
  std::vector<int> lens = {512, 2048, 8192, 16384};
  if (opt.quick) lens = {512, 2048};
  std::printf("| kernel | dtype | D | L=S | causal | median ms | TFLOP/s |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    init_kernel<<<1024, 256, 0, stream>>>(q, max_elems, 1u, bf16);
    init_kernel<<<1024, 256, 0, stream>>>(k, max_elems, 2u, bf16);
    init_kernel<<<1024, 256, 0, stream>>>(v, max_elems, 3u, bf16);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaStreamSynchronize(stream));
    for (int D : {64, 128})
      for (int L : lens)
        for (int causal = 0; causal < 2; ++causal)
          for (TcVariant variant : variants)
            if (!bench_main_row(q, k, v, o, stream, opt.min_ms, bf16, D, L, causal, variant, csv)) ++failures;
  }
  std::printf("\nB=%d H=%d, median over >= 10 iterations (>= %.0f ms per config) after 3 warm-up runs\n", kMainB, kMainH,
              opt.min_ms);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions opt = parse_options(argc, argv);
  cudaDeviceProp prop;
  if (!attn_test::probe_cuda_device(&prop)) return 77;
  std::printf("device: %s (sm_%d%d, %d SMs)\n\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);

  FILE* csv = opt.csv_path ? std::fopen(opt.csv_path, "w") : nullptr;
  if (opt.csv_path && !csv) {
    std::fprintf(stderr, "cannot open %s\n", opt.csv_path);
    return 1;
  }
  if (csv) std::fprintf(csv, "variant,dtype,D,L,causal,ms,tflops\n");

  // Sized for the largest shape of either table (16384 x 128 per head).
  const size_t max_elems = static_cast<size_t>(kMainB) * kMainH * 16384 * 128;
  uint16_t *q, *k, *v, *o;
  CUDA_OK(cudaMalloc(&q, max_elems * 2));
  CUDA_OK(cudaMalloc(&k, max_elems * 2));
  CUDA_OK(cudaMalloc(&v, max_elems * 2));
  CUDA_OK(cudaMalloc(&o, max_elems * 2));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int failures = bench_main_table(q, k, v, o, max_elems, stream, opt, csv);
  if (csv) std::fclose(csv);

  FILE* extra_csv = opt.extra_csv_path ? std::fopen(opt.extra_csv_path, "w") : nullptr;
  if (extra_csv) std::fprintf(extra_csv, "kind,dtype,D,B,Hq,Hkv,L,S,variant,ms,tflops,gbps\n");
  failures += bench_extra(q, k, v, o, max_elems * 2, stream, opt.min_ms, opt.quick, extra_csv);
  if (extra_csv) std::fclose(extra_csv);
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(o);
  return failures ? 1 : 0;
}
