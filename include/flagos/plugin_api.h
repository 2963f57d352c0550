/*
 * flagos/plugin_api.h — the plugin's function table and the one entry symbol.
 *
 * A plugin is a shared library exporting exactly one symbol,
 * FLAGOS_PLUGIN_ENTRY_SYMBOL, which hands the core a static table of function
 * pointers. Everything else (extensions, kernels) is reached from that table.
 *
 * Rules that hold for every member unless its comment says otherwise:
 *  - Errors: every function except last_error_message returns a
 *    flagos_status_t. On failure it also sets the calling thread's last-error
 *    message. No C++ exception, longjmp or abort() escapes a call; running out
 *    of memory is a return code, never a crash.
 *  - Threading: every function is thread-safe. get_device/set_device are
 *    per-thread and lock-free. No function changes the calling thread's
 *    current device, except set_device.
 *  - Devices: functions take an explicit device ordinal; an ordinal outside
 *    [0, device_count) returns FLAGOS_ERROR_INVALID_DEVICE.
 *  - Handles: destroying NULL is a no-op returning FLAGOS_SUCCESS. A handle
 *    from another plugin or already destroyed is undefined behaviour; plugins
 *    should return FLAGOS_ERROR_INVALID_HANDLE when they can tell.
 *  - Out-parameters are written only on FLAGOS_SUCCESS (or FLAGOS_NOT_READY
 *    where documented). A NULL out-pointer returns FLAGOS_ERROR_INVALID_ARGUMENT.
 *  - Laziness: the entry symbol, last_error_message, device_count and
 *    get_device_properties never fail because hardware is absent, and none of
 *    them create a device context; real driver initialisation happens at the
 *    first call that needs a device (memory, streams, events), so a process
 *    may load the plugin and then fork.
 */
#ifndef FLAGOS_PLUGIN_API_H_
#define FLAGOS_PLUGIN_API_H_

#include "flagos/abi.h"
#include "flagos/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Services the core offers a plugin (ABI 1.6), reached from the host info.
 * Owned by the core. Unlike the host info that carries it, the table and its
 * `context` stay valid for the life of the process: a plugin keeps the
 * pointer. Every function is thread-safe, may be called from any thread (a
 * plugin's own worker threads included, and from inside a kernel's run())
 * and never synchronises a device; the memory functions may call the
 * plugin's mem_alloc, mem_free and event functions, as the core's allocator
 * does, and must not be called during the entry call (log may). A member may
 * be absent or NULL: test with FLAGOS_HAS_FN. */
typedef struct flagos_host_services {
  size_t struct_size;
  void* context; /* the first argument of every function below */

  /* Device memory of at least `bytes` from the core's caching allocator for
   * `device`, in stream order on `stream` (a stream of this plugin on
   * `device`): work enqueued on `stream` after this call may use it. For a
   * vendor kernel's scratch (an aclnn-style workspace), served from the
   * allocator's cache (a mem_alloc only when the cache has no fit).
   * bytes == 0 sets *ptr = NULL.
   * The block is the plugin's until workspace_free. While `stream` captures a
   * graph the block comes from the graph's private pool. Errors:
   * FLAGOS_ERROR_OUT_OF_MEMORY (after the allocator returned its cache and
   * retried once), FLAGOS_ERROR_INVALID_DEVICE, FLAGOS_ERROR_INVALID_ARGUMENT;
   * the reason is in the core's log (out of memory: the first time per
   * plugin, since a plugin may answer it by declining the call). */
  flagos_status_t (*workspace_alloc)(void* context, flagos_device_t device, flagos_stream_t stream,
                                     uint64_t bytes, void** ptr);
  /* Gives back a workspace_alloc block, stream-ordered: call it right after
   * enqueueing the last work that uses the block, without waiting. The block
   * is reused only by work enqueued later on its stream, and by other
   * streams once the work record_stream marked has completed. NULL is a
   * no-op. FLAGOS_ERROR_INVALID_ARGUMENT for a pointer that is not a live
   * workspace block. */
  flagos_status_t (*workspace_free)(void* context, void* ptr);
  /* Marks that work enqueued so far on `stream` uses the live block of the
   * core's allocator holding `ptr` (any address inside a workspace or a
   * tensor's memory), as torch's Tensor.record_stream does: the block is not
   * reused before that work completed. The block's own stream needs no mark.
   * FLAGOS_ERROR_INVALID_ARGUMENT when `ptr` is in no live block. */
  flagos_status_t (*record_stream)(void* context, void* ptr, flagos_stream_t stream);
  /* One line through the core's log, as "[flagos] plugin <name>: <message>"
   * on stderr at `level` (FLAGOS_LOG_LEVEL_*). `message` is copied, cut at
   * its first newline; NULL or empty prints nothing. */
  void (*log)(void* context, int32_t level, const char* message);
} flagos_host_services_t;

