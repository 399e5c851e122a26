/* Calls @attend of abi-checks.mlir through attnrt_call_packed and
 * attn_packed_attend, as a caller that cannot longjmp (Python's ctypes)
 * does: a failed check comes back as status 1 with its message, and the
 * process goes on; the next call works again. */
#include "abi.h"

#include <stdio.h>
#include <stdlib.h>

enum { B = 2, H = 2, L = 4, E = 8, N = B * H * L * E };

static float gQ[N], gK[N], gV[N];

static attn_memref_f32_4d dense(float *data, int64_t batch) {
  attn_memref_f32_4d d = {
      data, data, 0, {batch, H, L, E}, {H * L * E, L * E, E, 1}};
  return d;
}

/* Prints "<name>: status <s> <result batch or message>". */
static void call(const char *name, attn_memref_f32_4d q, int64_t messageSize) {
  attn_memref_f32_4d k = dense(gK, B), v = dense(gV, B), out = {0};
  attn_memref_f32_4d *outPtr = &out, *qPtr = &q, *kPtr = &k, *vPtr = &v;
  void *args[] = {&outPtr, &qPtr, &kPtr, &vPtr};
  char message[256] = "untouched";
  int status =
      attnrt_call_packed(attn_packed_attend, args, message, messageSize);
  if (status == 0) {
    printf("%s: status 0 batch %lld out[0] %.4f\n", name,
           (long long)out.sizes[0], out.aligned[0]);
    free(out.allocated);
  } else {
    printf("%s: status %d '%s'\n", name, status, message);
  }
}

int main(void) {
  for (int i = 0; i < N; ++i) {
    gQ[i] = (float)(i % 7) / 7.0f;
    gK[i] = gV[i] = (float)(i % 5) / 5.0f;
  }
  call("good", dense(gQ, B), 256);
  attn_memref_f32_4d bad = dense(gQ, B);
  bad.sizes[0] = -1;
  call("negative", bad, 256);
  call("truncated", bad, 16);
  bad = dense(gQ, B);
  bad.offset = 3;
  call("offset", bad, 256);
  call("good-again", dense(gQ, B), 256);
  /* Outside attnrt_call_packed the handler (default: exit 70) still runs. */
  bad.sizes[0] = -1;
  attn_memref_f32_4d out;
  _mlir_ciface_attend(&out, &bad, &bad, &bad);
  printf("not reached\n");
  return 0;
}
