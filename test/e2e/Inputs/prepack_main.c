/* Calls the pack entry points of prepack.mlir's weights once, then @mlp on
   the packed panels for several row counts, and compares with a reference
   in double computed from the raw weights. */
#include "prepack.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { K1 = 300, N1 = 130, N2 = 33 };

static attn_memref_f32_2d describe(float *data, int64_t rows, int64_t cols) {
  attn_memref_f32_2d d = {data, data, 0, {rows, cols}, {cols, 1}};
  return d;
}

static float value(unsigned *state) {
  *state = *state * 1103515245u + 12345u;
  return (float)((int)(*state >> 16) % 129 - 64) / 64.0f;
}

int main(void) {
  static float w1[N1 * K1], w2[N1 * N2];
  unsigned state = 1;
  for (int i = 0; i < N1 * K1; ++i)
    w1[i] = value(&state);
  for (int i = 0; i < N1 * N2; ++i)
    w2[i] = value(&state) / 8.0f;
  attn_memref_f32_2d w1d = describe(w1, N1, K1), w2d = describe(w2, N1, N2);
  attn_memref_f32_4d p1, p2;
  _mlir_ciface_mlp_pack_0(&p1, &w1d);
  _mlir_ciface_mlp_pack_1(&p2, &w2d);
  printf("panels %lldx%lldx%lldx%lld %lldx%lldx%lldx%lld\n",
         (long long)p1.sizes[0], (long long)p1.sizes[1],
         (long long)p1.sizes[2], (long long)p1.sizes[3],
         (long long)p2.sizes[0], (long long)p2.sizes[1],
         (long long)p2.sizes[2], (long long)p2.sizes[3]);
  int failures = 0;
  const int rowCounts[] = {1, 5, 37};
  for (int c = 0; c < 3; ++c) {
    int m = rowCounts[c];
    float *x = malloc(sizeof(float) * m * K1);
    for (int i = 0; i < m * K1; ++i)
      x[i] = value(&state);
    attn_memref_f32_2d xd = describe(x, m, K1), y;
    _mlir_ciface_mlp(&y, &p1, &p2, &xd);
    double worst = 0;
    for (int i = 0; i < m; ++i) {
      double h[N1];
      for (int n = 0; n < N1; ++n) {
        h[n] = 0;
        for (int k = 0; k < K1; ++k)
          h[n] += (double)x[i * K1 + k] * w1[n * K1 + k];
      }
      for (int n = 0; n < N2; ++n) {
        double ref = 0;
        for (int k = 0; k < N1; ++k)
          ref += h[k] * w2[k * N2 + n];
        double err = fabs(y.aligned[y.offset + i * y.strides[0] + n] - ref);
        worst = err > worst ? err : worst;
      }
    }
    /* Within f32 accumulation's error for these magnitudes. */
    int ok = worst <= 1e-3;
    failures += !ok;
    printf("m=%d max_abs_err=%g %s\n", m, worst, ok ? "ok" : "FAIL");
    free(y.allocated);
    free(x);
  }
  free(p1.allocated);
  free(p2.allocated);
  return failures != 0;
}
