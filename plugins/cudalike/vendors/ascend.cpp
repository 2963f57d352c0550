// Huawei Ascend: AscendCL's aclrt* in libascendcl.so under $ASCEND_HOME/lib64
// (CANN installs to /usr/local/Ascend/ascend-toolkit/latest). Not CUDA-shaped,
// so an adapter translates every runtime.h member onto ACL's own calls.
// Signatures, enum values and error codes: Ascend/pytorch
// third_party/acl/inc/acl/acl_rt.h, acl_base.h and error_codes/rt_error_codes.h;
// the 8.x calls (aclrtStreamQuery, aclrtDeviceGetStreamPriorityRange,
// aclrtGetDeviceInfo, aclrtGetLastError, aclrtLaunchHostFunc) from the newer
// acl_rt.h there (ACL 1.15). All but aclrtStreamQuery are optional: an older
// CANN loses only what needs them. Unverified on hardware.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "../runtime.h"
#include "../vendor.h"
#include "flagos/kit/runtime_library.hpp"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libascendcl.so", nullptr};
const char* const kEnv[] = {"ASCEND_HOME", nullptr};
const char* const kSubdirs[] = {"lib64", nullptr};
const char* const kFixed[] = {"/usr/local/Ascend/ascend-toolkit/latest/lib64", nullptr};
const char* const kOperators[] = {"libopapi.so", nullptr};  // aclnn, for the native kernels

// acl_base.h and error_codes/rt_error_codes.h.
constexpr int kInvalidParam = 100000;        // ACL_ERROR_INVALID_PARAM
constexpr int kUninitialize = 100001;        // ACL_ERROR_UNINITIALIZE
constexpr int kRepeatInitialize = 100002;    // ACL_ERROR_REPEAT_INITIALIZE
constexpr int kRtContextNull = 107002;       // ACL_ERROR_RT_CONTEXT_NULL
constexpr int kStreamNotComplete = 507004;   // ACL_ERROR_RT_STREAM_NOT_COMPLETE
constexpr int kEventNotComplete = 507006;    // ACL_ERROR_RT_EVENT_NOT_COMPLETE

// acl_rt.h.
constexpr uint32_t kEventSync = 0x1;      // ACL_EVENT_SYNC
constexpr uint32_t kEventTimeLine = 0x8;  // ACL_EVENT_TIME_LINE
constexpr int kMemcpyDeviceToHost = 2, kMemcpyHostToDevice = 1, kMemcpyDeviceToDevice = 3;  // aclrtMemcpyKind
constexpr int kHugeFirst = 0;         // ACL_MEM_MALLOC_HUGE_FIRST
constexpr int kDdrMem = 0, kHbmMem = 1;  // aclrtMemAttr
constexpr int kStatusComplete = 0;    // ACL_STREAM_STATUS_COMPLETE
constexpr int kRecordedComplete = 1;  // ACL_EVENT_RECORDED_STATUS_COMPLETE
constexpr int kThreadLevel = 0;       // ACL_RT_THREAD_LEVEL
// What the layer passes for an event without timing (Vendor::event_disable_timing):
// CUDA's value, translated below; ACL's timing is opt-in instead.
constexpr unsigned kDisableTiming = 0x2;
// On-chip device-to-device copies need both addresses 64-byte aligned
// (acl_rt.h, aclrtMemcpyAsync "Restriction").
constexpr uintptr_t kD2dAlignment = 64;

using Stream = void*;
using Event = void*;

