// FLAGOS_EXTENSION_PROFILER: stream workers time each task they run and keep
// a record of it, tagged with the stream and with the correlation id that was
// innermost on the enqueuing thread. With option profiler=0 the plugin leaves
// the extension out of the chain.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "flagos/ext/profiler.h"
#include "stream.h"

namespace flagos_host {

// The extension; `next` follows it in the chain (set while the first
// handshake configures the plugin, before the table is returned).
const flagos_extension_t* profiler_extension();
void set_profiler_next(const flagos_extension_t* next);

// True while a profiler records stream work: one relaxed load, the only cost
// a stream enqueue pays when no profiler runs.
bool tracing_stream_work();
// Wraps `task` so that running it appends a record (name `fn`, a string
// literal) for work enqueued now on `stream`. Call only when
// tracing_stream_work() said so.
Task traced_task(const char* fn, Stream* stream, const TaskTrace& trace, Task task);
// A device allocation (bytes > 0) or free (bytes < 0), when memory is recorded.
void trace_memory(int32_t device, const void* addr, int64_t bytes);
bool tracing_memory();

// The mutexes behind the profilers and their records; held across fork().
std::vector<std::mutex*> profiler_mutexes();

}  // namespace flagos_host
