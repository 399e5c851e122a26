// Host-only test of the C ABI: argument validation of attn_cuda_validate_sdpa_fwd
// and attn_cuda_sdpa_fwd (which must reject bad arguments before touching the
// device), the attributes a compiled module passes through the runtime bridge
// (sdpa_contract.h), status strings, and the host f16/bf16 conversions
// against CUDA's own host implementations. No device function is ever called with valid
// arguments here, so this runs on machines without a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "attn/kernels/attn_cuda.h"
#include "attn/kernels/sdpa_contract.h"
#include "fwd_params.h"
#include "sdpa_testlib.h"

#include "test_check.h"

namespace {

using attn_test::g_failed;
using attn_test::g_passed;

// Fake, 256-byte aligned device addresses: validation never dereferences.
void* fake_ptr(uintptr_t i) { return reinterpret_cast<void*>(0x100000 + i * 0x1000000); }

using sdpa_test::contiguous;

// A valid problem: B=2, Hq=8, Hkv=2, L=100, S=130, E=Ev=D.
attn_sdpa_fwd_args good_args(int64_t D = 64, attn_dtype dt = ATTN_DTYPE_F16) {
  attn_sdpa_fwd_args a;
  attn_sdpa_fwd_args_init(&a);
  a.dtype = dt;
  a.q = contiguous(fake_ptr(1), 2, 8, 100, D);
  a.k = contiguous(fake_ptr(2), 2, 2, 130, D);
  a.v = contiguous(fake_ptr(3), 2, 2, 130, D);
  a.out = contiguous(fake_ptr(4), 2, 8, 100, D);
  a.mask_kind = ATTN_MASK_NONE;
  a.scale = 0.125f;
  a.is_causal = 0;
  a.masked_value = -INFINITY;
  a.lse = nullptr;
  a.stream = nullptr;
  return a;
}

void add_mask(attn_sdpa_fwd_args& a, attn_mask_kind kind, int64_t mb, int64_t mh, int64_t ml) {
  a.mask_kind = kind;
  const int64_t S = a.k.sizes[2];
  a.mask.data = fake_ptr(5);
  a.mask.sizes[0] = mb;
  a.mask.sizes[1] = mh;
  a.mask.sizes[2] = ml;
  a.mask.sizes[3] = S;
  a.mask.strides[3] = 1;
  a.mask.strides[2] = ml == 1 ? 0 : S;
  a.mask.strides[1] = mh == 1 ? 0 : ml * S;
  a.mask.strides[0] = mb == 1 ? 0 : mh * ml * S;
}

// Runs both entry points on `a` and checks the status and that the message
// contains `needle`.
void expect(const char* what, const attn_sdpa_fwd_args* a, attn_status want, const char* needle) {
  char err[512];
  std::memset(err, 'x', sizeof(err));
  attn_status st = attn_cuda_validate_sdpa_fwd(a, err, sizeof(err));
  CHECK(st == want, "[%s] validate returned %s, want %s (msg: %s)", what, attn_status_string(st), attn_status_string(want),
        err);
  if (want == ATTN_OK) {
    CHECK(err[0] == '\0', "[%s] message not cleared on success: '%s'", what, err);
  } else {
    CHECK(std::strstr(err, needle) != nullptr, "[%s] message '%s' does not mention '%s'", what, err, needle);
    // The full entry point must fail identically, before any CUDA call (on a
    // machine without a GPU a CUDA call would turn this into ATTN_ERR_CUDA).
    char err2[512];
    std::memset(err2, 'y', sizeof(err2));
    st = attn_cuda_sdpa_fwd(a, err2, sizeof(err2));
    CHECK(st == want, "[%s] sdpa_fwd returned %s, want %s (msg: %s)", what, attn_status_string(st),
          attn_status_string(want), err2);
    CHECK(std::strcmp(err, err2) == 0, "[%s] messages differ: '%s' vs '%s'", what, err, err2);
  }
}

using Mut = std::function<void(attn_sdpa_fwd_args&)>;
struct BadCase {
  const char* name;
  Mut mutate;
  attn_status want;
  const char* needle;
};

// Each case breaks one thing in an otherwise valid problem.
template <size_t N>
void expect_bad(const BadCase (&cases)[N]) {
  for (const BadCase& c : cases) {
    attn_sdpa_fwd_args a = good_args();
    c.mutate(a);
    expect(c.name, &a, c.want, c.needle);
  }
}

void test_bad_shapes() {
  expect("null args", nullptr, ATTN_ERR_INVALID_ARGUMENT, "args is NULL");
  const BadCase cases[] = {
      {"null q", [](attn_sdpa_fwd_args& a) { a.q.data = nullptr; }, ATTN_ERR_INVALID_ARGUMENT, "q.data is NULL"},
      {"null k", [](attn_sdpa_fwd_args& a) { a.k.data = nullptr; }, ATTN_ERR_INVALID_ARGUMENT, "k.data is NULL"},
      {"null v", [](attn_sdpa_fwd_args& a) { a.v.data = nullptr; }, ATTN_ERR_INVALID_ARGUMENT, "v.data is NULL"},
      {"null out", [](attn_sdpa_fwd_args& a) { a.out.data = nullptr; }, ATTN_ERR_INVALID_ARGUMENT, "out.data is NULL"},
      {"zero L", [](attn_sdpa_fwd_args& a) { a.q.sizes[2] = 0; }, ATTN_ERR_INVALID_ARGUMENT, "q.sizes[2]"},
      {"zero B", [](attn_sdpa_fwd_args& a) { a.q.sizes[0] = 0; }, ATTN_ERR_INVALID_ARGUMENT, "q.sizes[0]"},
      {"negative S", [](attn_sdpa_fwd_args& a) { a.k.sizes[2] = -5; }, ATTN_ERR_INVALID_ARGUMENT, "k.sizes[2]"},
      {"zero Ev", [](attn_sdpa_fwd_args& a) { a.v.sizes[3] = 0; }, ATTN_ERR_INVALID_ARGUMENT, "v.sizes[3]"},
      {"mismatched E", [](attn_sdpa_fwd_args& a) { a.k.sizes[3] = 128; }, ATTN_ERR_INVALID_ARGUMENT, "head dim mismatch"},
      {"Hq % Hkv", [](attn_sdpa_fwd_args& a) { a.k.sizes[1] = a.v.sizes[1] = 3; }, ATTN_ERR_INVALID_ARGUMENT,
       "Hq % Hkv"},
      {"k/v heads differ", [](attn_sdpa_fwd_args& a) { a.v.sizes[1] = 4; }, ATTN_ERR_INVALID_ARGUMENT,
       "kv head mismatch"},
      {"k/v length differ", [](attn_sdpa_fwd_args& a) { a.v.sizes[2] = 129; }, ATTN_ERR_INVALID_ARGUMENT,
       "sequence mismatch"},
      {"batch mismatch", [](attn_sdpa_fwd_args& a) { a.v.sizes[0] = 1; }, ATTN_ERR_INVALID_ARGUMENT, "batch mismatch"},
      {"out shape", [](attn_sdpa_fwd_args& a) { a.out.sizes[2] = 99; }, ATTN_ERR_INVALID_ARGUMENT, "out shape mismatch"},
      {"out Ev", [](attn_sdpa_fwd_args& a) { a.out.sizes[3] = 32; }, ATTN_ERR_INVALID_ARGUMENT, "out shape mismatch"},
      {"head dim 60", [](attn_sdpa_fwd_args& a) { a.q.sizes[3] = a.k.sizes[3] = a.v.sizes[3] = a.out.sizes[3] = 60; },
       ATTN_ERR_UNSUPPORTED, "unsupported head dim"},
      {"head dim 512", [](attn_sdpa_fwd_args& a) { a.q.sizes[3] = a.k.sizes[3] = a.v.sizes[3] = a.out.sizes[3] = 512; },
       ATTN_ERR_UNSUPPORTED, "unsupported head dim"},
  };
  expect_bad(cases);
}

void test_bad_layouts() {
  const BadCase cases[] = {
      {"misaligned q", [](attn_sdpa_fwd_args& a) { a.q.data = static_cast<char*>(a.q.data) + 2; }, ATTN_ERR_UNSUPPORTED,
       "q.data"},
      {"misaligned out", [](attn_sdpa_fwd_args& a) { a.out.data = static_cast<char*>(a.out.data) + 8; },
       ATTN_ERR_UNSUPPORTED, "16-byte aligned"},
      {"non-unit last stride q", [](attn_sdpa_fwd_args& a) { a.q.strides[3] = 2; }, ATTN_ERR_UNSUPPORTED,
       "q.strides[3] must be 1"},
      {"non-unit last stride v", [](attn_sdpa_fwd_args& a) { a.v.strides[3] = 0; }, ATTN_ERR_UNSUPPORTED,
       "v.strides[3] must be 1"},
      {"row stride not x8", [](attn_sdpa_fwd_args& a) { a.k.strides[2] = 68; }, ATTN_ERR_UNSUPPORTED,
       "k.strides[2]=68 is not a multiple of 8"},
      {"negative stride", [](attn_sdpa_fwd_args& a) { a.k.strides[1] = -64 * 130; }, ATTN_ERR_UNSUPPORTED,
       "negative"},
      {"broadcast out", [](attn_sdpa_fwd_args& a) { a.out.strides[1] = 0; }, ATTN_ERR_INVALID_ARGUMENT,
       "cannot broadcast"},
  };
  expect_bad(cases);
}

void test_bad_kinds_and_masks() {
  const BadCase cases[] = {
      {"bad dtype", [](attn_sdpa_fwd_args& a) { a.dtype = static_cast<attn_dtype>(7); }, ATTN_ERR_INVALID_ARGUMENT,
       "unknown dtype 7"},
      {"bad mask kind", [](attn_sdpa_fwd_args& a) { a.mask_kind = static_cast<attn_mask_kind>(5); },
       ATTN_ERR_INVALID_ARGUMENT, "unknown mask_kind 5"},
      {"bad mask polarity", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_BOOL, 1, 1, 100); a.mask_polarity = static_cast<attn_mask_polarity>(2); },
       ATTN_ERR_INVALID_ARGUMENT, "unknown mask_polarity 2"},
      {"drop polarity additive", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_ADDITIVE, 1, 1, 100); a.mask_polarity = ATTN_MASK_DROP; },
       ATTN_ERR_INVALID_ARGUMENT, "needs a BOOL mask"},
      {"drop polarity no mask", [](attn_sdpa_fwd_args& a) { a.mask_polarity = ATTN_MASK_DROP; },
       ATTN_ERR_INVALID_ARGUMENT, "needs a BOOL mask"},
      {"mask NULL", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_BOOL, 1, 1, 100); a.mask.data = nullptr; },
       ATTN_ERR_INVALID_ARGUMENT, "mask.data is NULL"},
      {"mask S mismatch", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_BOOL, 1, 1, 100); a.mask.sizes[3] = 129; },
       ATTN_ERR_INVALID_ARGUMENT, "mask.sizes[3]=129 must equal S=130"},
      {"mask H not 1/Hq", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_ADDITIVE, 2, 2, 100); },
       ATTN_ERR_INVALID_ARGUMENT, "mask.sizes[1]=2 must be 1 or Hq=8"},
      {"mask B not 1/B", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_BOOL, 3, 1, 100); },
       ATTN_ERR_INVALID_ARGUMENT, "mask.sizes[0]=3"},
      {"mask L not 1/L", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_BOOL, 1, 1, 50); },
       ATTN_ERR_INVALID_ARGUMENT, "mask.sizes[2]=50 must be 1 or L=100"},
      {"mask zero size", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_BOOL, 1, 1, 0); },
       ATTN_ERR_INVALID_ARGUMENT, "mask.sizes[2]"},
      {"mask last stride", [](attn_sdpa_fwd_args& a) { add_mask(a, ATTN_MASK_BOOL, 1, 1, 100); a.mask.strides[3] = 2; },
       ATTN_ERR_UNSUPPORTED, "mask.strides[3] must be 1"},
      {"additive mask odd address",
       [](attn_sdpa_fwd_args& a) {
         add_mask(a, ATTN_MASK_ADDITIVE, 1, 1, 100);
         a.mask.data = static_cast<char*>(a.mask.data) + 1;
       },
       ATTN_ERR_INVALID_ARGUMENT, "2-byte aligned"},
      {"lse misaligned", [](attn_sdpa_fwd_args& a) { a.lse = reinterpret_cast<float*>(static_cast<char*>(fake_ptr(6)) + 2); },
       ATTN_ERR_INVALID_ARGUMENT, "lse"},
  };
  expect_bad(cases);
}