#define FLAGOS_LOG_LEVEL_INFO 0
#define FLAGOS_LOG_LEVEL_WARNING 1
#define FLAGOS_LOG_LEVEL_ERROR 2

/* ------------------------------------------------------------------------ */
/* What the core tells the plugin at the handshake. Owned by the core; valid
 * only during the entry call: a plugin copies what it needs to keep (the
 * services table excepted, see above). */
typedef struct flagos_host_info {
  size_t struct_size;
  uint32_t abi_major;         /* FLAGOS_ABI_MAJOR the core was built with */
  uint32_t abi_minor;         /* FLAGOS_ABI_MINOR the core was built with */
  const char* host_name;      /* e.g. "torch_fl" or "flagos-conformance" */
  const char* host_version;
  /* Plugin options, from the user (FLAGOS_PLUGIN_OPTIONS="k=v,k2=v2") or a
   * test harness: num_options parallel key/value strings. Unknown keys must be
   * ignored (and may be reported through last_error_message by no call). */
  size_t num_options;
  const char* const* option_keys;
  const char* const* option_values;
  /* ABI 1.6: the core's services, or NULL from a host that offers none (the
   * conformance runner). Process lifetime. */
  const flagos_host_services_t* services;
} flagos_host_info_t;

/* ------------------------------------------------------------------------ */
/* Extensions: optional feature tables chained from the plugin table. Each
 * extension struct begins with this base. Process lifetime, plugin-owned,
 * read-only. The core ignores types it does not know. Types >= 0x10000 are
 * vendor-private. */
typedef struct flagos_extension {
  size_t struct_size;                   /* size of the whole extension struct */
  int32_t type;                         /* FLAGOS_EXTENSION_* */
  uint32_t version;                     /* the extension's own minor version */
  const struct flagos_extension* next;  /* NULL ends the chain */
} flagos_extension_t;

#define FLAGOS_EXTENSION_KERNELS 1 /* flagos/ext/kernels.h */
#define FLAGOS_EXTENSION_TESTING 2 /* flagos/ext/testing.h */
#define FLAGOS_EXTENSION_DIAGNOSTICS 3 /* flagos/ext/diagnostics.h, ABI 1.1 */
#define FLAGOS_EXTENSION_COLLECTIVES 4 /* flagos/ext/collectives.h, ABI 1.2 */
#define FLAGOS_EXTENSION_GRAPHS 5 /* flagos/ext/graphs.h, ABI 1.3 */
#define FLAGOS_EXTENSION_PROFILER 6 /* flagos/ext/profiler.h, ABI 1.4 */
#define FLAGOS_EXTENSION_IPC 7 /* flagos/ext/ipc.h, ABI 1.5 */

/* Memory copy directions. */
#define FLAGOS_MEMCPY_HOST_TO_HOST 0
#define FLAGOS_MEMCPY_HOST_TO_DEVICE 1
#define FLAGOS_MEMCPY_DEVICE_TO_HOST 2
#define FLAGOS_MEMCPY_DEVICE_TO_DEVICE 3 /* both pointers on the same device */

/* What pointer_get_attributes reports. */
#define FLAGOS_POINTER_UNKNOWN 0     /* not the plugin's: ordinary (pageable) host memory */
#define FLAGOS_POINTER_DEVICE 1      /* from mem_alloc (any offset inside the block) */
#define FLAGOS_POINTER_PINNED_HOST 2 /* from host_alloc (any offset inside the block) */

/* event_create flags. */
#define FLAGOS_EVENT_DEFAULT 0u
#define FLAGOS_EVENT_TIMING 1u /* needs FLAGOS_CAP_EVENT_TIMING */

