// The engine's entry points, one per exported vendor call shape. Each takes
// the vendor's table and the exported symbol's name (for fault injection and
// rule messages) and returns the vendor's error code.
#pragma once

#include <cstddef>

#include "vendor.h"

namespace simrt {

using HostFn = void (*)(void*);

// Devices (api_device.cpp).
SIMRT_API int get_device_count(const Vendor&, const char*, int* count);
SIMRT_API int set_device(const Vendor&, const char*, int device);
SIMRT_API int get_device(const Vendor&, const char*, int* device);
SIMRT_API int device_get_attribute(const Vendor&, const char*, int* value, int attr, int device);
SIMRT_API int device_get_stream_priority_range(const Vendor&, const char*, int* least, int* greatest);
SIMRT_API int device_can_access_peer(const Vendor&, const char*, int* can, int device, int peer);
SIMRT_API int device_enable_peer_access(const Vendor&, const char*, int peer, unsigned flags);
SIMRT_API int device_synchronize(const Vendor&, const char*);
SIMRT_API int mem_get_info(const Vendor&, const char*, size_t* free_bytes, size_t* total_bytes);
// Runtime (hip, mc) or driver (cu, mu) flavour, by `driver`.
SIMRT_API int device_get_name(const Vendor&, const char*, bool driver, char* name, int len, int device);
SIMRT_API int device_total_mem(const Vendor&, const char*, bool driver, size_t* bytes, int device);

// Memory (api_memory.cpp).
SIMRT_API int malloc_device(const Vendor&, const char*, void** ptr, size_t size);
SIMRT_API int free_device(const Vendor&, const char*, void* ptr);
SIMRT_API int host_alloc(const Vendor&, const char*, void** ptr, size_t size, unsigned flags);
SIMRT_API int free_host(const Vendor&, const char*, void* ptr);
// cudaPointerGetAttributes with CUDA 13's struct: type, device, devicePointer,
// hostPointer, then `long reserved[8]`, all written (a caller that declares
// an older, smaller struct gets its stack overwritten, as with CUDA).
SIMRT_API int pointer_get_attributes(const Vendor&, const char*, void* attributes, const void* ptr);

// Copies (api_copy.cpp).
SIMRT_API int memcpy_sync(const Vendor&, const char*, void* dst, const void* src, size_t n, int kind);
SIMRT_API int memcpy_async(const Vendor&, const char*, void* dst, const void* src, size_t n, int kind,
                           void* stream);
SIMRT_API int memcpy_peer_async(const Vendor&, const char*, void* dst, int dst_device, const void* src,
                                int src_device, size_t n, void* stream);
SIMRT_API int memset_async(const Vendor&, const char*, void* ptr, int value, size_t n, void* stream);

// Streams (api_stream.cpp).
SIMRT_API int stream_create(const Vendor&, const char*, void** stream, unsigned flags, int priority);
SIMRT_API int stream_destroy(const Vendor&, const char*, void* stream);
SIMRT_API int stream_query(const Vendor&, const char*, void* stream);
SIMRT_API int stream_synchronize(const Vendor&, const char*, void* stream);
SIMRT_API int stream_wait_event(const Vendor&, const char*, void* stream, void* event, unsigned flags);
SIMRT_API int launch_host_func(const Vendor&, const char*, void* stream, HostFn fn, void* user);

// Events (api_event.cpp).
SIMRT_API int event_create(const Vendor&, const char*, void** event, unsigned flags);
SIMRT_API int event_record(const Vendor&, const char*, void* event, void* stream);
SIMRT_API int event_query(const Vendor&, const char*, void* event);
SIMRT_API int event_synchronize(const Vendor&, const char*, void* event);
SIMRT_API int event_destroy(const Vendor&, const char*, void* event);
SIMRT_API int event_elapsed_time(const Vendor&, const char*, float* ms, void* start, void* end);

// Errors (api_errors.cpp): never blocked, never fault-injected.
SIMRT_API int get_last_error(const Vendor&);
SIMRT_API int peek_at_last_error(const Vendor&);
SIMRT_API const char* get_error_name(const Vendor&, int code);
SIMRT_API const char* get_error_string(const Vendor&, int code);

// For vendors whose calls are not CUDA-shaped (ascend, tsingmicro, bpu:
// api_native.cpp). Their export files translate onto the entry points above
// and enforce the vendor's own rules through these two.
// The checks every call makes first (fork, host-function re-entry, SIMRT_FAIL):
// true with the code to return at once when one applies.
SIMRT_API bool call_blocked(const Vendor&, const char* symbol, int* code);
// A rule of the vendor's own that the call breaks: reported as every engine
// rule is (last error, one stderr line, the text for GetErrorString); returns e's code.
SIMRT_API int rule_violation(const Vendor&, const char* symbol, Err e, const char* text);
// Where [ptr, ptr + n) lies, for a vendor whose copy call names no devices
// (ACL's D2D memcpy between devices): the ordinal of the device whose live
// allocation holds it, -1 for host memory, -2 for neither (the copy entry
// points then report why). A query only: no Call, no fault injection.
SIMRT_API int pointer_device(const Vendor&, const void* ptr, size_t n);

// State of the instance, not of one library, for a native SDK split over
// several libraries (AscendCL's libascendcl.so and the aclnn operators'
// libopapi.so). Queries and setters only: no Call, no fault injection.
// native_init marks the instance initialised (aclInit) and answers whether it
// already was; native_initialised answers whether it is.
SIMRT_API bool native_init(const Vendor&);
SIMRT_API bool native_initialised(const Vendor&);
// The calling thread's latest failure text (aclGetRecentErrMsg); nullptr: none yet.
SIMRT_API void set_recent_error(const Vendor&, const char* text);
SIMRT_API const char* recent_error(const Vendor&);

// For an operator library whose computation runs in a host function on a
// stream (libopapi.so). Queries only: no Call, so they work inside the host
// function, where every runtime call is NotPermitted.
// The address the engine reads and writes [p, p + n) at (the SIMRT_GUARD
// alias), or nullptr when the range is not inside one live device allocation.
SIMRT_API char* device_rw(const Vendor&, const void* p, size_t n);
// The device of a stream handle (NULL and 0x1: the calling thread's current
// device's legacy stream), -1 for a handle that is not a live stream (the
// enqueueing entry points then report it).
SIMRT_API int stream_device(const Vendor&, void* stream);
// A rule broken by work already enqueued, found as the stream runs it (no
// call is left to fail): one "[simrt] <symbol>: <text>" line, once per rule.
SIMRT_API void stream_rule_violation(const Vendor&, const char* symbol, const char* text);

// Driver library (api_driver.cpp).
SIMRT_API int driver_init(const Vendor&, const char*, unsigned flags);
SIMRT_API int driver_device_get_count(const Vendor&, const char*, int* count);
SIMRT_API int driver_device_get(const Vendor&, const char*, int* device, int ordinal);
SIMRT_API int driver_primary_ctx_get_state(const Vendor&, const char*, int device, unsigned* flags,
                                           int* active);
SIMRT_API int driver_get_error_name(const Vendor&, int code, const char** name);

}  // namespace simrt