void test_bad_scalars() {
  const BadCase cases[] = {
      {"scale NaN", [](attn_sdpa_fwd_args& a) { a.scale = std::numeric_limits<float>::quiet_NaN(); },
       ATTN_ERR_INVALID_ARGUMENT, "scale must be finite"},
      {"scale inf", [](attn_sdpa_fwd_args& a) { a.scale = INFINITY; }, ATTN_ERR_INVALID_ARGUMENT,
       "scale must be finite"},
      {"masked_value NaN", [](attn_sdpa_fwd_args& a) { a.masked_value = std::numeric_limits<float>::quiet_NaN(); },
       ATTN_ERR_INVALID_ARGUMENT, "masked_value is NaN"},
      {"safe_softmax 2", [](attn_sdpa_fwd_args& a) { a.safe_softmax = 2; }, ATTN_ERR_INVALID_ARGUMENT,
       "safe_softmax is 2 (expected 0 or 1)"},
      {"safe_softmax -1", [](attn_sdpa_fwd_args& a) { a.safe_softmax = -1; }, ATTN_ERR_INVALID_ARGUMENT,
       "safe_softmax is -1"},
      {"too many heads", [](attn_sdpa_fwd_args& a) {
         a.q.sizes[1] = a.out.sizes[1] = 70000;
         a.k.sizes[1] = a.v.sizes[1] = 70000;
       },
       ATTN_ERR_UNSUPPORTED, "Hq=70000 exceeds"},
  };
  expect_bad(cases);
}

