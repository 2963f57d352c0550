/*
 * flagos/ext/graphs.h — FLAGOS_EXTENSION_GRAPHS (ABI 1.3): stream capture.
 * Work enqueued on a capturing stream is recorded instead of run; the
 * recording becomes a graph, the graph an executable, and each launch of
 * the executable enqueues the recorded work again. Shaped like CUDA graphs
 * (cudaStreamBeginCapture ... cudaGraphLaunch) so that torch.flagos.graph
 * and make_graphed_callables (docs/graphs.md) run on it. Optional: without
 * it, the core refuses graph capture with a message naming the plugin.
 *
 * Model. capture_begin puts a created stream into capture mode. Until
 * capture_end, every call that enqueues work on it (memcpy_async between
 * device and pinned host memory or on one device, memset_async,
 * event_record, stream_wait_event, native kernels' run(), the testing
 * extension's delay) is recorded and returns at once without running
 * anything. capture_end turns the recording into a graph and takes the
 * stream out of capture mode. A launch enqueues the recorded work, in
 * recorded order, on the launch stream: after the work enqueued there
 * before the launch, before the work enqueued after it. Launches of one
 * executable on one stream run one after the other.
 *
 * Pointers are captured, not data. Recorded work reads and writes the
 * device and pinned host addresses it was given, at each launch: those
 * buffers must stay allocated (and must not be reused for other data the
 * launch would clobber) while any executable made from the graph lives and
 * until its last launch completed. Arguments passed by value (memset's
 * byte, a kernel's scalars) are fixed at capture.
 *
 * What a capture forbids. These calls fail with FLAGOS_ERROR_STREAM_CAPTURE
 * and *invalidate* the capture: the stream stays in capture mode, later
 * work enqueued on it fails with the same status, and capture_end reports
 * it and gives no graph but ends capture mode, so the stream is usable
 * again after it:
 *  - stream_synchronize and stream_query of the capturing stream;
 *  - event_synchronize and event_query of an event whose latest record was
 *    made in a capture still underway;
 *  - memcpy_async between the device and pageable host memory on the
 *    capturing stream (it would be synchronous, or copy bytes the caller
 *    may change before a launch);
 *  - device_synchronize of the capturing stream's device.
 * Blocking calls that name no capturing stream (memcpy_sync, mem_free,
 * device_synchronize of another device) may also fail with
 * FLAGOS_ERROR_STREAM_CAPTURE while a capture is underway in the calling
 * thread (CUDA-shaped plugins capture in thread-local mode); portable
 * callers make none of them during a capture.
 *
 * Collectives (flagos/ext/collectives.h) on a capturing stream are
 * captured where the plugin can replay them (NCCL can); else they fail with
 * FLAGOS_ERROR_STREAM_CAPTURE and invalidate the capture.
 *
 * Events. event_record on a capturing stream marks a point of the capture:
 * stream_wait_event of the capturing stream on it needs no work (the stream
 * orders it), and on an event still pending from outside the capture fails
 * with FLAGOS_ERROR_STREAM_CAPTURE. Whether launches record the event again
 * is the plugin's choice (the host plugin does, CUDA does not): after a
 * capture, record an event again before querying or waiting on it. Another
 * stream waiting on an event recorded in a capture joins the capture where
 * the plugin supports multi-stream capture (multi_stream, below), and must
 * be joined back (record on it, wait on the origin stream) before
 * capture_end; a plugin without it fails that wait with
 * FLAGOS_ERROR_STREAM_CAPTURE and invalidates the capture.
 *
 * Errors. Every function returns a status and sets last_error_message on
 * failure. A call that fails recorded nothing. Handles are plugin-owned
 * objects given to the caller; destroying NULL is a no-op. A plugin that
 * learns only at first use that its runtime cannot capture (the entry point
 * must not open the runtime) keeps the extension and answers
 * FLAGOS_ERROR_UNSUPPORTED from every call, with the reason; callers ask
 * capture_status first.
 *
 * Threading. Every function is thread-safe. A capture belongs to its
 * stream: any thread may enqueue work on a capturing stream (autograd's
 * device threads do). End a capture on the thread that began it (CUDA's
 * thread-local capture mode refuses another one with
 * FLAGOS_ERROR_STREAM_CAPTURE).
 */
