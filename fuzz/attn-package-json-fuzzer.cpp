//===- attn-package-json-fuzzer.cpp - fuzz the package manifest reader ----===//
//
// Each input is a manifest.json for attnJsonParse (lib/Package/Json.c,
// compiled into this target with the sanitizers), the strict reader of
// libAttnPackage. A rejected document is an expected result and must come
// with a message; an accepted one must be the tree Json.h describes:
// decoded strings without a NUL inside, objects whose keys are strings in
// strictly increasing byte order through `sorted` (no duplicates) and that
// attnJsonGet finds, integers equal to their double where a double holds
// them exactly, nesting within ATTN_JSON_MAX_DEPTH; and hashing its
// canonical form (as the manifest check does) runs, giving the same digest
// twice. Anything else aborts.
//
//===----------------------------------------------------------------------===//

extern "C" {
#include "Json.h"
}

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static void check(bool ok, const char *what) {
  if (ok)
    return;
  fprintf(stderr, "attn fuzz: %s\n", what);
  abort();
}

static int compareBytes(const AttnJson &a, const AttnJson &b) {
  size_t n = a.stringLen < b.stringLen ? a.stringLen : b.stringLen;
  int c = memcmp(a.string, b.string, n);
  if (c)
    return c;
  return a.stringLen < b.stringLen ? -1 : a.stringLen > b.stringLen;
}

static void checkValue(const AttnJson &v, int depth) {
  check(depth <= ATTN_JSON_MAX_DEPTH, "a value nested too deep");
  check(depth < ATTN_JSON_MAX_DEPTH ||
            (v.kind != ATTN_JSON_ARRAY && v.kind != ATTN_JSON_OBJECT),
        "more than ATTN_JSON_MAX_DEPTH nested arrays and objects");
  switch (v.kind) {
  case ATTN_JSON_NULL:
  case ATTN_JSON_BOOL:
    check(v.raw && v.rawLen > 0, "a scalar without its text");
    return;
  case ATTN_JSON_NUMBER:
    check(v.raw && v.rawLen > 0, "a number without its text");
    if (v.isInteger && v.integer > -(INT64_C(1) << 53) &&
        v.integer < (INT64_C(1) << 53))
      check(v.number == (double)v.integer,
            "an integer that differs from its double");
    return;
  case ATTN_JSON_STRING:
    check(v.string != nullptr, "a string without its text");
    check(strlen(v.string) == v.stringLen, "a NUL inside a decoded string");
    return;
  case ATTN_JSON_ARRAY:
    for (size_t i = 0; i < v.count; ++i)
      checkValue(v.items[i], depth + 1);
    return;
  case ATTN_JSON_OBJECT:
    for (size_t i = 0; i < v.count; ++i) {
      check(v.keys[i].kind == ATTN_JSON_STRING, "a key that is not a string");
      check(v.sorted[i] < v.count, "a sorted index out of range");
      if (i > 0)
        check(compareBytes(v.keys[v.sorted[i - 1]], v.keys[v.sorted[i]]) < 0,
              "keys not in strictly increasing order (or a duplicate)");
      checkValue(v.items[i], depth + 1);
      check(attnJsonGet(&v, v.keys[i].string) == &v.items[i],
            "attnJsonGet does not find a member");
    }
    return;
  }
  check(false, "a value of no kind");
}

static std::string digest(const AttnJson *value, const char *skipKey) {
  AttnSha256 ctx;
  attnSha256Init(&ctx);
  attnJsonHashCanonical(value, skipKey, &ctx);
  char hex[65];
  attnSha256FinishHex(&ctx, hex);
  return hex;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char error[256] = "";
  // A copy of exactly `size` bytes, so that reading past it is caught.
  char *text = static_cast<char *>(malloc(size ? size : 1));
  memcpy(text, data, size);
  AttnJson *value = attnJsonParse(text, size, error, sizeof(error));
  if (!value) {
    check(error[0] != '\0', "a rejected document without a message");
    free(text);
    return 0;
  }
  checkValue(*value, 0);
  check(digest(value, nullptr) == digest(value, nullptr),
        "the canonical digest changes between two runs");
  (void)digest(value, "signature");
  attnJsonFree(value);
  free(text);
  return 0;
}