void test_unused_fields_and_error_buffers() {
  // Unused mask fields are ignored when mask_kind is NONE.
  {
    attn_sdpa_fwd_args a = good_args();
    a.mask.data = nullptr;
    a.mask.sizes[0] = -3;
    expect("mask ignored when NONE", &a, ATTN_OK, "");
  }
  // err may be NULL / 0, and short buffers are truncated but terminated.
  {
    attn_sdpa_fwd_args a = good_args();
    a.q.data = nullptr;
    CHECK(attn_cuda_validate_sdpa_fwd(&a, nullptr, 0) == ATTN_ERR_INVALID_ARGUMENT, "NULL err buffer");
    CHECK(attn_cuda_sdpa_fwd(&a, nullptr, 0) == ATTN_ERR_INVALID_ARGUMENT, "NULL err buffer (fwd)");
    char small[8];
    std::memset(small, 'z', sizeof(small));
    CHECK(attn_cuda_validate_sdpa_fwd(&a, small, sizeof(small)) == ATTN_ERR_INVALID_ARGUMENT, "small err buffer");
    CHECK(small[7] == '\0' && std::strncmp(small, "q.data ", 7) == 0, "truncated message: '%.8s'", small);
  }
}

void test_good_head_dims() {
  for (attn_dtype dt : {ATTN_DTYPE_F16, ATTN_DTYPE_BF16}) {
    for (int64_t D : {64, 128, 32, 80, 256}) {  // 32/80/256 take the generic kernel
      attn_sdpa_fwd_args a = good_args(D, dt);
      char name[64];
      std::snprintf(name, sizeof(name), "good D=%lld dtype=%d", static_cast<long long>(D), static_cast<int>(dt));
      expect(name, &a, ATTN_OK, "");
    }
  }
  attn_sdpa_fwd_args a = good_args();
  a.v.sizes[3] = a.out.sizes[3] = 32;  // E != Ev (generic kernel)
  a.v = contiguous(a.v.data, 2, 2, 130, 32);
  a.out = contiguous(a.out.data, 2, 8, 100, 32);
  expect("E=64 Ev=32", &a, ATTN_OK, "");
}

