// attn_cuda_sdpa_fwd: validation (attn_prepare.cpp), device capability check,
// kernel selection and launch.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "attn_internal.h"
#include "fwd_params.h"
#include "launch.h"

namespace attn {
namespace detail {
namespace {

attn_status cuda_fail(cudaError_t e, const char* what, char* err, size_t err_len) {
  if (err && err_len > 0) std::snprintf(err, err_len, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
  return ATTN_ERR_CUDA;
}

// The kernels use mma.sync bf16 / cp.async / ldmatrix: sm_80 or newer.
// Cached per device (0 = unknown, 1 = ok, 2 = too old).
attn_status check_device(char* err, size_t err_len) {
  static std::atomic<unsigned char> state[64];
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return cuda_fail(e, "cudaGetDevice", err, err_len);
  if (dev >= 0 && dev < 64) {
    const unsigned char s = state[dev].load(std::memory_order_relaxed);
    if (s == 1) return ATTN_OK;
  }
  int major = 0, minor = 0;
  e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e != cudaSuccess) return cuda_fail(e, "cudaDeviceGetAttribute", err, err_len);
  e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (e != cudaSuccess) return cuda_fail(e, "cudaDeviceGetAttribute", err, err_len);
  if (major < 8) {
    if (err && err_len > 0) {
      std::snprintf(err, err_len, "device %d has compute capability %d.%d; the AttnFuse kernels need sm_80 or newer", dev,
                    major, minor);
    }
    return ATTN_ERR_UNSUPPORTED;
  }
  if (dev >= 0 && dev < 64) state[dev].store(1, std::memory_order_relaxed);
  return ATTN_OK;
}

template <bool kBF16>
cudaError_t launch_tc(const FwdParams& p, cudaStream_t stream, TcVariant v) {
  const bool has_mask = p.mask_kind != ATTN_MASK_NONE;
  if (p.E == 64) {
    return has_mask ? launch_flash_fwd<kBF16, 64, true>(p, stream, v) : launch_flash_fwd<kBF16, 64, false>(p, stream, v);
  }
  // prepare_fwd_params only selects the tensor-core path for E == Ev in {64, 128}.
  return has_mask ? launch_flash_fwd<kBF16, 128, true>(p, stream, v) : launch_flash_fwd<kBF16, 128, false>(p, stream, v);
}

std::atomic<int> g_tc_variant{static_cast<int>(TcVariant::Auto)};

// The default tile shape. M32 is the FA2-like shape (half the shared-memory
// traffic per flop of M16); both are tested. Not yet tuned on hardware: run
// scripts/gpu-check.sh, which benchmarks both, before changing it.
constexpr TcVariant kDefaultTcVariant = TcVariant::M32;

TcVariant env_tc_variant() {
  static const TcVariant v = [] {
    const char* s = std::getenv("ATTN_CUDA_TC_VARIANT");
    if (s && std::strcmp(s, "m16") == 0) return TcVariant::M16;
    if (s && std::strcmp(s, "m32") == 0) return TcVariant::M32;
    return TcVariant::Auto;
  }();
  return v;
}

}  // namespace

void set_tc_variant(TcVariant v) { g_tc_variant.store(static_cast<int>(v), std::memory_order_relaxed); }

TcVariant effective_tc_variant() {
  TcVariant v = static_cast<TcVariant>(g_tc_variant.load(std::memory_order_relaxed));
  if (v == TcVariant::Auto) v = env_tc_variant();
  if (v == TcVariant::Auto) v = kDefaultTcVariant;
  return v;
}

const char* tc_variant_name(TcVariant v) {
  switch (v) {
    case TcVariant::Auto:
      return "auto";
    case TcVariant::M16:
      return "m16";
    case TcVariant::M32:
      return "m32";
  }
  return "?";
}

}  // namespace detail
}  // namespace attn

namespace attn {
namespace detail {
namespace {

// The library's own kernels (no score modifier) for the path of `p`.
cudaError_t launch_library(const FwdParams& p, cudaStream_t stream, TcVariant v) {
  if (p.path == KernelPath::TensorCore) return p.is_bf16 ? launch_tc<true>(p, stream, v) : launch_tc<false>(p, stream, v);
  if (p.path == KernelPath::Decode) return launch_decode_fwd(p, stream);
  return launch_generic_fwd(p, stream);
}

const char* launch_what(const FwdParams& p) {
  if (p.path == KernelPath::TensorCore) return "flash_fwd_kernel launch";
  if (p.path == KernelPath::Decode) return "decode kernels launch";
  return "generic_fwd_kernel launch";
}

}  // namespace

attn_status sdpa_fwd_custom(const attn_sdpa_fwd_args* args, const attn_tensor4* mods, int n_mods, FwdLauncher launch,
                            char* err, size_t err_len) {
  FwdParams p;
  attn_status st = prepare_fwd_params(args, &p, err, err_len);
  if (st != ATTN_OK) return st;
  st = prepare_mod_tensors(mods, n_mods, &p, err, err_len);
  if (st != ATTN_OK) return st;

  const attn_status dst = check_device(err, err_len);
  if (dst != ATTN_OK) return dst;

  // Clear a stale, non-sticky error left by an unrelated earlier call so that
  // the post-launch check below reports our launch only.
  (void)cudaGetLastError();

  const cudaError_t e = launch(p, static_cast<cudaStream_t>(args->stream), effective_tc_variant());
  if (e != cudaSuccess) return cuda_fail(e, launch_what(p), err, err_len);
  return ATTN_OK;
}

}  // namespace detail
}  // namespace attn

extern "C" attn_status attn_cuda_sdpa_fwd(const attn_sdpa_fwd_args* args, char* err, size_t err_len) {
  return attn::detail::sdpa_fwd_custom(args, nullptr, 0, attn::detail::launch_library, err, err_len);
}