// The vendor's calls, resolved by adapt(); the optional ones may stay null.
int (*g_init)(const char*) = nullptr;
int (*g_get_device_count)(uint32_t*) = nullptr;
int (*g_set_device)(int32_t) = nullptr;
int (*g_get_device)(int32_t*) = nullptr;
int (*g_synchronize_device)() = nullptr;
int (*g_get_mem_info)(int, size_t*, size_t*) = nullptr;
int (*g_malloc)(void**, size_t, int) = nullptr;
int (*g_free)(void*) = nullptr;
int (*g_malloc_host)(void**, size_t) = nullptr;
int (*g_free_host)(void*) = nullptr;
int (*g_memcpy_async)(void*, size_t, const void*, size_t, int, Stream) = nullptr;
int (*g_memset_async)(void*, size_t, int32_t, size_t, Stream) = nullptr;
int (*g_create_stream)(Stream*) = nullptr;
int (*g_destroy_stream)(Stream) = nullptr;
int (*g_stream_query)(Stream, int*) = nullptr;
int (*g_synchronize_stream)(Stream) = nullptr;
int (*g_stream_wait_event)(Stream, Event) = nullptr;
int (*g_create_event_with_flag)(Event*, uint32_t) = nullptr;
int (*g_record_event)(Event, Stream) = nullptr;
int (*g_query_event_status)(Event, int*) = nullptr;
int (*g_synchronize_event)(Event) = nullptr;
int (*g_destroy_event)(Event) = nullptr;
int (*g_event_elapsed_time)(float*, Event, Event) = nullptr;
// Optional.
const char* (*g_get_soc_name)() = nullptr;
const char* (*g_recent_err_msg)() = nullptr;
int (*g_get_last_error)(int) = nullptr;
int (*g_create_stream_with_config)(Stream*, uint32_t, uint32_t) = nullptr;
int (*g_priority_range)(int32_t*, int32_t*) = nullptr;
int (*g_can_access_peer)(int32_t*, int32_t, int32_t) = nullptr;
int (*g_enable_peer_access)(int32_t, uint32_t) = nullptr;
int (*g_launch_host_func)(Stream, void (*)(void*), void*) = nullptr;
int (*g_get_device_info)(uint32_t, int, int64_t*) = nullptr;

// aclInit once per process, at the first call that needs the runtime and
// never in adapt(): opening the library must initialise nothing (probe.h).
// Someone else's earlier aclInit (a vendor torch) answers REPEAT_INITIALIZE.
int ready() {
  static std::once_flag once;
  static int result = 0;
  std::call_once(once, [] {
    const int rc = g_init(nullptr);
    result = rc == kRepeatInitialize ? 0 : rc;
  });
  return result;
}

int get_device_count(int* count) {
  if (int rc = ready()) return rc;
  uint32_t n = 0;
  const int rc = g_get_device_count(&n);
  *count = rc == 0 ? static_cast<int>(n) : 0;
  return rc;
}

int set_device(int device) {
  if (int rc = ready()) return rc;
  return g_set_device(device);
}

// CUDA's contract: a thread that chose no device is on device 0. ACL has no
// current device before aclrtSetDevice (CONTEXT_NULL): device 0 becomes it.
int get_device(int* device) {
  if (int rc = ready()) return rc;
  int32_t d = 0;
  int rc = g_get_device(&d);
  if (rc == kRtContextNull) rc = g_set_device(d = 0);
  *device = d;
  return rc;
}

int device_synchronize() {
  if (int rc = ready()) return rc;
  return g_synchronize_device();
}

// The current device's memory: HBM on training parts, DDR on inference parts.
int mem_get_info(size_t* free_bytes, size_t* total) {
  if (int rc = ready()) return rc;
  int rc = g_get_mem_info(kHbmMem, free_bytes, total);
  if (rc == 0 && *total == 0) rc = g_get_mem_info(kDdrMem, free_bytes, total);
  return rc;
}

int device_malloc(void** ptr, size_t size) {
  if (int rc = ready()) return rc;
  return g_malloc(ptr, size, kHugeFirst);
}

int device_free(void* ptr) {
  if (int rc = ready()) return rc;
  return g_free(ptr);
}

int host_alloc(void** ptr, size_t size) {
  if (int rc = ready()) return rc;
  return g_malloc_host(ptr, size);
}

int host_free(void* ptr) {
  if (int rc = ready()) return rc;
  return g_free_host(ptr);
}

// One copy: the destination's capacity is the count itself (destMax).
int copy(void* dst, const void* src, size_t n, int kind, Stream s) { return g_memcpy_async(dst, n, src, n, kind, s); }

// An on-chip device-to-device copy whose ends are not both 64-byte aligned
// goes through a host bounce buffer: device to host, then host to device, on
// the same stream. The buffer is pageable, so each copy returns once complete
// (CANN's aclrtMemcpyAsync: "non-page-locked memory ... returns only after the
// copy task is complete"): the buffer is freed safely on return, at the cost
// of waiting here for the stream's earlier work.
int copy_d2d(void* dst, const void* src, size_t n, Stream s) {
  if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & (kD2dAlignment - 1)) == 0)
    return copy(dst, src, n, kMemcpyDeviceToDevice, s);
  std::vector<char> bounce(n);
  int rc = copy(bounce.data(), src, n, kMemcpyDeviceToHost, s);
  if (rc == 0) rc = copy(dst, bounce.data(), n, kMemcpyHostToDevice, s);
  return rc;
}

