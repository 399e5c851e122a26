/* The C caller of tests/test_c_api.py: opens a package through
 * include/attn/Package/AttnPackage.h and, by the first word,
 *
 *   describe DIR               prints the entries, their arguments and
 *                              outputs, one line each
 *   run DIR ENTRY OUT [NAME=DTYPE:DIMS:FILE]... [-- NAME=...]...
 *                              binds each argument NAME to the bytes of FILE
 *                              (DIMS "2x5x32", "-" for rank 0; the byte size
 *                              is the file's), runs ENTRY and writes output i
 *                              to OUT<i>.bin, its dtype and dims on stdout;
 *                              each group after "--" binds again and runs the
 *                              same call again, also after a failure
 *   threads DIR                runs a generator's prefill on 4 threads at
 *                              once, a call and a KV cache each, and
 *                              compares their logits with one thread's
 *   misuse DIR                 calls the API out of order and with bad
 *                              arguments; each must fail with a message
 *
 * A failure prints "<status name>: <message>" on stderr and exits 3; exit
 * 0 otherwise. */

#include "attn/Package/AttnPackage.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report(attn_status status) {
  fprintf(stderr, "%s: %s\n", attn_status_name(status),
          attn_package_last_error());
  return 3;
}

static const char *kKinds[] = {"input", "parameter", "buffer", "constant",
                               "output"};

static void printDims(const int64_t *dims, int32_t rank) {
  printf("[");
  for (int32_t i = 0; i < rank; ++i)
    printf("%s%lld", i ? "," : "", (long long)dims[i]);
  printf("]");
}

static int describe(attn_package *pkg) {
  printf("kind %s\n", attn_package_kind(pkg));
  for (int64_t e = 0; e < attn_package_num_entries(pkg); ++e) {
    const attn_entry *entry = attn_package_entry(pkg, e);
    printf("entry %s %lld %lld\n", attn_entry_name(entry),
           (long long)attn_entry_num_args(entry),
           (long long)attn_entry_num_outputs(entry));
    attn_arg_info info;
    for (int64_t i = 0; i < attn_entry_num_args(entry); ++i) {
      attn_entry_arg(entry, i, &info);
      printf("arg %s %s %s ", info.name, kKinds[info.kind],
             attn_dtype_name(info.dtype));
      printDims(info.dims, info.rank);
      printf(" %d %d\n", info.written, info.bound);
    }
    for (int64_t i = 0; i < attn_entry_num_outputs(entry); ++i) {
      attn_entry_output_info(entry, i, &info);
      printf("%s %s ", kKinds[info.kind], attn_dtype_name(info.dtype));
      printDims(info.dims, info.rank);
      printf("\n");
    }
  }
  return 0;
}

static int dtypeNamed(const char *name) {
  for (int d = 0; attn_dtype_name((attn_dtype)d); ++d)
    if (strcmp(attn_dtype_name((attn_dtype)d), name) == 0)
      return d;
  return -1;
}

/* NAME=DTYPE:DIMS:FILE bound to `call`. */
static int bindArg(attn_call *call, char *spec, void **buffer) {
  char *eq = strchr(spec, '='), *c1 = eq ? strchr(eq, ':') : NULL,
       *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c2) {
    fprintf(stderr, "bad argument '%s'\n", spec);
    return 2;
  }
  *eq = *c1 = *c2 = '\0';
  int dtype = dtypeNamed(eq + 1);
  int64_t dims[64];
  int32_t rank = 0;
  for (char *d = c1 + 1; strcmp(c1 + 1, "-") != 0 && *d && rank < 64;) {
    dims[rank++] = strtoll(d, &d, 10);
    if (*d == 'x')
      ++d;
  }
  FILE *f = fopen(c2 + 1, "rb");
  if (!f) {
    fprintf(stderr, "cannot read '%s'\n", c2 + 1);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  size_t size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  *buffer = malloc(size + 1);
  size_t got = fread(*buffer, 1, size, f);
  fclose(f);
  attn_status s = attn_call_bind_named(call, spec, (attn_dtype)dtype, rank,
                                       dims, *buffer, got);
  return s == ATTN_OK ? 0 : report(s);
}

