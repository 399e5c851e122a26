//===- attnrt_cuda.cpp - bridge from compiled modules to the CUDA kernels -===//
//
// Modules compiled with `attn-compile --target=cuda` call these functions
// (emitted by `attn-lower-sdpa-to-cuda`). Each takes MLIR unranked memrefs
// (a rank and a pointer to the ranked descriptor), builds the kernels'
// attn_sdpa_fwd_args from their sizes and strides and from the op's
// attributes (the bytes of an attn::cuda::SdpaCallAttrs, sdpa_contract.h),
// launches the kernel and waits for it, so the result is ready for whatever
// reads it next.
//
// The module's own allocations (results, temporaries) come from
// _mlir_memref_to_llvm_alloc & co. below: CUDA managed memory, reachable from
// both the kernels and any op that runs on the CPU. The caller frees returned
// buffers with attnrt_cuda_free (or cudaFree).
//
//===----------------------------------------------------------------------===//

#include "attn/kernels/attn_cuda.h"
#include "attn/kernels/sdpa_contract.h"
#include "attnrt_cuda_call.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

/// The ranked descriptor an unranked memref points to: {allocated, aligned,
/// offset, sizes[rank], strides[rank]}.
struct DescriptorHeader {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1]; // sizes[rank] then strides[rank]
};

/// A rank-2..4 memref as the kernels' [B, H, L, E] view; leading dims that
/// the memref lacks become size 1.
bool toTensor4(const char *name, int64_t rank, void *descriptor,
               size_t elementSize, attn_tensor4 &out) {
  if (rank < 1 || rank > attn::cuda::kMaxRank || !descriptor) {
    std::fprintf(stderr,
                 "attnrt: attn.sdpa %s: rank %lld is not supported on CUDA "
                 "(1 to %d)\n",
                 name, static_cast<long long>(rank), attn::cuda::kMaxRank);
    return false;
  }
  auto *d = static_cast<DescriptorHeader *>(descriptor);
  const int64_t *sizes = d->sizesAndStrides;
  const int64_t *strides = d->sizesAndStrides + rank;
  int64_t pad = 4 - rank;
  for (int i = 0; i < 4; ++i) {
    out.sizes[i] = i < pad ? 1 : sizes[i - pad];
    out.strides[i] = i < pad ? 0 : strides[i - pad];
  }
  out.data = static_cast<char *>(d->aligned) + d->offset * elementSize;
  return true;
}

/// Key/value batch dims of size 1 broadcast over the query's (stride 0).
void broadcastBatch(attn_tensor4 &t, const attn_tensor4 &q) {
  if (t.sizes[0] == 1 && q.sizes[0] > 1) {
    t.sizes[0] = q.sizes[0];
    t.strides[0] = 0;
  }
}

/// The op's attributes: a rank-1 memref of exactly sizeof(SdpaCallAttrs)
/// bytes (a module compiled against another layout is refused, not misread).
bool readCallAttrs(const attnrt::Memref &m, attn_sdpa_fwd_args &args,
                   attn::cuda::SdpaCallAttrs &attrs) {
  const auto *d = static_cast<const DescriptorHeader *>(m.descriptor);
  constexpr size_t kBytes = sizeof(attn::cuda::SdpaCallAttrs);
  if (m.rank != 1 || !d ||
      d->sizesAndStrides[0] != static_cast<int64_t>(kBytes) ||
      d->sizesAndStrides[1] != 1) {
    std::fprintf(stderr,
                 "attnrt: attn.sdpa attributes: expected a contiguous memref "
                 "of %zu bytes (sdpa_contract.h); the module was compiled "
                 "against another version of the kernels\n",
                 kBytes);
    return false;
  }
  std::memcpy(&attrs, static_cast<const char *>(d->aligned) + d->offset,
              kBytes);
  attn::cuda::apply_call_attrs(attrs, &args);
  return true;
}