int memcpy_async(void* dst, const void* src, size_t n, int kind, Stream s) {
  if (int rc = ready()) return rc;
  return kind == kMemcpyDeviceToDevice ? copy_d2d(dst, src, n, s) : copy(dst, src, n, kind, s);
}

// ACL has no peer copy call: after aclrtDeviceEnablePeerAccess (the layer's
// enable_peer_access) a device-to-device aclrtMemcpyAsync reaches the peer.
// The 64-byte rule is the on-chip one; a copy within one device still needs it.
int memcpy_peer_async(void* dst, int dst_device, const void* src, int src_device, size_t n, Stream s) {
  if (int rc = ready()) return rc;
  return dst_device == src_device ? copy_d2d(dst, src, n, s) : copy(dst, src, n, kMemcpyDeviceToDevice, s);
}

int memset_async(void* ptr, int value, size_t n, Stream s) {
  if (int rc = ready()) return rc;
  return g_memset_async(ptr, n, value, n, s);
}

// ACL numbers priorities 0 (highest) .. least; the layer's are CUDA's, 0
// lowest and negative higher. The range as CUDA's: 0 .. greatest - least.
int acl_range(int32_t* least, int32_t* greatest) {
  static std::once_flag once;
  static int rc = 0;
  static int32_t l = 0, g = 0;
  std::call_once(once, [] { rc = g_priority_range(&l, &g); });
  *least = l, *greatest = g;
  return rc;
}

int priority_range(int* lowest, int* highest) {
  if (int rc = ready()) return rc;
  int32_t least = 0, greatest = 0;
  const int rc = acl_range(&least, &greatest);
  *lowest = 0;
  *highest = rc == 0 ? greatest - least : 0;
  return rc;
}

// No ACL stream synchronises with a legacy one, so the CUDA flags mean nothing here.
int stream_create(Stream* s, unsigned /*flags*/, int priority) {
  if (int rc = ready()) return rc;
  if (g_create_stream_with_config == nullptr) return priority == 0 ? g_create_stream(s) : kInvalidParam;
  int32_t least = 0, greatest = 0;
  if (int rc = acl_range(&least, &greatest)) return rc;
  const int32_t acl = std::min(std::max(least + priority, greatest), least);
  return g_create_stream_with_config(s, static_cast<uint32_t>(acl), 0);
}

// acl_rt.h, aclrtDestroyStream: "call aclrtSynchronizeStream ... to ensure
// that the tasks in the Stream have been completed" first.
int stream_destroy(Stream s) {
  if (int rc = ready()) return rc;
  int rc = g_synchronize_stream(s);
  return rc == 0 ? g_destroy_stream(s) : rc;
}

// The status comes back through an out-parameter; pending is the table's not-ready code.
int stream_query(Stream s) {
  if (int rc = ready()) return rc;
  int status = kStatusComplete;
  const int rc = g_stream_query(s, &status);
  return rc != 0 ? rc : status == kStatusComplete ? 0 : kStreamNotComplete;
}

int stream_synchronize(Stream s) {
  if (int rc = ready()) return rc;
  return g_synchronize_stream(s);
}

int stream_wait_event(Stream s, Event e, unsigned flags) {
  if (int rc = ready()) return rc;
  return flags != 0 ? kInvalidParam : g_stream_wait_event(s, e);
}

// Timing is opt-in: TIME_LINE unless the layer asks for none; SYNC always,
// since an event without it cannot be waited on (CANN, aclrtCreateEventWithFlag).
int event_create(Event* e, unsigned flags) {
  if (int rc = ready()) return rc;
  return g_create_event_with_flag(e, (flags & kDisableTiming) != 0 ? kEventSync : kEventSync | kEventTimeLine);
}

int event_record(Event e, Stream s) {
  if (int rc = ready()) return rc;
  return g_record_event(e, s);
}

int event_query(Event e) {
  if (int rc = ready()) return rc;
  int status = kRecordedComplete;
  const int rc = g_query_event_status(e, &status);
  return rc != 0 ? rc : status == kRecordedComplete ? 0 : kEventNotComplete;
}

int event_synchronize(Event e) {
  if (int rc = ready()) return rc;
  return g_synchronize_event(e);
}

int event_destroy(Event e) {
  if (int rc = ready()) return rc;
  return g_destroy_event(e);
}

int event_elapsed_time(float* ms, Event a, Event b) {
  if (int rc = ready()) return rc;
  return g_event_elapsed_time(ms, a, b);
}

