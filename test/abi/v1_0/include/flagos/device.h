/*
 * flagos/device.h — device properties and capability bits.
 *
 * Capabilities are declared by the plugin, never guessed by the core: they
 * decide which routes the core may take (e.g. running CPU kernels directly on
 * device memory is allowed only with FLAGOS_CAP_HOST_ADDRESSABLE).
 */
#ifndef FLAGOS_DEVICE_H_
#define FLAGOS_DEVICE_H_

#include "flagos/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Capability bits (uint64_t). Append-only. */

/* Device pointers are ordinary host virtual addresses, readable and writable
 * by the CPU at any time once the stream work that produces them completed.
 * The core may then run the installed torch's CPU kernels on device memory
 * (zero-copy "boxing" to CPU). */
#define FLAGOS_CAP_HOST_ADDRESSABLE (UINT64_C(1) << 0)
/* Device pointers are CUDA device pointers valid in this process's primary
 * CUDA context of device `interop_device_index`, and flagos streams are
 * castable to cudaStream_t via stream_native_handle. The core may run the
 * installed torch's CUDA kernels on device memory. */
#define FLAGOS_CAP_CUDA_ABI (UINT64_C(1) << 1)
/* host_alloc/host_free give page-locked host memory that async copies may
 * read/write after the call returns. */
#define FLAGOS_CAP_PINNED_HOST (UINT64_C(1) << 2)
/* event_create accepts FLAGOS_EVENT_TIMING and event_elapsed_ms works. */
#define FLAGOS_CAP_EVENT_TIMING (UINT64_C(1) << 3)
/* memcpy_peer_async copies between two devices without a host round trip. */
#define FLAGOS_CAP_PEER_ACCESS (UINT64_C(1) << 4)
/* stream_create honours priorities (range in the properties). */
#define FLAGOS_CAP_STREAM_PRIORITY (UINT64_C(1) << 5)

/* Properties of one device. Size-prefixed: the caller zero-fills the struct,
 * sets struct_size to sizeof(flagos_device_properties_t) as it was compiled,
 * and the plugin writes only members that fit in struct_size. All strings are
 * NUL-terminated within their arrays. */
typedef struct flagos_device_properties {
  size_t struct_size;
  char name[256];             /* marketing name, e.g. "NVIDIA H200" */
  char arch[64];              /* architecture tag, e.g. "sm_90", "host-x86_64" */
  uint8_t uuid[16];           /* all zero when unknown */
  int32_t pci_domain;         /* -1 when not a PCI device */
  int32_t pci_bus;
  int32_t pci_device;
  int32_t capability_major;   /* vendor compute capability; 0 when n/a */
  int32_t capability_minor;
  int32_t multiprocessor_count;
  uint64_t total_memory;      /* bytes of device memory */
  uint64_t alloc_alignment;   /* mem_alloc results are aligned to at least this */
  /* Stream priorities: numerically lower is higher priority (CUDA convention);
   * both 0 when FLAGOS_CAP_STREAM_PRIORITY is absent. */
  int32_t stream_priority_lowest;
  int32_t stream_priority_highest;
  uint64_t capabilities;      /* FLAGOS_CAP_* bits */
  /* With FLAGOS_CAP_CUDA_ABI: the CUDA device ordinal this device is. -1 otherwise. */
  int32_t interop_device_index;
  int32_t reserved0;          /* keeps the layout 8-byte aligned; write 0 */
} flagos_device_properties_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FLAGOS_DEVICE_H_ */