void test_good_masks() {
  attn_sdpa_fwd_args a = good_args();
  add_mask(a, ATTN_MASK_BOOL, 1, 1, 100);
  a.is_causal = 1;
  a.lse = static_cast<float*>(fake_ptr(6));
  expect("bool mask [1,1,L,S] causal lse", &a, ATTN_OK, "");

  a = good_args(128, ATTN_DTYPE_BF16);
  add_mask(a, ATTN_MASK_ADDITIVE, 2, 1, 1);
  expect("additive mask [B,1,1,S]", &a, ATTN_OK, "");

  a = good_args();
  add_mask(a, ATTN_MASK_ADDITIVE, 2, 8, 100);
  a.mask.data = static_cast<char*>(a.mask.data) + 2;  // masks need only element alignment
  expect("full additive mask, 2-byte aligned", &a, ATTN_OK, "");

  a = good_args();
  add_mask(a, ATTN_MASK_BOOL, 2, 8, 100);
  a.mask.strides[0] = 0;  // size-B dim broadcast through stride 0
  a.mask.data = static_cast<char*>(a.mask.data) + 3;
  expect("bool mask stride-0 batch, odd address", &a, ATTN_OK, "");
}

// f32: rows need 16 bytes = 4 elements, an additive mask 4-byte alignment;
// any head dim runs on the generic kernel.
void test_f32_alignment() {
  attn_sdpa_fwd_args a = good_args(64, ATTN_DTYPE_F32);
  a.q.strides[2] = 68;
  a.q.strides[1] = 100 * 68;
  a.q.strides[0] = 8 * 100 * 68;
  add_mask(a, ATTN_MASK_ADDITIVE, 1, 1, 100);
  a.mask.data = static_cast<char*>(a.mask.data) + 4;
  expect("f32, row stride 68, additive mask 4-byte aligned", &a, ATTN_OK, "");
  {
    attn::detail::FwdParams p;
    CHECK(attn::detail::prepare_fwd_params(&a, &p, nullptr, 0) == ATTN_OK && p.is_f32 == 1 &&
              p.path == attn::detail::KernelPath::Generic,
          "f32 D=64 takes the generic kernel");
  }
  a.q.strides[2] = 66;
  expect("f32, row stride 66", &a, ATTN_ERR_UNSUPPORTED, "q.strides[2]=66 is not a multiple of 4 elements");
  a.q.strides[2] = 68;
  a.mask.data = static_cast<char*>(a.mask.data) + 2;
  expect("f32 additive mask, 2-byte aligned", &a, ATTN_ERR_INVALID_ARGUMENT, "is not 4-byte aligned for a 32-bit");
}

// Decode shapes split their keys when given a big enough workspace.
void test_decode_workspace() {
  attn_sdpa_fwd_args a = good_args();  // L = 100: never splits
  CHECK(attn_cuda_sdpa_fwd_workspace_size(&a) == 0, "L=100 does not split");
  a.q = contiguous(a.q.data, 2, 8, 1, 64);
  a.out = contiguous(a.out.data, 2, 8, 1, 64);
  a.k = contiguous(a.k.data, 2, 2, 4096, 64);
  a.v = contiguous(a.v.data, 2, 2, 4096, 64);
  const size_t need = attn_cuda_sdpa_fwd_workspace_size(&a);
  attn::detail::FwdParams p;
  CHECK(attn::detail::prepare_fwd_params(&a, &p, nullptr, 0) == ATTN_OK && p.path == attn::detail::KernelPath::TensorCore,
        "no workspace: no split");
  a.workspace = fake_ptr(6);
  a.workspace_bytes = need;
  CHECK(need > 0 && attn::detail::prepare_fwd_params(&a, &p, nullptr, 0) == ATTN_OK &&
            p.path == attn::detail::KernelPath::Decode && p.n_splits >= 2 && p.split_len % attn::detail::kDecTileN == 0 &&
            static_cast<int64_t>(p.n_splits - 1) * p.split_len < 4096 &&
            static_cast<int64_t>(p.n_splits) * p.split_len >= 4096,
        "L=1, S=4096 splits (%zu bytes, %d splits of %d)", need, p.n_splits, p.split_len);
  CHECK(attn_cuda_sdpa_fwd_workspace_size(&a) == need, "the size ignores the workspace given");
  expect("decode with workspace", &a, ATTN_OK, "");
  a.workspace_bytes = need - 4;
  expect("workspace too small", &a, ATTN_ERR_INVALID_ARGUMENT, "is less than the");
  a.workspace_bytes = need;
  a.workspace = static_cast<char*>(a.workspace) + 8;
  expect("workspace misaligned", &a, ATTN_ERR_INVALID_ARGUMENT, "workspace (");
  a.workspace = nullptr;
  CHECK(attn_cuda_sdpa_fwd_workspace_size(nullptr) == 0, "NULL args: 0");
  a.k.sizes[3] = 32;  // invalid
  CHECK(attn_cuda_sdpa_fwd_workspace_size(&a) == 0, "invalid args: 0");
}

