/*===- AttnPackage.c - run a saved attnfuse package from C ----------------===*\
|*                                                                            *|
|* The checks of attnfuse/package.py's read_package and                       *|
|* Package.open_library, in the same order and with the same messages where  *|
|* they apply, then calls through the library's `attn_packed_<f>` entry     *|
|* points and the runtime's attnrt_call_packed, as attnfuse/runtime.py does, *|
|* so that a failed run-time check is a status, not the end of the process.  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_* on older glibc */
#endif

#include "attn/Package/AttnPackage.h"

#include "Json.h"
#include "Sha256.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The largest manifest read (a large model's has a few MiB). */
#define MAX_MANIFEST_BYTES ((size_t)256 << 20)
/* The largest /proc/cpuinfo read (its first "flags" line is near the top). */
#define MAX_CPUINFO_BYTES ((size_t)1 << 20)
#define WEIGHTS_ALIGNMENT 64
#define MESSAGE_SIZE 1024
#define MAX_RANK 64
/* What compiled code leaves in `allocated` for a constant result. */
#define DEADBEEF ((uintptr_t)0xdeadbeef)

/*===----------------------------------------------------------------------===*/
/* Errors                                                                     */
/*===----------------------------------------------------------------------===*/

static _Thread_local char tError[MESSAGE_SIZE];

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static attn_status
fail(attn_status status, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(tError, sizeof(tError), format, ap);
  va_end(ap);
  return status;
}

const char *attn_package_last_error(void) { return tError; }

const char *attn_status_name(attn_status status) {
  static const char *const kNames[] = {"ATTN_OK",
                                       "ATTN_ERROR_ARGUMENT",
                                       "ATTN_ERROR_IO",
                                       "ATTN_ERROR_PACKAGE",
                                       "ATTN_ERROR_VERSION",
                                       "ATTN_ERROR_TARGET",
                                       "ATTN_ERROR_LIBRARY",
                                       "ATTN_ERROR_DTYPE",
                                       "ATTN_ERROR_SHAPE",
                                       "ATTN_ERROR_UNBOUND",
                                       "ATTN_ERROR_CHECK",
                                       "ATTN_ERROR_STATE",
                                       "ATTN_ERROR_NOT_FOUND",
                                       "ATTN_ERROR_MEMORY"};
  unsigned i = (unsigned)status;
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "ATTN_ERROR_?";
}

/*===----------------------------------------------------------------------===*/
/* Dtypes                                                                     */
/*===----------------------------------------------------------------------===*/

static const struct {
  const char *name; /* the manifest's (torch's) */
  const char *mlir; /* the element type of the library's signature */
  size_t size;
} kDtypes[] = {
    [ATTN_FLOAT32] = {"float32", "f32", 4},
    [ATTN_FLOAT16] = {"float16", "f16", 2},
    [ATTN_BFLOAT16] = {"bfloat16", "bf16", 2},
    [ATTN_FLOAT64] = {"float64", "f64", 8},
    [ATTN_BOOL] = {"bool", "i1", 1},
    [ATTN_INT8] = {"int8", "i8", 1},
    [ATTN_UINT8] = {"uint8", "i8", 1},
    [ATTN_INT16] = {"int16", "i16", 2},
    [ATTN_INT32] = {"int32", "i32", 4},
    [ATTN_INT64] = {"int64", "i64", 8},
};
#define NUM_DTYPES ((int)(sizeof(kDtypes) / sizeof(kDtypes[0])))

const char *attn_dtype_name(attn_dtype dtype) {
  return (unsigned)dtype < NUM_DTYPES ? kDtypes[dtype].name : NULL;
}

size_t attn_dtype_size(attn_dtype dtype) {
  return (unsigned)dtype < NUM_DTYPES ? kDtypes[dtype].size : 0;
}

static int dtypeOf(const char *name) {
  for (int i = 0; i < NUM_DTYPES; ++i)
    if (strcmp(kDtypes[i].name, name) == 0)
      return i;
  return -1;
}

/* The bytes of `rank` dims of `elementSize`-byte elements into `*bytes`;
 * 0 on overflow or a negative dim. */
static int byteSize(const int64_t *dims, int32_t rank, size_t elementSize,
                    size_t *bytes) {
  size_t n = elementSize;
  for (int32_t i = 0; i < rank; ++i)
    if (dims[i] < 0 || __builtin_mul_overflow(n, (size_t)dims[i], &n))
      return 0;
  if (n > (size_t)INT64_MAX)
    return 0;
  *bytes = n;
  return 1;
}

/*===----------------------------------------------------------------------===*/
/* The package                                                                */
/*===----------------------------------------------------------------------===*/

typedef struct {
  char *name;
  attn_arg_kind kind;
  attn_dtype dtype;
  int32_t rank;
  int64_t *dims;   /* -1: dynamic */
  int64_t *dimMin; /* bounds of each dim */
  int64_t *dimMax;
  int64_t *symbol; /* per dim: its index in the entry's `dims`, or -1 */
  int written;
  void *state; /* the package's tensor bound to it, or NULL */
  size_t nbytes;
} Arg;

struct attn_entry {
  attn_package *package;
  char *name;
  Arg *args;
  int64_t numArgs;
  Arg *outputs;
  int64_t numOutputs;
  int64_t numSymbols;
  char **symbols;
  void (*function)(void **args);
  int writesState; /* writes a tensor the package binds */
};

/* Where an empty weights.bin's (empty) tensors lie. */
static _Alignas(WEIGHTS_ALIGNMENT) char kEmpty[WEIGHTS_ALIGNMENT];

/* A tensor of weights.bin that an entry writes in place: the package's
 * private copy (the mapping is read-only), shared by the entries. */
typedef struct {
  char *key;
  void *data;
} StateCopy;

typedef int (*CallPacked)(void (*)(void **), void **, char *, int64_t);

struct attn_package {
  char *dir;
  char *kind;
  char *manifestText;
  AttnJson *manifest;
  void *library;
  CallPacked callPacked;
  void *weights;
  size_t weightsSize;
  StateCopy *states;
  int64_t numStates;
  attn_entry *entries;
  int64_t numEntries;
  pthread_mutex_t stateLock;
  int64_t liveCalls; /* atomic */
};

static void freeArg(Arg *a) {
  free(a->name);
  free(a->dims);
  free(a->dimMin);
  free(a->dimMax);
  free(a->symbol);
}

static void freePackage(attn_package *p) {
  for (int64_t e = 0; e < p->numEntries; ++e) {
    attn_entry *entry = &p->entries[e];
    for (int64_t i = 0; i < entry->numArgs; ++i)
      freeArg(&entry->args[i]);
    for (int64_t i = 0; i < entry->numOutputs; ++i)
      freeArg(&entry->outputs[i]);
    for (int64_t i = 0; i < entry->numSymbols; ++i)
      free(entry->symbols[i]);
    free(entry->args);
    free(entry->outputs);
    free(entry->symbols);
    free(entry->name);
  }
  free(p->entries);
  for (int64_t i = 0; i < p->numStates; ++i) {
    free(p->states[i].key);
    free(p->states[i].data);
  }
  free(p->states);
  if (p->library)
    dlclose(p->library);
  if (p->weights)
    munmap(p->weights, p->weightsSize);
  attnJsonFree(p->manifest);
  free(p->manifestText);
  free(p->kind);
  free(p->dir);
  pthread_mutex_destroy(&p->stateLock);
  free(p);
}

static char *copyString(const char *s) {
  size_t n = strlen(s) + 1;
  char *out = malloc(n);
  if (out)
    memcpy(out, s, n);
  return out;
}

/* What open is checking, for the messages. */
typedef struct {
  attn_package *package;
  char manifestPath[PATH_MAX];
  char context[256]; /* the manifest field being read, "entries[2].args[5]" */
  unsigned flags;
} Opener;

static int joinPath(char *out, const char *dir, const char *name) {
  int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
  return n > 0 && n < PATH_MAX;
}

/* Reads the whole regular file `path` (at most `limit` bytes) into a NUL-
 * terminated buffer. */
static attn_status readFile(const char *path, size_t limit, char **text,
                            size_t *size, const char *missing) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? fail(ATTN_ERROR_IO, "%s: missing%s", path, missing)
                           : fail(ATTN_ERROR_IO, "%s: cannot be read: %s", path,
                                  strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      (size_t)st.st_size > limit) {
    close(fd);
    return fail(ATTN_ERROR_IO, "%s: not a regular file of at most %zu bytes",
                path, limit);
  }
  char *buf = malloc((size_t)st.st_size + 1);
  if (!buf) {
    close(fd);
    return fail(ATTN_ERROR_MEMORY, "%s: out of memory reading it", path);
  }
  size_t got = 0;
  while (got < (size_t)st.st_size) {
    ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(fd);
  buf[got] = '\0';
  *text = buf;
  *size = got;
  return ATTN_OK;
}

/*---- the manifest's fields -------------------------------------------------*/

static const char *kindName(AttnJsonKind kind) {
  static const char *const kNames[] = {"null",     "a boolean", "a number",
                                       "a string", "a list",    "an object"};
  return kNames[kind];
}

/* obj[key] of `kind` (ATTN_JSON_NUMBER: an integer), or NULL with the
 * error set; `nullable`: null is accepted too. */
