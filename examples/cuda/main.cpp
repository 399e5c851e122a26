// Calls attention compiled ahead of time for CUDA and checks it against a
// CPU reference in double.
//
//   attn-compile attention.mlir --target=cuda -o attention.so   # + attention.h
//   c++ -std=c++17 -I. -I/usr/local/cuda/include main.cpp ./attention.so
//       -L/usr/local/cuda/lib64 -lcudart -o example
//   ./example
//
// Where tensors live: the arguments are device pointers (cudaMalloc); the
// result comes back in CUDA managed memory, readable on the host after the
// call returns (the runtime waits for the kernel), freed with
// attnrt_cuda_free.
#include "attention.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {
constexpr int B = 2, L = 256, H = 8, E = 64;

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_));       \
      return 1;                                                                \
    }                                                                          \
  } while (0)

uint16_t toHalf(float f) {
  // Round to nearest even; inputs here are small normal numbers.
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp <= 0)
    return static_cast<uint16_t>(sign);
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    ++h;
  return static_cast<uint16_t>(h);
}

float fromHalf(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  int32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0)
    return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mant), -24);
  uint32_t x = sign | (static_cast<uint32_t>(exp - 15 + 127) << 23) |
               (mant << 13);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// A dense [B, L, H, E] descriptor over device memory.
attn_memref_f16_4d wrap(uint16_t *device) {
  return {device, device, 0, {B, L, H, E}, {L * H * E, H * E, E, 1}};
}
} // namespace

int main() {
  const size_t n = static_cast<size_t>(B) * L * H * E;
  std::vector<uint16_t> hq(n), hk(n), hv(n);
  for (size_t i = 0; i < n; ++i) {
    hq[i] = toHalf(std::sin(0.37f * i));
    hk[i] = toHalf(std::cos(0.11f * i + 1.0f));
    hv[i] = toHalf(std::sin(0.05f * i - 0.5f));
  }
  uint16_t *dq, *dk, *dv;
  CHECK_CUDA(cudaMalloc(&dq, n * 2));
  CHECK_CUDA(cudaMalloc(&dk, n * 2));
  CHECK_CUDA(cudaMalloc(&dv, n * 2));
  CHECK_CUDA(cudaMemcpy(dq, hq.data(), n * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dk, hk.data(), n * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dv, hv.data(), n * 2, cudaMemcpyHostToDevice));

  attn_memref_f16_4d q = wrap(dq), k = wrap(dk), v = wrap(dv), out;
  _mlir_ciface_causal_attention(&out, &q, &k, &v);

  // Reference: out[b, h, i, :] = softmax_j<=i(q_i . k_j / 8) . v_j.
  double maxErr = 0.0;
  auto at = [&](const std::vector<uint16_t> &x, int b, int l, int h, int e) {
    return static_cast<double>(fromHalf(x[((b * L + l) * H + h) * E + e]));
  };
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < L; ++i) {
        std::vector<double> s(i + 1);
        double m = -INFINITY, sum = 0.0;
        for (int j = 0; j <= i; ++j) {
          double d = 0.0;
          for (int e = 0; e < E; ++e)
            d += at(hq, b, i, h, e) * at(hk, b, j, h, e);
          s[j] = d / 8.0;
          m = std::fmax(m, s[j]);
        }
        for (int j = 0; j <= i; ++j)
          sum += s[j] = std::exp(s[j] - m);
        for (int e = 0; e < E; ++e) {
          double ref = 0.0;
          for (int j = 0; j <= i; ++j)
            ref += s[j] / sum * at(hv, b, j, h, e);
          long idx = out.offset + b * out.strides[0] + h * out.strides[1] +
                     i * out.strides[2] + e * out.strides[3];
          maxErr = std::fmax(maxErr, std::fabs(fromHalf(out.aligned[idx]) - ref));
        }
      }
  bool ok = maxErr < 2e-2;
  std::printf("max_abs_err=%.3g %s\n", maxErr, ok ? "ok" : "FAIL");
  attnrt_cuda_free(out.allocated);
  cudaFree(dq);
  cudaFree(dk);
  cudaFree(dv);
  return ok ? 0 : 1;
}
