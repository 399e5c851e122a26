/*===- AttnRuntime.c - trace spans for compiled attn code -----------------===*\
|*                                                                            *|
|* Events go into one growable array under a mutex: spans are whole ops or    *|
|* kernels (microseconds to seconds), so the lock is never the bottleneck,    *|
|* and lowered code may call in from several threads.                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _GNU_SOURCE /* syscall(SYS_gettid) */

#include "attn/Runtime/AttnRuntime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int64_t id;
  int64_t tid;
  int64_t ns; /* monotonic clock */
  int isBegin;
} AttnrtEvent;

static pthread_mutex_t gLock = PTHREAD_MUTEX_INITIALIZER;
static AttnrtEvent *gEvents;
static int64_t gNumEvents;
static int64_t gCapacity;
static volatile int gEnabled;
static attnrt_trace_hook volatile gHook;
static int64_t gEpochNs = -1;

static int64_t nowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void record(int64_t id, int isBegin) {
  attnrt_trace_hook hook = gHook;
  if (hook)
    hook(id, isBegin);
  if (!gEnabled)
    return;
  int64_t ns = nowNs();
  int64_t tid = (int64_t)syscall(SYS_gettid);
  pthread_mutex_lock(&gLock);
  if (gNumEvents == gCapacity) {
    int64_t cap = gCapacity ? 2 * gCapacity : 1024;
    AttnrtEvent *grown = realloc(gEvents, (size_t)cap * sizeof(AttnrtEvent));
    if (!grown) { /* Out of memory: drop the event rather than crash. */
      pthread_mutex_unlock(&gLock);
      return;
    }
    gEvents = grown;
    gCapacity = cap;
  }
  if (gEpochNs < 0)
    gEpochNs = ns;
  gEvents[gNumEvents].id = id;
  gEvents[gNumEvents].tid = tid;
  gEvents[gNumEvents].ns = ns;
  gEvents[gNumEvents].isBegin = isBegin;
  ++gNumEvents;
  pthread_mutex_unlock(&gLock);
}

/* A library from attn-compile --emit=so has its own copy of these globals:
   free the buffer when it is unloaded (dlclose), or it leaks. */
__attribute__((destructor)) static void releaseEvents(void) {
  pthread_mutex_lock(&gLock);
  free(gEvents);
  gEvents = NULL;
  gNumEvents = gCapacity = 0;
  pthread_mutex_unlock(&gLock);
}

void attnrt_trace_begin(int64_t id) { record(id, 1); }
void attnrt_trace_end(int64_t id) { record(id, 0); }
void attnrt_trace_enable(int on) { gEnabled = on; }
void attnrt_trace_set_hook(attnrt_trace_hook hook) { gHook = hook; }

void attnrt_trace_reset(void) {
  pthread_mutex_lock(&gLock);
  gNumEvents = 0;
  gEpochNs = -1;
  pthread_mutex_unlock(&gLock);
}

int64_t attnrt_trace_num_events(void) {
  pthread_mutex_lock(&gLock);
  int64_t n = gNumEvents;
  pthread_mutex_unlock(&gLock);
  return n;
}

/* Span names come from MLIR string attributes: escape for JSON. */
static void writeJsonString(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

int attnrt_trace_write_json(const char *path, const char *const *names,
                            int64_t numNames) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  pthread_mutex_lock(&gLock);
  int64_t pid = (int64_t)getpid();
  fprintf(f, "{\"traceEvents\": [");
  int first = 1;
  /* Match each end with the latest open begin of the same id on the same
     thread (spans nest; quadratic only in the nesting depth). */
  char *used = calloc((size_t)(gNumEvents ? gNumEvents : 1), 1);
  for (int64_t e = 0; e < gNumEvents && used; ++e) {
    if (gEvents[e].isBegin)
      continue;
    for (int64_t b = e - 1; b >= 0; --b) {
      if (!gEvents[b].isBegin || used[b] || gEvents[b].id != gEvents[e].id ||
          gEvents[b].tid != gEvents[e].tid)
        continue;
      used[b] = 1;
      int64_t id = gEvents[b].id;
      fprintf(f, "%s\n  {\"name\": ", first ? "" : ",");
      first = 0;
      if (names && id >= 0 && id < numNames && names[id]) {
        writeJsonString(f, names[id]);
      } else {
        fprintf(f, "\"span%lld\"", (long long)id);
      }
      fprintf(f,
              ", \"cat\": \"attn\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": "
              "%.3f, \"pid\": %lld, \"tid\": %lld, \"args\": {\"id\": %lld}}",
              (double)(gEvents[b].ns - gEpochNs) / 1000.0,
              (double)(gEvents[e].ns - gEvents[b].ns) / 1000.0, (long long)pid,
              (long long)gEvents[b].tid, (long long)id);
      break;
    }
  }
  free(used);
  pthread_mutex_unlock(&gLock);
  fprintf(f, "\n]}\n");
  return fclose(f) == 0 ? 0 : -1;
}
