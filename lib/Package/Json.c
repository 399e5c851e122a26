/*===- Json.c - the strict JSON reader of package manifests ---------------===*\
|*                                                                            *|
|* Recursive descent over a bounded depth; each array and object grows its   *|
|* children with realloc. Scalars keep a pointer to their text, from which   *|
|* the canonical form (for the manifest's checksum) is written.              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "Json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *text;
  size_t size;
  size_t pos;
  char *error;
  size_t errorSize;
  int failed;
} Parser;

static int fail(Parser *p, const char *format, ...) {
  if (p->failed)
    return 0;
  p->failed = 1;
  int n = snprintf(p->error, p->errorSize, "at byte %zu: ", p->pos);
  if (n >= 0 && (size_t)n < p->errorSize) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(p->error + n, p->errorSize - (size_t)n, format, ap);
    va_end(ap);
  }
  return 0;
}

static void skipSpace(Parser *p) {
  while (p->pos < p->size &&
         (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
          p->text[p->pos] == '\n' || p->text[p->pos] == '\r'))
    ++p->pos;
}

static int startsWith(Parser *p, const char *word) {
  size_t n = strlen(word);
  return p->size - p->pos >= n && memcmp(p->text + p->pos, word, n) == 0;
}

static void freeChildren(AttnJson *v) {
  if (v->kind == ATTN_JSON_STRING)
    free(v->string);
  if (v->kind != ATTN_JSON_ARRAY && v->kind != ATTN_JSON_OBJECT)
    return;
  for (size_t i = 0; i < v->count; ++i) {
    freeChildren(&v->items[i]);
    if (v->kind == ATTN_JSON_OBJECT)
      freeChildren(&v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->sorted);
}

static int parseValue(Parser *p, AttnJson *out, int depth);

static int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* The four hex digits after "\u" at p->pos, or -1. */
static long readHex4(Parser *p) {
  if (p->size - p->pos < 4)
    return -1;
  long v = 0;
  for (int i = 0; i < 4; ++i) {
    int d = hexDigit(p->text[p->pos + (size_t)i]);
    if (d < 0)
      return -1;
    v = v * 16 + d;
  }
  p->pos += 4;
  return v;
}

static size_t putUtf8(char *out, unsigned long cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

static int parseString(Parser *p, AttnJson *out) {
  size_t start = p->pos++; /* the opening quote */
  /* The decoded text is never longer than the escaped one. */
  size_t end = start + 1;
  while (end < p->size && p->text[end] != '"')
    end += p->text[end] == '\\' ? 2 : 1;
  if (end >= p->size)
    return fail(p, "unterminated string");
  char *buf = malloc(end - start);
  if (!buf)
    return fail(p, "out of memory");
  size_t len = 0;
  while (p->text[p->pos] != '"') {
    unsigned char c = (unsigned char)p->text[p->pos];
    if (c < 0x20) {
      free(buf);
      return fail(p, "control character in a string");
    }
    if (c != '\\') {
      buf[len++] = (char)c;
      ++p->pos;
      continue;
    }
    char e = p->text[++p->pos];
    ++p->pos;
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      static const char kDecoded[] = "\"\\/\b\f\n\r\t";
      buf[len++] = kDecoded[simple - "\"\\/bfnrt"];
      continue;
    }
    long cp = e == 'u' ? readHex4(p) : -1;
    if (cp >= 0xD800 && cp < 0xDC00 && startsWith(p, "\\u")) {
      p->pos += 2;
      long low = readHex4(p);
      cp = low >= 0xDC00 && low < 0xE000
               ? 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
               : -1;
    } else if (cp >= 0xD800 && cp < 0xE000) {
      cp = -1;
    }
    if (cp <= 0) {
      free(buf);
      return fail(p, cp == 0 ? "NUL in a string"
                             : "invalid escape or lone surrogate in a string");
    }
    len += putUtf8(buf + len, (unsigned long)cp);
  }
  ++p->pos; /* the closing quote */
  buf[len] = '\0';
  out->kind = ATTN_JSON_STRING;
  out->raw = p->text + start;
  out->rawLen = p->pos - start;
  out->string = buf;
  out->stringLen = len;
  return 1;
}

static int isDigit(Parser *p) {
  return p->pos < p->size && p->text[p->pos] >= '0' && p->text[p->pos] <= '9';
}

