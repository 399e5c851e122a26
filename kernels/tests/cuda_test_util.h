// What the GPU test and the benchmark both need from the CUDA runtime: a
// check that exits on a failed call, and the probe that skips without a GPU.
#ifndef ATTN_KERNELS_TESTS_CUDA_TEST_UTIL_H
#define ATTN_KERNELS_TESTS_CUDA_TEST_UTIL_H

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_OK(expr)                                                          \
  do {                                                                         \
    cudaError_t e__ = (expr);                                                  \
    if (e__ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n",                     \
                   cudaGetErrorString(e__), __FILE__, __LINE__, #expr);        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace attn_test {

// Device 0's properties, or false after printing the SKIPPED line when there
// is no device (the callers then exit 77, ctest's SKIP_RETURN_CODE).
inline bool probe_cuda_device(cudaDeviceProp* prop) {
  int ndev = 0;
  const cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return false;
  }
  CUDA_OK(cudaGetDeviceProperties(prop, 0));
  return true;
}

} // namespace attn_test

#endif // ATTN_KERNELS_TESTS_CUDA_TEST_UTIL_H