// ACL before 8.x keeps no per-thread last error to reset.
int get_last_error() { return g_get_last_error != nullptr ? g_get_last_error(kThreadLevel) : 0; }

// The runtime's own description of the thread's latest failure, whatever the code.
const char* get_error_string(int) { return g_recent_err_msg != nullptr ? g_recent_err_msg() : nullptr; }

const char* get_error_name(int code) {
  static const struct {
    int code;
    const char* name;
  } kNames[] = {
      {100000, "ACL_ERROR_INVALID_PARAM"},        {100001, "ACL_ERROR_UNINITIALIZE"},
      {100002, "ACL_ERROR_REPEAT_INITIALIZE"},    {107000, "ACL_ERROR_RT_PARAM_INVALID"},
      {107001, "ACL_ERROR_RT_INVALID_DEVICEID"},  {107002, "ACL_ERROR_RT_CONTEXT_NULL"},
      {107003, "ACL_ERROR_RT_STREAM_CONTEXT"},    {107008, "ACL_ERROR_RT_ADDR_UNALIGNED"},
      {107017, "ACL_ERROR_RT_INVALID_HANDLE"},    {200000, "ACL_ERROR_BAD_ALLOC"},
      {200001, "ACL_ERROR_API_NOT_SUPPORT"},      {200002, "ACL_ERROR_INVALID_DEVICE"},
      {200003, "ACL_ERROR_MEMORY_ADDRESS_UNALIGNED"}, {200005, "ACL_ERROR_INVALID_RESOURCE_HANDLE"},
      {207000, "ACL_ERROR_RT_FEATURE_NOT_SUPPORT"}, {207001, "ACL_ERROR_RT_MEMORY_ALLOCATION"},
      {207004, "ACL_ERROR_RT_NO_DEVICE"},         {207006, "ACL_ERROR_RT_NO_PERMISSION"},
      {507000, "ACL_ERROR_RT_INTERNAL_ERROR"},    {507004, "ACL_ERROR_RT_STREAM_NOT_COMPLETE"},
      {507006, "ACL_ERROR_RT_EVENT_NOT_COMPLETE"}, {507899, "ACL_ERROR_RT_DRV_INTERNAL_ERROR"},
  };
  for (const auto& n : kNames)
    if (n.code == code) return n.name;
  return nullptr;
}

int launch_host_func(Stream s, rt_host_fn fn, void* user) {
  if (int rc = ready()) return rc;
  return g_launch_host_func(s, fn, user);
}

int can_access_peer(int* can, int device, int peer) {
  if (int rc = ready()) return rc;
  int32_t c = 0;
  const int rc = g_can_access_peer(&c, device, peer);
  *can = rc == 0 ? c : 0;
  return rc;
}

int enable_peer_access(int peer, unsigned flags) {
  if (int rc = ready()) return rc;
  return g_enable_peer_access(peer, flags);  // flags: "reserved field, now it must be zero"
}

// aclrtGetDeviceInfo(deviceId, aclrtDevAttr, int64_t*) under cudaDeviceGetAttribute's shape.
int device_attribute(int* value, int attr, int device) {
  if (int rc = ready()) return rc;
  int64_t v = 0;
  const int rc = g_get_device_info(static_cast<uint32_t>(device), attr, &v);
  *value = rc == 0 ? static_cast<int>(v) : 0;
  return rc;
}

// aclrtGetSocName is process-wide: every device reports the one chip name.
int device_name(char* name, int len, int /*device*/) {
  if (int rc = ready()) return rc;
  const char* soc = g_get_soc_name();
  if (soc == nullptr || len <= 0) return kInvalidParam;
  std::snprintf(name, static_cast<size_t>(len), "%s", soc);
  return 0;
}

using flagos::kit::require_symbol;

template <class Fn>
void maybe(void* library, const char* name, Fn* out) {
  *out = flagos::kit::symbol<Fn>(library, name);
}

