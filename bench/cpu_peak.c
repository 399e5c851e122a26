/*===- cpu_peak.c - FMA peak and STREAM-like triad of this CPU -------------===*\
|*                                                                            *|
|* The two ceilings the CPU benchmarks report against, measured in the same  *|
|* run and with the same thread count as the contenders:                     *|
|*                                                                            *|
|*   fma    NCHAINS independent multiply-add chains of the widest vectors     *|
|*          the compiler targets (-march=native: zmm with AVX-512, ymm with   *|
|*          AVX2), each starting from a DIFFERENT value so that no compiler   *|
|*          can merge chains (equal start values let gcc fold them into one   *|
|*          and overstate the peak); 2 FLOP per lane per FMA.                 *|
|*   dpbf16 the same chains of AVX512-BF16's vdpbf16ps (built with a target   *|
|*          that has it): 2 bf16 products and 2 additions per f32 lane, the   *|
|*          ceiling of a GEMM that multiplies bf16 pairs instead of widening. *|
|*   amx    tdpbf16ps on 4 independent 16x16 f32 C tiles from A and B tiles   *|
|*          that stay in tile registers (a target with AMX-BF16, on Linux,   *|
|*          which grants the tiles per process): 16 x 16 x 32 bf16 products  *|
|*          and additions per instruction, the ceiling of a bf16 GEMM on the *|
|*          tiles, which no GEMM reaches (its tiles come from memory).       *|
|*   triad  a[i] = b[i] + s * c[i] over arrays far larger than the caches:    *|
|*          bytes moved = 3 * 4 * n per pass (no write-allocate counted, as   *|
|*          STREAM).                                                          *|
|*                                                                            *|
|* Build: cc -O2 -march=native -fopenmp bench/cpu_peak.c -o cpu_peak          *|
|* Run:   cpu_peak fma|dpbf16|amx|triad THREADS  prints "<kind> <value>"     *|
|* bench/cpu_attention_bench.py builds it, checks the FMA loop's disassembly  *|
|* (NCHAINS vfmadd on vector registers, no spills) and runs it.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#if defined(__AVX512BF16__) || defined(__AMX_BF16__)
#include <immintrin.h>
#endif
#if defined(__AMX_BF16__) && defined(__linux__)
#define HAVE_AMX_PEAK 1
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
#define VBYTES 64
#elif defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16
#endif
#define LANES (VBYTES / 4)
/* Enough chains to cover FMA latency x FMA ports on current x86 cores
   (4 cycles x 2 ports = 8; 12 leaves slack and fits 16 registers). */
#define NCHAINS 12

typedef float vf __attribute__((vector_size(VBYTES)));

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Kept out of line so that its disassembly can be checked by name. */
__attribute__((noinline)) float fma_chains(long iters, float seed) {
  vf acc[NCHAINS];
  vf a, c;
  for (int l = 0; l < LANES; ++l) {
    a[l] = 0.999999f;
    c[l] = 1e-7f * seed;
  }
  for (int i = 0; i < NCHAINS; ++i)
    for (int l = 0; l < LANES; ++l)
      acc[i][l] = seed + (float)(i * LANES + l); /* distinct start values */
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < NCHAINS; ++i)
      acc[i] = acc[i] * a + c;
    __asm__ volatile("" : "+x"(a)); /* a is not a loop constant to fold */
  }
  float sum = 0;
  for (int i = 0; i < NCHAINS; ++i)
    for (int l = 0; l < LANES; ++l)
      sum += acc[i][l];
  return sum;
}

/* The best GFLOP/s of three rounds of `iters` iterations of `chains` on
   every thread, each iteration doing `flopsPerIter`. */
static double chainPeak(float (*chains)(long, float), long iters,
                        double flopsPerIter, int threads) {
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    double t0 = now();
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += chains(iters, 1.0f + omp_get_thread_num());
    double t = now() - t0;
    double gflops = flopsPerIter * (double)iters * threads / t / 1e9;
    if (sink == 12345.0f)
      printf("(sink)\n");
    if (gflops > best)
      best = gflops;
  }
  return best;
}

#if defined(__AVX512BF16__)
/* Accumulators grow by 2e-4 per step from distinct normal start values, as
   the FMA chains' stay normal. */
__attribute__((noinline)) float dpbf16_chains(long iters, float seed) {
  __m512 acc[NCHAINS];
  __m512bh a = (__m512bh)_mm512_set1_epi32(0x3c233c23); /* 0.00995 pairs */
  __m512bh b = (__m512bh)_mm512_set1_epi32(0x3c233c23);
  for (int i = 0; i < NCHAINS; ++i)
    acc[i] = _mm512_set1_ps(seed + (float)i);
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < NCHAINS; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
    __asm__ volatile("" : "+v"(a));
  }
  float sum = 0;
  for (int i = 0; i < NCHAINS; ++i)
    sum += _mm512_reduce_add_ps(acc[i]);
  return sum;
}
#endif