// [B, L, H, E] (heads interleaved) and a batch-broadcast k/v.
void test_good_layouts() {
  attn_sdpa_fwd_args a = good_args();
  a.q.strides[0] = 100 * 8 * 64;
  a.q.strides[1] = 64;
  a.q.strides[2] = 8 * 64;
  a.k.strides[0] = 0;
  a.v.strides[0] = 0;
  expect("BLHD q, batch-broadcast k/v", &a, ATTN_OK, "");

  // MQA
  a = good_args();
  a.k = contiguous(a.k.data, 2, 1, 130, 64);
  a.v = contiguous(a.v.data, 2, 1, 130, 64);
  expect("MQA", &a, ATTN_OK, "");
}

// Normalisation details of the internal parameters.
void test_param_normalisation() {
  {
    attn_sdpa_fwd_args g = good_args();
    g.masked_value = -1e9f;
    g.is_causal = 1;
    attn::detail::FwdParams p;
    CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK, "prepare");
    CHECK(std::isinf(p.masked_value_rounded) && p.band_skip == 1, "f16: -1e9 rounds to -inf -> causal skip");
    CHECK(p.has_band == 1 && p.win_right == 0 && p.win_left == attn::detail::kWinNone, "causal = band (inf, 0)");
    g.dtype = ATTN_DTYPE_BF16;
    CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK, "prepare bf16");
    CHECK(std::isfinite(p.masked_value_rounded) && p.band_skip == 0, "bf16: -1e9 stays finite -> no causal skip");
    CHECK(p.path == attn::detail::KernelPath::TensorCore && p.group == 4, "path/group");
    g.masked_value = -3.0e38f;  // finite in bf16; times log2(e) it would overflow: must be clamped, not -inf
    CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK, "prepare bf16 huge");
    CHECK(std::isfinite(p.masked_log2) && p.band_skip == 0, "masked_log2 clamped: %g", static_cast<double>(p.masked_log2));
  }
  // safe_softmax: off after init, passed through as 0/1.
  {
    attn_sdpa_fwd_args g = good_args();
    attn::detail::FwdParams p;
    CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK && p.safe_softmax == 0, "init: not safe");
    g.safe_softmax = 1;
    CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK && p.safe_softmax == 1, "safe_softmax 1");
  }
}

// Windows: causal intersects the right side, huge and very negative bounds
// clamp, an all-unbounded window is no band at all.
void test_param_windows() {
  attn_sdpa_fwd_args g = good_args();
  attn::detail::FwdParams p;
  CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK && p.has_band == 0 && p.band_skip == 0,
        "init: no band");
  g.window_left = 7;
  g.window_right = 5;
  g.is_causal = 1;
  CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK, "prepare window");
  CHECK(p.win_left == 7 && p.win_right == 0 && p.band_skip == 1, "causal clips window_right 5 to 0: %d %d", p.win_left,
        p.win_right);
  g.is_causal = 0;
  g.window_left = int64_t{1} << 40;
  g.window_right = -(int64_t{1} << 40);
  CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK, "prepare huge window");
  CHECK(p.win_left == attn::detail::kWinNone && p.win_right == -attn::detail::kWinNone && p.has_band == 1,
        "clamped: %d %d", p.win_left, p.win_right);
}

