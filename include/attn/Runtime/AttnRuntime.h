/*===- AttnRuntime.h - the small C runtime of compiled attn code -*- C -*-===*\
|*                                                                            *|
|* Code lowered with `attn-lower-to-cpu{trace=true}` calls                    *|
|* attnrt_trace_begin(id) / attnrt_trace_end(id) around every op or kernel;   *|
|* the module attribute `attn.trace_names` maps ids to span names. This      *|
|* runtime records the calls with monotonic timestamps and writes a Chrome   *|
|* trace event file (chrome://tracing, Perfetto). Plain C, so that it links  *|
|* into AOT shared libraries as well as into attn-run's JIT.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_RUNTIME_ATTNRUNTIME_H
#define ATTN_RUNTIME_ATTNRUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Called by lowered code when span `id` starts / ends. Recording is off until
/// attnrt_trace_enable(1); when off these cost one load and a branch.
void attnrt_trace_begin(int64_t id);
void attnrt_trace_end(int64_t id);

/// Turns recording on (1) or off (0).
void attnrt_trace_enable(int on);

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

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_ATTNRUNTIME_H */
