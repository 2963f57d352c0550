// The export lists, generated over the engine: a vendor file is its table plus
// these macros, never logic. P is the symbol prefix (cuda, hip, mc, musa; cu,
// mu for drivers), V the vendor's simrt::Vendor table. Handles are void*, enums
// int: the C ABI of the vendors' opaque pointers and enums.
#pragma once

#include <cstddef>

#include "../engine/api.h"

#define SIMRT_EXPORT extern "C" __attribute__((visibility("default")))

// The CUDA-shaped runtime calls every CUDA-like vendor has.
#define SIMRT_RUNTIME_EXPORTS(P, V)                                                                         \
  SIMRT_EXPORT int P##GetDeviceCount(int* n) { return simrt::get_device_count(V, #P "GetDeviceCount", n); } \
  SIMRT_EXPORT int P##SetDevice(int d) { return simrt::set_device(V, #P "SetDevice", d); }                  \
  SIMRT_EXPORT int P##GetDevice(int* d) { return simrt::get_device(V, #P "GetDevice", d); }                 \
  SIMRT_EXPORT int P##DeviceGetAttribute(int* value, int attr, int d) {                                     \
    return simrt::device_get_attribute(V, #P "DeviceGetAttribute", value, attr, d);                         \
  }                                                                                                         \
  SIMRT_EXPORT int P##DeviceGetStreamPriorityRange(int* least, int* greatest) {                             \
    return simrt::device_get_stream_priority_range(V, #P "DeviceGetStreamPriorityRange", least, greatest);  \
  }                                                                                                         \
  SIMRT_EXPORT int P##DeviceCanAccessPeer(int* can, int d, int peer) {                                      \
    return simrt::device_can_access_peer(V, #P "DeviceCanAccessPeer", can, d, peer);                        \
  }                                                                                                         \
  SIMRT_EXPORT int P##DeviceEnablePeerAccess(int peer, unsigned flags) {                                    \
    return simrt::device_enable_peer_access(V, #P "DeviceEnablePeerAccess", peer, flags);                   \
  }                                                                                                         \
  SIMRT_EXPORT int P##DeviceSynchronize(void) { return simrt::device_synchronize(V, #P "DeviceSynchronize"); } \
  SIMRT_EXPORT int P##MemGetInfo(size_t* free_bytes, size_t* total) {                                       \
    return simrt::mem_get_info(V, #P "MemGetInfo", free_bytes, total);                                      \
  }                                                                                                         \
  SIMRT_EXPORT int P##Malloc(void** p, size_t n) { return simrt::malloc_device(V, #P "Malloc", p, n); }     \
  SIMRT_EXPORT int P##Free(void* p) { return simrt::free_device(V, #P "Free", p); }                         \
  SIMRT_EXPORT int P##Memcpy(void* dst, const void* src, size_t n, int kind) {                              \
    return simrt::memcpy_sync(V, #P "Memcpy", dst, src, n, kind);                                           \
  }                                                                                                         \
  SIMRT_EXPORT int P##MemcpyAsync(void* dst, const void* src, size_t n, int kind, void* s) {                \
    return simrt::memcpy_async(V, #P "MemcpyAsync", dst, src, n, kind, s);                                  \
  }                                                                                                         \
  SIMRT_EXPORT int P##MemcpyPeerAsync(void* dst, int dd, const void* src, int sd, size_t n, void* s) {      \
    return simrt::memcpy_peer_async(V, #P "MemcpyPeerAsync", dst, dd, src, sd, n, s);                       \
  }                                                                                                         \
  SIMRT_EXPORT int P##MemsetAsync(void* p, int value, size_t n, void* s) {                                  \
    return simrt::memset_async(V, #P "MemsetAsync", p, value, n, s);                                        \
  }                                                                                                         \
  SIMRT_EXPORT int P##StreamCreateWithPriority(void** s, unsigned flags, int priority) {                    \
    return simrt::stream_create(V, #P "StreamCreateWithPriority", s, flags, priority);                      \
  }                                                                                                         \
  SIMRT_EXPORT int P##StreamCreateWithFlags(void** s, unsigned flags) {                                     \
    return simrt::stream_create(V, #P "StreamCreateWithFlags", s, flags, 0);                                \
  }                                                                                                         \
  SIMRT_EXPORT int P##StreamDestroy(void* s) { return simrt::stream_destroy(V, #P "StreamDestroy", s); }    \
  SIMRT_EXPORT int P##StreamQuery(void* s) { return simrt::stream_query(V, #P "StreamQuery", s); }          \
  SIMRT_EXPORT int P##StreamSynchronize(void* s) {                                                          \
    return simrt::stream_synchronize(V, #P "StreamSynchronize", s);                                         \
  }                                                                                                         \
  SIMRT_EXPORT int P##StreamWaitEvent(void* s, void* e, unsigned flags) {                                   \
    return simrt::stream_wait_event(V, #P "StreamWaitEvent", s, e, flags);                                  \
  }                                                                                                         \
  SIMRT_EXPORT int P##EventCreateWithFlags(void** e, unsigned flags) {                                      \
    return simrt::event_create(V, #P "EventCreateWithFlags", e, flags);                                     \
  }                                                                                                         \
  SIMRT_EXPORT int P##EventRecord(void* e, void* s) { return simrt::event_record(V, #P "EventRecord", e, s); } \
  SIMRT_EXPORT int P##EventQuery(void* e) { return simrt::event_query(V, #P "EventQuery", e); }             \
  SIMRT_EXPORT int P##EventSynchronize(void* e) {                                                           \
    return simrt::event_synchronize(V, #P "EventSynchronize", e);                                           \
  }                                                                                                         \
  SIMRT_EXPORT int P##EventDestroy(void* e) { return simrt::event_destroy(V, #P "EventDestroy", e); }       \
  SIMRT_EXPORT int P##EventElapsedTime(float* ms, void* a, void* b) {                                       \
    return simrt::event_elapsed_time(V, #P "EventElapsedTime", ms, a, b);                                   \
  }                                                                                                         \
  SIMRT_EXPORT int P##GetLastError(void) { return simrt::get_last_error(V); }                               \
  SIMRT_EXPORT int P##PeekAtLastError(void) { return simrt::peek_at_last_error(V); }                        \
  SIMRT_EXPORT const char* P##GetErrorName(int e) { return simrt::get_error_name(V, e); }                   \
  SIMRT_EXPORT const char* P##GetErrorString(int e) { return simrt::get_error_string(V, e); }               \
  SIMRT_EXPORT int P##LaunchHostFunc(void* s, void (*fn)(void*), void* user) {                              \
    return simrt::launch_host_func(V, #P "LaunchHostFunc", s, fn, user);                                    \
  }