static const AttnJson *field(Opener *o, const AttnJson *obj, const char *key,
                             AttnJsonKind kind, int nullable) {
  if (!obj || obj->kind != ATTN_JSON_OBJECT) {
    fail(ATTN_ERROR_PACKAGE, "%s: %s must be an object", o->manifestPath,
         o->context);
    return NULL;
  }
  const AttnJson *v = attnJsonGet(obj, key);
  if (!v) {
    fail(ATTN_ERROR_PACKAGE, "%s: %s has no '%s'", o->manifestPath, o->context,
         key);
    return NULL;
  }
  if ((nullable && v->kind == ATTN_JSON_NULL) ||
      (v->kind == kind && (kind != ATTN_JSON_NUMBER || v->isInteger)))
    return v;
  fail(ATTN_ERROR_PACKAGE, "%s: %s.%s must be %s%s%s", o->manifestPath,
       o->context, key,
       kind == ATTN_JSON_NUMBER ? "an integer" : kindName(kind),
       nullable ? " or null" : "",
       kind == ATTN_JSON_NUMBER && v->kind == kind ? " within 64 bits" : "");
  return NULL;
}

static const char *stringField(Opener *o, const AttnJson *obj,
                               const char *key) {
  const AttnJson *v = field(o, obj, key, ATTN_JSON_STRING, 0);
  return v ? v->string : NULL;
}

static void setContext(Opener *o, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(o->context, sizeof(o->context), format, ap);
  va_end(ap);
}

static int isCName(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9'))
    return 0;
  for (; *s; ++s)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return 0;
  return 1;
}

/*---- steps of open
 * -----------------------------------------------------------*/

static attn_status readManifest(Opener *o, const char *dir) {
  attn_package *p = o->package;
  struct stat st;
  if (stat(dir, &st) != 0)
    return fail(ATTN_ERROR_IO, "%s: no such package directory", dir);
  if (!S_ISDIR(st.st_mode))
    return fail(ATTN_ERROR_IO, "%s: not a directory", dir);
  if (!joinPath(o->manifestPath, dir, "manifest.json"))
    return fail(ATTN_ERROR_IO, "%s: path too long", dir);
  size_t size = 0;
  attn_status s =
      readFile(o->manifestPath, MAX_MANIFEST_BYTES, &p->manifestText, &size,
               ": not an attnfuse package (CompiledModule.save "
               "or Generator.save writes one)");
  if (s != ATTN_OK)
    return s;
  char error[256];
  p->manifest = attnJsonParse(p->manifestText, size, error, sizeof(error));
  if (!p->manifest)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: is not valid JSON (%s): the manifest is damaged or "
                "truncated",
                o->manifestPath, error);
  const AttnJson *m = p->manifest;
  const AttnJson *format = attnJsonGet(m, "format");
  if (!format || format->kind != ATTN_JSON_STRING ||
      strcmp(format->string, "attnfuse-package") != 0)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: is not an attnfuse package manifest (no format "
                "'attnfuse-package')",
                o->manifestPath);
  const AttnJson *version = attnJsonGet(m, "format_version");
  if (!version || version->kind != ATTN_JSON_NUMBER || !version->isInteger ||
      version->integer != ATTN_PACKAGE_FORMAT_VERSION)
    return fail(ATTN_ERROR_VERSION,
                "%s: has format version %.*s; this reader (attnfuse %s) "
                "reads version %d: save the package again with this attnfuse",
                o->manifestPath, version ? (int)version->rawLen : 4,
                version ? version->raw : "none", ATTN_PACKAGE_ATTNFUSE_VERSION,
                ATTN_PACKAGE_FORMAT_VERSION);
  const AttnJson *digest = attnJsonGet(m, "manifest_sha256");
  char hex[65];
  AttnSha256 sha;
  attnSha256Init(&sha);
  attnJsonHashCanonical(m, "manifest_sha256", &sha);
  attnSha256FinishHex(&sha, hex);
  if (!digest || digest->kind != ATTN_JSON_STRING ||
      strcmp(digest->string, hex) != 0)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: was changed after it was saved (its manifest_sha256 "
                "does not match its content): a hand-edited or damaged "
                "manifest is refused; save the package again",
                o->manifestPath);
  return ATTN_OK;
}

static attn_status checkCompiler(Opener *o) {
  setContext(o, "manifest");
  const char *kind = stringField(o, o->package->manifest, "kind");
  if (!kind)
    return ATTN_ERROR_PACKAGE;
  if (strcmp(kind, "module") != 0 && strcmp(kind, "generator") != 0)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: manifest.kind '%.60s' is neither 'module' nor "
                "'generator'",
                o->manifestPath, kind);
  if (!(o->package->kind = copyString(kind)))
    return fail(ATTN_ERROR_MEMORY, "out of memory");
  const AttnJson *comp =
      field(o, o->package->manifest, "compiler", ATTN_JSON_OBJECT, 0);
  if (!comp)
    return ATTN_ERROR_PACKAGE;
  setContext(o, "compiler");
  const char *version = stringField(o, comp, "attnfuse");
  const char *abi = version ? stringField(o, comp, "abi") : NULL;
  if (!abi)
    return ATTN_ERROR_PACKAGE;
  if (strcmp(version, ATTN_PACKAGE_ATTNFUSE_VERSION) != 0 ||
      strcmp(abi, ATTN_PACKAGE_ABI) != 0)
    return fail(ATTN_ERROR_VERSION,
                "%s: was saved by attnfuse %.40s (%.40s); this reader is "
                "attnfuse %s (%s): save the package again with this version",
                o->manifestPath, version, abi, ATTN_PACKAGE_ATTNFUSE_VERSION,
                ATTN_PACKAGE_ABI);
  return ATTN_OK;
}

/* Hashes `size` bytes of `fd` into `hex`. */
static int hashFd(int fd, char hex[65]) {
  AttnSha256 sha;
  attnSha256Init(&sha);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return 0;
    if (n == 0)
      break;
    attnSha256Update(&sha, buf, (size_t)n);
  }
  attnSha256FinishHex(&sha, hex);
  return 1;
}

/* The SHA-256 of each chunk of weights.bin against the manifest's, on one
 * thread per core (as Python's load): a large model's weights take seconds
 * on one. */
typedef struct {
  const char *data;
  size_t size;
  size_t chunk;
  int64_t numChunks;
  const AttnJson *digests;
  int64_t next; /* atomic: the next chunk to hash */
  int mismatch; /* atomic */
} ChunkCheck;

static void *hashChunks(void *arg) {
  ChunkCheck *c = arg;
  for (;;) {
    int64_t i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
    if (i >= c->numChunks || __atomic_load_n(&c->mismatch, __ATOMIC_RELAXED))
      return NULL;
    size_t start = (size_t)i * c->chunk;
    size_t n = c->size - start < c->chunk ? c->size - start : c->chunk;
    AttnSha256 ctx;
    char hex[65];
    attnSha256Init(&ctx);
    attnSha256Update(&ctx, c->data + start, n);
    attnSha256FinishHex(&ctx, hex);
    if (strcmp(hex, c->digests->items[i].string) != 0)
      __atomic_store_n(&c->mismatch, 1, __ATOMIC_RELAXED);
  }
}

/* Whether every chunk has its digest. */
static int checkChunks(ChunkCheck *c) {
  enum { MAX_THREADS = 64 };
  pthread_t threads[MAX_THREADS];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int64_t want = c->numChunks < cores ? c->numChunks : cores;
  int started = 0;
  while (started + 1 < want && started < MAX_THREADS &&
         pthread_create(&threads[started], NULL, hashChunks, c) == 0)
    ++started;
  hashChunks(c); /* this thread too, and alone where none started */
  for (int i = 0; i < started; ++i)
    pthread_join(threads[i], NULL);
  return !c->mismatch;
}

/* The package's file of `role` (record `f`: name, size, sha256), opened
   into `*fd` (`path` its path, `*bytes` its size, `*sha` the recorded
   SHA-256): a plain file name, present, a regular file of the recorded
   size. */
static attn_status openRecorded(Opener *o, const char *role,
                                const AttnJson *f, char *path, int *fd,
                                int64_t *bytes, const char **sha) {
  attn_package *p = o->package;
  setContext(o, "files.%.60s", role);
  const char *name = stringField(o, f, "name");
  const AttnJson *size = name ? field(o, f, "size", ATTN_JSON_NUMBER, 0) : NULL;
  *sha = size ? stringField(o, f, "sha256") : NULL;
  if (!*sha)
    return ATTN_ERROR_PACKAGE;
  if (strchr(name, '/') || !*name || strcmp(name, ".") == 0 ||
      strcmp(name, "..") == 0)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: files.%s.name '%.60s' is not a "
                "file name",
                o->manifestPath, role, name);
  if (!joinPath(path, p->dir, name))
    return fail(ATTN_ERROR_IO, "%s: path too long", p->dir);
  *fd = open(path, O_RDONLY | O_CLOEXEC);
  if (*fd < 0)
    return errno == ENOENT
               ? fail(ATTN_ERROR_IO, "%s: missing (the package's %s)", path,
                      role)
               : fail(ATTN_ERROR_IO, "%s: cannot be read: %s", path,
                      strerror(errno));
  struct stat st;
  if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(*fd);
    return fail(ATTN_ERROR_IO, "%s: not a regular file", path);
  }
  if ((int64_t)st.st_size != size->integer) {
    close(*fd);
    return fail(ATTN_ERROR_PACKAGE,
                "%s: is %s: %lld bytes, the manifest records %lld", path,
                (int64_t)st.st_size < size->integer
                    ? "truncated or not the package's"
                    : "not the package's",
                (long long)st.st_size, (long long)size->integer);
  }
  *bytes = (int64_t)st.st_size;
  return ATTN_OK;
}

