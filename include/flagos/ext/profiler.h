/*
 * flagos/ext/profiler.h — FLAGOS_EXTENSION_PROFILER (ABI 1.4): device
 * activity for torch.profiler. While a profiler runs, the plugin records
 * what its devices execute (kernels and other stream tasks, copies, memsets,
 * optionally device memory allocations) into a buffer it owns; the core
 * drains that buffer and hands the spans to torch's profiler (docs/profiler.md).
 * Shaped like PJRT's profiler extension (create, start, stop, collect,
 * destroy) with the records typed instead of serialized. Optional: without
 * it, a profile shows the CPU side only.
 *
 * Model. A profiler is a plugin-owned object made by profiler_create. At
 * most one profiler of a process is started at a time. Between
 * profiler_start and profiler_stop the plugin appends a record for each piece
 * of work that *completes* on any stream of any device, and (when asked) for
 * each device allocation and free. profiler_stop waits for nothing: work
 * enqueued before it and completing after it may or may not be recorded.
 * profiler_collect hands over what was recorded since the previous collect.
 *
 * Correlation. The core calls push_correlation(id) on the thread that is
 * about to enqueue work for an operator and pop_correlation() after it. Each
 * record carries the innermost id pushed on the *enqueuing* thread at the
 * moment its work was enqueued (0 when none was), so a span can be tied to
 * the operator that launched it even though it runs later on another thread
 * or on the device. push/pop work whether or not a profiler runs, and cost a
 * thread-local store; the core calls them only while a profile is active.
 *
 * Clock. Timestamps are nanoseconds on the plugin's own clock, which must be
 * monotonic and advance at the rate of the host's CLOCK_MONOTONIC. The core
 * relates it to its own clocks by reading clock_now next to a host clock
 * read (a constant offset); a plugin whose device timestamps come from the
 * host's CLOCK_MONOTONIC (the host plugin) has offset 0.
 *
 * Errors. Every function returns a status and sets last_error_message on
 * failure; a call that fails changes nothing. A plugin that learns only at
 * first use that its tracer is missing (the entry point must not open the
 * runtime) keeps the extension and answers FLAGOS_ERROR_RUNTIME_UNAVAILABLE
 * from profiler_create with the reason; the core then profiles the CPU side
 * only and says why once.
 *
 * Threading. Every function is thread-safe. Records are appended from
 * whatever threads the plugin runs work on; collect may run concurrently
 * with recording.
 */
#ifndef FLAGOS_EXT_PROFILER_H_
#define FLAGOS_EXT_PROFILER_H_

#include "flagos/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_PROFILER_EXT_VERSION 0u

/* A profiler. Made by profiler_create, released by profiler_destroy. */
typedef struct flagos_profiler_s* flagos_profiler_t;

/* What a record describes (flagos_activity_record_t.kind). Append-only; a
 * reader skips kinds it does not know. */
#define FLAGOS_ACTIVITY_KERNEL 0 /* a kernel or other task run on a stream */
#define FLAGOS_ACTIVITY_MEMCPY 1 /* a copy run on a stream; copy_kind says which */
#define FLAGOS_ACTIVITY_MEMSET 2 /* a memset run on a stream */
#define FLAGOS_ACTIVITY_MEMORY 3 /* a device allocation (bytes > 0) or free (bytes < 0);
                                    instant: begin_ns == end_ns, stream NULL */

/* What profiler_start records (flags; 0 means everything the plugin can). */
#define FLAGOS_PROFILE_STREAM_WORK 0x1u /* KERNEL, MEMCPY and MEMSET records */
#define FLAGOS_PROFILE_MEMORY 0x2u      /* MEMORY records */

/* What profiler_create is given. Owned by the caller; read during the call
 * only. */
typedef struct flagos_profiler_options {
  size_t struct_size; /* sizeof as the caller compiled it */
  /* Records kept between two collects; further ones are counted as dropped.
   * 0 means the plugin's default (at least 65536). */
  uint64_t max_records;
} flagos_profiler_options_t;

/* One recorded activity. Written by the plugin into its own buffer (see
 * profiler_collect); the core reads a member only when struct_size covers it. */
