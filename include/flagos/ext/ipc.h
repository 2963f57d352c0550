/*
 * flagos/ext/ipc.h — FLAGOS_EXTENSION_IPC (ABI 1.5): device memory shared
 * between processes. One process exports an allocation as a handle; another
 * opens the handle and gets its own pointer to the same memory, the model of
 * cudaIpcGetMemHandle / cudaIpcOpenMemHandle. torch.multiprocessing, DataLoader
 * workers and mp.spawn pass flagos tensors this way without copying them
 * (docs/multiprocessing.md). Optional: without it, pickling a flagos tensor
 * for another process fails with a message naming the plugin.
 *
 * Model. export_memory describes the whole allocation holding a device
 * pointer, and the pointer's offset in it, as a flagos_ipc_handle_t: plain
 * bytes the caller sends to the other process as they are, plus, on plugins
 * whose device memory is a file (the host plugin's shared memory), a file
 * descriptor that travels beside them (SCM_RIGHTS; Python's
 * multiprocessing.reduction.DupFd). The allocation is the runtime's, not
 * only the plugin's: on CUDA-ABI plugins torch's CUDA caching allocator
 * makes most device memory, and its segments export too. open_memory in the
 * other process maps the allocation and returns its base there (the caller
 * adds the offset); close_memory lets go of that mapping.
 *
 * Which allocations export. With FLAGOS_IPC_ALL_ALLOCATIONS in `flags`,
 * every mem_alloc allocation exports (CUDA). Without it only those made by
 * mem_alloc_shareable do (the host plugin backs ordinary device memory with
 * private pages, which no other process can map): export_memory of another
 * allocation fails with FLAGOS_ERROR_UNSUPPORTED, and the caller first moves
 * the data into a shareable allocation, as torch moves a CPU storage into
 * shared memory before sending it. mem_free frees shareable allocations.
 *
 * Lifetime. The exporter keeps the allocation alive while importers use it
 * (CUDA's rule). Whether an import outlives the exporter's mem_free is the
 * plugin's property: the host plugin's does (the pages stay until the last
 * mapping goes), CUDA's does not. open_memory of a handle already open in
 * the same process, or in the exporting process itself, may fail (CUDA
 * refuses both): callers keep one mapping per handle and use the exporter's
 * own pointer at home.
 *
 * Ordering. A handle carries no stream order. The exporter completes the
 * work that writes the memory (synchronizes its stream) before sending the
 * handle; an importer's writes are seen by the exporter once the importer
 * synchronized and told it so by other means (a queue, a barrier).
 *
 * Errors. Every function returns a status and sets last_error_message on
 * failure; a failed call changed nothing. A plugin that learns only at first
 * use that its runtime cannot share memory (the entry point must not open
 * the runtime) keeps the extension and answers FLAGOS_ERROR_UNSUPPORTED
 * with the reason.
 *
 * Threading. Every function is thread-safe.
 */
#ifndef FLAGOS_EXT_IPC_H_
#define FLAGOS_EXT_IPC_H_

#include "flagos/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLAGOS_IPC_EXT_VERSION 0u

/* Bytes of plugin data in a handle (CUDA's cudaIpcMemHandle_t is 64). */
#define FLAGOS_IPC_HANDLE_BYTES 64

/* `flags` bit: every mem_alloc allocation exports; mem_alloc_shareable is NULL. */
#define FLAGOS_IPC_ALL_ALLOCATIONS 0x1u

/* What export_memory writes and open_memory reads. Plain data: copy it as is. */
typedef struct flagos_ipc_handle {
  /* Plugin-defined; zero past what the plugin uses, so equal allocations
   * give equal bytes and the bytes can key a cache of open handles. */
  uint8_t bytes[FLAGOS_IPC_HANDLE_BYTES];
  /* Bytes of the allocation, all of which open_memory maps. */
  uint64_t size;
  /* -1, or a descriptor that must reach the importer with the bytes. From
   * export_memory: the plugin's own, valid until the allocation is freed;
   * the caller duplicates it to send it and never closes it. To
   * open_memory: the importer's received copy; the plugin does not keep it
   * (the caller closes it after the call, success or not). */
  int32_t fd;
  int32_t reserved; /* 0 */
} flagos_ipc_handle_t;

typedef struct flagos_ipc_ext {
  flagos_extension_t base; /* type FLAGOS_EXTENSION_IPC */

  uint32_t flags;    /* FLAGOS_IPC_* bits */
  uint32_t reserved; /* 0 */

  /* Device memory like mem_alloc's that export_memory accepts; NULL with
   * FLAGOS_IPC_ALL_ALLOCATIONS. size == 0 sets *ptr = NULL. Freed with
   * mem_free. Out of memory as mem_alloc reports it. */
  flagos_status_t (*mem_alloc_shareable)(flagos_device_t device, uint64_t size, void** ptr);

  /* Describes the allocation holding `ptr` (any address inside a live
   * allocation of `device`) in *handle, and writes ptr's distance from the
   * allocation's start to *offset. FLAGOS_ERROR_INVALID_ARGUMENT when `ptr`
   * is in no allocation of `device` (host memory, another device's, an
   * imported mapping); FLAGOS_ERROR_UNSUPPORTED when the allocation cannot
   * be shared (see "Which allocations export"). Pointers into one allocation
   * give the same handle. */
  flagos_status_t (*export_memory)(flagos_device_t device, const void* ptr,
                                   flagos_ipc_handle_t* handle, uint64_t* offset);

  /* Maps the allocation `handle` names, exported by another process on the
   * same host, as memory of `device` (the index the exporter's device has
   * here), and writes its base to *base: a device pointer like mem_alloc's
   * (pointer_get_attributes says so) until close_memory. Not counted as
   * this process's allocation. FLAGOS_ERROR_INVALID_ARGUMENT for bytes no
   * export made or a missing descriptor the plugin needs. */
  flagos_status_t (*open_memory)(flagos_device_t device, const flagos_ipc_handle_t* handle,
                                 void** base);

  /* Releases a mapping open_memory made. Work already enqueued that uses it
   * still completes first (the plugin waits or keeps the mapping until
   * then). FLAGOS_ERROR_INVALID_ARGUMENT for any other pointer. */
  flagos_status_t (*close_memory)(flagos_device_t device, void* base);
} flagos_ipc_ext_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_EXT_IPC_H_ */
