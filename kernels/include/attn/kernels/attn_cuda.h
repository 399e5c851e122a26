/*
 * AttnFuse CUDA kernels: host C ABI for the fused scaled-dot-product-attention
 * forward pass (the runtime target of `attn.sdpa`).
 *
 * Plain C (C99), usable from C and C++. All tensors are DEVICE pointers owned
 * by the caller; the library allocates nothing, keeps no state between calls
 * (except a per-device cache of "shared-memory attribute already set"), and
 * enqueues all work on the caller's stream, on the calling thread's current
 * CUDA device (the stream must belong to it). attn_cuda_sdpa_fwd returns as
 * soon as the kernel is enqueued: it does not synchronise, so errors raised
 * while the kernel *executes* surface on the caller's next synchronising CUDA
 * call. The functions are thread-safe. Requires a device of compute capability
 * 8.0 or newer.
 *
 * Semantics (the contract shared with the compiler, see kernels/README.md):
 *   scores[i,j] = (q[i,:] . k[j,:]) * scale                  (f32 accumulation)
 *   BOOL mask:      mask[i,j] == 0  -> scores[i,j] = masked_value (rounded to dtype)
 *                   (mask[i,j] != 0 with mask_polarity = ATTN_MASK_DROP)
 *   ADDITIVE mask:  scores[i,j] += mask[i,j]                  (f32 math)
 *   is_causal:      j > i           -> scores[i,j] = masked_value (rounded to dtype)
 *   window:         j < i - window_left or j > i + window_right -> scores[i,j] = masked_value
 *   P = softmax_j(scores) in f32; out = P . v (f32 accumulation, rounded once)
 *   A row whose scores are all -inf yields NaN (like torch.softmax), its LSE is -inf;
 *   with safe_softmax it yields 0 instead (torch._safe_softmax), its LSE still -inf.
 */
#ifndef ATTN_KERNELS_ATTN_CUDA_H
#define ATTN_KERNELS_ATTN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result of every entry point. Never aborts; on error a message is written to
 * the caller-provided `err` buffer (truncated to err_len, always NUL
 * terminated when err_len > 0). */
typedef enum {
  ATTN_OK = 0,
  ATTN_ERR_INVALID_ARGUMENT = 1, /* the arguments are malformed (NULL, shapes disagree, ...) */
  ATTN_ERR_UNSUPPORTED = 2,      /* well-formed but outside what the kernels implement */
  ATTN_ERR_CUDA = 3              /* a CUDA runtime call / kernel launch failed */
} attn_status;

/* Element type of q, k, v, out and of an ADDITIVE mask. F32 runs on the
 * generic CUDA-core kernel in full f32 precision (no tf32/bf16 rounding). */
typedef enum { ATTN_DTYPE_F16 = 0, ATTN_DTYPE_BF16 = 1, ATTN_DTYPE_F32 = 2 } attn_dtype;

/* How `mask` is interpreted. */
typedef enum {
  ATTN_MASK_NONE = 0,     /* mask is ignored */
  ATTN_MASK_BOOL = 1,     /* 1 byte per element, nonzero = position takes part */
  ATTN_MASK_ADDITIVE = 2  /* same dtype as q, added to the scaled scores */
} attn_mask_kind;

/* What a nonzero byte of a BOOL mask means. DROP lets a compiler pass the
 * mask of a `masked_fill` (true = fill) as it is, instead of inverting it on
 * the host first (attn.sdpa's own convention is KEEP). */
typedef enum {
  ATTN_MASK_KEEP = 0, /* nonzero = position takes part (default) */
  ATTN_MASK_DROP = 1  /* nonzero = position is masked out */
} attn_mask_polarity;

/* Integer type of the sequence lengths (q_lengths / kv_lengths). */
typedef enum { ATTN_INDEX_I32 = 0, ATTN_INDEX_I64 = 1 } attn_index_type;

/* Where the real rows and keys of a sequence sit (attn.sdpa's padding_side). */
typedef enum {
  ATTN_PAD_RIGHT = 0, /* sequence b's real rows are i < q_lengths[b], its real keys j < kv_lengths[b] */
  ATTN_PAD_LEFT = 1,  /* ... i >= L - q_lengths[b] and j >= S - kv_lengths[b] */
  ATTN_PAD_PACKED = 2 /* num_seqs sequences back to back along L and S (FlashAttention's varlen form):
                         sequence s has rows qo[s] .. qo[s] + q_lengths[s] - 1 and keys ko[s] ..
                         ko[s] + kv_lengths[s] - 1 (qo, ko: exclusive prefix sums), in every batch
                         slice b of q/k/v/out; causal/window see positions within the sequence */
} attn_padding_side;

/* window_left / window_right value meaning "no bound on this side". */
#define ATTN_WINDOW_UNBOUNDED INT64_MAX

/* A strided rank-4 view of device memory.
 *   data:    device pointer to element [0,0,0,0]
 *   sizes:   [B, H, L (or S), E]
 *   strides: in ELEMENTS (not bytes). A broadcast dimension has stride 0.
 *            The last dimension must have stride 1 (contiguous rows). */
typedef struct {
  void *data;
  int64_t sizes[4];
  int64_t strides[4];
} attn_tensor4;