static int run(attn_package *pkg, const char *name, const char *out, int argc,
               char **argv) {
  attn_call *call;
  const attn_entry *entry = attn_package_entry_named(pkg, name);
  attn_status s = attn_call_create(entry, &call);
  if (s != ATTN_OK)
    return report(s);
  void **buffers = calloc((size_t)argc + 1, sizeof(void *));
  int rc = 0;
  for (int start = 0; start <= argc;) {
    int end = start, group = 0;
    while (end < argc && strcmp(argv[end], "--") != 0)
      ++end;
    for (int i = start; i < end && group == 0; ++i)
      group = bindArg(call, argv[i], &buffers[i]);
    if (group == 0 && (s = attn_call_run(call)) != ATTN_OK)
      group = report(s);
    for (int64_t i = 0; group == 0 && i < attn_entry_num_outputs(entry); ++i) {
      attn_tensor t;
      if ((s = attn_call_output(call, i, &t)) != ATTN_OK) {
        group = report(s);
        break;
      }
      char path[4096];
      snprintf(path, sizeof(path), "%s%lld.bin", out, (long long)i);
      FILE *f = fopen(path, "wb");
      if (!f || fwrite(t.data, 1, t.nbytes, f) != t.nbytes) {
        fprintf(stderr, "cannot write '%s'\n", path);
        group = 2;
      }
      if (f)
        fclose(f);
      printf("output %lld %s ", (long long)i, attn_dtype_name(t.dtype));
      printDims(t.dims, t.rank);
      printf("\n");
    }
    rc = rc ? rc : group;
    start = end + 1;
  }
  attn_call_free(call);
  for (int i = 0; i < argc; ++i)
    free(buffers[i]);
  free(buffers);
  return rc;
}

/* One thread of `threads`: its own call and KV cache (batch 1, the
 * prefill's cache shapes), 20 prefills of the prompt; its last logits. */
typedef struct {
  const attn_entry *entry;
  float logits[4096];
  int64_t vocab;
  attn_status status;
} Worker;

static void *prefillLoop(void *arg) {
  Worker *w = arg;
  int64_t ids[4] = {5, 17, 42, 9}, mask[4] = {1, 1, 1, 1},
          positions[4] = {0, 1, 2, 3}, dims[2] = {1, 4};
  void *cache[64] = {0};
  attn_call *call;
  attn_status s = attn_call_create(w->entry, &call);
  int64_t numCache = 0;
  for (int64_t i = 0; s == ATTN_OK && i < attn_entry_num_args(w->entry); ++i) {
    attn_arg_info info;
    attn_entry_arg(w->entry, i, &info);
    if (!info.written || numCache == 64)
      continue;
    int64_t shape[8] = {1};
    size_t bytes = attn_dtype_size(info.dtype);
    for (int32_t d = 1; d < info.rank && d < 8; ++d)
      bytes *= (size_t)(shape[d] = info.dims[d]);
    cache[numCache] = calloc(1, bytes);
    s = attn_call_bind(call, i, info.dtype, info.rank, shape, cache[numCache++],
                       bytes);
  }
  const char *names[3] = {"input_ids", "attention_mask", "position_ids"};
  int64_t *values[3] = {ids, mask, positions};
  for (int k = 0; s == ATTN_OK && k < 3; ++k)
    s = attn_call_bind_named(call, names[k], ATTN_INT64, 2, dims, values[k],
                             sizeof(ids));
  attn_tensor t = {0};
  for (int r = 0; s == ATTN_OK && r < 20; ++r)
    if ((s = attn_call_run(call)) == ATTN_OK)
      s = attn_call_output(call, 0, &t);
  if (s == ATTN_OK && t.nbytes <= sizeof(w->logits)) {
    memcpy(w->logits, t.data, t.nbytes);
    w->vocab = (int64_t)(t.nbytes / sizeof(float));
  }
  w->status = s;
  attn_call_free(call);
  for (int64_t i = 0; i < numCache; ++i)
    free(cache[i]);
  return NULL;
}

static int threads(attn_package *pkg) {
  enum { N = 4 };
  static Worker one, many[N];
  one.entry = attn_package_entry_named(pkg, "prefill");
  prefillLoop(&one);
  if (one.status != ATTN_OK)
    return report(one.status);
  pthread_t ids[N];
  for (int i = 0; i < N; ++i) {
    many[i].entry = one.entry;
    pthread_create(&ids[i], NULL, prefillLoop, &many[i]);
  }
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    pthread_join(ids[i], NULL);
    bad |= many[i].status != ATTN_OK || many[i].vocab != one.vocab ||
           memcmp(many[i].logits, one.logits,
                  (size_t)one.vocab * sizeof(float)) != 0;
  }
  printf("%d threads, %lld logits: %s\n", N, (long long)one.vocab,
         bad ? "differ" : "equal");
  return bad;
}

/* dims: the argument's shape with each dynamic dim at its least (1
   where unbounded below); returns its bytes. */
static size_t leastShape(const attn_arg_info *info, int64_t *dims) {
  size_t bytes = attn_dtype_size(info->dtype);
  for (int32_t d = 0; d < info->rank; ++d)
    bytes *= (size_t)(dims[d] = info->dims[d] >= 0     ? info->dims[d]
                                : info->dim_min[d] > 0 ? info->dim_min[d]
                                                       : 1);
  return bytes;
}

