// The vendor runtime as a table of function pointers, declared here with the
// CUDA runtime's signatures (handles as void*, enums as int) so that no SDK
// header is needed to build. Resolved from the vendor's library at the first
// call that needs it, never in the entry symbol.
#pragma once

#include <cstddef>
#include <string>

#include "flagos/abi.h"
#include "flagos/kit/runtime_library.hpp"

namespace flagos_cudalike {

using rt_stream = void*;
using rt_event = void*;
using rt_host_fn = void (*)(void*);
// cudaIpcMemHandle_t (hipIpcMemHandle_t, musaIpcMemHandle_t alike): 64 bytes,
// passed by value to IpcOpenMemHandle.
struct rt_ipc_handle {
  char reserved[64];
};

// X(member, symbol suffix, required, return type, parameters): the symbol is
// the vendor prefix + suffix. Calls whose names vary by vendor (pinned
// memory, name and memory getters) are named by the vendor table instead.
#define FLAGOS_CUDALIKE_CALLS(X)                                                               \
  X(get_device_count, "GetDeviceCount", 1, int, (int*))                                         \
  X(set_device, "SetDevice", 1, int, (int))                                                     \
  X(get_device, "GetDevice", 1, int, (int*))                                                    \
  X(device_get_attribute, "DeviceGetAttribute", 0, int, (int*, int, int))                       \
  X(device_get_stream_priority_range, "DeviceGetStreamPriorityRange", 0, int, (int*, int*))     \
  X(device_can_access_peer, "DeviceCanAccessPeer", 0, int, (int*, int, int))                    \
  X(device_enable_peer_access, "DeviceEnablePeerAccess", 0, int, (int, unsigned))               \
  X(device_synchronize, "DeviceSynchronize", 1, int, (void))                                    \
  X(mem_get_info, "MemGetInfo", 1, int, (size_t*, size_t*))                                     \
  X(malloc, "Malloc", 1, int, (void**, size_t))                                                 \
  X(free, "Free", 1, int, (void*))                                                              \
  X(memcpy_async, "MemcpyAsync", 1, int, (void*, const void*, size_t, int, rt_stream))          \
  X(memcpy_peer_async, "MemcpyPeerAsync", 0, int, (void*, int, const void*, int, size_t, rt_stream)) \
  X(memset_async, "MemsetAsync", 1, int, (void*, int, size_t, rt_stream))                       \
  X(stream_create_with_priority, "StreamCreateWithPriority", 1, int, (rt_stream*, unsigned, int)) \
  X(stream_destroy, "StreamDestroy", 1, int, (rt_stream))                                       \
  X(stream_query, "StreamQuery", 1, int, (rt_stream))                                           \
  X(stream_synchronize, "StreamSynchronize", 1, int, (rt_stream))                               \
  X(stream_wait_event, "StreamWaitEvent", 1, int, (rt_stream, rt_event, unsigned))              \
  X(event_create_with_flags, "EventCreateWithFlags", 1, int, (rt_event*, unsigned))             \
  X(event_record, "EventRecord", 1, int, (rt_event, rt_stream))                                 \
  X(event_query, "EventQuery", 1, int, (rt_event))                                              \
  X(event_synchronize, "EventSynchronize", 1, int, (rt_event))                                  \
  X(event_destroy, "EventDestroy", 1, int, (rt_event))                                          \
  X(event_elapsed_time, "EventElapsedTime", 1, int, (float*, rt_event, rt_event))               \
  X(get_last_error, "GetLastError", 1, int, (void))                                             \
  X(get_error_name, "GetErrorName", 0, const char*, (int))                                      \
  X(get_error_string, "GetErrorString", 0, const char*, (int))                                  \
  X(launch_host_func, "LaunchHostFunc", 0, int, (rt_stream, rt_host_fn, void*))            \
  X(stream_begin_capture, "StreamBeginCapture", 0, int, (rt_stream, int))                       \
  X(stream_end_capture, "StreamEndCapture", 0, int, (rt_stream, void**))                        \
  X(stream_is_capturing, "StreamIsCapturing", 0, int, (rt_stream, int*))                        \
  X(graph_instantiate_with_flags, "GraphInstantiateWithFlags", 0, int, (void**, void*, unsigned long long)) \
  X(graph_launch, "GraphLaunch", 0, int, (void*, rt_stream))                                    \
  X(graph_destroy, "GraphDestroy", 0, int, (void*))                                             \
  X(graph_exec_destroy, "GraphExecDestroy", 0, int, (void*))                                    \
  X(thread_exchange_stream_capture_mode, "ThreadExchangeStreamCaptureMode", 0, int, (int*)) \
  X(ipc_get_mem_handle, "IpcGetMemHandle", 0, int, (rt_ipc_handle*, void*))                     \
  X(ipc_open_mem_handle, "IpcOpenMemHandle", 0, int, (void**, rt_ipc_handle, unsigned))         \
  X(ipc_close_mem_handle, "IpcCloseMemHandle", 0, int, (void*))

// Driver-library calls (prefix "cu"/"mu"), all optional.
#define FLAGOS_CUDALIKE_DRIVER_CALLS(X)                                                        \
  X(drv_device_get_count, "DeviceGetCount", 0, int, (int*))                                     \
  X(drv_device_get, "DeviceGet", 0, int, (int*, int))                                           \
  X(drv_device_get_name, "DeviceGetName", 0, int, (char*, int, int))                            \
  X(drv_device_get_uuid, "DeviceGetUuid", 0, int, (unsigned char*, int))                        \
  X(drv_device_total_mem, "DeviceTotalMem", 0, int, (size_t*, int))                             \
  X(drv_primary_ctx_get_state, "DevicePrimaryCtxGetState", 0, int, (int, unsigned*, int*))     \
  X(drv_mem_get_address_range, "MemGetAddressRange_v2", 0, int,                                 \
    (unsigned long long*, size_t*, unsigned long long))

struct Runtime {
#define FLAGOS_CUDALIKE_MEMBER(member, suffix, required, ret, params) ret(*member) params = nullptr;
  FLAGOS_CUDALIKE_CALLS(FLAGOS_CUDALIKE_MEMBER)
  FLAGOS_CUDALIKE_DRIVER_CALLS(FLAGOS_CUDALIKE_MEMBER)
#undef FLAGOS_CUDALIKE_MEMBER
  // Page-locked allocation in one of the two shapes (Vendor::host_alloc_flags).
  int (*host_alloc_flags)(void**, size_t, unsigned) = nullptr;
  int (*host_alloc_plain)(void**, size_t) = nullptr;
  int (*host_free)(void*) = nullptr;
  int (*device_name)(char*, int, int) = nullptr;      // runtime getter, if the vendor has one
  int (*device_total)(size_t*, int) = nullptr;        // runtime getter, if the vendor has one
  int (*drv_device_total)(size_t*, int) = nullptr;    // driver getter (Vendor::driver_total)
  int (*pointer_attributes)(void*, const void*) = nullptr;  // Vendor::pointer_attributes

  std::string path;         // the library opened, for messages
  std::string found_by;     // how: runtime=, already loaded, FLAGOS_VENDOR_TORCH_LIB, folder, system path
  std::string driver_path;  // "" without a driver library
};

struct LibrarySpec;

// The search for `spec` (its SDK folders, then those beside this plugin, the
// fixed ones, the system path); false with `why` when it needs an SDK
// variable that is not set.
bool search_of(const LibrarySpec& spec, flagos::kit::LibrarySearch* s, std::string* why);

// Sets the runtime library to use instead of searching (option runtime=<path>).
// Only before the first load().
void set_runtime_override(const std::string& path);

// The resolved runtime, loading it at the first call; nullptr with a
// last-error message (RUNTIME_UNAVAILABLE, naming `fn` and what was
// searched, or the first missing required symbol) when it cannot be used.
const Runtime* load(const char* fn, flagos_status_t* status);

// The same without setting a last error: nullptr when unavailable, with
// `why` set. For device_count, where absence is not an error.
const Runtime* try_load(std::string* why);

}  // namespace flagos_cudalike
