// The device tracer behind FLAGOS_EXTENSION_PROFILER (flagos/ext/profiler.h)
// on a CUPTI-shaped activity API: while a profiler is started the tracer
// has CUPTI record kernels, copies and memsets, keeps those that ran on this
// plugin's streams, and ties each to the correlation id the core pushed on
// the enqueuing thread through CUPTI's external correlation ids.
//
// One profiler is started at a time (the ABI's rule, and CUPTI's activity
// buffers are process-wide). Records arrive in CUPTI's buffer callbacks, on
// whatever thread CUPTI flushes from; everything here is thread-safe.
#pragma once

#include <cstdint>

#include "flagos/ext/profiler.h"
#include "stream.h"

namespace flagos_cudalike {

// The plugin clock: CLOCK_MONOTONIC, which the tracer is given as its
// timestamp source; a tracer that cannot take one keeps its own (the core
// measures the offset either way).
int64_t tracer_now_ns();

flagos_status_t tracer_create(const char* fn, uint64_t max_records, flagos_profiler_t* out);
flagos_status_t tracer_start(const char* fn, flagos_profiler_t p, uint32_t flags);
flagos_status_t tracer_stop(const char* fn, flagos_profiler_t p);
flagos_status_t tracer_collect(const char* fn, flagos_profiler_t p, const flagos_activity_record_t** records,
                               size_t* count, uint64_t* dropped);
flagos_status_t tracer_destroy(const char* fn, flagos_profiler_t p);

// The calling thread's correlation stack (mirrored into the tracer once it
// is loaded). INVALID_STATE from pop when empty.
flagos_status_t tracer_push(uint64_t id);
flagos_status_t tracer_pop(uint64_t* id);

// A stream about to be destroyed: while a profiler runs, its tracer id is
// kept so that its records still name it.
void tracer_forget_stream(flagos_stream_t handle, const Stream& stream);

}  // namespace flagos_cudalike