/* Each misuse must fail with a status and a message; prints them. */
static int misuse(attn_package *pkg) {
  int bad = 0;
#define EXPECT(expr, want)                                                     \
  do {                                                                         \
    attn_status got_ = (expr);                                                 \
    printf("%s -> %s: %s\n", #expr, attn_status_name(got_),                    \
           got_ ? attn_package_last_error() : "");                             \
    if (got_ != (want) || (got_ && !*attn_package_last_error()))               \
      bad = 1;                                                                 \
  } while (0)
  const attn_entry *entry = attn_package_entry(pkg, 0);
  attn_call *call = NULL;
  attn_arg_info info;
  attn_tensor t;
  EXPECT(attn_package_open(NULL, NULL), ATTN_ERROR_ARGUMENT);
  EXPECT(attn_package_entry(pkg, 99) ? ATTN_OK : ATTN_ERROR_ARGUMENT,
         ATTN_ERROR_ARGUMENT);
  EXPECT(attn_package_entry_named(pkg, "nope") ? ATTN_OK : ATTN_ERROR_ARGUMENT,
         ATTN_ERROR_ARGUMENT);
  EXPECT(attn_entry_arg(entry, -1, &info), ATTN_ERROR_ARGUMENT);
  EXPECT(attn_entry_output_info(entry, 99, &info), ATTN_ERROR_ARGUMENT);
  EXPECT(attn_call_create(NULL, &call), ATTN_ERROR_ARGUMENT);
  EXPECT(attn_call_create(entry, &call), ATTN_OK);
  EXPECT(attn_call_output(call, 0, &t), ATTN_ERROR_STATE);
  EXPECT(attn_call_run(call), ATTN_ERROR_UNBOUND);
  EXPECT(attn_call_bind(call, 999, ATTN_FLOAT32, 0, NULL, NULL, 0),
         ATTN_ERROR_ARGUMENT);
  EXPECT(attn_call_bind(call, 0, (attn_dtype)77, 0, NULL, NULL, 0),
         ATTN_ERROR_DTYPE);
  EXPECT(attn_call_bind_named(call, "nope", ATTN_FLOAT32, 0, NULL, NULL, 0),
         ATTN_ERROR_ARGUMENT);
  EXPECT(attn_package_manifest_int(pkg, "format", NULL), ATTN_ERROR_NOT_FOUND);
  EXPECT(attn_package_manifest_int(pkg, "entries.7.name", NULL),
         ATTN_ERROR_NOT_FOUND);
  EXPECT(attn_package_manifest_length(pkg, "entries.0.name", NULL),
         ATTN_ERROR_NOT_FOUND);
  /* Every input bound to zeros (dynamic dims at their least), then two
   * arguments written in place to one buffer. */
  void *zeros[1024] = {0};
  int64_t written[2] = {-1, -1};
  for (int64_t i = 0; i < attn_entry_num_args(entry) && i < 1024; ++i) {
    attn_entry_arg(entry, i, &info);
    if (info.bound)
      continue;
    int64_t dims[64];
    size_t bytes = leastShape(&info, dims);
    zeros[i] = calloc(1, bytes);
    EXPECT(
        attn_call_bind(call, i, info.dtype, info.rank, dims, zeros[i], bytes),
        ATTN_OK);
    if (info.written && written[0] < 0)
      written[0] = i;
    else if (info.written && written[1] < 0)
      written[1] = i;
  }
  if (written[1] >= 0) {
    attn_entry_arg(entry, written[1], &info);
    int64_t dims[64];
    size_t bytes = leastShape(&info, dims);
    EXPECT(attn_call_bind(call, written[1], info.dtype, info.rank, dims,
                          zeros[written[0]], bytes),
           ATTN_OK);
    EXPECT(attn_call_run(call), ATTN_ERROR_ARGUMENT);
    EXPECT(attn_call_bind(call, written[1], info.dtype, info.rank, dims,
                          zeros[written[1]], bytes),
           ATTN_OK);
  }
  EXPECT(attn_call_run(call), ATTN_OK);
  EXPECT(attn_call_output(call, 0, &t), ATTN_OK);
  EXPECT(attn_package_close(pkg), ATTN_ERROR_STATE);
  attn_call_free(call);
  for (int i = 0; i < 1024; ++i)
    free(zeros[i]);
  EXPECT(attn_package_close(pkg), ATTN_OK);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s describe|run|threads|misuse DIR ...\n", argv[0]);
    return 2;
  }
  attn_package *pkg;
  attn_status s = attn_package_open(argv[2], &pkg);
  if (s != ATTN_OK)
    return report(s);
  int rc;
  if (strcmp(argv[1], "describe") == 0)
    rc = describe(pkg);
  else if (strcmp(argv[1], "run") == 0 && argc >= 5)
    rc = run(pkg, argv[3], argv[4], argc - 5, argv + 5);
  else if (strcmp(argv[1], "threads") == 0)
    rc = threads(pkg);
  else if (strcmp(argv[1], "misuse") == 0)
    return misuse(pkg);
  else
    rc = 2;
  s = attn_package_close(pkg);
  return rc ? rc : s == ATTN_OK ? 0 : report(s);
}