/* weights.bin (open as `fd`, `bytes` long) mapped read-only and private:
   the library never writes it (tensors it writes in place are copied,
   checkState); each chunk's SHA-256 checked unless
   ATTN_PACKAGE_SKIP_WEIGHTS_SHA256. Closes `fd`. */
static attn_status mapWeights(Opener *o, int fd, const char *path,
                              int64_t bytes, const AttnJson *chunk,
                              const AttnJson *digests, int64_t numChunks) {
  attn_package *p = o->package;
  p->weightsSize = (size_t)bytes;
  if (p->weightsSize) {
    void *m = mmap(NULL, p->weightsSize, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      close(fd);
      return fail(ATTN_ERROR_IO, "%s: cannot be mapped: %s", path,
                  strerror(errno));
    }
    p->weights = m;
  }
  close(fd);
  if (o->flags & ATTN_PACKAGE_SKIP_WEIGHTS_SHA256)
    return ATTN_OK;
  ChunkCheck check = {p->weights, p->weightsSize, (size_t)chunk->integer,
                      numChunks,  digests,        0,
                      0};
  if (!checkChunks(&check))
    return fail(ATTN_ERROR_PACKAGE,
                "%s: was changed after it was saved (the SHA-256 of a "
                "chunk is not the manifest's)",
                path);
  return ATTN_OK;
}

/* Each file present with its recorded size and SHA-256 (weights.bin's
 * chunks only without ATTN_PACKAGE_SKIP_WEIGHTS_SHA256); maps
 * weights.bin. `library` receives model.so's path. */
static attn_status checkFiles(Opener *o, char *library) {
  attn_package *p = o->package;
  setContext(o, "manifest");
  const AttnJson *files = field(o, p->manifest, "files", ATTN_JSON_OBJECT, 0);
  if (!files)
    return ATTN_ERROR_PACKAGE;
  setContext(o, "files");
  const AttnJson *weights = field(o, files, "weights", ATTN_JSON_OBJECT, 0);
  if (!weights || !field(o, files, "library", ATTN_JSON_OBJECT, 0))
    return ATTN_ERROR_PACKAGE;
  setContext(o, "files.weights");
  const AttnJson *chunk = field(o, weights, "chunk_size", ATTN_JSON_NUMBER, 0);
  const AttnJson *digests =
      chunk ? field(o, weights, "chunk_sha256", ATTN_JSON_ARRAY, 0) : NULL;
  const AttnJson *wsize =
      digests ? field(o, weights, "size", ATTN_JSON_NUMBER, 0) : NULL;
  if (!wsize)
    return ATTN_ERROR_PACKAGE;
  int64_t numChunks =
      chunk->integer > 0 && wsize->integer >= 0
          ? (wsize->integer + chunk->integer - 1) / chunk->integer
          : -1;
  if (numChunks == 0)
    numChunks = 1;
  if (numChunks < 0 || (int64_t)digests->count != numChunks)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: files.weights.chunk_sha256 must hold one digest per "
                "chunk_size bytes",
                o->manifestPath);
  for (size_t i = 0; i < digests->count; ++i)
    if (digests->items[i].kind != ATTN_JSON_STRING)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: files.weights.chunk_sha256[%zu] must be a string",
                  o->manifestPath, i);
  for (size_t r = 0; r < files->count; ++r) {
    const char *role = files->keys[r].string;
    char path[PATH_MAX];
    int64_t bytes = 0;
    int fd = -1;
    const char *sha = NULL;
    attn_status s =
        openRecorded(o, role, &files->items[r], path, &fd, &bytes, &sha);
    if (s != ATTN_OK)
      return s;
    if (strcmp(role, "weights") == 0) {
      s = mapWeights(o, fd, path, bytes, chunk, digests, numChunks);
      if (s != ATTN_OK)
        return s;
      continue;
    }
    char hex[65];
    int read = hashFd(fd, hex);
    close(fd);
    if (!read)
      return fail(ATTN_ERROR_IO, "%s: cannot be read: %s", path,
                  strerror(errno));
    if (strcmp(hex, sha) != 0)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: was changed after it was saved (its SHA-256 is not "
                  "the manifest's)",
                  path);
    if (strcmp(role, "library") == 0)
      memcpy(library, path, PATH_MAX);
  }
  return ATTN_OK;
}

/* A list of integers (`shape` of a tensor) into `dims`. */
static int intList(const AttnJson *list, int64_t *dims, int32_t *rank) {
  if (list->kind != ATTN_JSON_ARRAY || list->count > MAX_RANK)
    return 0;
  for (size_t i = 0; i < list->count; ++i) {
    if (list->items[i].kind != ATTN_JSON_NUMBER || !list->items[i].isInteger)
      return 0;
    dims[i] = list->items[i].integer;
  }
  *rank = (int32_t)list->count;
  return 1;
}

/* Every tensor lies inside weights.bin at an aligned offset. */
static attn_status checkTensors(Opener *o, const AttnJson **tensorsOut) {
  attn_package *p = o->package;
  setContext(o, "manifest");
  const AttnJson *tensors =
      field(o, p->manifest, "tensors", ATTN_JSON_OBJECT, 0);
  if (!tensors)
    return ATTN_ERROR_PACKAGE;
  for (size_t i = 0; i < tensors->count; ++i) {
    const char *key = tensors->keys[i].string;
    const AttnJson *t = &tensors->items[i];
    setContext(o, "tensors['%.80s']", key);
    const char *dtype = stringField(o, t, "dtype");
    const AttnJson *shape =
        dtype ? field(o, t, "shape", ATTN_JSON_ARRAY, 0) : NULL;
    const AttnJson *offset =
        shape ? field(o, t, "offset", ATTN_JSON_NUMBER, 0) : NULL;
    const AttnJson *nbytes =
        offset ? field(o, t, "nbytes", ATTN_JSON_NUMBER, 0) : NULL;
    if (!nbytes)
      return ATTN_ERROR_PACKAGE;
    int d = dtypeOf(dtype);
    int64_t dims[MAX_RANK];
    int32_t rank;
    size_t bytes;
    if (d < 0)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: tensor '%.80s': unknown dtype "
                  "'%.40s'",
                  o->manifestPath, key, dtype);
    if (!intList(shape, dims, &rank) ||
        !byteSize(dims, rank, kDtypes[d].size, &bytes) ||
        nbytes->integer != (int64_t)bytes || offset->integer < 0 ||
        offset->integer % WEIGHTS_ALIGNMENT ||
        (uint64_t)offset->integer > p->weightsSize ||
        bytes > p->weightsSize - (size_t)offset->integer)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s/weights.bin: tensor '%.80s' (%s) does not lie at an "
                  "aligned offset inside the file's %zu bytes",
                  p->dir, key, dtype, p->weightsSize);
  }
  *tensorsOut = tensors;
  return ATTN_OK;
}

static const struct {
  const char *llvm;
  const char *cpuinfo;
} kCpuFlags[] = {
    {"64bit", "lm"},
    {"cmov", "cmov"},
    {"cx8", "cx8"},
    {"cx16", "cx16"},
    {"mmx", "mmx"},
    {"fxsr", "fxsr"},
    {"sahf", "lahf_lm"},
    {"popcnt", "popcnt"},
    {"movbe", "movbe"},
    {"lzcnt", "abm"},
    {"bmi", "bmi1"},
    {"bmi2", "bmi2"},
    {"tbm", "tbm"},
    {"adx", "adx"},
    {"prfchw", "3dnowprefetch"},
    {"sse", "sse"},
    {"sse2", "sse2"},
    {"sse3", "pni"},
    {"ssse3", "ssse3"},
    {"sse4.1", "sse4_1"},
    {"sse4.2", "sse4_2"},
    {"crc32", "sse4_2"},
    {"sse4a", "sse4a"},
    {"aes", "aes"},
    {"pclmul", "pclmulqdq"},
    {"sha", "sha_ni"},
    {"avx", "avx"},
    {"avx2", "avx2"},
    {"fma", "fma"},
    {"fma4", "fma4"},
    {"xop", "xop"},
    {"f16c", "f16c"},
    {"gfni", "gfni"},
    {"vaes", "vaes"},
    {"vpclmulqdq", "vpclmulqdq"},
    {"avxvnni", "avx_vnni"},
    {"avx512f", "avx512f"},
    {"avx512bw", "avx512bw"},
    {"avx512cd", "avx512cd"},
    {"avx512dq", "avx512dq"},
    {"avx512vl", "avx512vl"},
    {"avx512ifma", "avx512ifma"},
    {"avx512vbmi", "avx512vbmi"},
    {"avx512vbmi2", "avx512_vbmi2"},
    {"avx512vnni", "avx512_vnni"},
    {"avx512bitalg", "avx512_bitalg"},
    {"avx512vpopcntdq", "avx512_vpopcntdq"},
    {"avx512bf16", "avx512_bf16"},
    {"avx512fp16", "avx512_fp16"},
    {"avx512vp2intersect", "avx512_vp2intersect"},
};