// Sequence lengths: the pointers, their type and padding side, the packed
// layout's num_seqs; what the kernels get (FwdParams), each refusal.
void test_lengths() {
  using attn::detail::FwdParams;
  using attn::detail::prepare_fwd_params;
  attn_sdpa_fwd_args g = good_args();  // B = 2
  g.q_lengths = fake_ptr(7);
  g.kv_lengths = fake_ptr(8);
  expect("right padding", &g, ATTN_OK, "");
  FwdParams p;
  CHECK(prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK && p.q_len == g.q_lengths && p.kv_len == g.kv_lengths &&
            p.len_i64 == 0 && p.pad_side == ATTN_PAD_RIGHT && p.n_seqs == 1 && p.Z == 2 && p.safe_softmax == 1,
        "lengths reach the kernels, the softmax is safe");
  g.q_lengths = nullptr;
  g.padding_side = ATTN_PAD_LEFT;
  g.lengths_type = ATTN_INDEX_I64;
  g.num_seqs = 99;  // ignored unless packed
  CHECK(prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK && p.q_len == nullptr && p.len_i64 == 1 &&
            p.pad_side == ATTN_PAD_LEFT && p.n_seqs == 1 && p.Z == 2,
        "kv lengths only, left, i64");
  g.kv_lengths = nullptr;
  CHECK(prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK && p.safe_softmax == 0, "no lengths: the softmax as given");
  attn_sdpa_fwd_args pk = good_args();
  pk.q_lengths = fake_ptr(7);
  pk.kv_lengths = fake_ptr(8);
  pk.padding_side = ATTN_PAD_PACKED;
  pk.num_seqs = 5;
  expect("packed", &pk, ATTN_OK, "");
  CHECK(prepare_fwd_params(&pk, &p, nullptr, 0) == ATTN_OK && p.n_seqs == 5 && p.Z == 10 && p.B == 2,
        "packed: the grid's z covers B x num_seqs");
  // A packed decode shape's workspace holds every sequence's rows.
  attn_sdpa_fwd_args d = pk;
  d.q = contiguous(d.q.data, 2, 8, 5, 64);
  d.out = contiguous(d.out.data, 2, 8, 5, 64);
  d.k = contiguous(d.k.data, 2, 2, 4096, 64);
  d.v = contiguous(d.v.data, 2, 2, 4096, 64);
  const size_t packed_bytes = attn_cuda_sdpa_fwd_workspace_size(&d);
  const attn::detail::DecodePlan plan = attn::detail::decode_split_plan(10, 2, 4, 5, 4096, 64);
  CHECK(packed_bytes > 0 && packed_bytes == plan.bytes, "packed decode workspace: %zu bytes, plan for B x num_seqs %zu",
        packed_bytes, plan.bytes);

  const BadCase cases[] = {
      {"lengths_type 2", [](attn_sdpa_fwd_args& a) { a.lengths_type = static_cast<attn_index_type>(2); },
       ATTN_ERR_INVALID_ARGUMENT, "unknown lengths_type 2"},
      {"padding_side 3", [](attn_sdpa_fwd_args& a) { a.padding_side = static_cast<attn_padding_side>(3); },
       ATTN_ERR_INVALID_ARGUMENT, "unknown padding_side 3"},
      {"q_lengths misaligned",
       [](attn_sdpa_fwd_args& a) { a.q_lengths = static_cast<const char*>(fake_ptr(7)) + 2; },
       ATTN_ERR_INVALID_ARGUMENT, "q_lengths ("},
      {"kv_lengths misaligned for i64",
       [](attn_sdpa_fwd_args& a) {
         a.kv_lengths = static_cast<const char*>(fake_ptr(8)) + 4;
         a.lengths_type = ATTN_INDEX_I64;
       },
       ATTN_ERR_INVALID_ARGUMENT, "is not 8-byte aligned"},
      {"finite masked_value with lengths",
       [](attn_sdpa_fwd_args& a) {
         a.kv_lengths = fake_ptr(8);
         a.masked_value = -1e4f;
       },
       ATTN_ERR_INVALID_ARGUMENT, "masked_value must be -INFINITY with sequence lengths"},
      {"packed without kv_lengths",
       [](attn_sdpa_fwd_args& a) {
         a.q_lengths = fake_ptr(7);
         a.padding_side = ATTN_PAD_PACKED;
         a.num_seqs = 2;
       },
       ATTN_ERR_INVALID_ARGUMENT, "ATTN_PAD_PACKED needs both q_lengths and kv_lengths"},
      {"packed without sequences",
       [](attn_sdpa_fwd_args& a) {
         a.q_lengths = fake_ptr(7);
         a.kv_lengths = fake_ptr(8);
         a.padding_side = ATTN_PAD_PACKED;
       },
       ATTN_ERR_INVALID_ARGUMENT, "num_seqs is 0"},
      {"packed with a mask",
       [](attn_sdpa_fwd_args& a) {
         a.q_lengths = fake_ptr(7);
         a.kv_lengths = fake_ptr(8);
         a.padding_side = ATTN_PAD_PACKED;
         a.num_seqs = 2;
         add_mask(a, ATTN_MASK_BOOL, 1, 1, 100);
       },
       ATTN_ERR_INVALID_ARGUMENT, "ATTN_PAD_PACKED takes no mask"},
      {"packed grid too large",
       [](attn_sdpa_fwd_args& a) {
         a.q_lengths = fake_ptr(7);
         a.kv_lengths = fake_ptr(8);
         a.padding_side = ATTN_PAD_PACKED;
         a.num_seqs = 40000;  // x B = 2
       },
       ATTN_ERR_UNSUPPORTED, "packed sequences exceed the supported maximum"},
  };
  expect_bad(cases);
}

// The run-time checks of the length values (the bridge runs them on a host copy).
void test_length_values() {
  using attn::cuda::check_length_values;
  const int64_t q[3] = {3, 0, 5}, kv[3] = {7, 7, 0};
  CHECK(check_length_values(q, kv, 3, 5, 7, false).empty(), "padded: in range");
  CHECK(check_length_values(nullptr, kv, 3, 5, 7, false).empty(), "padded: kv only");
  CHECK(check_length_values(q, nullptr, 3, 4, 7, false) ==
            "attn.sdpa: a q_lengths value is out of range (5 is not in [0, 4])",
        "padded: above L");
  const int64_t neg[3] = {1, -1, 0};
  CHECK(check_length_values(q, neg, 3, 5, 7, false) ==
            "attn.sdpa: a kv_lengths value is out of range (-1 is not in [0, 7])",
        "padded: below 0");
  CHECK(check_length_values(q, kv, 3, 8, 14, true).empty(), "packed: sums 8 and 14");
  CHECK(check_length_values(q, kv, 3, 9, 14, true) == "attn.sdpa: the packed q_lengths must sum to the query's length",
        "packed: q sum");
  CHECK(check_length_values(q, kv, 3, 8, 15, true) == "attn.sdpa: the packed kv_lengths must sum to the key's length",
        "packed: kv sum");
  CHECK(check_length_values(q, neg, 3, 8, 0, true) == "attn.sdpa: a kv_lengths value is out of range (-1 is below 0)",
        "packed: below 0");
  const int64_t huge[2] = {INT64_MAX, INT64_MAX};
  CHECK(check_length_values(huge, kv, 2, 8, 14, true) ==
            "attn.sdpa: the packed q_lengths must sum to the query's length",
        "packed: no overflow");
}

