//===- attn-runtime-fuzzer.cpp - fuzz the C runtime's descriptor checks ---===//
//
// attnrt_check_argument (lib/Runtime/Checks.c, compiled into this target
// with the sanitizers) on descriptors built from the input: rank, element
// size, static sizes, sizes, strides, offset and a null or real aligned
// pointer. A rejection reaches the check-failure handler, which longjmps
// back; a descriptor it accepts must be what the contract says compiled
// code can read (include/attn/Runtime/AttnRuntime.h): static sizes as
// typed, sizes >= 0, a byte size below 2^63, and unless empty a non-null
// pointer, offset 0 and row-major strides. The trace API gets the same
// bytes as span ids and names.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/AttnRuntime.h"

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static jmp_buf gJump;

static void onCheckFailure(const char *message) {
  if (!message || !*message) {
    fprintf(stderr, "attn fuzz: a check failed without a message\n");
    abort();
  }
  longjmp(gJump, 1);
}

namespace {
/// Reads the input as a stream of values; past its end, zeros.
struct Reader {
  const uint8_t *data;
  size_t size, pos = 0;

  uint8_t byte() { return pos < size ? data[pos++] : 0; }
  int64_t word() {
    // Mostly small sizes and strides, sometimes anything.
    uint8_t kind = byte();
    if (kind < 200)
      return static_cast<int64_t>(byte() % 9) - (kind < 10 ? 1 : 0);
    int64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v = static_cast<int64_t>(static_cast<uint64_t>(v) << 8 | byte());
    return v;
  }
};
} // namespace

static void fail(const char *what) {
  fprintf(stderr, "attn fuzz: attnrt_check_argument accepted %s\n", what);
  abort();
}

/// The contract of an accepted descriptor.
static void checkAccepted(const int64_t *desc, int64_t rank,
                          int64_t elementBytes, const int64_t *staticSizes) {
  const int64_t *sizes = ATTNRT_MEMREF_SIZES(desc);
  const int64_t *strides = ATTNRT_MEMREF_STRIDES(desc, rank);
  __int128 bytes = elementBytes;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0)
      fail("a negative size");
    if (staticSizes[d] >= 0 && sizes[d] != staticSizes[d])
      fail("a size that contradicts the static size");
    bytes *= sizes[d];
    if (bytes > INT64_MAX)
      fail("more than 2^63 - 1 bytes");
  }
  if (bytes == 0)
    return;
  if (!ATTNRT_MEMREF_ALIGNED(desc))
    fail("a null pointer");
  if (ATTNRT_MEMREF_OFFSET(desc) != 0)
    fail("a non-zero offset");
  int64_t dense = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != dense)
      fail("strides that are not row-major");
    dense *= sizes[d];
  }
}

static void fuzzTrace(Reader &in) {
  attnrt_trace_reset();
  attnrt_trace_enable(1);
  for (int i = 0, n = in.byte() % 16; i < n; ++i) {
    int64_t id = in.word();
    (in.byte() & 1) ? attnrt_trace_begin(id) : attnrt_trace_end(id);
  }
  attnrt_trace_enable(0);
  std::vector<std::string> names(in.byte() % 4);
  std::vector<const char *> pointers;
  for (std::string &name : names) {
    for (int i = 0, n = in.byte() % 8; i < n; ++i)
      name.push_back(static_cast<char>(in.byte() | 1));
    pointers.push_back(name.c_str());
  }
  if (attnrt_trace_write_json("/dev/null", pointers.data(),
                              static_cast<int64_t>(pointers.size())) != 0) {
    fprintf(stderr, "attn fuzz: writing a trace to /dev/null failed\n");
    abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const bool installed =
      (attnrt_set_check_failure_handler(onCheckFailure), true);
  (void)installed;
  Reader in{data, size};
  int64_t rank = in.byte() % 9;
  const int64_t byteSizes[] = {1, 2, 4, 8, 3, 16};
  int64_t elementBytes = byteSizes[in.byte() % 6];
  std::vector<int64_t> staticSizes(rank), desc(3 + 2 * rank);
  for (int64_t &s : staticSizes)
    s = (in.byte() & 1) ? -1 : in.word();
  static char buffer[64];
  desc[0] = desc[1] = (in.byte() & 7) ? reinterpret_cast<intptr_t>(buffer) : 0;
  desc[2] = (in.byte() & 7) ? 0 : in.word();
  for (int64_t d = 0; d < 2 * rank; ++d)
    desc[3 + d] = in.word();
  // Accepted when the handler was not called: volatile survives longjmp.
  volatile bool rejected = false;
  if (setjmp(gJump))
    rejected = true;
  else
    attnrt_check_argument(desc.data(), rank, elementBytes, staticSizes.data(),
                          "fuzzed argument");
  if (!rejected)
    checkAccepted(desc.data(), rank, elementBytes, staticSizes.data());
  fuzzTrace(in);
  return 0;
}
