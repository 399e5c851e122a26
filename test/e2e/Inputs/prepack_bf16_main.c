/* Calls the pack entry points of prepack_bf16.mlir's bf16 weights once,
   then @proj on the packed pairs for several row counts, and compares with
   a reference in double computed from the raw weights. Every value is a
   multiple of 1/64 (or 1/512) in [-1, 1], exact in bf16, so the products
   are exact and the sums differ from the reference only by f32 rounding;
   a wrong pair, a lost padding zero or a stale k block shows up as an
   error of about 1/64. The panels' padding (columns past N, the pair past
   an odd K) is also checked to be zero. */
#include "prepack_bf16.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K1 = 300, N1 = 130, K2 = 33, N2 = 40 };

static attn_memref_bf16_2d describe(uint16_t *data, int64_t rows,
                                    int64_t cols) {
  attn_memref_bf16_2d d = {data, data, 0, {rows, cols}, {cols, 1}};
  return d;
}

static float value(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((int)(*state >> 16) % 129 - 64) / 64.0f;
}

/* The bf16 bit pattern of a float that bf16 holds exactly. */
static uint16_t toBf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return (uint16_t)(bits >> 16);
}

static double fromBf16(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* Fills rows x cols bf16 values (scaled by `scale`) and returns them. */
static uint16_t *fill(unsigned *state, int rows, int cols, float scale) {
  uint16_t *p = malloc(sizeof(uint16_t) * rows * cols);
  for (int i = 0; i < rows * cols; ++i)
    p[i] = toBf16(value(state) * scale);
  return p;
}

/* The largest |result - reference| of an M x N product whose operand
   element (m, k) is a[m * K + k] and (k, n) is b(k, n). */
static double worstError(const attn_memref_f32_2d *y, const uint16_t *a,
                         int m, int k, int n, const uint16_t *b,
                         int bRowStride, int bColStride) {
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int t = 0; t < k; ++t)
        ref += fromBf16(a[i * k + t]) *
               fromBf16(b[t * bRowStride + j * bColStride]);
      double got = y->aligned[y->offset + i * y->strides[0] + j];
      double err = fabs(got - ref);
      worst = err > worst ? err : worst;
    }
  return worst;
}

int main(void) {
  unsigned state = 1;
  uint16_t *w1 = fill(&state, N1, K1, 1.0f);
  uint16_t *w2 = fill(&state, K2, N2, 0.125f);
  attn_memref_bf16_2d w1d = describe(w1, N1, K1), w2d = describe(w2, K2, N2);
  attn_memref_bf16_4d p1, p2;
  _mlir_ciface_proj_pack_0(&p1, &w1d);
  _mlir_ciface_proj_pack_1(&p2, &w2d);
  printf("panels");
  const attn_memref_bf16_4d *panels[] = {&p1, &p2};
  for (int i = 0; i < 2; ++i)
    for (int d = 0; d < 4; ++d)
      printf("%s%lld", d ? "x" : " ", (long long)panels[i]->sizes[d]);
  printf("\n");
  /* The second panels: [1, 1, kc / 2, 2 * nc], pairs (2p, 2p + 1) of k for
     nc columns ([1, 1, 17, 96] for the pair path, [1, 1, 32, 128] in whole
     AMX tiles); columns past 40 and k past 32 are zero. Panels of whole
     AMX tiles (kc / 2 a multiple of 16, 2 * nc of 64) are grouped: the
     panel's 32-wide groups of 2 * nc (16 columns of pairs) one after the
     other, each of its kc / 2 rows of 32. */
  int64_t rows = p2.sizes[2], width = p2.sizes[3];
  int grouped = rows % 16 == 0 && width % 64 == 0;
  int padding = 0;
  for (int p = 0; p < rows; ++p)
    for (int c = 0; c < width / 2; ++c)
      for (int i = 0; i < 2; ++i) {
        int64_t x = 2 * c + i;
        int64_t at = grouped ? (x / 32) * rows * 32 + p * 32 + x % 32
                             : p * p2.strides[2] + x * p2.strides[3];
        uint16_t got = p2.aligned[p2.offset + at];
        int k = 2 * p + i;
        uint16_t want = (k < K2 && c < N2) ? w2[k * N2 + c] : 0;
        padding += got != want;
      }
  printf("pairs of the stored weight: %d wrong\n", padding);
  int failures = padding != 0;
  const int rowCounts[] = {1, 5, 37, 70};
  for (int r = 0; r < 4; ++r) {
    int m = rowCounts[r];
    uint16_t *x = fill(&state, m, K1, 1.0f), *u = fill(&state, m, K2, 1.0f);
    attn_memref_bf16_2d xd = describe(x, m, K1), ud = describe(u, m, K2);
    proj_results out;
    _mlir_ciface_proj(&out, &p1, &p2, &xd, &ud);
    /* h = x . w1^T reads w1[n, k]; y = u . w2 reads w2[k, n]. */
    double eh = worstError(&out.r0, x, m, K1, N1, w1, 1, K1);
    double ey = worstError(&out.r1, u, m, K2, N2, w2, N2, 1);
    /* f32 accumulation of at most 300 exact products of magnitude <= 1. */
    int ok = eh <= 1e-4 && ey <= 1e-4;
    failures += !ok;
    printf("m=%d max_abs_err=%g %g %s\n", m, eh, ey, ok ? "ok" : "FAIL");
    free(out.r0.allocated);
    free(out.r1.allocated);
    free(x);
    free(u);
  }
  free(p1.allocated);
  free(p2.allocated);
  free(w1);
  free(w2);
  return failures != 0;
}