/* Whether the space-separated `flags` (one line) hold `flag`. */
static int hasFlag(const char *flags, size_t len, const char *flag) {
  size_t n = strlen(flag);
  for (size_t i = 0; i + n <= len; ++i)
    if ((i == 0 || flags[i - 1] == ' ' || flags[i - 1] == '\t') &&
        memcmp(flags + i, flag, n) == 0 &&
        (i + n == len || flags[i + n] == ' ' || flags[i + n] == '\t'))
      return 1;
  return 0;
}

/* The machine and the CPU features the code needs (Python's _check_target:
 * the requirements against /proc/cpuinfo's flags). */
static attn_status checkTarget(Opener *o, const char *library) {
  attn_package *p = o->package;
  setContext(o, "manifest");
  const AttnJson *target = field(o, p->manifest, "target", ATTN_JSON_OBJECT, 0);
  if (!target)
    return ATTN_ERROR_PACKAGE;
  setContext(o, "target");
  const char *machine = stringField(o, target, "machine");
  const AttnJson *requires =
      machine && stringField(o, target, "cpu") &&
              stringField(o, target, "features")
          ? field(o, target, "requires", ATTN_JSON_ARRAY, 0)
          : NULL;
  if (!requires)
    return ATTN_ERROR_PACKAGE;
  struct utsname host;
  if (uname(&host) != 0 || strcmp(host.machine, machine) != 0)
    return fail(ATTN_ERROR_TARGET,
                "%s: was compiled for %.40s; this host is "
                "%s",
                library, machine, host.machine);
  char *cpuinfo = NULL;
  size_t size = 0;
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    cpuinfo = malloc(MAX_CPUINFO_BYTES + 1);
    while (cpuinfo && size < MAX_CPUINFO_BYTES) {
      ssize_t n = read(fd, cpuinfo + size, MAX_CPUINFO_BYTES - size);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      size += (size_t)n;
    }
    close(fd);
  }
  const char *flags = NULL;
  size_t flagsLen = 0;
  for (size_t i = 0; cpuinfo && i < size;) {
    const char *line = cpuinfo + i;
    const char *end = memchr(line, '\n', size - i);
    size_t len = end ? (size_t)(end - line) : size - i;
    if (len >= 5 && memcmp(line, "flags", 5) == 0) {
      const char *colon = memchr(line, ':', len);
      if (colon) {
        flags = colon + 1;
        flagsLen = len - (size_t)(flags - line);
        break;
      }
    }
    i += len + 1;
  }
  if (!flags) {
    free(cpuinfo);
    return fail(ATTN_ERROR_TARGET,
                "%s: cannot read this host's CPU features "
                "(/proc/cpuinfo) to check that it can run the code",
                library);
  }
  char missing[512] = "";
  for (size_t i = 0; i < requires->count; ++i) {
    const AttnJson *r = &requires->items[i];
    const char *flag = NULL;
    for (size_t k = 0; r->kind == ATTN_JSON_STRING &&
                       k < sizeof(kCpuFlags) / sizeof(kCpuFlags[0]);
         ++k)
      if (strcmp(kCpuFlags[k].llvm, r->string) == 0)
        flag = kCpuFlags[k].cpuinfo;
    if (!flag) {
      free(cpuinfo);
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: target.requires[%zu] is not a "
                  "checked CPU feature",
                  o->manifestPath, i);
    }
    if (!hasFlag(flags, flagsLen, flag)) {
      size_t len = strlen(missing);
      snprintf(missing + len, sizeof(missing) - len, "%s%s", len ? ", " : "",
               r->string);
    }
  }
  free(cpuinfo);
  if (*missing)
    return fail(ATTN_ERROR_TARGET,
                "%s: was compiled for CPU '%.40s' and this host cannot run "
                "it: it lacks %s (compile the model on a host like the one "
                "that runs it)",
                library, attnJsonGet(target, "cpu")->string, missing);
  return ATTN_OK;
}

/* OMP_NUM_THREADS must be a thread count from 1 to 1024 (or a list of
 * them): libomp stops the process on others (runtime.check_omp_num_threads). */
static attn_status checkOmpNumThreads(void) {
  const char *value = getenv("OMP_NUM_THREADS");
  if (!value)
    return ATTN_OK;
  const char *s = value;
  for (;;) {
    while (*s == ' ' || *s == '\t')
      ++s;
    long n = 0;
    int digits = 0;
    while (*s >= '0' && *s <= '9' && n <= 1024) {
      n = n * 10 + (*s++ - '0');
      ++digits;
    }
    while (*s == ' ' || *s == '\t')
      ++s;
    if (!digits || n < 1 || n > 1024 || (*s && *s != ','))
      return fail(ATTN_ERROR_ARGUMENT,
                  "OMP_NUM_THREADS='%.40s': expected a thread count from 1 "
                  "to 1024 (or a comma-separated list of them); libomp "
                  "would stop the process (unset it for OpenMP's default)",
                  value);
    if (!*s++)
      return ATTN_OK;
  }
}

/* The MLIR type the library's signature prints for an argument. */
static void typeText(const Arg *a, char *out, size_t size) {
  size_t len = (size_t)snprintf(out, size, "tensor<");
  for (int32_t i = 0; i < a->rank && len < size; ++i)
    len += (size_t)(a->dims[i] < 0 ? snprintf(out + len, size - len, "?x")
                                   : snprintf(out + len, size - len, "%lldx",
                                              (long long)a->dims[i]));
  if (len < size)
    snprintf(out + len, size - len, "%s>", kDtypes[a->dtype].mlir);
}

/* Whether the library's record `recorded` ("attn-signature 1: (A, B) ->
 * (R, S)") takes the entry's arguments and returns its outputs first (the
 * state results written in place follow them). */
static int signatureMatches(const attn_entry *e, const char *recorded) {
  const char *prefix = ATTN_PACKAGE_ABI ": (";
  size_t n = strlen(prefix);
  if (strncmp(recorded, prefix, n) != 0)
    return 0;
  const char *s = recorded + n;
  const char *arrow = strstr(s, ") -> ");
  if (!arrow)
    return 0;
  char type[MAX_RANK * 24 + 32];
  for (int64_t i = 0; i < e->numArgs; ++i) {
    typeText(&e->args[i], type, sizeof(type));
    size_t len = strlen(type);
    if ((size_t)(arrow - s) < len || strncmp(s, type, len) != 0)
      return 0;
    s += len;
    if (i + 1 < e->numArgs) {
      if (strncmp(s, ", ", 2) != 0)
        return 0;
      s += 2;
    }
  }
  if (s != arrow)
    return 0;
  s = arrow + 5;
  int paren = *s == '(';
  s += paren;
  for (int64_t i = 0; i < e->numOutputs; ++i) {
    typeText(&e->outputs[i], type, sizeof(type));
    size_t len = strlen(type);
    if (strncmp(s, type, len) != 0)
      return 0;
    s += len;
    if (*s == ',' && s[1] == ' ')
      s += 2;
    else if (i + 1 < e->numOutputs)
      return 0;
  }
  return 1;
}

/* An argument or a result record of an entry into `a`; `dimsObj` is the
 * entry's `dims`. */
static attn_status readArg(Opener *o, const AttnJson *rec,
                           const AttnJson *dimsObj, Arg *a, int isOutput) {
  const AttnJson *dtype = field(o, rec, "dtype", ATTN_JSON_STRING, !isOutput);
  const AttnJson *shape =
      dtype ? field(o, rec, "shape", ATTN_JSON_ARRAY, 0) : NULL;
  if (!shape)
    return ATTN_ERROR_PACKAGE;
  if (dtype->kind == ATTN_JSON_NULL || dtypeOf(dtype->string) < 0)
    return fail(ATTN_ERROR_PACKAGE, "%s: %s has no dtype this reader knows",
                o->manifestPath, o->context);
  a->dtype = (attn_dtype)dtypeOf(dtype->string);
  if (shape->count > MAX_RANK)
    return fail(ATTN_ERROR_PACKAGE, "%s: %s has more than %d dims",
                o->manifestPath, o->context, MAX_RANK);
  a->rank = (int32_t)shape->count;
  size_t n = shape->count ? shape->count : 1;
  a->dims = malloc(n * sizeof(int64_t));
  a->dimMin = malloc(n * sizeof(int64_t));
  a->dimMax = malloc(n * sizeof(int64_t));
  a->symbol = malloc(n * sizeof(int64_t));
  if (!a->dims || !a->dimMin || !a->dimMax || !a->symbol)
    return fail(ATTN_ERROR_MEMORY, "out of memory");
  for (int32_t i = 0; i < a->rank; ++i) {
    const AttnJson *d = &shape->items[i];
    a->symbol[i] = -1;
    if (d->kind == ATTN_JSON_NUMBER && d->isInteger && d->integer >= 0) {
      a->dims[i] = a->dimMin[i] = a->dimMax[i] = d->integer;
      continue;
    }
    if (d->kind != ATTN_JSON_STRING)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: %s.shape[%d] must be a size or "
                  "the name of a dynamic dim",
                  o->manifestPath, o->context, i);
    a->dims[i] = -1;
    a->dimMin[i] = 0;
    a->dimMax[i] = INT64_MAX;
    /* An expression of symbols ("s0 + 1") is checked by the compiled code. */
    for (size_t k = 0; k < dimsObj->count; ++k) {
      if (strcmp(dimsObj->keys[k].string, d->string) != 0)
        continue;
      const AttnJson *bounds = &dimsObj->items[k];
      const AttnJson *lo = attnJsonGet(bounds, "min");
      const AttnJson *hi = attnJsonGet(bounds, "max");
      if (lo && lo->kind == ATTN_JSON_NUMBER && lo->integer > 0)
        a->dimMin[i] = lo->integer;
      if (hi && hi->kind == ATTN_JSON_NUMBER && hi->integer >= 0)
        a->dimMax[i] = hi->integer;
      a->symbol[i] = (int64_t)k;
    }
  }
  return ATTN_OK;
}