/* ------------------------------------------------------------------------ */
/* The plugin table. Static, process lifetime, never modified after the entry
 * call returns it. Members marked [required] must be non-NULL or the core
 * refuses the plugin; [optional] members may be NULL and mean "unsupported". */
typedef struct flagos_plugin_api {
  size_t struct_size;     /* sizeof(flagos_plugin_api_t) the plugin compiled */
  uint32_t abi_major;     /* FLAGOS_ABI_MAJOR the plugin compiled */
  uint32_t abi_minor;     /* FLAGOS_ABI_MINOR the plugin compiled */
  const char* name;       /* short name, [a-z0-9_]+, e.g. "cuda", "host" */
  const char* version;    /* the plugin's own version string */
  const flagos_extension_t* extensions; /* chain, or NULL */

  /* [required] The calling thread's message for the most recent failing call
   * into this plugin. Plugin-owned, never NULL ("" when none), valid until the
   * same thread's next call into the plugin. Successful calls leave it alone. */
  const char* (*last_error_message)(void);

  /* ---- devices --------------------------------------------------------- */

  /* [required] Number of usable devices. Never touches a device context.
   * With no hardware, no driver, or a driver that fails to enumerate, sets
   * *count = 0 and returns FLAGOS_SUCCESS: absence is not an error. The value
   * is stable for the process lifetime. */
  flagos_status_t (*device_count)(int32_t* count);

  /* [required] Fills `props` (see flagos_device_properties_t's size rule).
   * Must not create a device context. */
  flagos_status_t (*get_device_properties)(flagos_device_t device,
                                           flagos_device_properties_t* props);

  /* [required] The calling thread's current device (0 until set_device). */
  flagos_status_t (*get_device)(flagos_device_t* device);
  /* [required] Sets the calling thread's current device. Lazy: does not create
   * a device context by itself. */
  flagos_status_t (*set_device)(flagos_device_t device);

  /* [required] Blocks until all work on every stream of `device` completed.
   * Returns the first asynchronous error found, if any. */
  flagos_status_t (*device_synchronize)(flagos_device_t device);

  /* [optional] Free and total device memory in bytes. */
  flagos_status_t (*mem_get_info)(flagos_device_t device, uint64_t* free_bytes,
                                  uint64_t* total_bytes);

  /* [optional] *can_access = 1 when memcpy_peer_async from `peer` to `device`
   * avoids the host, else 0. */
  flagos_status_t (*device_can_access_peer)(flagos_device_t device,
                                            flagos_device_t peer,
                                            int32_t* can_access);

  /* ---- memory ---------------------------------------------------------- */

  /* [required] Allocates `size` bytes of device memory. size == 0 sets
   * *ptr = NULL and succeeds. Aligned to props.alloc_alignment. Contents are
   * unspecified. Fails with FLAGOS_ERROR_OUT_OF_MEMORY (device usable
   * afterwards) when the request cannot be met. The memory stays valid until
   * mem_free. */
  flagos_status_t (*mem_alloc)(flagos_device_t device, uint64_t size, void** ptr);

  /* [required] Frees memory from mem_alloc on the same device. NULL is a
   * no-op. May block until pending work using the block completed; the core
   * guarantees (through events) that no stream still uses it. */
  flagos_status_t (*mem_free)(flagos_device_t device, void* ptr);

  /* [optional, with FLAGOS_CAP_PINNED_HOST] Page-locked host memory that the
   * CPU may read and write, and that async copies may use after returning.
   * size == 0 sets *ptr = NULL. */
  flagos_status_t (*host_alloc)(uint64_t size, void** ptr);
  /* [optional, with host_alloc] NULL is a no-op. */
  flagos_status_t (*host_free)(void* ptr);

  /* [required] Classifies `ptr` (FLAGOS_POINTER_*). For DEVICE pointers writes
   * the owning device to *device; otherwise *device = -1. Never dereferences
   * `ptr`. Unknown pointers are FLAGOS_POINTER_UNKNOWN with FLAGOS_SUCCESS. */
  flagos_status_t (*pointer_get_attributes)(const void* ptr, int32_t* kind,
                                            flagos_device_t* device);

  /* ---- copies ---------------------------------------------------------- */

  /* [required] Synchronous copy of `size` bytes in direction `kind`
   * (FLAGOS_MEMCPY_*). Ordered after all work previously enqueued on the
   * default stream of the device(s) involved, and complete on return.
   * size == 0 succeeds without touching either pointer. */
  flagos_status_t (*memcpy_sync)(void* dst, const void* src, uint64_t size,
                                 int32_t kind);

  /* [required] Enqueues a copy on `stream`. Host-side buffer rule: when the
   * host buffer is pinned (host_alloc), the plugin may access it until the
   * stream reaches the copy, so the caller keeps it alive and unchanged until
   * then. When it is ordinary pageable memory, the plugin has finished with
   * it when the call returns (an H2D source may be reused at once; a D2H
   * destination is written before return — the call is then synchronous).
   * Device pointers must belong to the stream's device (use memcpy_peer_async
   * across devices). size == 0 succeeds without touching either pointer
   * (both may be NULL; the stream must still be valid). */
  flagos_status_t (*memcpy_async)(void* dst, const void* src, uint64_t size,
                                  int32_t kind, flagos_stream_t stream);

  /* [optional, needed for multi-device plugins] Enqueues a device-to-device
   * copy between two devices on `stream` (a stream of dst_device). The copy is
   * ordered after prior work on `stream` only; the caller orders it against
   * the source device's streams with events. Works without
   * FLAGOS_CAP_PEER_ACCESS too, possibly staged through the host. size == 0
   * succeeds without touching either pointer. */
  flagos_status_t (*memcpy_peer_async)(void* dst, flagos_device_t dst_device,
                                       const void* src, flagos_device_t src_device,
                                       uint64_t size, flagos_stream_t stream);

  /* [required] Enqueues: set `size` bytes at device pointer `dst` to `value`.
   * size == 0 succeeds without touching `dst` (which may be NULL). */
  flagos_status_t (*memset_async)(void* dst, uint8_t value, uint64_t size,
                                  flagos_stream_t stream);

  /* ---- streams --------------------------------------------------------- */

  /* [required] The device's default stream. Process-lifetime handle; never
   * pass it to stream_destroy. Does not create a device context until work is
   * enqueued on it. */
  flagos_status_t (*get_default_stream)(flagos_device_t device,
                                        flagos_stream_t* stream);

  /* [required] Creates a stream on `device`. `priority` outside the device's
   * range is clamped (0 = normal; see flagos_device_properties_t). Work on
   * distinct streams may run concurrently. */
  flagos_status_t (*stream_create)(flagos_device_t device, int32_t priority,
                                   flagos_stream_t* stream);

  /* [required] Destroys a stream. Legal with work pending: the work still
   * completes, then the plugin releases the stream. */
  flagos_status_t (*stream_destroy)(flagos_stream_t stream);

  /* [required] FLAGOS_SUCCESS when all enqueued work completed, FLAGOS_NOT_READY
   * when some is pending, or an asynchronous error. Never blocks. */
  flagos_status_t (*stream_query)(flagos_stream_t stream);

  /* [required] Blocks until all work enqueued on `stream` completed. */
  flagos_status_t (*stream_synchronize)(flagos_stream_t stream);

  /* [required] Later work on `stream` waits until the work captured by the
   * most recent event_record(event) completed. An event never recorded
   * imposes no wait. Never blocks the caller. Works across devices. */
  flagos_status_t (*stream_wait_event)(flagos_stream_t stream, flagos_event_t event);

  /* [optional] The vendor's native stream handle (cudaStream_t with
   * FLAGOS_CAP_CUDA_ABI), for handing the stream to vendor libraries. Owned by
   * the plugin, valid until stream_destroy. */
  flagos_status_t (*stream_native_handle)(flagos_stream_t stream, void** native);

  /* ---- events ---------------------------------------------------------- */

  /* [required] Creates an event on `device` with FLAGOS_EVENT_* flags.
   * FLAGOS_EVENT_TIMING without FLAGOS_CAP_EVENT_TIMING returns
   * FLAGOS_ERROR_UNSUPPORTED. */
  flagos_status_t (*event_create)(flagos_device_t device, uint32_t flags,
                                  flagos_event_t* event);

  /* [required] Destroys an event; legal while recorded work is pending. */
  flagos_status_t (*event_destroy)(flagos_event_t event);

  /* [required] Captures all work enqueued on `stream` so far. Re-recording
   * replaces the captured point. The stream must be on the event's device. */
  flagos_status_t (*event_record)(flagos_event_t event, flagos_stream_t stream);

  /* [required] FLAGOS_SUCCESS when the captured work completed (or the event
   * was never recorded), FLAGOS_NOT_READY otherwise. Never blocks. */
  flagos_status_t (*event_query)(flagos_event_t event);

  /* [required] Blocks until the captured work completed. */
  flagos_status_t (*event_synchronize)(flagos_event_t event);

  /* [optional, with FLAGOS_CAP_EVENT_TIMING] Milliseconds between two
   * completed, recorded timing events (negative when end precedes start).
   * FLAGOS_NOT_READY if either is still pending; FLAGOS_ERROR_INVALID_STATE if
   * either was never recorded or lacks FLAGOS_EVENT_TIMING. */
  flagos_status_t (*event_elapsed_ms)(flagos_event_t start, flagos_event_t end,
                                      float* milliseconds);

  /* ---- end of ABI 1.0. Members below this line are appended by later
   *      minors; check FLAGOS_HAS_FN before calling them. ---------------- */
} flagos_plugin_api_t;