// Pinned host memory: the vendors differ in names and in whether flags exist.
#define SIMRT_EXPORT_HOST_ALLOC_FLAGS(NAME, V)                     \
  SIMRT_EXPORT int NAME(void** p, size_t n, unsigned flags) {      \
    return simrt::host_alloc(V, #NAME, p, n, flags);               \
  }
#define SIMRT_EXPORT_HOST_ALLOC(NAME, V) \
  SIMRT_EXPORT int NAME(void** p, size_t n) { return simrt::host_alloc(V, #NAME, p, n, 0); }
#define SIMRT_EXPORT_FREE_HOST(NAME, V) \
  SIMRT_EXPORT int NAME(void* p) { return simrt::free_host(V, #NAME, p); }

// Name and total memory without a properties struct; DRIVER: true in a driver library.
#define SIMRT_EXPORT_DEVICE_NAME(NAME, V, DRIVER)                                 \
  SIMRT_EXPORT int NAME(char* name, int len, int d) {                             \
    return simrt::device_get_name(V, #NAME, DRIVER, name, len, d);                \
  }
#define SIMRT_EXPORT_TOTAL_MEM(NAME, V, DRIVER) \
  SIMRT_EXPORT int NAME(size_t* bytes, int d) { return simrt::device_total_mem(V, #NAME, DRIVER, bytes, d); }

// A CUDA-shaped driver library (libcuda, libmusa). CUdevice is an int.
#define SIMRT_DRIVER_EXPORTS(P, V)                                                                       \
  SIMRT_EXPORT int P##Init(unsigned flags) { return simrt::driver_init(V, #P "Init", flags); }           \
  SIMRT_EXPORT int P##DeviceGetCount(int* n) {                                                           \
    return simrt::driver_device_get_count(V, #P "DeviceGetCount", n);                                    \
  }                                                                                                      \
  SIMRT_EXPORT int P##DeviceGet(int* d, int ordinal) {                                                   \
    return simrt::driver_device_get(V, #P "DeviceGet", d, ordinal);                                      \
  }                                                                                                      \
  SIMRT_EXPORT_DEVICE_NAME(P##DeviceGetName, V, true)                                                    \
  SIMRT_EXPORT int P##DevicePrimaryCtxGetState(int d, unsigned* flags, int* active) {                    \
    return simrt::driver_primary_ctx_get_state(V, #P "DevicePrimaryCtxGetState", d, flags, active);      \
  }                                                                                                      \
  SIMRT_EXPORT int P##GetErrorName(int e, const char** name) { return simrt::driver_get_error_name(V, e, name); }
