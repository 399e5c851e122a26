/*===- Sha256.h - SHA-256 for checking a package's files ---------*- C -*-===*\
|*                                                                            *|
|* FIPS 180-4 SHA-256, streaming: the package reader hashes its files and    *|
|* the manifest's canonical text with it (no dependency on a crypto library).*|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_PACKAGE_SHA256_H
#define ATTN_PACKAGE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t state[8];
  uint64_t length; /* bytes hashed so far */
  unsigned char block[64];
  size_t used; /* bytes of `block` filled */
} AttnSha256;

void attnSha256Init(AttnSha256 *ctx);
void attnSha256Update(AttnSha256 *ctx, const void *data, size_t size);
/// Writes the digest as 64 lowercase hex digits and a NUL into `hex`.
void attnSha256FinishHex(AttnSha256 *ctx, char hex[65]);

#endif /* ATTN_PACKAGE_SHA256_H */