static int parseNumber(Parser *p, AttnJson *out) {
  size_t start = p->pos;
  out->kind = ATTN_JSON_NUMBER;
  if (startsWith(p, "-"))
    ++p->pos;
  if (startsWith(p, "Infinity") || startsWith(p, "NaN")) {
    int nan = p->text[p->pos] == 'N';
    if (nan && p->pos != start)
      return fail(p, "invalid number");
    p->pos += nan ? 3 : 8;
    out->number = nan                   ? __builtin_nan("")
                  : p->pos - start == 9 ? -__builtin_inf()
                                        : __builtin_inf();
    out->raw = p->text + start;
    out->rawLen = p->pos - start;
    return 1;
  }
  if (!isDigit(p))
    return fail(p, "invalid number");
  if (p->text[p->pos] == '0')
    ++p->pos;
  else
    while (isDigit(p))
      ++p->pos;
  int integer = 1;
  if (startsWith(p, ".")) {
    ++p->pos;
    integer = 0;
    if (!isDigit(p))
      return fail(p, "invalid number");
    while (isDigit(p))
      ++p->pos;
  }
  if (startsWith(p, "e") || startsWith(p, "E")) {
    ++p->pos;
    integer = 0;
    if (startsWith(p, "+") || startsWith(p, "-"))
      ++p->pos;
    if (!isDigit(p))
      return fail(p, "invalid number");
    while (isDigit(p))
      ++p->pos;
  }
  size_t len = p->pos - start;
  char buf[400];
  if (len >= sizeof(buf))
    return fail(p, "number of more than %zu characters", sizeof(buf) - 1);
  memcpy(buf, p->text + start, len);
  buf[len] = '\0';
  out->number = strtod(buf, NULL);
  out->raw = p->text + start;
  out->rawLen = len;
  if (integer) {
    int negative = buf[0] == '-';
    uint64_t v = 0, limit = negative ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
    int fits = 1;
    for (const char *d = buf + negative; *d && fits; ++d) {
      unsigned digit = (unsigned)(*d - '0');
      if (v > (limit - digit) / 10)
        fits = 0;
      else
        v = v * 10 + digit;
    }
    out->isInteger = fits;
    out->integer = negative ? (int64_t)(0 - v) : (int64_t)v;
  }
  return 1;
}

/* Grows `*items` (and `*keys`) to hold `count + 1` children. */
static int reserve(Parser *p, AttnJson *v, size_t *capacity) {
  if (v->count < *capacity)
    return 1;
  size_t grown = *capacity ? *capacity * 2 : 4;
  AttnJson *items = realloc(v->items, grown * sizeof(AttnJson));
  if (!items)
    return fail(p, "out of memory");
  v->items = items;
  if (v->kind == ATTN_JSON_OBJECT) {
    AttnJson *keys = realloc(v->keys, grown * sizeof(AttnJson));
    if (!keys)
      return fail(p, "out of memory");
    v->keys = keys;
  }
  *capacity = grown;
  return 1;
}

/* Byte order of two strings (UTF-8: code point order). */
static int compareBytes(const char *a, size_t aLen, const char *b,
                        size_t bLen) {
  int c = memcmp(a, b, aLen < bLen ? aLen : bLen);
  if (c)
    return c;
  return aLen < bLen ? -1 : aLen > bLen;
}

/* Byte order of two decoded keys. */
static int compareKeys(const AttnJson *a, const AttnJson *b) {
  return compareBytes(a->string, a->stringLen, b->string, b->stringLen);
}

/* Sorts an object's keys (its `sorted` index) and refuses duplicates. */
static int sortKeys(Parser *p, AttnJson *v) {
  v->sorted = malloc((v->count ? v->count : 1) * sizeof(size_t));
  if (!v->sorted)
    return fail(p, "out of memory");
  for (size_t i = 0; i < v->count; ++i)
    v->sorted[i] = i;
  /* A bottom-up merge sort (qsort takes no context): `tensors` of a large
   * model has thousands of keys. */
  size_t n = v->count;
  size_t *tmp = malloc((n ? n : 1) * sizeof(size_t));
  if (!tmp)
    return fail(p, "out of memory");
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] =
            compareKeys(&v->keys[v->sorted[j]], &v->keys[v->sorted[i]]) < 0
                ? v->sorted[j++]
                : v->sorted[i++];
      while (i < mid)
        tmp[k++] = v->sorted[i++];
      while (j < hi)
        tmp[k++] = v->sorted[j++];
    }
    memcpy(v->sorted, tmp, n * sizeof(size_t));
  }
  free(tmp);
  for (size_t i = 1; i < n; ++i)
    if (compareKeys(&v->keys[v->sorted[i - 1]], &v->keys[v->sorted[i]]) == 0)
      return fail(p, "duplicate key \"%.60s\"", v->keys[v->sorted[i]].string);
  return 1;
}