const char* adapt(void* library, Runtime* rt) {
  const char* missing = nullptr;
  require_symbol(library, "aclInit", &g_init, &missing);
  require_symbol(library, "aclrtGetDeviceCount", &g_get_device_count, &missing);
  require_symbol(library, "aclrtSetDevice", &g_set_device, &missing);
  require_symbol(library, "aclrtGetDevice", &g_get_device, &missing);
  require_symbol(library, "aclrtSynchronizeDevice", &g_synchronize_device, &missing);
  require_symbol(library, "aclrtGetMemInfo", &g_get_mem_info, &missing);
  require_symbol(library, "aclrtMalloc", &g_malloc, &missing);
  require_symbol(library, "aclrtFree", &g_free, &missing);
  require_symbol(library, "aclrtMallocHost", &g_malloc_host, &missing);
  require_symbol(library, "aclrtFreeHost", &g_free_host, &missing);
  require_symbol(library, "aclrtMemcpyAsync", &g_memcpy_async, &missing);
  require_symbol(library, "aclrtMemsetAsync", &g_memset_async, &missing);
  require_symbol(library, "aclrtCreateStream", &g_create_stream, &missing);
  require_symbol(library, "aclrtDestroyStream", &g_destroy_stream, &missing);
  require_symbol(library, "aclrtStreamQuery", &g_stream_query, &missing);
  require_symbol(library, "aclrtSynchronizeStream", &g_synchronize_stream, &missing);
  require_symbol(library, "aclrtStreamWaitEvent", &g_stream_wait_event, &missing);
  require_symbol(library, "aclrtCreateEventWithFlag", &g_create_event_with_flag, &missing);
  require_symbol(library, "aclrtRecordEvent", &g_record_event, &missing);
  require_symbol(library, "aclrtQueryEventStatus", &g_query_event_status, &missing);
  require_symbol(library, "aclrtSynchronizeEvent", &g_synchronize_event, &missing);
  require_symbol(library, "aclrtDestroyEvent", &g_destroy_event, &missing);
  require_symbol(library, "aclrtEventElapsedTime", &g_event_elapsed_time, &missing);
  if (missing != nullptr) return missing;
  maybe(library, "aclrtGetSocName", &g_get_soc_name);
  maybe(library, "aclGetRecentErrMsg", &g_recent_err_msg);
  maybe(library, "aclrtGetLastError", &g_get_last_error);
  maybe(library, "aclrtDeviceCanAccessPeer", &g_can_access_peer);
  maybe(library, "aclrtDeviceEnablePeerAccess", &g_enable_peer_access);
  maybe(library, "aclrtLaunchHostFunc", &g_launch_host_func);
  maybe(library, "aclrtGetDeviceInfo", &g_get_device_info);
  // Priorities only where the range can be asked (8.x): before it, the
  // priority argument of aclrtCreateStreamWithConfig is "reserved, must be 0".
  maybe(library, "aclrtDeviceGetStreamPriorityRange", &g_priority_range);
  if (g_priority_range != nullptr) maybe(library, "aclrtCreateStreamWithConfig", &g_create_stream_with_config);
  if (g_create_stream_with_config == nullptr) g_priority_range = nullptr;

  rt->get_device_count = &get_device_count;
  rt->set_device = &set_device;
  rt->get_device = &get_device;
  rt->device_synchronize = &device_synchronize;
  rt->mem_get_info = &mem_get_info;
  rt->malloc = &device_malloc;
  rt->free = &device_free;
  rt->host_alloc_plain = &host_alloc;
  rt->host_alloc_flags = nullptr;
  rt->host_free = &host_free;
  rt->memcpy_async = &memcpy_async;
  rt->memcpy_peer_async = &memcpy_peer_async;
  rt->memset_async = &memset_async;
  rt->stream_create_with_priority = &stream_create;
  rt->device_get_stream_priority_range = g_priority_range != nullptr ? &priority_range : nullptr;
  rt->stream_destroy = &stream_destroy;
  rt->stream_query = &stream_query;
  rt->stream_synchronize = &stream_synchronize;
  rt->stream_wait_event = &stream_wait_event;
  rt->event_create_with_flags = &event_create;
  rt->event_record = &event_record;
  rt->event_query = &event_query;
  rt->event_synchronize = &event_synchronize;
  rt->event_destroy = &event_destroy;
  rt->event_elapsed_time = &event_elapsed_time;
  rt->get_last_error = &get_last_error;
  rt->get_error_name = &get_error_name;
  rt->get_error_string = &get_error_string;
  // aclrtLaunchCallback would need a thread of ours subscribed to the stream
  // (aclrtSubscribeReport, aclrtProcessReport); aclrtLaunchHostFunc (8.x)
  // registers its own and blocks the stream's later tasks, as CUDA's does.
  rt->launch_host_func = g_launch_host_func != nullptr ? &launch_host_func : nullptr;
  rt->device_can_access_peer = g_can_access_peer != nullptr ? &can_access_peer : nullptr;
  rt->device_enable_peer_access = g_enable_peer_access != nullptr ? &enable_peer_access : nullptr;
  rt->device_get_attribute = g_get_device_info != nullptr ? &device_attribute : nullptr;
  rt->device_name = g_get_soc_name != nullptr ? &device_name : nullptr;
  return nullptr;
}