static attn_status readEntry(Opener *o, size_t index, const AttnJson *rec,
                             const AttnJson *tensors) {
  attn_package *p = o->package;
  attn_entry *e = &p->entries[index];
  e->package = p;
  setContext(o, "entries[%zu]", index);
  const char *name = stringField(o, rec, "name");
  const char *signature = name ? stringField(o, rec, "signature") : NULL;
  const AttnJson *dims =
      signature ? field(o, rec, "dims", ATTN_JSON_OBJECT, 0) : NULL;
  const AttnJson *args =
      dims ? field(o, rec, "args", ATTN_JSON_ARRAY, 0) : NULL;
  const AttnJson *results =
      args ? field(o, rec, "results", ATTN_JSON_ARRAY, 0) : NULL;
  if (!results)
    return ATTN_ERROR_PACKAGE;
  if (!isCName(name) || strlen(name) > 200)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: entries[%zu].name '%.60s' is not a "
                "C name",
                o->manifestPath, index, name);
  for (size_t k = 0; k < dims->count; ++k) {
    setContext(o, "entries[%zu].dims['%.60s']", index, dims->keys[k].string);
    if (!field(o, &dims->items[k], "min", ATTN_JSON_NUMBER, 1) ||
        !field(o, &dims->items[k], "max", ATTN_JSON_NUMBER, 1))
      return ATTN_ERROR_PACKAGE;
  }
  e->name = copyString(name);
  e->args = calloc(args->count ? args->count : 1, sizeof(Arg));
  e->outputs = calloc(results->count ? results->count : 1, sizeof(Arg));
  e->symbols = calloc(dims->count ? dims->count : 1, sizeof(char *));
  if (!e->name || !e->args || !e->outputs || !e->symbols)
    return fail(ATTN_ERROR_MEMORY, "out of memory");
  for (size_t k = 0; k < dims->count; ++k, ++e->numSymbols)
    if (!(e->symbols[k] = copyString(dims->keys[k].string)))
      return fail(ATTN_ERROR_MEMORY, "out of memory");
  for (size_t j = 0; j < args->count; ++j) {
    const AttnJson *ar = &args->items[j];
    setContext(o, "entries[%zu].args[%zu]", index, j);
    const char *argName = stringField(o, ar, "name");
    const char *kind = argName ? stringField(o, ar, "kind") : NULL;
    const AttnJson *written =
        kind ? field(o, ar, "written", ATTN_JSON_BOOL, 0) : NULL;
    const AttnJson *tensor =
        written ? field(o, ar, "tensor", ATTN_JSON_STRING, 1) : NULL;
    if (!tensor || !field(o, ar, "packed", ATTN_JSON_BOOL, 0))
      return ATTN_ERROR_PACKAGE;
    if (strcmp(kind, "static") == 0)
      continue; /* fixed at export: not an argument of the library */
    static const char *const kKinds[] = {"input", "parameter", "buffer",
                                         "constant"};
    int k = 0;
    while (k < 4 && strcmp(kKinds[k], kind) != 0)
      ++k;
    if (k == 4)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: %s.kind '%.40s' is not one this "
                  "reader knows",
                  o->manifestPath, o->context, kind);
    Arg *a = &e->args[e->numArgs++];
    a->kind = (attn_arg_kind)k;
    a->written = written->boolean;
    if (!(a->name = copyString(argName)))
      return fail(ATTN_ERROR_MEMORY, "out of memory");
    attn_status s = readArg(o, ar, dims, a, 0);
    if (s != ATTN_OK)
      return s;
    if (tensor->kind == ATTN_JSON_NULL)
      continue;
    /* Bound to a tensor of weights.bin of its very dtype and shape. */
    const AttnJson *t = attnJsonGet(tensors, tensor->string);
    int64_t tdims[MAX_RANK];
    int32_t trank;
    const AttnJson *tdtype = t ? attnJsonGet(t, "dtype") : NULL;
    if (!t)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s/weights.bin: %s argument %.80s is "
                  "bound to tensor '%.80s', which the file does not hold",
                  p->dir, name, argName, tensor->string);
    if (!intList(attnJsonGet(t, "shape"), tdims, &trank) || trank != a->rank ||
        memcmp(tdims, a->dims, (size_t)trank * 8) != 0 ||
        strcmp(tdtype->string, kDtypes[a->dtype].name) != 0)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s/weights.bin: tensor '%.80s' is not "
                  "of the dtype and shape that %s argument %.80s takes",
                  p->dir, tensor->string, name, argName);
    a->nbytes = (size_t)attnJsonGet(t, "nbytes")->integer;
    a->state = p->weights
                   ? (char *)p->weights + attnJsonGet(t, "offset")->integer
                   : (void *)kEmpty;
    if (!a->written)
      continue;
    /* Written in place: the package's own copy, one per tensor. */
    e->writesState = 1;
    int64_t s0 = 0;
    while (s0 < p->numStates && strcmp(p->states[s0].key, tensor->string))
      ++s0;
    if (s0 == p->numStates) {
      StateCopy *states =
          realloc(p->states, (size_t)(p->numStates + 1) * sizeof(StateCopy));
      if (!states)
        return fail(ATTN_ERROR_MEMORY, "out of memory");
      p->states = states;
      StateCopy *copy = &states[p->numStates];
      copy->key = copyString(tensor->string);
      copy->data = aligned_alloc(WEIGHTS_ALIGNMENT,
                                 (a->nbytes + WEIGHTS_ALIGNMENT - 1) /
                                         WEIGHTS_ALIGNMENT * WEIGHTS_ALIGNMENT +
                                     WEIGHTS_ALIGNMENT);
      if (!copy->key || !copy->data) {
        free(copy->key);
        free(copy->data);
        return fail(ATTN_ERROR_MEMORY, "out of memory");
      }
      memcpy(copy->data, a->state, a->nbytes);
      ++p->numStates;
    }
    a->state = p->states[s0].data;
  }
  for (size_t j = 0; j < results->count; ++j) {
    setContext(o, "entries[%zu].results[%zu]", index, j);
    Arg *r = &e->outputs[e->numOutputs++];
    r->kind = ATTN_ARG_OUTPUT;
    char label[32];
    snprintf(label, sizeof(label), "output%zu", j);
    if (!(r->name = copyString(label)))
      return fail(ATTN_ERROR_MEMORY, "out of memory");
    attn_status s = readArg(o, &results->items[j], dims, r, 1);
    if (s != ATTN_OK)
      return s;
  }
  return ATTN_OK;
}

/* Loads model.so and checks its records against the manifest
 * (Package.open_library). */
static attn_status openLibrary(Opener *o, const char *path) {
  attn_package *p = o->package;
  const AttnJson *target = attnJsonGet(p->manifest, "target");
  dlerror();
  p->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!p->library) {
    const char *why = dlerror();
    return fail(ATTN_ERROR_LIBRARY, "%s: cannot be loaded: %s", path,
                why ? why : "unknown error");
  }
  const char *recorded = dlsym(p->library, "attn_target");
  const char *cpu = attnJsonGet(target, "cpu")->string;
  const char *features = attnJsonGet(target, "features")->string;
  size_t cpuLen = strlen(cpu);
  if (!recorded || strncmp(recorded, cpu, cpuLen) != 0 ||
      recorded[cpuLen] != '\n' || strcmp(recorded + cpuLen + 1, features) != 0)
    return fail(ATTN_ERROR_PACKAGE,
                "%s: records another target than the "
                "manifest's (the library or the manifest is not the "
                "package's)",
                path);
  p->callPacked = (CallPacked)dlsym(p->library, "attnrt_call_packed");
  if (!p->callPacked)
    return fail(ATTN_ERROR_LIBRARY,
                "%s: has no attnrt_call_packed (not a "
                "library attn-compile linked with its runtime)",
                path);
  const AttnJson *entries = attnJsonGet(p->manifest, "entries");
  for (int64_t i = 0; i < p->numEntries; ++i) {
    attn_entry *e = &p->entries[i];
    char symbol[256];
    snprintf(symbol, sizeof(symbol), "attn_signature_%s", e->name);
    const char *signature = dlsym(p->library, symbol);
    snprintf(symbol, sizeof(symbol), "attn_packed_%s", e->name);
    *(void **)&e->function = dlsym(p->library, symbol);
    if (!signature || !e->function)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: has no entry point %s (no "
                  "attn_signature_%s or attn_packed_%s)",
                  path, e->name, e->name, e->name);
    const char *want = attnJsonGet(&entries->items[i], "signature")->string;
    if (strcmp(signature, want) != 0)
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: records the signature '%.300s' for "
                  "%s; the manifest says '%.300s'",
                  path, signature, e->name, want);
    if (!signatureMatches(e, signature))
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: entry %s: its arguments and "
                  "results are not those of the library's '%.300s'",
                  o->manifestPath, e->name, signature);
  }
  return ATTN_OK;
}