static int parseContainer(Parser *p, AttnJson *out, int depth) {
  int object = p->text[p->pos] == '{';
  char close = object ? '}' : ']';
  out->kind = object ? ATTN_JSON_OBJECT : ATTN_JSON_ARRAY;
  if (depth >= ATTN_JSON_MAX_DEPTH)
    return fail(p, "nested deeper than %d", ATTN_JSON_MAX_DEPTH);
  ++p->pos;
  size_t capacity = 0;
  skipSpace(p);
  if (p->pos < p->size && p->text[p->pos] == close) {
    ++p->pos;
    return object ? sortKeys(p, out) : 1;
  }
  for (;;) {
    if (!reserve(p, out, &capacity))
      return 0;
    AttnJson *item = &out->items[out->count];
    memset(item, 0, sizeof(*item));
    if (object) {
      AttnJson *key = &out->keys[out->count];
      memset(key, 0, sizeof(*key));
      skipSpace(p);
      if (p->pos >= p->size || p->text[p->pos] != '"')
        return fail(p, "expected a string key");
      if (!parseString(p, key))
        return 0;
      ++out->count; /* freed with its value from here on */
      skipSpace(p);
      if (!startsWith(p, ":"))
        return fail(p, "expected ':'");
      ++p->pos;
    } else {
      ++out->count;
    }
    if (!parseValue(p, item, depth + 1))
      return 0;
    skipSpace(p);
    if (p->pos < p->size && p->text[p->pos] == ',') {
      ++p->pos;
      continue;
    }
    if (p->pos < p->size && p->text[p->pos] == close) {
      ++p->pos;
      return object ? sortKeys(p, out) : 1;
    }
    return fail(p, "expected ',' or '%c'", close);
  }
}

static int parseValue(Parser *p, AttnJson *out, int depth) {
  skipSpace(p);
  if (p->pos >= p->size)
    return fail(p, "unexpected end of the document");
  char c = p->text[p->pos];
  if (c == '{' || c == '[')
    return parseContainer(p, out, depth);
  if (c == '"')
    return parseString(p, out);
  static const char *const kWords[] = {"null", "true", "false"};
  for (int i = 0; i < 3; ++i) {
    if (startsWith(p, kWords[i])) {
      out->kind = i ? ATTN_JSON_BOOL : ATTN_JSON_NULL;
      out->boolean = i == 1;
      out->raw = p->text + p->pos;
      out->rawLen = strlen(kWords[i]);
      p->pos += out->rawLen;
      return 1;
    }
  }
  if (c == '-' || c == 'N' || c == 'I' || (c >= '0' && c <= '9'))
    return parseNumber(p, out);
  return fail(p, "unexpected character 0x%02x", (unsigned char)c);
}

AttnJson *attnJsonParse(const char *text, size_t size, char *error,
                        size_t errorSize) {
  Parser p = {text, size, 0, error, errorSize, 0};
  if (errorSize)
    error[0] = '\0';
  AttnJson *root = calloc(1, sizeof(AttnJson));
  if (!root) {
    fail(&p, "out of memory");
    return NULL;
  }
  if (parseValue(&p, root, 0)) {
    skipSpace(&p);
    if (p.pos == p.size)
      return root;
    fail(&p, "text after the document");
  }
  attnJsonFree(root);
  return NULL;
}

void attnJsonFree(AttnJson *value) {
  if (!value)
    return;
  freeChildren(value);
  free(value);
}

const AttnJson *attnJsonGet(const AttnJson *object, const char *key) {
  if (!object || object->kind != ATTN_JSON_OBJECT)
    return NULL;
  size_t keyLen = strlen(key), lo = 0, hi = object->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const AttnJson *k = &object->keys[object->sorted[mid]];
    int c = compareBytes(k->string, k->stringLen, key, keyLen);
    if (c == 0)
      return &object->items[object->sorted[mid]];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

void attnJsonHashCanonical(const AttnJson *value, const char *skipKey,
                           AttnSha256 *ctx) {
  if (value->kind == ATTN_JSON_ARRAY) {
    attnSha256Update(ctx, "[", 1);
    for (size_t i = 0; i < value->count; ++i) {
      if (i)
        attnSha256Update(ctx, ",", 1);
      attnJsonHashCanonical(&value->items[i], NULL, ctx);
    }
    attnSha256Update(ctx, "]", 1);
    return;
  }
  if (value->kind != ATTN_JSON_OBJECT) {
    attnSha256Update(ctx, value->raw, value->rawLen);
    return;
  }
  attnSha256Update(ctx, "{", 1);
  int first = 1;
  for (size_t i = 0; i < value->count; ++i) {
    size_t k = value->sorted[i];
    if (skipKey && strcmp(value->keys[k].string, skipKey) == 0)
      continue;
    if (!first)
      attnSha256Update(ctx, ",", 1);
    first = 0;
    attnSha256Update(ctx, value->keys[k].raw, value->keys[k].rawLen);
    attnSha256Update(ctx, ":", 1);
    attnJsonHashCanonical(&value->items[k], NULL, ctx);
  }
  attnSha256Update(ctx, "}", 1);
}