/* ------------------------------------------------------------------------ */
/* Every function member of the ABI 1.0 table, in table order, as
 * X(member, required): required is 1 for [required] members, 0 for
 * [optional] ones. For code that fills or checks the table by name (the
 * plugin kit, the core's handshake); later minors append, never reorder. */
#define FLAGOS_PLUGIN_API_1_0_FUNCTIONS(X)                                      \
  X(last_error_message, 1) X(device_count, 1) X(get_device_properties, 1)      \
  X(get_device, 1) X(set_device, 1) X(device_synchronize, 1)                   \
  X(mem_get_info, 0) X(device_can_access_peer, 0) X(mem_alloc, 1)              \
  X(mem_free, 1) X(host_alloc, 0) X(host_free, 0)                              \
  X(pointer_get_attributes, 1) X(memcpy_sync, 1) X(memcpy_async, 1)           \
  X(memcpy_peer_async, 0) X(memset_async, 1) X(get_default_stream, 1)         \
  X(stream_create, 1) X(stream_destroy, 1) X(stream_query, 1)                 \
  X(stream_synchronize, 1) X(stream_wait_event, 1) X(stream_native_handle, 0) \
  X(event_create, 1) X(event_destroy, 1) X(event_record, 1) X(event_query, 1) \
  X(event_synchronize, 1) X(event_elapsed_ms, 0)