/// One side's lengths: a contiguous rank-1 memref of `elementSize`-byte
/// integers; its device address and size go to `data` and `n`.
bool readLengths(const char *name, const attnrt::Memref &m, size_t elementSize,
                 const void *&data, int64_t &n) {
  const auto *d = static_cast<const DescriptorHeader *>(m.descriptor);
  if (m.rank != 1 || !d ||
      (d->sizesAndStrides[0] > 1 && d->sizesAndStrides[1] != 1)) {
    std::fprintf(stderr,
                 "attnrt: attn.sdpa %s: expected a contiguous rank-1 memref\n",
                 name);
    return false;
  }
  n = d->sizesAndStrides[0];
  data = static_cast<const char *>(d->aligned) + d->offset * elementSize;
  return true;
}

/// The sequence lengths of a call with lengths (attrs.lengths): their
/// pointers into `args`, their number checked against the batch (padded)
/// or each other (packed: num_seqs), and their values checked on a host
/// copy as the CPU lowering checks them at run time.
bool readCallLengths(const attnrt::SdpaCall &call,
                     const attn::cuda::SdpaCallAttrs &attrs,
                     attn_sdpa_fwd_args &args) {
  namespace contract = attn::cuda;
  if (!(attrs.lengths & (contract::kLengthsQ | contract::kLengthsKv)))
    return true;
  const size_t size = (attrs.lengths & contract::kLengthsI64) ? 8 : 4;
  const bool packed = attrs.padding_side == ATTN_PAD_PACKED;
  const int64_t batch = args.q.sizes[0];
  std::vector<int64_t> values[2];
  const attnrt::Memref *memrefs[2] = {&call.qLengths, &call.kvLengths};
  const void **pointers[2] = {&args.q_lengths, &args.kv_lengths};
  const int32_t bits[2] = {contract::kLengthsQ, contract::kLengthsKv};
  const char *names[2] = {"q_lengths", "kv_lengths"};
  int64_t count = -1;
  for (int side = 0; side < 2; ++side) {
    if (!(attrs.lengths & bits[side]))
      continue;
    int64_t n = 0;
    if (!readLengths(names[side], *memrefs[side], size, *pointers[side], n))
      return false;
    if ((!packed && n != batch) || (count >= 0 && n != count)) {
      std::fprintf(stderr,
                   "attnrt: attn.sdpa %s has %lld lengths, expected %lld "
                   "(%s)\n",
                   names[side], static_cast<long long>(n),
                   static_cast<long long>(packed ? count : batch),
                   packed ? "as many as q_lengths" : "the query's batch");
      return false;
    }
    count = n;
  }
  // The values, as int64, for the checks (device or managed memory), once
  // both memrefs passed the checks above.
  for (int side = 0; side < 2; ++side) {
    if (!(attrs.lengths & bits[side]))
      continue;
    const int64_t n = count;
    values[side].resize(static_cast<size_t>(n));
    std::vector<char> raw(static_cast<size_t>(n) * size);
    cudaError_t e = n == 0 ? cudaSuccess
                           : cudaMemcpy(raw.data(), *pointers[side],
                                        raw.size(), cudaMemcpyDefault);
    if (e != cudaSuccess) {
      std::fprintf(stderr, "attnrt: attn.sdpa reading %s failed: %s\n",
                   names[side], cudaGetErrorString(e));
      return false;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (size == 8) {
        std::memcpy(&values[side][i], raw.data() + i * 8, 8);
      } else {
        int32_t v;
        std::memcpy(&v, raw.data() + i * 4, 4);
        values[side][i] = v;
      }
    }
  }
  if (packed)
    args.num_seqs = count;
  std::string bad = contract::check_length_values(
      (attrs.lengths & contract::kLengthsQ) ? values[0].data() : nullptr,
      (attrs.lengths & contract::kLengthsKv) ? values[1].data() : nullptr,
      count, args.q.sizes[2], args.k.sizes[2], packed);
  if (!bad.empty()) {
    std::fprintf(stderr, "attnrt: %s\n", bad.c_str());
    return false;
  }
  return true;
}

