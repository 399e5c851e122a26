// GPU correctness test of attn_cuda_sdpa_fwd against the double-precision CPU
// reference of the attn.sdpa contract (tests/sdpa_testlib.h): f16/bf16, head
// dims 64/128 (tensor cores) and 32/80/256/64x32 (generic kernel),
// causal/non-causal, bool/additive masks with broadcasting and fully masked
// rows (-inf and finite masked_value), L != S, lengths that are not tile
// multiples, GQA/MQA, strided layouts, LSE.
//
// Exit codes: 0 all passed, 1 failure, 77 no CUDA device (ctest SKIP_RETURN_CODE).
// Options: --filter SUBSTR, --verbose
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attn/kernels/attn_cuda.h"
#include "attn_internal.h"
#include "cuda_test_util.h"
#include "sdpa_testlib.h"

#include "test_check.h"

namespace {

using attn_test::g_failed;
using attn_test::g_passed;

template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  CUDA_OK(cudaMalloc(&d, std::max<size_t>(h.size(), 1) * sizeof(T)));
  if (!h.empty()) CUDA_OK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// `p` holds the inputs, the sentinel-filled outputs and the reference.
bool run_case(sdpa_test::Problem p, cudaStream_t stream, bool verbose, const char* variant) {
  using namespace sdpa_test;
  const Case& c = p.c;

  uint16_t* dq = to_device(p.q.data);
  uint16_t* dk = to_device(p.k.data);
  uint16_t* dv = to_device(p.v.data);
  uint16_t* dout = to_device(p.out.data);  // sentinel-filled
  void* dmask = nullptr;
  if (c.mask_kind == ATTN_MASK_BOOL) dmask = to_device(p.mask.bytes);
  if (c.mask_kind == ATTN_MASK_ADDITIVE) dmask = to_device(p.mask.data);
  float* dlse = c.lse ? to_device(p.lse) : nullptr;

  attn_sdpa_fwd_args args = make_args(p, dq, dk, dv, dout, dmask, dlse, stream);
  // Sequence lengths, in the case's integer type, on the device.
  void* dqlen = nullptr;
  void* dkvlen = nullptr;
  if (!c.q_lens.empty()) dqlen = c.len_i64 ? static_cast<void*>(to_device(p.q_len64)) : to_device(p.q_len32);
  if (!c.kv_lens.empty()) dkvlen = c.len_i64 ? static_cast<void*>(to_device(p.kv_len64)) : to_device(p.kv_len32);
  set_length_args(p, dqlen, dkvlen, &args);
  // The workspace that lets decode shapes split their keys (as the runtime bridge gives).
  void* dws = nullptr;
  const size_t ws_bytes = c.workspace ? attn_cuda_sdpa_fwd_workspace_size(&args) : 0;
  if (ws_bytes > 0) {
    CUDA_OK(cudaMalloc(&dws, ws_bytes));
    args.workspace = dws;
    args.workspace_bytes = ws_bytes;
  }
  char err[512];
  const attn_status st = attn_cuda_sdpa_fwd(&args, err, sizeof(err));
  CHECK(st == ATTN_OK, "%s: attn_cuda_sdpa_fwd returned %s: %s", c.name.c_str(), attn_status_string(st), err);
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaMemcpy(p.out.data.data(), dout, p.out.data.size() * 2, cudaMemcpyDeviceToHost));
  if (c.lse) CUDA_OK(cudaMemcpy(p.lse.data(), dlse, p.lse.size() * 4, cudaMemcpyDeviceToHost));

  const CompareResult r = compare(p);
  // Determinism: a second run gives bit-identical output.
  bool deterministic = true;
  if (r.ok) {
    std::vector<uint16_t> first = p.out.data;
    CHECK(attn_cuda_sdpa_fwd(&args, err, sizeof(err)) == ATTN_OK, "%s: second run: %s", c.name.c_str(), err);
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(p.out.data.data(), dout, p.out.data.size() * 2, cudaMemcpyDeviceToHost));
    deterministic = std::memcmp(first.data(), p.out.data.data(), first.size() * 2) == 0;
    CHECK(deterministic, "%s: second run differs", c.name.c_str());
  }
  if (verbose || !r.ok) {
    std::printf("%s %s [%s] max_err=%.2e nan_rows=%lld%s%s\n", r.ok ? "ok  " : "FAIL", describe(c).c_str(), variant, r.max_err,
                static_cast<long long>(r.n_nan_rows), r.ok ? "" : "\n     first mismatch: ", r.ok ? "" : r.first_bad.c_str());
  }
  CHECK(r.ok, "%s [%s]: %lld mismatches", describe(c).c_str(), variant, static_cast<long long>(r.n_bad));

  cudaFree(dq);
  cudaFree(dk);
  cudaFree(dv);
  cudaFree(dout);
  if (dmask) cudaFree(dmask);
  if (dlse) cudaFree(dlse);
  if (dws) cudaFree(dws);
  if (dqlen) cudaFree(dqlen);
  if (dkvlen) cudaFree(dkvlen);
  return r.ok && deterministic;
}

// Device-side error paths that validation cannot see.
void test_runtime_errors() {
  // Validation errors on a real device still come back without a launch.
  sdpa_test::Case c;
  c.E = c.Ev = 64;
  c.L = c.S = 8;
  sdpa_test::Problem p = sdpa_test::make_problem(c);
  uint16_t* dq = to_device(p.q.data);
  attn_sdpa_fwd_args a = sdpa_test::make_args(p, dq, dq, dq, reinterpret_cast<char*>(dq) + 2, nullptr, nullptr, nullptr);
  char err[256];
  CHECK(attn_cuda_sdpa_fwd(&a, err, sizeof(err)) == ATTN_ERR_UNSUPPORTED, "misaligned out: %s", err);
  CUDA_OK(cudaDeviceSynchronize());
  cudaFree(dq);
}

}  // namespace

int main(int argc, char** argv) {
  const char* filter = nullptr;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else if (!std::strcmp(argv[i], "--verbose") || !std::strcmp(argv[i], "-v")) verbose = true;
  }
  cudaDeviceProp prop;
  if (!attn_test::probe_cuda_device(&prop)) return 77;
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  if (prop.major < 8) {
    std::printf("SKIPPED: the kernels need sm_80 or newer\n");
    return 77;
  }

  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  test_runtime_errors();
  int n = 0;
  std::vector<sdpa_test::Case> cases = sdpa_test::make_cases(/*small=*/false);
  for (const sdpa_test::Case& c : sdpa_test::make_length_cases()) cases.push_back(c);
  for (const auto& c : cases) {
    if (filter && sdpa_test::describe(c).find(filter) == std::string::npos) continue;
    // Both tile shapes of the tensor-core kernel (the generic kernel ignores the setting).
    sdpa_test::Problem p = sdpa_test::make_problem(c);
    sdpa_test::compute_reference(p);
    const bool tc = c.E == c.Ev && (c.E == 64 || c.E == 128);
    if (tc) {
      for (attn::detail::TcVariant v : {attn::detail::TcVariant::M16, attn::detail::TcVariant::M32}) {
        attn::detail::set_tc_variant(v);
        run_case(p, stream, verbose, attn::detail::tc_variant_name(v));
        ++n;
      }
      attn::detail::set_tc_variant(attn::detail::TcVariant::Auto);
    } else {
      run_case(p, stream, verbose, "generic");
      ++n;
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
  std::printf("%d case runs; %d checks passed, %d failed\n", n, g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