/* ------------------------------------------------------------------------ */
/* The entry symbol.
 *
 * flagos_status_t flagos_plugin_get_api(const flagos_host_info_t* host,
 *                                       const flagos_plugin_api_t** api);
 *
 * Called once per load, on any thread, before any other call. It must not
 * initialise the driver, spawn threads or touch devices. It returns
 * FLAGOS_ERROR_INCOMPATIBLE_ABI when it cannot serve host->abi_major, and
 * otherwise stores a pointer to its static table in *api. On any failure it
 * still stores its table in *api when it has one, so that the core can read
 * last_error_message (e.g. "libvendor.so.1: cannot open shared object file"),
 * or NULL when it has none. The plugin never
 * calls host services newer than host->abi_minor. NULL `host` or `api`
 * returns FLAGOS_ERROR_INVALID_ARGUMENT. Options are fixed by the first
 * successful call (they may decide the device set, which is stable for the
 * process): a later call with the same options returns the same table, one
 * with different options FLAGOS_ERROR_INVALID_STATE. The core calls the entry
 * once per library; conformance tools call it repeatedly. */
#define FLAGOS_PLUGIN_ENTRY_SYMBOL "flagos_plugin_get_api"

typedef flagos_status_t (*flagos_plugin_get_api_fn)(const flagos_host_info_t* host,
                                                    const flagos_plugin_api_t** api);

#ifdef FLAGOS_BUILDING_PLUGIN
FLAGOS_EXPORT flagos_status_t flagos_plugin_get_api(const flagos_host_info_t* host,
                                                    const flagos_plugin_api_t** api);
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_PLUGIN_API_H_ */