/// The workspace with which decode shapes split their keys across blocks
/// (attn_cuda_sdpa_fwd_workspace_size), grown on demand and kept for the
/// process. Calls that use it hold `mutex` until their kernels are done.
struct Workspace {
  std::mutex mutex;
  void *data = nullptr;
  size_t bytes = 0;
  int device = -1;
};
Workspace workspace;

/// Points `args` at the shared workspace if the problem splits; the caller
/// holds `lock` until the kernels finished. Without memory the problem runs
/// unsplit, which is slower but the same result.
void attachWorkspace(attn_sdpa_fwd_args &args,
                     std::unique_lock<std::mutex> &lock) {
  size_t need = attn_cuda_sdpa_fwd_workspace_size(&args);
  int device = 0;
  if (need == 0 || cudaGetDevice(&device) != cudaSuccess)
    return;
  lock = std::unique_lock<std::mutex>(workspace.mutex);
  if (workspace.bytes < need || workspace.device != device) {
    if (workspace.data && workspace.device == device)
      cudaFree(workspace.data);
    workspace.data = nullptr;
    workspace.bytes = 0;
    if (cudaMalloc(&workspace.data, need) != cudaSuccess) {
      (void)cudaGetLastError();
      workspace.data = nullptr;
      return;
    }
    workspace.bytes = need;
    workspace.device = device;
  }
  args.workspace = workspace.data;
  args.workspace_bytes = workspace.bytes;
}

/// The score modifier's tensors as [B, H, L, S] views (leading dims of size
/// 1 where the memref has fewer); the kernel library checks them against
/// the scores.
bool toModTensors(const attnrt::SdpaCall &call, attn_tensor4 *out) {
  for (int t = 0; t < call.numExtras; ++t) {
    std::string name = "score_mod extra operand " + std::to_string(t);
    if (!toTensor4(name.c_str(), call.extras[t].rank, call.extras[t].descriptor,
                   call.extraElementSizes[t], out[t]))
      return false;
  }
  return true;
}

} // namespace

