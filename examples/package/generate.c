/* Greedy decoding from C with a generator package that Generator.save
 * wrote, without Python: the prompt's token ids on the command line, the
 * prompt and the new tokens on stdout (what generator.generate(ids,
 * max_new_tokens=N, do_sample=False) returns for one row).
 *
 *   cc -std=c11 -O2 -I include examples/package/generate.c \
 *      lib/Package/AttnPackage.c lib/Package/Json.c lib/Package/Sha256.c \
 *      -ldl -lpthread -o generate
 *   ./generate llama-pkg --max-new-tokens 12 5 17 42 9
 *
 * (or link the installed libAttnPackage: cc ... -lAttnPackage). The steps:
 * the KV cache is allocated here from the manifest's cache shapes (one row
 * instead of max_batch) and bound to both entry points, which write it in
 * place; `prefill` takes the whole prompt, then `decode_1` one token at a
 * time with the attention mask of every position so far; each new token is
 * the argmax of the last logits, until an end-of-sequence token of the
 * generation config or N tokens. */

#include "attn/Package/AttnPackage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EOS 16

static int report(const char *what) {
  fprintf(stderr, "generate: %s: %s\n", what, attn_package_last_error());
  return 1;
}

/* The index of the entry `name` in the manifest's `entries`. */
static int64_t entryIndex(const attn_package *pkg, const char *name) {
  for (int64_t i = 0; i < attn_package_num_entries(pkg); ++i)
    if (strcmp(attn_entry_name(attn_package_entry(pkg, i)), name) == 0)
      return i;
  return -1;
}

/* The argument index that `entries.<entry>.<list>.<j>` names. */
static int64_t manifestArg(const attn_package *pkg, int64_t entry,
                           const char *list, int64_t j) {
  char path[128];
  int64_t v = -1;
  snprintf(path, sizeof(path), "entries.%lld.%s.%lld", (long long)entry, list,
           (long long)j);
  return attn_package_manifest_int(pkg, path, &v) == ATTN_OK ? v : -1;
}

/* The end-of-sequence ids of the generation config (an id or a list). */
static int eosIds(const attn_package *pkg, int64_t *ids) {
  const char *path = "generator.generation_config.eos_token_id";
  int64_t n;
  if (attn_package_manifest_int(pkg, path, &ids[0]) == ATTN_OK)
    return 1;
  if (attn_package_manifest_length(pkg, path, &n) != ATTN_OK)
    return 0;
  int count = 0;
  for (int64_t i = 0; i < n && count < MAX_EOS; ++i) {
    char item[128];
    snprintf(item, sizeof(item), "%s.%lld", path, (long long)i);
    if (attn_package_manifest_int(pkg, item, &ids[count]) == ATTN_OK)
      ++count;
  }
  return count;
}

/* Binds the three token inputs of `call` (entry `entry`): ids and
 * positions [1, length], the mask [1, maskLength]. */
static attn_status bindTokens(const attn_package *pkg, int64_t entry,
                              attn_call *call, int64_t *ids, int64_t *mask,
                              int64_t *positions, int64_t length,
                              int64_t maskLength) {
  int64_t dims[2] = {1, length}, maskDims[2] = {1, maskLength};
  size_t bytes = (size_t)length * sizeof(int64_t);
  attn_status s = attn_call_bind(call, manifestArg(pkg, entry, "inputs", 0),
                                 ATTN_INT64, 2, dims, ids, bytes);
  if (s == ATTN_OK)
    s = attn_call_bind(call, manifestArg(pkg, entry, "inputs", 1), ATTN_INT64,
                       2, maskDims, mask, (size_t)maskLength * sizeof(int64_t));
  if (s == ATTN_OK)
    s = attn_call_bind(call, manifestArg(pkg, entry, "inputs", 2), ATTN_INT64,
                       2, dims, positions, bytes);
  return s;
}

/* The argmax of the last row of float32 logits (the first one of equal
 * maxima, as torch.argmax). */