attn_status attn_package_open_flags(const char *dir, unsigned flags,
                                    attn_package **package) {
  if (!package)
    return fail(ATTN_ERROR_ARGUMENT, "attn_package_open: package is NULL");
  *package = NULL;
  if (!dir)
    return fail(ATTN_ERROR_ARGUMENT, "attn_package_open: dir is NULL");
  Opener *o = calloc(1, sizeof(Opener));
  attn_package *p = calloc(1, sizeof(attn_package));
  if (!o || !p || !(p->dir = copyString(dir))) {
    free(o);
    free(p);
    return fail(ATTN_ERROR_MEMORY, "out of memory");
  }
  pthread_mutex_init(&p->stateLock, NULL);
  o->package = p;
  o->flags = flags;
  char *library = malloc(PATH_MAX);
  const AttnJson *tensors = NULL;
  attn_status s =
      library ? readManifest(o, dir) : fail(ATTN_ERROR_MEMORY, "out of memory");
  if (s == ATTN_OK)
    s = checkCompiler(o);
  if (s == ATTN_OK)
    s = checkFiles(o, library);
  if (s == ATTN_OK)
    s = checkTensors(o, &tensors);
  if (s == ATTN_OK) {
    setContext(o, "manifest");
    const AttnJson *entries =
        field(o, p->manifest, "entries", ATTN_JSON_ARRAY, 0);
    if (!entries)
      s = ATTN_ERROR_PACKAGE;
    else if (entries->count == 0)
      s = fail(ATTN_ERROR_PACKAGE, "%s: manifest.entries is empty",
               o->manifestPath);
    else if (!(p->entries = calloc(entries->count, sizeof(attn_entry))))
      s = fail(ATTN_ERROR_MEMORY, "out of memory");
    for (size_t i = 0; s == ATTN_OK && i < entries->count; ++i) {
      s = readEntry(o, i, &entries->items[i], tensors);
      p->numEntries = (int64_t)i + 1;
    }
  }
  if (s == ATTN_OK)
    s = checkTarget(o, library);
  if (s == ATTN_OK)
    s = checkOmpNumThreads();
  if (s == ATTN_OK)
    s = openLibrary(o, library);
  free(library);
  free(o);
  if (s != ATTN_OK) {
    freePackage(p);
    return s;
  }
  *package = p;
  return ATTN_OK;
}

attn_status attn_package_open(const char *dir, attn_package **package) {
  return attn_package_open_flags(dir, 0, package);
}

attn_status attn_package_close(attn_package *package) {
  if (!package)
    return ATTN_OK;
  int64_t live = __atomic_load_n(&package->liveCalls, __ATOMIC_SEQ_CST);
  if (live)
    return fail(ATTN_ERROR_STATE,
                "attn_package_close: %lld calls of the "
                "package are live (attn_call_free them first)",
                (long long)live);
  freePackage(package);
  return ATTN_OK;
}

const char *attn_package_kind(const attn_package *package) {
  if (!package) {
    fail(ATTN_ERROR_ARGUMENT, "attn_package_kind: package is NULL");
    return NULL;
  }
  return package->kind;
}

int64_t attn_package_num_entries(const attn_package *package) {
  if (!package) {
    fail(ATTN_ERROR_ARGUMENT, "attn_package_num_entries: package is NULL");
    return -1;
  }
  return package->numEntries;
}

const attn_entry *attn_package_entry(const attn_package *package,
                                     int64_t index) {
  if (!package || index < 0 || index >= package->numEntries) {
    fail(ATTN_ERROR_ARGUMENT,
         "attn_package_entry: no entry %lld (the "
         "package has %lld)",
         (long long)index, package ? (long long)package->numEntries : 0LL);
    return NULL;
  }
  return &package->entries[index];
}

const attn_entry *attn_package_entry_named(const attn_package *package,
                                           const char *name) {
  for (int64_t i = 0; package && name && i < package->numEntries; ++i)
    if (strcmp(package->entries[i].name, name) == 0)
      return &package->entries[i];
  fail(ATTN_ERROR_ARGUMENT,
       "attn_package_entry_named: the package has no "
       "entry '%.100s'",
       name ? name : "(null)");
  return NULL;
}

/* The manifest value at the dotted `path`, or NULL with the error set. */
static const AttnJson *manifestAt(const attn_package *package,
                                  const char *path) {
  if (!package || !path) {
    fail(ATTN_ERROR_ARGUMENT, "attn_package_manifest: NULL argument");
    return NULL;
  }
  const AttnJson *v = package->manifest;
  const char *s = path;
  char key[256];
  while (v && *s) {
    const char *dot = strchr(s, '.');
    size_t len = dot ? (size_t)(dot - s) : strlen(s);
    if (len >= sizeof(key))
      break;
    memcpy(key, s, len);
    key[len] = '\0';
    if (v->kind == ATTN_JSON_ARRAY) {
      char *end;
      errno = 0;
      unsigned long long i = strtoull(key, &end, 10);
      v = len && *end == '\0' && key[0] != '-' && !errno && i < v->count
              ? &v->items[i]
              : NULL;
    } else {
      v = attnJsonGet(v, key);
    }
    s += len + (dot != NULL);
    if (dot && !*s)
      v = NULL;
  }
  if (!v || v->kind == ATTN_JSON_NULL || *s) {
    fail(ATTN_ERROR_NOT_FOUND, "the manifest has no value at '%.200s'%s", path,
         v ? " (it is null)" : "");
    return NULL;
  }
  return v;
}

attn_status attn_package_manifest_int(const attn_package *package,
                                      const char *path, int64_t *value) {
  const AttnJson *v = manifestAt(package, path);
  if (!v)
    return package && path ? ATTN_ERROR_NOT_FOUND : ATTN_ERROR_ARGUMENT;
  if (v->kind != ATTN_JSON_NUMBER || !v->isInteger)
    return fail(ATTN_ERROR_NOT_FOUND,
                "the manifest's '%.200s' is not an "
                "integer",
                path);
  if (value)
    *value = v->integer;
  return ATTN_OK;
}

attn_status attn_package_manifest_string(const attn_package *package,
                                         const char *path, const char **value) {
  const AttnJson *v = manifestAt(package, path);
  if (!v)
    return package && path ? ATTN_ERROR_NOT_FOUND : ATTN_ERROR_ARGUMENT;
  if (v->kind != ATTN_JSON_STRING)
    return fail(ATTN_ERROR_NOT_FOUND,
                "the manifest's '%.200s' is not a "
                "string",
                path);
  if (value)
    *value = v->string;
  return ATTN_OK;
}

attn_status attn_package_manifest_length(const attn_package *package,
                                         const char *path, int64_t *length) {
  const AttnJson *v = manifestAt(package, path);
  if (!v)
    return package && path ? ATTN_ERROR_NOT_FOUND : ATTN_ERROR_ARGUMENT;
  if (v->kind != ATTN_JSON_ARRAY && v->kind != ATTN_JSON_OBJECT)
    return fail(ATTN_ERROR_NOT_FOUND,
                "the manifest's '%.200s' is neither a "
                "list nor an object",
                path);
  if (length)
    *length = (int64_t)v->count;
  return ATTN_OK;
}

/*===----------------------------------------------------------------------===*/
/* Entries                                                                    */
/*===----------------------------------------------------------------------===*/

const char *attn_entry_name(const attn_entry *entry) {
  if (!entry) {
    fail(ATTN_ERROR_ARGUMENT, "attn_entry_name: entry is NULL");
    return NULL;
  }
  return entry->name;
}

int64_t attn_entry_num_args(const attn_entry *entry) {
  if (!entry) {
    fail(ATTN_ERROR_ARGUMENT, "attn_entry_num_args: entry is NULL");
    return -1;
  }
  return entry->numArgs;
}

int64_t attn_entry_num_outputs(const attn_entry *entry) {
  if (!entry) {
    fail(ATTN_ERROR_ARGUMENT, "attn_entry_num_outputs: entry is NULL");
    return -1;
  }
  return entry->numOutputs;
}

static void describe(const Arg *a, attn_arg_info *info) {
  info->name = a->name;
  info->kind = a->kind;
  info->dtype = a->dtype;
  info->rank = a->rank;
  info->dims = a->dims;
  info->dim_min = a->dimMin;
  info->dim_max = a->dimMax;
  info->written = a->written;
  info->bound = a->state != NULL;
}

attn_status attn_entry_arg(const attn_entry *entry, int64_t index,
                           attn_arg_info *info) {
  if (!entry || !info || index < 0 || index >= entry->numArgs)
    return fail(ATTN_ERROR_ARGUMENT,
                "attn_entry_arg: no argument %lld of "
                "%s",
                (long long)index, entry ? entry->name : "(null entry)");
  describe(&entry->args[index], info);
  return ATTN_OK;
}

