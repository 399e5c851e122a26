// The kernel tests' check macro: counts passed and failed checks, prints
// each failure with its location and a printf-style message.
#ifndef ATTN_KERNELS_TESTS_TEST_CHECK_H
#define ATTN_KERNELS_TESTS_TEST_CHECK_H

#include <cstdio>

namespace attn_test {
inline int g_passed = 0, g_failed = 0;
} // namespace attn_test

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond) {                                                                \
      ++attn_test::g_passed;                                                   \
    } else {                                                                   \
      ++attn_test::g_failed;                                                   \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);              \
      std::printf(__VA_ARGS__);                                                \
      std::printf("\n");                                                       \
    }                                                                          \
  } while (0)

#endif // ATTN_KERNELS_TESTS_TEST_CHECK_H