// The runtime bridge's entry points for f16 without a mask (attnrt_cuda.cpp).
extern "C" int32_t attnrt_cuda_sdpa_f16(int64_t qr, void* qd, int64_t kr, void* kd, int64_t vr, void* vd, int64_t outr,
                                        void* outd, int64_t ar, void* ad);
extern "C" int32_t attnrt_cuda_sdpa_f16_lengths(int64_t qr, void* qd, int64_t kr, void* kd, int64_t vr, void* vd,
                                                int64_t outr, void* outd, int64_t lqr, void* lqd, int64_t lkr, void* lkd,
                                                int64_t ar, void* ad);

// An MLIR ranked memref descriptor of rank R.
template <int R>
struct Descriptor {
  void* allocated;
  void* aligned;
  int64_t offset;
  int64_t sizes[R];
  int64_t strides[R];
};

Descriptor<4> descriptor4(const attn_tensor4& t) {
  Descriptor<4> d{t.data, t.data, 0, {}, {}};
  for (int i = 0; i < 4; ++i) {
    d.sizes[i] = t.sizes[i];
    d.strides[i] = t.strides[i];
  }
  return d;
}

// The attributes of a call: apply_call_attrs fills the kernel library's
// arguments, and the bridge reads them from the bytes a compiled module
// passes (a memref of exactly sizeof(SdpaCallAttrs) bytes). The bridge
// calls below all fail in validation, before any CUDA call; their messages
// go to stderr (abi-validation.test checks them).
void test_call_attrs() {
  attn::cuda::SdpaCallAttrs attrs;
  attrs.window_left = 7;
  attrs.window_right = 3;
  attrs.scale = 0.5f;
  attrs.masked_value = -1e4f;
  attrs.is_causal = 1;
  attrs.mask_polarity = ATTN_MASK_DROP;
  attrs.safe_softmax = 1;
  attrs.padding_side = ATTN_PAD_LEFT;
  attrs.lengths = attn::cuda::kLengthsKv | attn::cuda::kLengthsI64;
  attn_sdpa_fwd_args g = good_args();
  add_mask(g, ATTN_MASK_BOOL, 1, 1, 100);
  attn::cuda::apply_call_attrs(attrs, &g);
  CHECK(g.padding_side == ATTN_PAD_LEFT && g.lengths_type == ATTN_INDEX_I64, "the lengths' side and type reach the args");
  attrs.padding_side = ATTN_PAD_RIGHT;
  attrs.lengths = 0;
  attn::cuda::apply_call_attrs(attrs, &g);
  attn::detail::FwdParams p;
  CHECK(attn::detail::prepare_fwd_params(&g, &p, nullptr, 0) == ATTN_OK, "prepare with call attributes");
  CHECK(p.win_left == 7 && p.win_right == 0 && p.is_causal == 1 && p.mask_drop == 1 && p.safe_softmax == 1 &&
            p.scale == 0.5f && p.masked_value_rounded == -10000.f,
        "call attributes reach the kernels' parameters");

  attn_sdpa_fwd_args a = good_args();
  Descriptor<4> q = descriptor4(a.q), k = descriptor4(a.k), v = descriptor4(a.v), out = descriptor4(a.out);
  auto call = [&](int64_t bytes) {
    unsigned char raw[64] = {};
    std::memcpy(raw, &attrs, sizeof(attrs));
    Descriptor<1> d{raw, raw, 0, {bytes}, {1}};
    return attnrt_cuda_sdpa_f16(4, &q, 4, &k, 4, &v, 4, &out, 1, &d);
  };
  // DROP without a boolean mask: the bridge passed the polarity on.
  CHECK(call(sizeof(attrs)) == ATTN_ERR_INVALID_ARGUMENT, "bridge: DROP polarity without a mask is refused");
  // Bytes of another layout (a module compiled against another header).
  CHECK(call(sizeof(attrs) - 4) == ATTN_ERR_INVALID_ARGUMENT, "bridge: attributes of the wrong size are refused");

  // Lengths through the bridge, refused before their values are read: a
  // count other than the batch (2), a strided memref, attributes that name
  // lengths on the entry without them.
  attn::cuda::SdpaCallAttrs la;
  la.scale = 0.125f;
  la.lengths = attn::cuda::kLengthsQ | attn::cuda::kLengthsKv;
  int32_t lens[8] = {};
  auto call_lengths = [&](int64_t nq, int64_t stride) {
    unsigned char raw[64] = {};
    std::memcpy(raw, &la, sizeof(la));
    Descriptor<1> d{raw, raw, 0, {static_cast<int64_t>(sizeof(la))}, {1}};
    Descriptor<1> lq{lens, lens, 0, {nq}, {stride}};
    Descriptor<1> lk{lens, lens, 0, {2}, {1}};
    return attnrt_cuda_sdpa_f16_lengths(4, &q, 4, &k, 4, &v, 4, &out, 1, &lq, 1, &lk, 1, &d);
  };
  CHECK(call_lengths(3, 1) == ATTN_ERR_INVALID_ARGUMENT, "bridge: 3 q_lengths for a batch of 2 are refused");
  CHECK(call_lengths(2, 2) == ATTN_ERR_INVALID_ARGUMENT, "bridge: strided lengths are refused");
  la.padding_side = ATTN_PAD_PACKED;  // any number of sequences, but as many kv_lengths (2) as q_lengths
  CHECK(call_lengths(3, 1) == ATTN_ERR_INVALID_ARGUMENT, "bridge: packed lengths of different counts are refused");
  la.padding_side = ATTN_PAD_RIGHT;
  {
    unsigned char raw[64] = {};
    std::memcpy(raw, &la, sizeof(la));
    Descriptor<1> d{raw, raw, 0, {static_cast<int64_t>(sizeof(la))}, {1}};
    CHECK(attnrt_cuda_sdpa_f16(4, &q, 4, &k, 4, &v, 4, &out, 1, &d) == ATTN_ERR_INVALID_ARGUMENT,
          "bridge: lengths named by the attributes but not passed are refused");
  }
}