typedef struct {
  attn_dtype dtype;  /* element type of q/k/v/out (and of an ADDITIVE mask) */
  attn_tensor4 q;    /* [B, Hq, L, E]   device pointer, read */
  attn_tensor4 k;    /* [B, Hkv, S, E]  Hq % Hkv == 0 (MQA/GQA: query head h reads kv head h / (Hq/Hkv)) */
  attn_tensor4 v;    /* [B, Hkv, S, Ev] read */
  attn_tensor4 out;  /* [B, Hq, L, Ev]  written (must not alias q/k/v; no stride-0 dims of size > 1) */
  attn_mask_kind mask_kind; /* ATTN_MASK_NONE ignores `mask` entirely */
  attn_tensor4 mask; /* [B|1, Hq|1, L|1, S] (broadcast via size 1 or stride 0); BOOL: 1 byte per element,
                        nonzero = position takes part; ADDITIVE: same dtype as q, added to the scaled scores.
                        Last dim (S) must have stride 1. No alignment requirement. */
  float scale;       /* multiplies q.k^T; must be finite (typically 1/sqrt(E)) */
  int is_causal;     /* nonzero: top-left aligned like PyTorch: query i sees key j iff j <= i */
  float masked_value;/* score given to positions removed by a BOOL mask or by is_causal, rounded to `dtype`
                        first (so -1e9 becomes -inf in f16). -INFINITY by default; must not be NaN.
                        A finite value means masked positions still take part with that score. */
  float *lse;        /* optional [B, Hq, L] contiguous f32 device buffer, written with the natural-log
                        log-sum-exp of each row's scores (m + log(sum exp(s - m))); -inf for rows whose
                        scores are all -inf (their `out` row is NaN, or 0 with safe_softmax). May be NULL. */
  void *stream;      /* cudaStream_t to enqueue on; NULL = legacy default stream */
  attn_mask_polarity mask_polarity; /* BOOL masks only (must be KEEP otherwise): KEEP = nonzero takes part,
                        DROP = nonzero is masked out. Zero-initialised = KEEP. */
  int64_t window_left;  /* sliding window, top-left aligned like is_causal: query i sees key j only if */
  int64_t window_right; /* i - window_left <= j <= i + window_right; other positions get masked_value.
                           ATTN_WINDOW_UNBOUNDED (INT64_MAX) = no bound on that side. Combined with
                           is_causal by intersection. NOTE: zero is a real bound (0/0 = the diagonal
                           only), so a zero-initialised struct is NOT unbounded: start from
                           attn_sdpa_fwd_args_init. */
  void *workspace;       /* optional device scratch (16-byte aligned) of workspace_bytes bytes. With at least
                            attn_cuda_sdpa_fwd_workspace_size(args) bytes, a decode-shaped problem (L <= 16,
                            long S) splits its keys across thread blocks and combines the partial results
                            (Flash-Decoding); NULL (or a problem that does not split) = no split. Must not be
                            used by another call in flight. */
  size_t workspace_bytes;
  int safe_softmax;      /* 0 or 1. 1: a row whose scores are all -inf (no key takes part: all masked, an
                            empty band) yields 0 instead of NaN, like torch._safe_softmax (attn.sdpa's
                            safe_softmax); a NaN score still makes its row NaN. Its lse stays -inf. */
  /* Sequence lengths (attn.sdpa's q_lengths / kv_lengths), DEVICE pointers to lengths_type integers, each
     aligned to its size. RIGHT / LEFT padding: [B] entries (B = q.sizes[0]); NULL = that side is all real;
     padded keys take no part, padded query rows are written 0 (lse -inf), and with lengths the softmax is
     safe (a real row with no key left is 0, whatever safe_softmax says); masked_value must be -INFINITY.
     is_causal, the window and the mask see padded-layout indices. PACKED: both given, num_seqs entries each,
     summing to L and to S; no mask. A length outside [0, L] ([0, S]), or packed lengths that do not sum to
     L (S), cannot be checked on the host: the kernels clamp them so that they never touch memory outside
     the tensors, and the result is then unspecified. */
  const void *q_lengths;
  const void *kv_lengths;
  attn_index_type lengths_type;     /* ATTN_INDEX_I32 or ATTN_INDEX_I64 */
  attn_padding_side padding_side;   /* zero-initialised = ATTN_PAD_RIGHT */
  int64_t num_seqs;                 /* PACKED only (>= 1): the number of sequences; ignored otherwise */
} attn_sdpa_fwd_args;

/* Bytes of workspace with which attn_cuda_sdpa_fwd splits the keys of this
 * problem (see attn_sdpa_fwd_args.workspace); 0 when it does not split or the
 * arguments do not validate. Pure host computation from the shapes. */
size_t attn_cuda_sdpa_fwd_workspace_size(const attn_sdpa_fwd_args *args);

/* Zero-fills *args, then sets the fields whose default is not zero:
 * masked_value = -INFINITY, window_left = window_right = ATTN_WINDOW_UNBOUNDED. */
void attn_sdpa_fwd_args_init(attn_sdpa_fwd_args *args);

/* Validates (see attn_cuda_validate_sdpa_fwd), then enqueues the fused forward
 * kernel on args->stream. Returns ATTN_ERR_CUDA (with cudaGetErrorString text)
 * if a CUDA call or the launch fails. Does not synchronise. */
attn_status attn_cuda_sdpa_fwd(const attn_sdpa_fwd_args *args, char *err, size_t err_len);

/* The pure host checks alone, no CUDA call at all: NULL pointers, non-positive
 * sizes, shape agreement between q/k/v/out/mask, Hq % Hkv, supported head dims,
 * 16-byte alignment of q/k/v/out and of their row strides, unit last-dim
 * strides, enum values, finite scale, the sequence-length arguments (not the
 * lengths themselves, which are in device memory). `err` may be NULL / err_len 0. */
attn_status attn_cuda_validate_sdpa_fwd(const attn_sdpa_fwd_args *args, char *err, size_t err_len);

/* Static string naming the status ("ATTN_OK", ...); "ATTN_<unknown>" otherwise. */
const char *attn_status_string(attn_status s);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ATTN_KERNELS_ATTN_CUDA_H */