int32_t attnrt::runSdpa(const SdpaCall &call) {
  attn_sdpa_fwd_args args;
  attn_sdpa_fwd_args_init(&args);
  args.dtype = call.dtype;
  args.mask_kind = call.maskKind;
  attn::cuda::SdpaCallAttrs attrs;
  if (!readCallAttrs(call.attrs, args, attrs))
    return ATTN_ERR_INVALID_ARGUMENT;
  const size_t elementSize = call.dtype == ATTN_DTYPE_F32 ? 4 : 2;
  if (!toTensor4("query", call.q.rank, call.q.descriptor, elementSize,
                 args.q) ||
      !toTensor4("key", call.k.rank, call.k.descriptor, elementSize, args.k) ||
      !toTensor4("value", call.v.rank, call.v.descriptor, elementSize,
                 args.v) ||
      !toTensor4("result", call.out.rank, call.out.descriptor, elementSize,
                 args.out))
    return ATTN_ERR_INVALID_ARGUMENT;
  broadcastBatch(args.k, args.q);
  broadcastBatch(args.v, args.q);
  // Empty shapes, which the kernels reject: nothing to compute, or (no keys,
  // S = 0) the chain's p . v is an empty sum, all zeros. The result buffer
  // is the module's own dense allocation.
  int64_t outElements = 1;
  for (int64_t size : args.out.sizes)
    outElements *= size;
  if (outElements == 0)
    return ATTN_OK;
  if (args.k.sizes[2] == 0) {
    cudaError_t zero = cudaMemset(args.out.data, 0, outElements * elementSize);
    if (zero == cudaSuccess)
      zero = cudaStreamSynchronize(nullptr);
    if (zero != cudaSuccess) {
      std::fprintf(stderr, "attnrt: attn.sdpa with S = 0 failed: %s\n",
                   cudaGetErrorString(zero));
      return ATTN_ERR_CUDA;
    }
    return ATTN_OK;
  }
  if (!readCallLengths(call, attrs, args))
    return ATTN_ERR_INVALID_ARGUMENT;
  if (call.maskKind != ATTN_MASK_NONE &&
      !toTensor4("mask", call.mask.rank, call.mask.descriptor,
                 call.maskKind == ATTN_MASK_BOOL ? 1 : elementSize, args.mask))
    return ATTN_ERR_INVALID_ARGUMENT;
  attn_tensor4 mods[attn::cuda::kMaxModTensors];
  if (call.numExtras > attn::cuda::kMaxModTensors) {
    std::fprintf(stderr,
                 "attnrt: attn.sdpa reads %d score_mod tensors on "
                 "CUDA (at most %d)\n",
                 call.numExtras, attn::cuda::kMaxModTensors);
    return ATTN_ERR_UNSUPPORTED;
  }
  if (!toModTensors(call, mods))
    return ATTN_ERR_INVALID_ARGUMENT;

  std::unique_lock<std::mutex> workspaceLock;
  attachWorkspace(args, workspaceLock);
  char err[512];
  attn_status status =
      call.launch ? attn::detail::sdpa_fwd_custom(&args, mods, call.numExtras,
                                                  call.launch, err, sizeof(err))
                  : attn_cuda_sdpa_fwd(&args, err, sizeof(err));
  if (status != ATTN_OK) {
    std::fprintf(stderr, "attnrt: attn.sdpa on CUDA failed (%s): %s\n",
                 attn_status_string(status), err);
    return status;
  }
  cudaError_t sync = cudaStreamSynchronize(nullptr);
  if (sync != cudaSuccess) {
    std::fprintf(stderr, "attnrt: attn.sdpa CUDA kernel failed: %s\n",
                 cudaGetErrorString(sync));
    return ATTN_ERR_CUDA;
  }
  return ATTN_OK;
}

namespace {

/// The library's kernels for one attn.sdpa of the attribute form (with
/// its length memrefs, or none).
int32_t runSdpa(attn_dtype dtype, attn_mask_kind maskKind, attnrt::Memref q,
                attnrt::Memref k, attnrt::Memref v, attnrt::Memref mask,
                attnrt::Memref out, attnrt::Memref attrs,
                attnrt::Memref qLengths = {}, attnrt::Memref kvLengths = {}) {
  attnrt::SdpaCall call;
  call.qLengths = qLengths;
  call.kvLengths = kvLengths;
  call.dtype = dtype;
  call.maskKind = maskKind;
  call.q = q;
  call.k = k;
  call.v = v;
  call.mask = mask;
  call.out = out;
  call.attrs = attrs;
  return attnrt::runSdpa(call);
}

} // namespace

