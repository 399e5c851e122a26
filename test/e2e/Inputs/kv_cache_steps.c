/* Drives Inputs/kv-cache-steps.mlir compiled by attn-compile: a prefill of
 * T rows and decode steps of one row share a KV cache that the library
 * writes in place. Checks every output and the cache against a double
 * reference, and that the library never returns the cache. Prints "ok". */
#include "kv_cache_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { HQ = 4, HKV = 2, CAP = 16, D = 32, T = 5 };

static float kc[HKV * CAP * D], vc[HKV * CAP * D];
static float kall[HKV * CAP * D], vall[HKV * CAP * D]; /* what was written */
static double maxErr;

static attn_memref_f32_4d wrap(float *p, long h, long n) {
  attn_memref_f32_4d d = {p, p, 0, {1, h, n, D}, {h * n * D, n * D, D, 1}};
  return d;
}

static float value(int i, float a) { return sinf(a * (float)i + 0.3f); }

/* One query row of head h against keys [0, n): the double reference. */
static void check(const float *q, int h, int n, const attn_memref_f32_4d *o,
                  int row, int rows) {
  int g = h / (HQ / HKV);
  double s[CAP], m = -INFINITY, sum = 0.0;
  for (int j = 0; j < n; ++j) {
    double dot = 0.0;
    for (int e = 0; e < D; ++e)
      dot += (double)q[(h * rows + row) * D + e] * kall[(g * CAP + j) * D + e];
    s[j] = dot * 0.17677669529663687;
    m = s[j] > m ? s[j] : m;
  }
  for (int j = 0; j < n; ++j)
    sum += s[j] = exp(s[j] - m);
  for (int e = 0; e < D; ++e) {
    double ref = 0.0;
    for (int j = 0; j < n; ++j)
      ref += s[j] / sum * vall[(g * CAP + j) * D + e];
    float got = o->aligned[o->offset + h * o->strides[1] + row * o->strides[2] +
                           e * o->strides[3]];
    double err = fabs(got - ref);
    maxErr = err > maxErr ? err : maxErr;
  }
}

static int cacheMatches(int n) {
  for (int g = 0; g < HKV; ++g)
    for (int j = 0; j < n; ++j)
      for (int e = 0; e < D; ++e) {
        int i = (g * CAP + j) * D + e;
        if (kc[i] != kall[i] || vc[i] != vall[i])
          return 0;
      }
  return 1;
}

int main(void) {
  static float q[HQ * T * D], k[HKV * T * D], v[HKV * T * D];
  for (int i = 0; i < HQ * T * D; ++i)
    q[i] = value(i, 0.37f);
  for (int g = 0; g < HKV; ++g)
    for (int j = 0; j < T; ++j)
      for (int e = 0; e < D; ++e) {
        int i = (g * T + j) * D + e, c = (g * CAP + j) * D + e;
        kall[c] = k[i] = value(i, 0.11f);
        vall[c] = v[i] = value(i, 0.05f);
      }
  attn_memref_f32_4d dkc = wrap(kc, HKV, CAP), dvc = wrap(vc, HKV, CAP);
  attn_memref_f32_4d dq = wrap(q, HQ, T), dk = wrap(k, HKV, T),
                     dv = wrap(v, HKV, T);
  attn_memref_f32_4d out;
  _mlir_ciface_prefill(&out, &dkc, &dvc, &dq, &dk, &dv);
  for (int h = 0; h < HQ; ++h)
    for (int i = 0; i < T; ++i)
      check(q, h, i + 1, &out, i, T);
  free(out.allocated);
  if (!cacheMatches(T)) {
    printf("prefill did not write the cache\n");
    return 1;
  }
  for (int n = T + 1; n <= CAP; ++n) {
    static float q1[HQ * D], k1[HKV * D], v1[HKV * D];
    static bool pad[CAP];
    for (int i = 0; i < HQ * D; ++i)
      q1[i] = value(i + 100 * n, 0.21f);
    for (int g = 0; g < HKV; ++g)
      for (int e = 0; e < D; ++e) {
        int c = (g * CAP + n - 1) * D + e;
        kall[c] = k1[g * D + e] = value(g * D + e + 7 * n, 0.13f);
        vall[c] = v1[g * D + e] = value(g * D + e + 5 * n, 0.07f);
      }
    for (int j = 0; j < n; ++j)
      pad[j] = true;
    attn_memref_f32_4d dq1 = wrap(q1, HQ, 1), dk1 = wrap(k1, HKV, 1),
                       dv1 = wrap(v1, HKV, 1);
    attn_memref_i1_2d dpad = {pad, pad, 0, {1, n}, {n, 1}};
    _mlir_ciface_decode(&out, &dkc, &dvc, &dq1, &dk1, &dv1, &dpad);
    for (int h = 0; h < HQ; ++h)
      check(q1, h, n, &out, 0, 1);
    if (out.allocated == (float *)kc || out.allocated == (float *)vc) {
      printf("decode returned the cache\n");
      return 1;
    }
    free(out.allocated);
    if (!cacheMatches(n)) {
      printf("decode did not write cache row %d\n", n - 1);
      return 1;
    }
  }
  printf("max_abs_err=%.3e %s\n", maxErr, maxErr < 1e-5 ? "ok" : "FAILED");
  return maxErr < 1e-5 ? 0 : 1;
}