void test_status_strings() {
  CHECK(std::strcmp(attn_status_string(ATTN_OK), "ATTN_OK") == 0, "OK string");
  CHECK(std::strcmp(attn_status_string(ATTN_ERR_INVALID_ARGUMENT), "ATTN_ERR_INVALID_ARGUMENT") == 0, "INVALID string");
  CHECK(std::strcmp(attn_status_string(ATTN_ERR_UNSUPPORTED), "ATTN_ERR_UNSUPPORTED") == 0, "UNSUPPORTED string");
  CHECK(std::strcmp(attn_status_string(ATTN_ERR_CUDA), "ATTN_ERR_CUDA") == 0, "CUDA string");
  CHECK(std::strcmp(attn_status_string(static_cast<attn_status>(42)), "ATTN_<unknown>") == 0, "unknown string");
}

// Our host conversions (used for masked_value rounding and by the tests'
// reference) must agree bit-for-bit with CUDA's.
void test_conversions_vs_cuda() {
  std::mt19937 rng(7);
  int bad16 = 0, badbf = 0;
  auto check_one = [&](float f) {
    const uint16_t ours16 = attn::detail::f32_to_f16_bits(f);
    const uint16_t cuda16 = __half_as_ushort(__float2half_rn(f));
    if (std::isnan(f)) {
      if (((ours16 >> 10) & 0x1F) != 0x1F || (ours16 & 0x3FF) == 0) ++bad16;
    } else if (ours16 != cuda16) {
      if (bad16++ < 5) std::printf("  f16 mismatch for %.9g: ours 0x%04x cuda 0x%04x\n", static_cast<double>(f), ours16, cuda16);
    }
    const uint16_t oursbf = attn::detail::f32_to_bf16_bits(f);
    const uint16_t cudabf = __bfloat16_as_ushort(__float2bfloat16_rn(f));
    if (std::isnan(f)) {
      if (((oursbf >> 7) & 0xFF) != 0xFF || (oursbf & 0x7F) == 0) ++badbf;
    } else if (oursbf != cudabf) {
      if (badbf++ < 5) std::printf("  bf16 mismatch for %.9g: ours 0x%04x cuda 0x%04x\n", static_cast<double>(f), oursbf, cudabf);
    }
  };
  for (int i = 0; i < 2000000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    // bias towards the f16 range
    if (i & 1) bits = (bits & 0x807FFFFFu) | ((0x60u + (bits >> 23) % 0x40u) << 23);
    float f;
    std::memcpy(&f, &bits, 4);
    check_one(f);
  }
  for (float f : {0.f, -0.f, 65504.f, 65519.99f, 65520.f, -65520.f, 1e9f, -1e9f, 5.96e-8f, 2.98e-8f, INFINITY, -INFINITY,
                  3.4e38f, -3.4e38f, 1.17549435e-38f, 1e-45f})
    check_one(f);
  CHECK(bad16 == 0, "%d f16 conversion mismatches vs __float2half_rn", bad16);
  CHECK(badbf == 0, "%d bf16 conversion mismatches vs __float2bfloat16_rn", badbf);
  int badback = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float ours = attn::detail::f16_bits_to_f32(static_cast<uint16_t>(h));
    const float cuda = __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
    if (!(std::isnan(ours) && std::isnan(cuda)) && std::memcmp(&ours, &cuda, 4) != 0) ++badback;
    const float oursb = attn::detail::bf16_bits_to_f32(static_cast<uint16_t>(h));
    const float cudab = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(h)));
    if (!(std::isnan(oursb) && std::isnan(cudab)) && std::memcmp(&oursb, &cudab, 4) != 0) ++badback;
  }
  CHECK(badback == 0, "%d f16/bf16 -> f32 mismatches", badback);
}

}  // namespace

int main() {
  test_bad_shapes();
  test_bad_layouts();
  test_bad_kinds_and_masks();
  test_bad_scalars();
  test_unused_fields_and_error_buffers();
  test_good_head_dims();
  test_good_masks();
  test_f32_alignment();
  test_decode_workspace();
  test_lengths();
  test_length_values();
  test_good_layouts();
  test_param_normalisation();
  test_param_windows();
  test_call_attrs();
  test_status_strings();
  test_conversions_vs_cuda();
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