attn_status attn_entry_output_info(const attn_entry *entry, int64_t index,
                                   attn_arg_info *info) {
  if (!entry || !info || index < 0 || index >= entry->numOutputs)
    return fail(ATTN_ERROR_ARGUMENT,
                "attn_entry_output_info: no output %lld "
                "of %s",
                (long long)index, entry ? entry->name : "(null entry)");
  describe(&entry->outputs[index], info);
  return ATTN_OK;
}

int64_t attn_entry_arg_index(const attn_entry *entry, const char *name) {
  for (int64_t i = 0; entry && name && i < entry->numArgs; ++i)
    if (strcmp(entry->args[i].name, name) == 0)
      return i;
  fail(ATTN_ERROR_ARGUMENT, "%s has no argument '%.100s'",
       entry ? entry->name : "(null entry)", name ? name : "(null)");
  return -1;
}

/*===----------------------------------------------------------------------===*/
/* Calls                                                                      */
/*===----------------------------------------------------------------------===*/

typedef struct {
  void *data;
  int64_t *dims;
  size_t nbytes;
  int bound;
} Binding;

typedef struct {
  int64_t *dims;
  void *data;
  size_t nbytes;
} Output;

struct attn_call {
  const attn_entry *entry;
  Binding *bindings;
  Output *outputs;
  int hasOutputs;
  void **owned; /* buffers of the outputs, to free() */
  int64_t numOwned;
};

static void freeOutputs(attn_call *call) {
  for (int64_t i = 0; i < call->numOwned; ++i)
    free(call->owned[i]);
  call->numOwned = 0;
  call->hasOutputs = 0;
}

void attn_call_free(attn_call *call) {
  if (!call)
    return;
  freeOutputs(call);
  for (int64_t i = 0; call->bindings && i < call->entry->numArgs; ++i)
    free(call->bindings[i].dims);
  for (int64_t i = 0; call->outputs && i < call->entry->numOutputs; ++i)
    free(call->outputs[i].dims);
  free(call->bindings);
  free(call->outputs);
  free(call->owned);
  __atomic_sub_fetch(&call->entry->package->liveCalls, 1, __ATOMIC_SEQ_CST);
  free(call);
}

attn_status attn_call_create(const attn_entry *entry, attn_call **call) {
  if (!call)
    return fail(ATTN_ERROR_ARGUMENT, "attn_call_create: call is NULL");
  *call = NULL;
  if (!entry)
    return fail(ATTN_ERROR_ARGUMENT, "attn_call_create: entry is NULL");
  attn_call *c = calloc(1, sizeof(attn_call));
  if (!c)
    return fail(ATTN_ERROR_MEMORY, "out of memory");
  c->entry = entry;
  __atomic_add_fetch(&entry->package->liveCalls, 1, __ATOMIC_SEQ_CST);
  c->bindings = calloc((size_t)entry->numArgs + 1, sizeof(Binding));
  c->outputs = calloc((size_t)entry->numOutputs + 1, sizeof(Output));
  /* Each output's buffer and its last separate allocation, at most. */
  c->owned = calloc(2 * (size_t)entry->numOutputs + 1, sizeof(void *));
  int ok = c->bindings && c->outputs && c->owned;
  for (int64_t i = 0; ok && i < entry->numArgs; ++i)
    ok = (c->bindings[i].dims =
              calloc((size_t)entry->args[i].rank + 1, sizeof(int64_t))) != NULL;
  for (int64_t i = 0; ok && i < entry->numOutputs; ++i)
    ok = (c->outputs[i].dims = calloc((size_t)entry->outputs[i].rank + 1,
                                      sizeof(int64_t))) != NULL;
  if (!ok) {
    attn_call_free(c);
    return fail(ATTN_ERROR_MEMORY, "out of memory");
  }
  *call = c;
  return ATTN_OK;
}

static void formatDims(char *out, size_t size, const int64_t *dims,
                       int32_t rank) {
  size_t len = (size_t)snprintf(out, size, "[");
  for (int32_t i = 0; i < rank && len < size; ++i)
    len += (size_t)(dims[i] < 0
                        ? snprintf(out + len, size - len, "%s?", i ? ", " : "")
                        : snprintf(out + len, size - len, "%s%lld",
                                   i ? ", " : "", (long long)dims[i]));
  if (len < size)
    snprintf(out + len, size - len, "]");
}

attn_status attn_call_bind(attn_call *call, int64_t index, attn_dtype dtype,
                           int32_t rank, const int64_t *dims, void *data,
                           size_t nbytes) {
  if (!call || index < 0 || index >= call->entry->numArgs)
    return fail(ATTN_ERROR_ARGUMENT, "attn_call_bind: no argument %lld%s%s",
                (long long)index, call ? " of " : "",
                call ? call->entry->name : " (call is NULL)");
  const Arg *a = &call->entry->args[index];
  Binding *b = &call->bindings[index];
  const char *entry = call->entry->name;
  if ((unsigned)dtype >= NUM_DTYPES)
    return fail(ATTN_ERROR_DTYPE,
                "%s argument %.100s takes %s, not dtype "
                "value %d",
                entry, a->name, kDtypes[a->dtype].name, (int)dtype);
  if (dtype != a->dtype)
    return fail(ATTN_ERROR_DTYPE, "%s argument %.100s takes %s, not %s", entry,
                a->name, kDtypes[a->dtype].name, kDtypes[dtype].name);
  char want[MAX_RANK * 24], got[MAX_RANK * 24];
  formatDims(want, sizeof(want), a->dims, a->rank);
  if (rank != a->rank || (rank && !dims))
    return fail(ATTN_ERROR_SHAPE,
                "%s argument %.100s takes rank %d %s, not "
                "rank %d",
                entry, a->name, a->rank, want, rank);
  formatDims(got, sizeof(got), dims, rank);
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0 || (a->dims[i] >= 0 && dims[i] != a->dims[i]))
      return fail(ATTN_ERROR_SHAPE, "%s argument %.100s takes %s, not %s",
                  entry, a->name, want, got);
    if (dims[i] < a->dimMin[i] || dims[i] > a->dimMax[i])
      return fail(ATTN_ERROR_SHAPE,
                  "%s argument %.100s %s: dim %d (%s) must "
                  "lie in [%lld, %lld]",
                  entry, a->name, got, i, call->entry->symbols[a->symbol[i]],
                  (long long)a->dimMin[i], (long long)a->dimMax[i]);
  }
  size_t bytes;
  if (!byteSize(dims, rank, kDtypes[a->dtype].size, &bytes))
    return fail(ATTN_ERROR_SHAPE,
                "%s argument %.100s: %s %s has more than "
                "2^63 bytes",
                entry, a->name, kDtypes[a->dtype].name, got);
  if (bytes != nbytes)
    return fail(ATTN_ERROR_SHAPE,
                "%s argument %.100s: %s %s is %zu bytes, "
                "not the %zu given",
                entry, a->name, kDtypes[a->dtype].name, got, bytes, nbytes);
  if (!data && nbytes)
    return fail(ATTN_ERROR_ARGUMENT, "%s argument %.100s: data is NULL", entry,
                a->name);
  if (rank)
    memcpy(b->dims, dims, (size_t)rank * sizeof(int64_t));
  b->data = data;
  b->nbytes = nbytes;
  b->bound = 1;
  return ATTN_OK;
}

attn_status attn_call_bind_named(attn_call *call, const char *name,
                                 attn_dtype dtype, int32_t rank,
                                 const int64_t *dims, void *data,
                                 size_t nbytes) {
  if (!call)
    return fail(ATTN_ERROR_ARGUMENT, "attn_call_bind_named: call is NULL");
  int64_t index = attn_entry_arg_index(call->entry, name);
  if (index < 0)
    return ATTN_ERROR_ARGUMENT;
  return attn_call_bind(call, index, dtype, rank, dims, data, nbytes);
}

static int overlaps(const Binding *a, const Binding *b) {
  uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
  return a->nbytes && b->nbytes && a0 < b0 + b->nbytes && b0 < a0 + a->nbytes;
}

/* Copies the strided `rank`-d array at `src` (strides in elements) into
 * the dense `dst`. */
static void copyStrided(char *dst, const char *src, const int64_t *sizes,
                        const int64_t *strides, int32_t rank, size_t elem) {
  int64_t index[MAX_RANK] = {0};
  size_t count = 1;
  for (int32_t i = 0; i < rank; ++i)
    count *= (size_t)sizes[i];
  for (size_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int32_t i = 0; i < rank; ++i)
      offset += index[i] * strides[i];
    memcpy(dst + n * elem, src + offset * (int64_t)elem, elem);
    for (int32_t i = rank - 1; i >= 0; --i) {
      if (++index[i] < sizes[i])
        break;
      index[i] = 0;
    }
  }
}

static int ownedAlready(const attn_call *call, void *p) {
  for (int64_t i = 0; i < call->numOwned; ++i)
    if (call->owned[i] == p)
      return 1;
  return 0;
}

/* Output `i` from its result descriptor `d`: the library's buffer in place
 * where it allocated a dense one, else a dense copy (a constant, an
 * argument returned as it is, a strided view). */