#if HAVE_AMX_PEAK
/* The tile configuration of palette 1: 8 tiles of 16 rows x 64 bytes. */
struct TileConfig {
  unsigned char palette, startRow, reserved[14];
  unsigned short bytesPerRow[16];
  unsigned char rows[16];
};

/* `iters` rounds of 4 tdpbf16ps, each on its own C tile (4 independent
   chains, enough for the instruction's latency), A and B loaded once. */
__attribute__((noinline)) static float amx_chains(long iters, float seed) {
  struct TileConfig config;
  memset(&config, 0, sizeof config);
  config.palette = 1;
  for (int t = 0; t < 8; ++t) {
    config.bytesPerRow[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
  static _Thread_local unsigned short ab[16 * 32] __attribute__((aligned(64)));
  static _Thread_local float c[16 * 16] __attribute__((aligned(64)));
  for (int i = 0; i < 16 * 32; ++i)
    ab[i] = 0x3c23; /* 0.00995 */
  for (int i = 0; i < 16 * 16; ++i)
    c[i] = seed;
  _tile_loadd(0, c, 64);
  _tile_loadd(1, c, 64);
  _tile_loadd(2, c, 64);
  _tile_loadd(3, c, 64);
  _tile_loadd(4, ab, 64);
  _tile_loadd(5, ab, 64);
  _tile_loadd(6, ab, 64);
  _tile_loadd(7, ab, 64);
  for (long it = 0; it < iters; ++it) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  float sum = 0;
  for (int t = 0; t < 4; ++t) {
    switch (t) {
    case 0: _tile_stored(0, c, 64); break;
    case 1: _tile_stored(1, c, 64); break;
    case 2: _tile_stored(2, c, 64); break;
    default: _tile_stored(3, c, 64); break;
    }
    sum += c[0];
  }
  _tile_release();
  return sum;
}

/* The GFLOP/s of amx_chains, 0 when the kernel does not grant the tiles. */
static double amxPeak(int threads) {
  /* ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA (Linux 5.16 and later). */
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0)
    return 0;
  /* 4 tdpbf16ps of 16 x 16 x 32 products and additions per iteration. */
  return chainPeak(amx_chains, 2000000L, 4.0 * 16 * 16 * 32 * 2, threads);
}
#endif

static double triad(int threads) {
  long n = 1L << 25; /* 3 x 128 MiB */
  float *a = aligned_alloc(64, n * sizeof(float));
  float *b = aligned_alloc(64, n * sizeof(float));
  float *c = aligned_alloc(64, n * sizeof(float));
#pragma omp parallel for num_threads(threads)
  for (long i = 0; i < n; ++i) {
    a[i] = 0;
    b[i] = 1;
    c[i] = 2;
  }
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    double t0 = now();
#pragma omp parallel for num_threads(threads)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + 3.0f * c[i];
    double t = now() - t0;
    double gbs = 3.0 * sizeof(float) * n / t / 1e9;
    if (gbs > best)
      best = gbs;
  }
  if (a[n / 2] != 7.0f)
    printf("triad: wrong result\n");
  free(a);
  free(b);
  free(c);
  return best;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "fma") && strcmp(argv[1], "dpbf16") &&
                    strcmp(argv[1], "amx") && strcmp(argv[1], "triad"))) {
    fprintf(stderr, "usage: cpu_peak fma|dpbf16|amx|triad THREADS\n");
    return 2;
  }
  int threads = atoi(argv[2]);
  if (!strcmp(argv[1], "amx")) {
#if HAVE_AMX_PEAK
    double peak = amxPeak(threads);
    if (peak > 0) {
      printf("amx %.1f GFLOP/s (tdpbf16ps, 4 C tiles)\n", peak);
      return 0;
    }
    fprintf(stderr, "cpu_peak: the kernel did not grant the AMX tiles\n");
    return 1;
#else
    fprintf(stderr, "cpu_peak: built for a target without AMX-BF16\n");
    return 1;
#endif
  }
  if (!strcmp(argv[1], "dpbf16")) {
#if defined(__AVX512BF16__)
    printf("dpbf16 %.1f GFLOP/s (16-wide f32, 2 products per lane, %d "
           "chains)\n",
           chainPeak(dpbf16_chains, 200000000L / 16, 4.0 * 16 * NCHAINS,
                     threads),
           NCHAINS);
    return 0;
#else
    fprintf(stderr, "cpu_peak: built for a target without AVX512-BF16\n");
    return 1;
#endif
  }
  if (!strcmp(argv[1], "fma"))
    printf("fma %.1f GFLOP/s (%d-wide f32, %d chains)\n",
           chainPeak(fma_chains, 200000000L / LANES, 2.0 * LANES * NCHAINS,
                     threads),
           LANES, NCHAINS);
  else
    printf("triad %.1f GB/s\n", triad(threads));
  return 0;
}
