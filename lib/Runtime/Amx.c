/*===- Amx.c - may this process run AMX tile instructions? ----------------===*\
|*                                                                            *|
|* Linux keeps AMX's tile data state (XTILEDATA, 8 KiB per thread) off until  *|
|* a process asks for it: a tile instruction before that raises SIGILL, and   *|
|* kernels before 5.16 refuse the request. The permission is per process, so  *|
|* the first call asks once and every thread reads the answer.                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE /* syscall */

#include "attn/Runtime/AttnRuntime.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

static pthread_once_t gAmxOnce = PTHREAD_ONCE_INIT;
static int32_t gAmxAvailable;

/* ATTNFUSE_AMX=0 forces the fallback (tests of it on an AMX host). */
static int amxDisabledByEnvironment(void) {
  const char *value = getenv("ATTNFUSE_AMX");
  return value && strcmp(value, "0") == 0;
}

static void decideAmx(void) {
  if (amxDisabledByEnvironment())
    return;
#if defined(__linux__) && defined(__x86_64__)
  enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
  gAmxAvailable =
      syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#endif
}

int32_t attnrt_amx_available(void) {
  pthread_once(&gAmxOnce, decideAmx);
  return gAmxAvailable;
}