extern "C" {

/// One entry per element type and mask kind: the tensors, then the op's
/// attributes (attn::cuda::SdpaCallAttrs), each as an unranked memref; the
/// `_lengths` entries take q_lengths and kv_lengths between the result and
/// the attributes (sdpa_contract.h, kLengths*).
#define ATTNRT_SDPA_ENTRIES(SUFFIX, DTYPE)                                     \
  int32_t attnrt_cuda_sdpa_##SUFFIX(                                           \
      int64_t qr, void *qd, int64_t kr, void *kd, int64_t vr, void *vd,        \
      int64_t outr, void *outd, int64_t ar, void *ad) {                        \
    return runSdpa(DTYPE, ATTN_MASK_NONE, {qr, qd}, {kr, kd}, {vr, vd}, {},    \
                   {outr, outd}, {ar, ad});                                    \
  }                                                                            \
  int32_t attnrt_cuda_sdpa_##SUFFIX##_bool(                                    \
      int64_t qr, void *qd, int64_t kr, void *kd, int64_t vr, void *vd,        \
      int64_t mr, void *md, int64_t outr, void *outd, int64_t ar, void *ad) {  \
    return runSdpa(DTYPE, ATTN_MASK_BOOL, {qr, qd}, {kr, kd}, {vr, vd},        \
                   {mr, md}, {outr, outd}, {ar, ad});                          \
  }                                                                            \
  int32_t attnrt_cuda_sdpa_##SUFFIX##_add(                                     \
      int64_t qr, void *qd, int64_t kr, void *kd, int64_t vr, void *vd,        \
      int64_t mr, void *md, int64_t outr, void *outd, int64_t ar, void *ad) {  \
    return runSdpa(DTYPE, ATTN_MASK_ADDITIVE, {qr, qd}, {kr, kd}, {vr, vd},    \
                   {mr, md}, {outr, outd}, {ar, ad});                          \
  }                                                                            \
  int32_t attnrt_cuda_sdpa_##SUFFIX##_lengths(                                 \
      int64_t qr, void *qd, int64_t kr, void *kd, int64_t vr, void *vd,        \
      int64_t outr, void *outd, int64_t lqr, void *lqd, int64_t lkr,           \
      void *lkd, int64_t ar, void *ad) {                                       \
    return runSdpa(DTYPE, ATTN_MASK_NONE, {qr, qd}, {kr, kd}, {vr, vd}, {},    \
                   {outr, outd}, {ar, ad}, {lqr, lqd}, {lkr, lkd});            \
  }                                                                            \
  int32_t attnrt_cuda_sdpa_##SUFFIX##_bool_lengths(                            \
      int64_t qr, void *qd, int64_t kr, void *kd, int64_t vr, void *vd,        \
      int64_t mr, void *md, int64_t outr, void *outd, int64_t lqr, void *lqd,  \
      int64_t lkr, void *lkd, int64_t ar, void *ad) {                          \
    return runSdpa(DTYPE, ATTN_MASK_BOOL, {qr, qd}, {kr, kd}, {vr, vd},        \
                   {mr, md}, {outr, outd}, {ar, ad}, {lqr, lqd}, {lkr, lkd});  \
  }                                                                            \
  int32_t attnrt_cuda_sdpa_##SUFFIX##_add_lengths(                             \
      int64_t qr, void *qd, int64_t kr, void *kd, int64_t vr, void *vd,        \
      int64_t mr, void *md, int64_t outr, void *outd, int64_t lqr, void *lqd,  \
      int64_t lkr, void *lkd, int64_t ar, void *ad) {                          \
    return runSdpa(DTYPE, ATTN_MASK_ADDITIVE, {qr, qd}, {kr, kd}, {vr, vd},    \
                   {mr, md}, {outr, outd}, {ar, ad}, {lqr, lqd}, {lkr, lkd});  \
  }

ATTNRT_SDPA_ENTRIES(f16, ATTN_DTYPE_F16)
ATTNRT_SDPA_ENTRIES(bf16, ATTN_DTYPE_BF16)
ATTNRT_SDPA_ENTRIES(f32, ATTN_DTYPE_F32)

#undef ATTNRT_SDPA_ENTRIES

// finalize-memref-to-llvm{use-generic-functions} allocates through these.
void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *p = nullptr;
  if (cudaMallocManaged(&p, size == 0 ? 1 : size) != cudaSuccess) {
    std::fprintf(stderr, "attnrt: cudaMallocManaged(%zu) failed\n", size);
    return nullptr;
  }
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // cudaMallocManaged returns at least 256-byte aligned memory.
  if (alignment > 256) {
    std::fprintf(stderr, "attnrt: alignment %zu above 256 is not supported\n",
                 alignment);
    return nullptr;
  }
  return _mlir_memref_to_llvm_alloc(size);
}

void _mlir_memref_to_llvm_free(void *p) { cudaFree(p); }

/// Frees a buffer a compiled CUDA module returned.
void attnrt_cuda_free(void *p) { cudaFree(p); }

} // extern "C"