#ifndef FLAGOS_EXT_GRAPHS_H_
#define FLAGOS_EXT_GRAPHS_H_

#include "flagos/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_GRAPHS_EXT_VERSION 0u

/* A captured recording. Made by capture_end, released by graph_destroy. */
typedef struct flagos_graph_s* flagos_graph_t;
/* A launchable form of a graph. Made by graph_instantiate, released by
 * graph_exec_destroy. Independent of its graph once made. */
typedef struct flagos_graph_exec_s* flagos_graph_exec_t;

/* What capture_status reports. */
#define FLAGOS_CAPTURE_NONE 0        /* the stream is not capturing */
#define FLAGOS_CAPTURE_ACTIVE 1      /* capturing; work enqueued on it is recorded */
#define FLAGOS_CAPTURE_INVALIDATED 2 /* capturing, but a forbidden call broke it */

typedef struct flagos_graphs_ext {
  flagos_extension_t base; /* type FLAGOS_EXTENSION_GRAPHS */

  /* 1 when another stream may join a capture by waiting on an event
   * recorded in it (see "Events"), else 0. */
  int32_t multi_stream;

  /* Puts `stream` into capture mode. FLAGOS_ERROR_INVALID_ARGUMENT for a
   * device's default stream (capture on a created stream), or a stream
   * already capturing; FLAGOS_ERROR_INVALID_HANDLE for a stale one. Work
   * enqueued on the stream before the call still runs as usual. */
  flagos_status_t (*capture_begin)(flagos_stream_t stream);

  /* Ends the capture on `stream` and, on success, hands the recording to
   * the caller as *graph (caller-owned until graph_destroy). An invalidated
   * capture ends too, but returns FLAGOS_ERROR_STREAM_CAPTURE (naming the
   * call that broke it) and writes no graph. FLAGOS_ERROR_INVALID_STATE
   * when the stream is not capturing. Never blocks on device work. */
  flagos_status_t (*capture_end)(flagos_stream_t stream, flagos_graph_t* graph);

  /* Writes FLAGOS_CAPTURE_* for `stream` to *status and, when `id` is not
   * NULL, an identifier of the capture underway (unique within the
   * process, never 0; 0 when not capturing). Never blocks, never
   * invalidates: the one call on a capturing stream always allowed. */
  flagos_status_t (*capture_status)(flagos_stream_t stream, int32_t* status, uint64_t* id);

  /* Makes a launchable executable of `graph` (caller-owned until
   * graph_exec_destroy). The graph may be destroyed afterwards; the
   * executable keeps what it needs. */
  flagos_status_t (*graph_instantiate)(flagos_graph_t graph, flagos_graph_exec_t* exec);

  /* Enqueues the executable's work on `stream`, a stream of the device the
   * graph was captured on, and returns at once (see "Model" for the order).
   * Launching one executable on two streams without ordering the launches
   * (events) is undefined: both would use the same buffers. A stream that
   * is itself capturing may be refused with FLAGOS_ERROR_UNSUPPORTED. */
  flagos_status_t (*graph_launch)(flagos_graph_exec_t exec, flagos_stream_t stream);

  /* Releases a graph. Executables made from it are unaffected. */
  flagos_status_t (*graph_destroy)(flagos_graph_t graph);

  /* Releases an executable. Legal while launches are pending: they still
   * complete, then the plugin lets go of what they used. */
  flagos_status_t (*graph_exec_destroy)(flagos_graph_exec_t exec);
} flagos_graphs_ext_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_EXT_GRAPHS_H_ */