static int64_t lastArgmax(const attn_tensor *logits) {
  int64_t vocab = logits->dims[logits->rank - 1];
  const float *row = (const float *)logits->data +
                     (int64_t)(logits->nbytes / sizeof(float)) - vocab;
  int64_t best = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (row[i] > row[best])
      best = i;
  return best;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PACKAGE [--max-new-tokens N] TOKEN...\n",
            argv[0]);
    return 2;
  }
  int64_t maxNew = 16;
  int first = 2;
  if (argc > 3 && strcmp(argv[2], "--max-new-tokens") == 0) {
    maxNew = atoll(argv[3]);
    first = 4;
  }
  attn_package *pkg;
  if (attn_package_open(argv[1], &pkg) != ATTN_OK)
    return report("cannot open the package");
  if (strcmp(attn_package_kind(pkg), "generator") != 0) {
    fprintf(stderr, "generate: %s is not a generator package\n", argv[1]);
    return 1;
  }
  int64_t cacheLen, layers, prompt = argc - first;
  if (attn_package_manifest_int(pkg, "generator.max_cache_len", &cacheLen) ||
      attn_package_manifest_length(pkg, "generator.cache", &layers))
    return report("the manifest");
  if (prompt < 1 || maxNew < 0 || prompt + maxNew > cacheLen) {
    fprintf(stderr,
            "generate: %lld prompt tokens + %lld new ones must fit "
            "the cache of %lld\n",
            (long long)prompt, (long long)maxNew, (long long)cacheLen);
    return 2;
  }
  int64_t total = prompt + maxNew;
  int64_t *ids = calloc((size_t)total, sizeof(int64_t));
  int64_t *mask = calloc((size_t)total, sizeof(int64_t));
  int64_t *positions = calloc((size_t)total, sizeof(int64_t));
  for (int64_t i = 0; i < total; ++i) {
    mask[i] = 1;
    positions[i] = i;
  }
  for (int64_t i = 0; i < prompt; ++i)
    ids[i] = atoll(argv[first + i]);
  int64_t eos[MAX_EOS];
  int numEos = eosIds(pkg, eos);

  /* The two steps: prefill (a prompt of at least 2 tokens), decode_1. */
  int64_t prefill = entryIndex(pkg, "prefill");
  int64_t decode = entryIndex(pkg, "decode_1");
  if (prefill < 0 || decode < 0) {
    fprintf(stderr, "generate: the package has no prefill or decode_1\n");
    return 1;
  }
  attn_call *prefillCall, *decodeCall;
  if (attn_call_create(attn_package_entry(pkg, prefill), &prefillCall) ||
      attn_call_create(attn_package_entry(pkg, decode), &decodeCall))
    return report("attn_call_create");

  /* The cache: keys then values of each layer, the manifest's shapes with
   * one row, zeroed, bound to both steps. */
  void **cache = calloc(2 * (size_t)layers, sizeof(void *));
  for (int64_t j = 0; j < 2 * layers; ++j) {
    char path[128];
    int64_t rank, dims[8];
    snprintf(path, sizeof(path), "generator.cache.%lld.%s",
             (long long)(j % layers), j < layers ? "keys" : "values");
    if (attn_package_manifest_length(pkg, path, &rank) || rank > 8)
      return report("the cache's shape");
    size_t elements = 1;
    for (int64_t d = 0; d < rank; ++d) {
      char dim[160];
      snprintf(dim, sizeof(dim), "%s.%lld", path, (long long)d);
      if (attn_package_manifest_int(pkg, dim, &dims[d]))
        return report("the cache's shape");
      dims[d] = d == 0 ? 1 : dims[d]; /* one row of max_batch */
      elements *= (size_t)dims[d];
    }
    attn_arg_info info;
    int64_t arg = manifestArg(pkg, prefill, "cache_args", j);
    if (attn_entry_arg(attn_package_entry(pkg, prefill), arg, &info))
      return report("the cache's argument");
    size_t bytes = elements * attn_dtype_size(info.dtype);
    cache[j] = calloc(1, bytes);
    if (attn_call_bind(prefillCall, arg, info.dtype, (int32_t)rank, dims,
                       cache[j], bytes) ||
        attn_call_bind(decodeCall, manifestArg(pkg, decode, "cache_args", j),
                       info.dtype, (int32_t)rank, dims, cache[j], bytes))
      return report("binding the cache");
  }

  /* Prefill (or, for a one-token prompt, a decode step on the empty
   * cache), then one decode step per new token. */
  attn_call *call = prompt >= 2 ? prefillCall : decodeCall;
  int64_t entry = prompt >= 2 ? prefill : decode;
  int64_t n = prompt;
  if (bindTokens(pkg, entry, call, ids, mask, positions, prompt, prompt) ||
      attn_call_run(call))
    return report(prompt >= 2 ? "prefill" : "decode");
  for (int64_t step = 0; step < maxNew; ++step) {
    attn_tensor logits;
    if (attn_call_output(call, 0, &logits))
      return report("the logits");
    if (logits.dtype != ATTN_FLOAT32) {
      fprintf(stderr, "generate: this example reads float32 logits\n");
      return 1;
    }
    ids[n++] = lastArgmax(&logits);
    int stop = 0;
    for (int e = 0; e < numEos; ++e)
      stop |= ids[n - 1] == eos[e];
    if (stop || step + 1 == maxNew)
      break;
    call = decodeCall;
    if (bindTokens(pkg, decode, call, ids + n - 1, mask, positions + n - 1, 1,
                   n) ||
        attn_call_run(call))
      return report("decode");
  }
  for (int64_t i = 0; i < n; ++i)
    printf("%s%lld", i ? " " : "", (long long)ids[i]);
  printf("\n");

  attn_call_free(prefillCall);
  attn_call_free(decodeCall);
  for (int64_t j = 0; j < 2 * layers; ++j)
    free(cache[j]);
  free(cache);
  free(ids);
  free(mask);
  free(positions);
  return attn_package_close(pkg) == ATTN_OK ? 0 : report("close");
}
