/* Calls @attend of abi-checks.mlir through the C ABI with descriptors that
 * do and do not fit its type. A failed check reaches the handler installed
 * with attnrt_set_check_failure_handler, which longjmps back here; with the
 * argument "default" the first bad call meets the default handler instead.
 */
#include "abi.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, H = 2, L = 4, E = 8, N = B * H * L * E };

static jmp_buf gJump;
static char gMessage[1024];
static float gQ[2 * N], gK[N], gV[N];

static void onCheckFailure(const char *message) {
  snprintf(gMessage, sizeof(gMessage), "%s", message);
  longjmp(gJump, 1);
}

/* A dense row-major descriptor of batch x H x L x E floats at `data`. */
static attn_memref_f32_4d dense(float *data, int64_t batch) {
  attn_memref_f32_4d d = {
      data, data, 0, {batch, H, L, E}, {H * L * E, L * E, E, 1}};
  return d;
}

/* Prints "<name>: ok <batch>" or "<name>: check failed: <message>". */
static void run(const char *name, attn_memref_f32_4d q, attn_memref_f32_4d k,
                attn_memref_f32_4d v) {
  attn_memref_f32_4d out;
  if (setjmp(gJump)) {
    printf("%s: check failed: %s\n", name, gMessage);
    return;
  }
  _mlir_ciface_attend(&out, &q, &k, &v);
  printf("%s: ok %lld\n", name, (long long)out.sizes[0]);
  free(out.allocated);
}

int main(int argc, char **argv) {
  for (int i = 0; i < 2 * N; ++i)
    gQ[i] = (float)(i % 7) / 7.0f;
  for (int i = 0; i < N; ++i)
    gK[i] = gV[i] = (float)(i % 5) / 5.0f;
  attn_memref_f32_4d q = dense(gQ, B), k = dense(gK, B), v = dense(gV, B);

  if (argc > 1 && strcmp(argv[1], "default") == 0) {
    attn_memref_f32_4d bad = q;
    bad.sizes[0] = -1;
    attn_memref_f32_4d out;
    _mlir_ciface_attend(&out, &bad, &k, &v);
    printf("not reached\n");
    return 0;
  }
  attnrt_set_check_failure_handler(onCheckFailure);

  run("dense", q, k, v);
  attn_memref_f32_4d empty = dense(NULL, 0);
  run("empty", empty, empty, empty);

  attn_memref_f32_4d bad = q;
  bad.sizes[1] = 1; /* smaller than the static 2 */
  run("static-size", bad, k, v);
  bad = q;
  bad.sizes[0] = -1;
  run("negative", bad, k, v);
  bad = q;
  bad.sizes[0] = (int64_t)1 << 62;
  run("overflow", bad, k, v);
  bad = q;
  bad.aligned = NULL;
  run("null", bad, k, v);
  bad = q;
  bad.offset = N;
  run("offset", bad, k, v);
  bad = q;
  bad.strides[0] = 2 * H * L * E; /* every other batch of gQ */
  run("strided", bad, k, v);
  bad = q;
  bad.strides[0] = 1;
  bad.strides[1] = B; /* the transpose of a 2 x 2 x L x E array */
  run("transposed", bad, k, v);

  /* Each argument fits its type, but the batch dims differ: the lowered
     code's own check. */
  run("batch-mismatch", q, dense(gK, 1), dense(gV, 1));
  return 0;
}