// acl_base.h / rt_error_codes.h codes and what they mean to flagos; unlisted: DEVICE.
const ErrorCode kAclErrors[] = {
    {100000, FLAGOS_ERROR_INVALID_ARGUMENT},     // ACL_ERROR_INVALID_PARAM
    {100001, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},  // ACL_ERROR_UNINITIALIZE
    {107000, FLAGOS_ERROR_INVALID_ARGUMENT},     // ACL_ERROR_RT_PARAM_INVALID
    {107001, FLAGOS_ERROR_INVALID_DEVICE},       // ACL_ERROR_RT_INVALID_DEVICEID
    {107003, FLAGOS_ERROR_INVALID_ARGUMENT},     // ACL_ERROR_RT_STREAM_CONTEXT
    {107008, FLAGOS_ERROR_INVALID_ARGUMENT},     // ACL_ERROR_RT_ADDR_UNALIGNED
    {107016, FLAGOS_ERROR_INVALID_ARGUMENT},     // ACL_ERROR_RT_INVALID_MEMORY_TYPE
    {107017, FLAGOS_ERROR_INVALID_HANDLE},       // ACL_ERROR_RT_INVALID_HANDLE
    {200000, FLAGOS_ERROR_OUT_OF_MEMORY},        // ACL_ERROR_BAD_ALLOC
    {200001, FLAGOS_ERROR_UNSUPPORTED},          // ACL_ERROR_API_NOT_SUPPORT
    {200002, FLAGOS_ERROR_INVALID_DEVICE},       // ACL_ERROR_INVALID_DEVICE
    {200003, FLAGOS_ERROR_INVALID_ARGUMENT},     // ACL_ERROR_MEMORY_ADDRESS_UNALIGNED
    {200005, FLAGOS_ERROR_INVALID_HANDLE},       // ACL_ERROR_INVALID_RESOURCE_HANDLE
    {200006, FLAGOS_ERROR_UNSUPPORTED},          // ACL_ERROR_FEATURE_UNSUPPORTED
    {207000, FLAGOS_ERROR_UNSUPPORTED},          // ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    {207001, FLAGOS_ERROR_OUT_OF_MEMORY},        // ACL_ERROR_RT_MEMORY_ALLOCATION
    {207004, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},  // ACL_ERROR_RT_NO_DEVICE
    {207006, FLAGOS_ERROR_INVALID_STATE},        // ACL_ERROR_RT_NO_PERMISSION
    {kStreamNotComplete, FLAGOS_NOT_READY},      // the adapter's pending stream
    {507010, FLAGOS_ERROR_DEVICE_LOST},          // ACL_ERROR_RT_LOST_HEARTBEAT
    {507015, FLAGOS_ERROR_DEVICE_LOST},          // ACL_ERROR_RT_AICORE_EXCEPTION
    {507053, FLAGOS_ERROR_DEVICE_LOST},          // ACL_ERROR_RT_DEVICE_MEM_ERROR
    {507054, FLAGOS_ERROR_DEVICE_LOST},          // ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR
    {0, FLAGOS_SUCCESS},
};

Vendor make_ascend() {
  Vendor v = {
      "ascend", "Huawei Ascend (CANN)", "aclrt",
      {kRuntime, kEnv, kSubdirs, nullptr, kFixed, true, false},
      {nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
      nullptr, nullptr,
      // Named for messages; the adapter sets the calls.
      "aclrtMallocHost", -1 /* (void**, size_t) */, "aclrtFreeHost",
      nullptr, nullptr,
      nullptr,
      {0, 1, 2, 3},  // ACL_MEMCPY_HOST_TO_HOST .. DEVICE_TO_DEVICE (aclrtMemcpyKind)
      0 /* no non-blocking flag: ACL has no legacy stream */, kDisableTiming,
      // No compute capability or PCI getters; aclrtGetDeviceInfo's
      // ACL_DEV_ATTR_AICORE_CORE_NUM (101) as the multiprocessor count.
      -1, -1, 101, -1, -1, -1,
      "ascend",
      kEventNotComplete, kAclErrors,
      false,
      false,
  };
  v.kernels = {kOperators, kEnv, kSubdirs, nullptr, kFixed, true, false};
  v.adapt = &adapt;
  v.calls_by_prefix = false;
  return v;
}

}  // namespace

FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make_ascend)

}  // namespace flagos_cudalike
