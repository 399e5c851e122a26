/* Calls attention compiled ahead of time by attn-compile and checks it
 * against a naive C reference.
 *
 *   attn-compile attention.mlir -o attention.so     # also writes attention.h
 *   cc -std=c11 -I. main.c ./attention.so -lm -o example && ./example
 */
#include "attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 1, H = 2, L = 32, D = 16 };

/* A dense row-major descriptor over a caller-owned buffer. */
static attn_memref_f32_4d wrap4(float *data) {
  attn_memref_f32_4d d = {
      data, data, 0, {B, H, L, D}, {H * L * D, L * D, D, 1}};
  return d;
}

int main(void) {
  static float q[B * H * L * D], k[B * H * L * D], v[B * H * L * D];
  static bool mask[L * L];
  for (int i = 0; i < B * H * L * D; ++i) {
    q[i] = sinf(0.37f * (float)i);
    k[i] = cosf(0.11f * (float)i + 1.0f);
    v[i] = sinf(0.05f * (float)i - 0.5f);
  }
  for (int i = 0; i < L; ++i)
    for (int j = 0; j < L; ++j)
      mask[i * L + j] = j > i; /* true = masked out, as in the PyTorch module */

  attn_memref_f32_4d dq = wrap4(q), dk = wrap4(k), dv = wrap4(v);
  attn_memref_i1_2d dmask = {mask, mask, 0, {L, L}, {L, 1}};
  attn_memref_f32_4d out;
  _mlir_ciface_causal_attention(&out, &dq, &dk, &dv, &dmask);

  /* Naive reference in double. */
  double maxErr = 0.0;
  for (int h = 0; h < B * H; ++h) {
    const float *qh = q + h * L * D, *kh = k + h * L * D, *vh = v + h * L * D;
    for (int i = 0; i < L; ++i) {
      double s[L], maxS = -INFINITY, sum = 0.0;
      for (int j = 0; j <= i; ++j) {
        s[j] = 0.0;
        for (int e = 0; e < D; ++e)
          s[j] += (double)qh[i * D + e] * kh[j * D + e];
        s[j] *= 0.25;
        if (s[j] > maxS)
          maxS = s[j];
      }
      for (int j = 0; j <= i; ++j)
        sum += s[j] = exp(s[j] - maxS);
      for (int e = 0; e < D; ++e) {
        double o = 0.0;
        for (int j = 0; j <= i; ++j)
          o += s[j] / sum * vh[j * D + e];
        /* Read the result through its descriptor's strides. */
        long idx = out.offset + (long)(h / H) * out.strides[0] +
                   (long)(h % H) * out.strides[1] + (long)i * out.strides[2] +
                   (long)e * out.strides[3];
        double err = fabs(o - out.aligned[idx]);
        if (err > maxErr)
          maxErr = err;
      }
    }
  }
  free(out.allocated); /* the callee malloc'ed the result */
  printf("max_abs_err=%.3e %s\n", maxErr, maxErr < 1e-4 ? "ok" : "FAIL");
  return maxErr < 1e-4 ? 0 : 1;
}
