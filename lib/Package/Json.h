/*===- Json.h - the strict JSON reader of package manifests -----*- C -*-===*\
|*                                                                            *|
|* A package's manifest.json is written by Python's json module. This reader *|
|* takes RFC 8259 JSON (objects, arrays, strings, numbers, true, false,      *|
|* null) and the NaN, Infinity and -Infinity that Python writes for          *|
|* non-finite floats; nothing else: no comments, no trailing commas, no      *|
|* duplicate keys, no lone surrogates, no NUL in strings, at most            *|
|* ATTN_JSON_MAX_DEPTH nested arrays and objects. Every failure is a message *|
|* with the byte offset, never a crash.                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_PACKAGE_JSON_H
#define ATTN_PACKAGE_JSON_H

#include "Sha256.h"

#include <stddef.h>
#include <stdint.h>

#define ATTN_JSON_MAX_DEPTH 64

typedef enum {
  ATTN_JSON_NULL,
  ATTN_JSON_BOOL,
  ATTN_JSON_NUMBER,
  ATTN_JSON_STRING,
  ATTN_JSON_ARRAY,
  ATTN_JSON_OBJECT,
} AttnJsonKind;

typedef struct AttnJson AttnJson;
struct AttnJson {
  AttnJsonKind kind;
  /// The value's text in the document (scalars; a string with its quotes):
  /// the canonical form is written from it.
  const char *raw;
  size_t rawLen;
  int boolean;
  /// NUMBER: `integer` is valid when `isInteger` (no fraction or exponent,
  /// and within int64_t); `number` always.
  int isInteger;
  int64_t integer;
  double number;
  /// STRING: the decoded UTF-8 text, NUL-terminated.
  char *string;
  size_t stringLen;
  /// ARRAY: `count` elements in `items`. OBJECT: `count` members, keys in
  /// `keys` (STRINGs) and values in `items`, in document order; `sorted`
  /// lists their indices in key order (bytes of the UTF-8 keys, which is
  /// code point order, as Python's sort_keys).
  size_t count;
  AttnJson *items;
  AttnJson *keys;
  size_t *sorted;
};

/// Parses `size` bytes of `text` (which must outlive the result: `raw`
/// points into it). Returns NULL with a message in `error` on malformed
/// input or when out of memory.
AttnJson *attnJsonParse(const char *text, size_t size, char *error,
                        size_t errorSize);
void attnJsonFree(AttnJson *value);

/// The member `key` of an object, or NULL (also when `object` is NULL or
/// not an object).
const AttnJson *attnJsonGet(const AttnJson *object, const char *key);

/// Feeds the canonical text of `value` to `ctx`, as Python's
/// json.dumps(value, sort_keys=True, separators=(",", ":"),
/// ensure_ascii=True) writes it when the document was written by
/// json.dumps with ensure_ascii: keys sorted, no white space, every scalar
/// as its own text. `skipKey`, when not NULL, is a member of the outermost
/// object left out. A document whose scalars are written otherwise (an
/// escape Python would not write, a float not in repr's form) hashes to
/// something else: edited by hand, and refused.
void attnJsonHashCanonical(const AttnJson *value, const char *skipKey,
                           AttnSha256 *ctx);

#endif /* ATTN_PACKAGE_JSON_H */