static attn_status takeOutput(attn_call *call, const Binding *args, int64_t i,
                              const int64_t *d) {
  const attn_entry *e = call->entry;
  const Arg *r = &e->outputs[i];
  Output *out = &call->outputs[i];
  void *allocated = (void *)(uintptr_t)d[0];
  char *aligned = (char *)(uintptr_t)d[1];
  const int64_t *sizes = d + 3, *strides = d + 3 + r->rank;
  size_t elem = kDtypes[r->dtype].size, bytes;
  int owned = allocated && (uintptr_t)allocated != DEADBEEF;
  for (int64_t k = 0; owned && k < e->numArgs; ++k) {
    const Binding *b = &args[k];
    owned = !(b->nbytes && (uintptr_t)aligned >= (uintptr_t)b->data &&
              (uintptr_t)aligned < (uintptr_t)b->data + b->nbytes);
  }
  if (owned && !ownedAlready(call, allocated))
    call->owned[call->numOwned++] = allocated;
  for (int32_t k = 0; k < r->rank; ++k)
    if (sizes[k] < 0 || (r->dims[k] >= 0 && sizes[k] != r->dims[k]))
      return fail(ATTN_ERROR_PACKAGE,
                  "%s: output %lld has sizes its "
                  "manifest's type does not allow",
                  e->name, (long long)i);
  if (!byteSize(sizes, r->rank, elem, &bytes))
    return fail(ATTN_ERROR_PACKAGE, "%s: output %lld is too large", e->name,
                (long long)i);
  memcpy(out->dims, sizes, (size_t)r->rank * sizeof(int64_t));
  out->nbytes = bytes;
  out->data = NULL;
  if (!bytes)
    return ATTN_OK;
  int dense = d[2] == 0;
  int64_t expect = 1;
  for (int32_t k = r->rank - 1; k >= 0 && dense; --k) {
    dense = sizes[k] == 1 || strides[k] == expect;
    expect *= sizes[k];
  }
  if (owned && dense) {
    out->data = aligned;
    return ATTN_OK;
  }
  void *copy = malloc(bytes);
  if (!copy)
    return fail(ATTN_ERROR_MEMORY, "%s: out of memory copying output %lld",
                e->name, (long long)i);
  call->owned[call->numOwned++] = copy;
  copyStrided(copy, aligned + d[2] * (int64_t)elem, sizes, strides, r->rank,
              elem);
  out->data = copy;
  return ATTN_OK;
}

/* args[i] = the buffer of argument i (the call's binding, else the
   package's state), with the dims of one name agreeing across the
   arguments (values[sym], from[sym]: a dim's value and the argument it was
   first read from). */
static attn_status gatherArguments(const attn_call *call, Binding *args,
                                   int64_t *values, int64_t *from) {
  const attn_entry *e = call->entry;
  for (int64_t k = 0; k < e->numSymbols; ++k)
    values[k] = -1;
  for (int64_t i = 0; i < e->numArgs; ++i) {
    const Arg *a = &e->args[i];
    if (call->bindings[i].bound) {
      args[i] = call->bindings[i];
    } else if (a->state) {
      args[i].data = a->state;
      args[i].dims = a->dims;
      args[i].nbytes = a->nbytes;
    } else {
      return fail(ATTN_ERROR_UNBOUND,
                  "%s argument %.100s is not bound "
                  "(attn_call_bind)",
                  e->name, a->name);
    }
    for (int32_t k = 0; k < a->rank; ++k) {
      int64_t sym = a->symbol[k];
      if (sym < 0)
        continue;
      if (values[sym] < 0) {
        values[sym] = args[i].dims[k];
        from[sym] = i;
      } else if (values[sym] != args[i].dims[k]) {
        return fail(ATTN_ERROR_SHAPE,
                    "%s: dim %d of argument %.100s is %lld; "
                    "argument %.100s gives %s = %lld",
                    e->name, k, a->name, (long long)args[i].dims[k],
                    e->args[from[sym]].name, e->symbols[sym],
                    (long long)values[sym]);
      }
    }
  }
  /* A buffer written in place overlaps no other argument. */
  for (int64_t i = 0; i < e->numArgs; ++i)
    for (int64_t j = 0; e->args[i].written && j < e->numArgs; ++j)
      if (i != j && overlaps(&args[i], &args[j]))
        return fail(ATTN_ERROR_ARGUMENT,
                    "%s argument %.100s is written in place "
                    "and shares memory with argument %.100s",
                    e->name, e->args[i].name, e->args[j].name);
  return ATTN_OK;
}

/* Runs the entry on `args` through the packed calling convention:
   packed[i] -> pointers[i] -> descriptor i, the results' descriptors
   first (`resultWords` words of `descriptors`). */
static attn_status invokePacked(const attn_entry *e, const Binding *args,
                                int64_t *descriptors, void **pointers,
                                void **packed, size_t resultWords) {
  attn_package *p = e->package;
  size_t at = resultWords;
  int64_t n = 0;
  if (e->numOutputs) {
    pointers[0] = descriptors;
    packed[n++] = &pointers[0];
  }
  for (int64_t i = 0; i < e->numArgs; ++i) {
    const Arg *a = &e->args[i];
    int64_t *d = descriptors + at;
    d[0] = d[1] = (int64_t)(uintptr_t)args[i].data;
    d[2] = 0;
    int64_t stride = 1;
    for (int32_t k = a->rank - 1; k >= 0; --k) {
      d[3 + k] = args[i].dims[k];
      d[3 + a->rank + k] = stride;
      stride *= args[i].dims[k] ? args[i].dims[k] : 1;
    }
    at += 3 + 2 * (size_t)a->rank;
    pointers[n] = d;
    packed[n] = &pointers[n];
    ++n;
  }
  char message[MESSAGE_SIZE];
  if (e->writesState)
    pthread_mutex_lock(&p->stateLock);
  int failed = p->callPacked(e->function, packed, message, sizeof(message));
  if (e->writesState)
    pthread_mutex_unlock(&p->stateLock);
  if (failed)
    return fail(ATTN_ERROR_CHECK, "%s: run-time check failed: %s", e->name,
                message);
  return ATTN_OK;
}

/* The call's outputs from the results' descriptors (none on failure). */
static attn_status collectOutputs(attn_call *call, const Binding *args,
                                  const int64_t *descriptors) {
  attn_status s = ATTN_OK;
  size_t at = 0;
  for (int64_t i = 0; i < call->entry->numOutputs; ++i) {
    attn_status t = takeOutput(call, args, i, descriptors + at);
    if (t != ATTN_OK && s == ATTN_OK)
      s = t;
    at += 3 + 2 * (size_t)call->entry->outputs[i].rank;
  }
  if (s != ATTN_OK)
    freeOutputs(call);
  else
    call->hasOutputs = 1;
  return s;
}

attn_status attn_call_run(attn_call *call) {
  if (!call)
    return fail(ATTN_ERROR_ARGUMENT, "attn_call_run: call is NULL");
  const attn_entry *e = call->entry;
  freeOutputs(call);
  /* Every argument's buffer: the call's, else the package's. */
  Binding *args = calloc((size_t)e->numArgs + 1, sizeof(Binding));
  int64_t *values = malloc(((size_t)e->numSymbols + 1) * sizeof(int64_t));
  int64_t *from = malloc(((size_t)e->numSymbols + 1) * sizeof(int64_t));
  size_t words = 0;
  for (int64_t i = 0; i < e->numOutputs; ++i)
    words += 3 + 2 * (size_t)e->outputs[i].rank;
  size_t resultWords = words;
  for (int64_t i = 0; i < e->numArgs; ++i)
    words += 3 + 2 * (size_t)e->args[i].rank;
  int64_t *descriptors = calloc(words + 1, sizeof(int64_t));
  void **pointers = calloc((size_t)e->numArgs + 2, sizeof(void *));
  void **packed = calloc((size_t)e->numArgs + 2, sizeof(void *));
  attn_status s = ATTN_OK;
  if (!args || !values || !from || !descriptors || !pointers || !packed)
    s = fail(ATTN_ERROR_MEMORY, "out of memory");
  if (s == ATTN_OK)
    s = gatherArguments(call, args, values, from);
  if (s == ATTN_OK)
    s = invokePacked(e, args, descriptors, pointers, packed, resultWords);
  if (s == ATTN_OK)
    s = collectOutputs(call, args, descriptors);
  free(args);
  free(values);
  free(from);
  free(descriptors);
  free(pointers);
  free(packed);
  return s;
}

attn_status attn_call_output(const attn_call *call, int64_t index,
                             attn_tensor *output) {
  if (!call || !output || index < 0 || index >= call->entry->numOutputs)
    return fail(ATTN_ERROR_ARGUMENT, "attn_call_output: no output %lld%s%s",
                (long long)index, call ? " of " : "",
                call ? call->entry->name : " (call is NULL)");
  if (!call->hasOutputs)
    return fail(ATTN_ERROR_STATE,
                "attn_call_output: %s has not run "
                "(attn_call_run) since its last failure or creation",
                call->entry->name);
  const Arg *r = &call->entry->outputs[index];
  const Output *o = &call->outputs[index];
  output->dtype = r->dtype;
  output->rank = r->rank;
  output->dims = o->dims;
  output->data = o->data;
  output->nbytes = o->nbytes;
  return ATTN_OK;
}
