/*===- Checks.c - run-time check failures of compiled attn code
------------===*\
|*                                                                            *|
|* Compiled code reports a failed check through one settable handler, so that *|
|* a C caller can recover (longjmp) and attn-run can print a tool error,      *|
|* instead of the puts + abort that LLVM's cf.assert lowering emits.          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "attn/Runtime/AttnRuntime.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static attnrt_check_failure_handler gHandler;

static void defaultHandler(const char *message) {
  fflush(stdout);
  fprintf(stderr, "error: run-time check failed: %s\n", message);
  exit(ATTNRT_CHECK_FAILURE_EXIT_STATUS);
}

attnrt_check_failure_handler
attnrt_set_check_failure_handler(attnrt_check_failure_handler handler) {
  return __atomic_exchange_n(&gHandler, handler, __ATOMIC_SEQ_CST);
}

/* The innermost attnrt_call_packed of this thread: where a failed check on
 * this thread jumps back to, and the buffer for its message. */
struct CallFrame {
  jmp_buf env;
  char *message;
  int64_t messageSize;
};
static _Thread_local struct CallFrame *tFrame;

int attnrt_call_packed(attnrt_packed_function function, void **args,
                       char *message, int64_t messageSize) {
  struct CallFrame frame = {.message = message, .messageSize = messageSize};
  struct CallFrame *volatile outer = tFrame;
  if (message && messageSize > 0)
    message[0] = '\0';
  if (setjmp(frame.env)) {
    tFrame = outer;
    return 1;
  }
  tFrame = &frame;
  function(args);
  tFrame = outer;
  return 0;
}

void attnrt_check_failed(const char *message) {
  struct CallFrame *frame = tFrame;
  if (frame) {
    if (frame->message && frame->messageSize > 0)
      snprintf(frame->message, (size_t)frame->messageSize, "%s", message);
    longjmp(frame->env, 1);
  }
  attnrt_check_failure_handler handler =
      __atomic_load_n(&gHandler, __ATOMIC_SEQ_CST);
  (handler ? handler : defaultHandler)(message);
  abort(); /* A handler returned: the check's callers cannot go on. */
}

void attnrt_check_failed_deferred(const char **slot, const char *message) {
  const char *none = NULL;
  __atomic_compare_exchange_n(slot, &none, message, /*weak=*/0,
                              __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Appends "[a, b, ...]" to `out`. */
static void appendList(char *out, size_t cap, const int64_t *values,
                       int64_t n) {
  size_t len = strlen(out);
  snprintf(out + len, cap - len, "[");
  for (int64_t i = 0; i < n; ++i) {
    len = strlen(out);
    snprintf(out + len, cap - len, "%s%lld", i ? ", " : "",
             (long long)values[i]);
  }
  len = strlen(out);
  snprintf(out + len, cap - len, "]");
}

/* Fails with "<what>: <problem> <sizes or strides> <suffix>". */
static void failWithList(const char *what, const char *problem,
                         const int64_t *values, int64_t n, const char *suffix) {
  char message[1024];
  snprintf(message, sizeof(message), "%s: %s", what, problem);
  appendList(message, sizeof(message), values, n);
  size_t len = strlen(message);
  snprintf(message + len, sizeof(message) - len, "%s", suffix);
  attnrt_check_failed(message);
}

void attnrt_check_argument(const int64_t *descriptor, int64_t rank,
                           int64_t elementBytes, const int64_t *staticSizes,
                           const char *what) {
  const int64_t *sizes = ATTNRT_MEMREF_SIZES(descriptor);
  const int64_t *strides = ATTNRT_MEMREF_STRIDES(descriptor, rank);
  char message[1024];
  int64_t bytes = elementBytes;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0) {
      snprintf(message, sizeof(message), "%s: dim %lld has negative size %lld",
               what, (long long)d, (long long)sizes[d]);
      attnrt_check_failed(message);
    }
    if (staticSizes[d] >= 0 && sizes[d] != staticSizes[d]) {
      snprintf(message, sizeof(message),
               "%s: dim %lld has size %lld, the type says %lld", what,
               (long long)d, (long long)sizes[d], (long long)staticSizes[d]);
      attnrt_check_failed(message);
    }
  }
  for (int64_t d = 0; d < rank; ++d)
    if (__builtin_mul_overflow(bytes, sizes[d], &bytes))
      failWithList(what, "sizes ", sizes, rank,
                   " hold more than 2^63 - 1 bytes");
  if (bytes == 0)
    return; /* Nothing is read. */
  if (!ATTNRT_MEMREF_ALIGNED(descriptor)) {
    snprintf(message, sizeof(message), "%s: the aligned pointer is null", what);
    attnrt_check_failed(message);
  }
  if (ATTNRT_MEMREF_OFFSET(descriptor) != 0) {
    snprintf(message, sizeof(message),
             "%s: offset %lld; the compiled code reads a dense array from "
             "the aligned pointer (pass aligned + offset, offset 0)",
             what, (long long)ATTNRT_MEMREF_OFFSET(descriptor));
    attnrt_check_failed(message);
  }
  int64_t dense = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != dense)
      failWithList(what, "strides ", strides, rank,
                   " are not row-major for its sizes; the compiled code reads "
                   "dense arrays only (copy the view first)");
    dense *= sizes[d];
  }
}