typedef struct flagos_activity_record {
  size_t struct_size;      /* sizeof as the plugin compiled it */
  int32_t kind;            /* FLAGOS_ACTIVITY_* */
  flagos_device_t device;  /* the device the work ran on */
  /* The stream the work ran on, as the plugin's handle (the core maps it to
   * its own stream ids). NULL for MEMORY records. The stream may have been
   * destroyed since; the value is then only a name. */
  flagos_stream_t stream;
  uint64_t correlation_id; /* see "Correlation"; 0 when none was pushed */
  int64_t begin_ns;        /* plugin clock (see "Clock") */
  int64_t end_ns;          /* >= begin_ns */
  /* MEMCPY, MEMSET: bytes moved or set. MEMORY: bytes allocated (> 0) or
   * freed (< 0). 0 otherwise. */
  int64_t bytes;
  int32_t copy_kind;       /* MEMCPY: FLAGOS_MEMCPY_*; -1 when unknown or not a copy */
  int32_t reserved0;       /* 0 */
  /* What ran: a kernel's name ("aten::mm.out"), the API call for other work
   * ("memcpy_async"). NUL-terminated, never NULL; plugin-owned, valid until the
   * next profiler_collect or profiler_destroy of this profiler. */
  const char* name;
  uint64_t address;        /* MEMORY: the block's device address; 0 otherwise */
} flagos_activity_record_t;

typedef struct flagos_profiler_ext {
  flagos_extension_t base; /* type FLAGOS_EXTENSION_PROFILER */

  /* Writes the plugin clock's current reading to *now_ns. Never blocks, never
   * touches the device. */
  flagos_status_t (*clock_now)(int64_t* now_ns);

  /* Makes a stopped profiler (caller-owned until profiler_destroy).
   * `options` may be NULL (defaults). FLAGOS_ERROR_RUNTIME_UNAVAILABLE when
   * the device tracer cannot be opened (see "Errors"). */
  flagos_status_t (*profiler_create)(const flagos_profiler_options_t* options,
                                     flagos_profiler_t* profiler);

  /* Starts recording what `flags` (FLAGOS_PROFILE_*) name.
   * FLAGOS_ERROR_INVALID_STATE when this or another profiler is started;
   * FLAGOS_ERROR_UNSUPPORTED for flags the plugin cannot record. Records
   * left from an earlier start and not collected are discarded. */
  flagos_status_t (*profiler_start)(flagos_profiler_t profiler, uint32_t flags);

  /* Stops recording; what was recorded stays until collected. Does not wait
   * for device work. FLAGOS_ERROR_INVALID_STATE when not started. */
  flagos_status_t (*profiler_stop)(flagos_profiler_t profiler);

  /* Hands over the records made since the previous collect: *records points
   * at *count records laid out *stride bytes apart (the plugin's
   * sizeof(flagos_activity_record_t); a reader steps by it, never by its own
   * sizeof). The array and its names are plugin-owned and stay valid until
   * the next profiler_collect or profiler_destroy of this profiler.
   * *dropped (may be NULL) receives how many records did not fit since the
   * previous collect. Allowed while started or stopped; *count 0 and
   * *records NULL when nothing was recorded. Records are in no particular
   * order. */
  flagos_status_t (*profiler_collect)(flagos_profiler_t profiler,
                                      const flagos_activity_record_t** records, size_t* count,
                                      size_t* stride, uint64_t* dropped);

  /* Releases a profiler, stopping it first when started. NULL is a no-op. */
  flagos_status_t (*profiler_destroy)(flagos_profiler_t profiler);

  /* Pushes `id` (non-zero) on the calling thread's correlation stack (see
   * "Correlation"). FLAGOS_ERROR_INVALID_ARGUMENT for 0. */
  flagos_status_t (*push_correlation)(uint64_t id);

  /* Pops the calling thread's innermost id into *id (may be NULL).
   * FLAGOS_ERROR_INVALID_STATE when the stack is empty. */
  flagos_status_t (*pop_correlation)(uint64_t* id);
} flagos_profiler_ext_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_EXT_PROFILER_H_ */
