/*===- AttnRuntime.h - the small C runtime of compiled attn code -*- C -*-===*\
|*                                                                            *|
|* Code instrumented by `attn-instrument-trace` calls                         *|
|* attnrt_trace_begin(id) / attnrt_trace_end(id) around every op or kernel;   *|
|* the module attribute `attn.trace_names` maps ids to span names. This      *|
|* runtime records the calls with monotonic timestamps and writes a Chrome   *|
|* trace event file (chrome://tracing, Perfetto). Plain C, so that it links  *|
|* into AOT shared libraries as well as into attn-run's JIT.                  *|
|*                                                                            *|
|* Run-time checks: compiled code calls attnrt_check_failed(message) where a  *|
|* check fails (a dynamic size that does not match, an argument descriptor    *|
|* that does not fit the function's type, a failed CUDA kernel call); the     *|
|* AttnFuse tools lower every cf.assert to such a call.                       *|
|*                                                                            *|
|* AMX: GEMMs compiled for a target with AMX ask attnrt_amx_available()      *|
|* whether the OS lets the process use the tiles (Amx.c).                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_RUNTIME_ATTNRUNTIME_H
#define ATTN_RUNTIME_ATTNRUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Called by lowered code when span `id` starts / ends. Recording is off until
/// attnrt_trace_enable(1); when off and no hook is set these cost two loads
/// and two branches.
void attnrt_trace_begin(int64_t id);
void attnrt_trace_end(int64_t id);

/// Turns recording on (1) or off (0).
void attnrt_trace_enable(int on);

/// Called on the thread of the span, at once, for each begin (1) and end (0)
/// of span `id`, whether or not recording is on: how a profiler takes the
/// spans as they happen (the Python front end's `profile=True` opens and
/// closes a torch.profiler event in it).
typedef void (*attnrt_trace_hook)(int64_t id, int isBegin);

/// Installs `hook` (NULL: none, the default) for all threads. A library
/// from attn-compile --emit=so has its own.
void attnrt_trace_set_hook(attnrt_trace_hook hook);

/// Drops all recorded events.
void attnrt_trace_reset(void);

/// Number of recorded begin/end events.
int64_t attnrt_trace_num_events(void);

/// Writes the recorded spans as a Chrome trace (`{"traceEvents": [...]}` of
/// complete "X" events with name, ts and dur in microseconds, pid, tid).
/// `names[id]` names span `id`; ids outside [0, numNames) are written as
/// "span<id>". Unmatched begins are dropped. Returns 0 on success, -1 if the
/// file cannot be written.
int attnrt_trace_write_json(const char *path, const char *const *names,
                            int64_t numNames);

/// The exit status of the default check-failure handler (EX_SOFTWARE).
#define ATTNRT_CHECK_FAILURE_EXIT_STATUS 70

/// Receives the message of a failed run-time check. It must not return: exit,
/// or longjmp back into the caller of the compiled function (the buffers the
/// function allocated before the check are then leaked). If it returns,
/// attnrt_check_failed aborts.
typedef void (*attnrt_check_failure_handler)(const char *message);

/// Installs `handler` for all threads and returns the previous one; NULL
/// restores the default, which prints "error: run-time check failed:
/// <message>" on stderr and exits with ATTNRT_CHECK_FAILURE_EXIT_STATUS.
attnrt_check_failure_handler
attnrt_set_check_failure_handler(attnrt_check_failure_handler handler);

/// Called by compiled code when a run-time check fails. Never returns.
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void attnrt_check_failed(const char *message);

/// Called by compiled code when a run-time check fails inside a parallel
/// region, on any of its threads: stores `message` in `*slot` unless the slot
/// already holds one (atomically; the first failure wins) and returns. The
/// compiled code skips the rest of the failing iteration and, once the
/// region has joined, calls attnrt_check_failed with the slot's message on
/// the calling thread.
void attnrt_check_failed_deferred(const char **slot, const char *message);

/// The one C type of every library function's `attn_packed_<f>` entry
/// point (docs/attn-compile.md): args[i] points to argument i of
/// `_mlir_ciface_<f>` (for a tensor, to the pointer to its descriptor); a
/// scalar return value is stored through args[n].
typedef void (*attnrt_packed_function)(void **args);

/// Calls `function(args)` and returns 0, or, when a run-time check fails
/// during the call, returns 1 at once with the check's
/// message in `message` (truncated to `messageSize` bytes with the NUL;
/// `message` may be NULL) instead of calling the check-failure handler:
/// how a caller that cannot longjmp, such as Python's ctypes, gets a status.
/// The buffers the call had allocated are leaked. A check that fails on a
/// thread of a parallel region reaches the calling thread once the region
/// has joined (attnrt_check_failed_deferred). Calls nest.
int attnrt_call_packed(attnrt_packed_function function, void **args,
                       char *message, int64_t messageSize);

/// The memref descriptor through which compiled code takes and returns a
/// tensor of rank `rank`: MLIR's StridedMemRefType<T, rank>
/// (mlir/ExecutionEngine/CRunnerUtils.h, which C++ code uses to read it; the
/// typed structs of attn-compile's C headers are the same), all fields 64
/// bits wide, so C reads it as int64_t words:
///   [0] allocated pointer (what free() takes), [1] aligned pointer,
///   [2] offset, [3, 3 + rank) sizes, [3 + rank, 3 + 2 * rank) strides,
/// offset and strides in elements. Results that pack into a struct are
/// consecutive descriptors.
#define ATTNRT_MEMREF_ALIGNED(desc) ((desc)[1])
#define ATTNRT_MEMREF_OFFSET(desc) ((desc)[2])
#define ATTNRT_MEMREF_SIZES(desc) ((desc) + 3)
#define ATTNRT_MEMREF_STRIDES(desc, rank) ((desc) + 3 + (rank))

/// Called by each `_mlir_ciface_` entry point for each tensor argument:
/// checks that the memref `descriptor` (layout above) fits the argument's
/// type and is what the compiled code reads, a dense row-major array at
/// `aligned`:
/// static sizes as in `staticSizes` (negative: dynamic, then any size >= 0),
/// a byte size below 2^63 with `elementBytes`-byte elements, and, unless the
/// array is empty, a non-null `aligned`, offset 0 and row-major strides (a
/// dim of size 1 may have any stride). Calls attnrt_check_failed with a
/// message that starts with `what` otherwise.
void attnrt_check_argument(const int64_t *descriptor, int64_t rank,
                           int64_t elementBytes, const int64_t *staticSizes,
                           const char *what);

/// Whether this process may run AMX tile instructions: 1 when the OS has
/// granted the tile data state (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA), requested on the first call), 0 otherwise, on other
/// systems and when the environment variable ATTNFUSE_AMX is "0" (forces
/// the fallback). Decided once per process, thread-safe. Code compiled with
/// the lowering's `amx` option calls it once per GEMM and runs its AMX
/// tiles only when it returns 1.
int32_t attnrt_amx_available(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_ATTNRUNTIME_H */
