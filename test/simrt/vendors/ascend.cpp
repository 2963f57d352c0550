// libascendcl.so: Huawei AscendCL. Not CUDA-shaped, so this file writes each
// exported call with ACL's own name and signature (Ascend/pytorch
// third_party/acl/inc/acl/acl_rt.h, acl_base.h, acl.h; the 8.x calls from the
// newer acl_rt.h there) and translates it onto the engine, enforcing ACL's
// own documented rules on top of the engine's:
//   - aclInit before any other call (acl.h; CANN's "aclInit must be called
//     first"): ACL_ERROR_UNINITIALIZE;
//   - destMax >= count on aclrtMemcpy[Async], maxCount >= count on
//     aclrtMemsetAsync (acl_rt.h: "Max length of the destination address memory");
//   - both ends of an on-chip device-to-device copy 64-byte aligned
//     (acl_rt.h, aclrtMemcpyAsync "Restriction");
//   - aclrtEventElapsedTime only between events created with
//     ACL_EVENT_TIME_LINE (acl_rt.h; CANN, aclrtCreateEventWithFlag: the flag
//     makes the event record timestamps; aclrtCreateEvent's events time too).
// Codes for those rules other than UNINITIALIZE are ACL_ERROR_RT_PARAM_INVALID
// here; the hardware's exact code is unverified.
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <set>

#include "ascend_vendor.h"
#include "exports.h"

namespace {

using simrt::Err;
using simrt_ascend::kAcl;

constexpr unsigned kNonBlocking = 0x80000000u;
constexpr int kRepeatInitialize = 100002;      // ACL_ERROR_REPEAT_INITIALIZE
constexpr int kNotReady = 507006;              // kAcl's NotReady
constexpr int kD2d = 3;                        // ACL_MEMCPY_DEVICE_TO_DEVICE
constexpr uint32_t kEventSync = 0x1;           // ACL_EVENT_SYNC
constexpr uint32_t kEventTimeLine = 0x8;       // ACL_EVENT_TIME_LINE
constexpr uint32_t kEventFlags = 0x1 | 0x2 | 0x8 | 0x20 | 0x40;  // SYNC .. IPC (acl_rt.h 1.15)

// Every exported call returns through here: a failure's text (the rule it
// broke, else the generic one) becomes the thread's recent error message
// (kept by the engine: libopapi.so's operators set the same one).
int done(int code) {
  if (code != 0 && code != kNotReady) simrt::set_recent_error(kAcl, simrt::get_error_string(kAcl, code));
  return code;
}

// The init rule, checked first by every call but aclInit and the error queries
// (the instance's flag: libopapi.so's operators check the same one).
bool uninitialised(const char* symbol, int* code) {
  if (simrt::native_initialised(kAcl)) return false;
  *code = done(simrt::rule_violation(kAcl, symbol, Err::InitializationError,
                                     "aclInit must be called before any other AscendCL call"));
  return true;
}

int rule(const char* symbol, const char* text) {
  return done(simrt::rule_violation(kAcl, symbol, Err::InvalidValue, text));
}

int rule(const char* symbol, const char* fmt, size_t a, size_t b) {
  char text[256];
  std::snprintf(text, sizeof text, fmt, a, b);
  return rule(symbol, static_cast<const char*>(text));
}

// Events created with ACL_EVENT_TIME_LINE, the only ones that time.
std::mutex g_events_mu;
std::set<void*>* timed_events() {
  static auto* s = new std::set<void*>;  // leaked: used by worker threads at exit
  return s;
}

int create_event(const char* symbol, void** event, uint32_t flag) {
  int code = 0;
  if (uninitialised(symbol, &code)) return code;
  if (flag & ~kEventFlags) return rule(symbol, "flag 0x%zx is not a set of ACL_EVENT_* flags (0x%zx)", flag, kEventFlags);
  code = simrt::event_create(kAcl, symbol, event, 0);
  if (code == 0 && (flag & kEventTimeLine) != 0) {
    std::lock_guard<std::mutex> lock(g_events_mu);
    timed_events()->insert(*event);
  }
  return done(code);
}

int copy(const char* symbol, void* dst, size_t dest_max, const void* src, size_t count, int kind, void* stream,
         bool sync) {
  int code = 0;
  if (uninitialised(symbol, &code)) return code;
  if (dest_max < count)
    return rule(symbol, "destMax (%zu) is less than count (%zu): the destination must hold the copy", dest_max, count);
  if (kind == kD2d && count > 0) {
    const int dd = simrt::pointer_device(kAcl, dst, count), sd = simrt::pointer_device(kAcl, src, count);
    // Between two devices: the engine's peer copy (after aclrtDeviceEnablePeerAccess).
    if (dd >= 0 && sd >= 0 && dd != sd && !sync)
      return done(simrt::memcpy_peer_async(kAcl, symbol, dst, dd, src, sd, count, stream));
    if (dd >= 0 && dd == sd && ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 63) != 0)
      return rule(symbol, "on-chip device-to-device copies need 64-byte aligned src and dst (src %% 64 = %zu, dst %% 64 = %zu)",
                  reinterpret_cast<uintptr_t>(src) & 63, reinterpret_cast<uintptr_t>(dst) & 63);
  }
  return done(sync ? simrt::memcpy_sync(kAcl, symbol, dst, src, count, kind)
                   : simrt::memcpy_async(kAcl, symbol, dst, src, count, kind, stream));
}

}  // namespace

SIMRT_EXPORT int aclInit(const char* /*configPath*/) {
  int code = 0;
  if (simrt::call_blocked(kAcl, "aclInit", &code)) return done(code);
  return simrt::native_init(kAcl) ? kRepeatInitialize : 0;
}

SIMRT_EXPORT int aclFinalize() { return 0; }

SIMRT_EXPORT const char* aclGetRecentErrMsg() { return simrt::recent_error(kAcl); }
SIMRT_EXPORT int aclrtGetLastError(int /*level*/) { return simrt::get_last_error(kAcl); }
SIMRT_EXPORT int aclrtPeekAtLastError(int /*level*/) { return simrt::peek_at_last_error(kAcl); }

SIMRT_EXPORT int aclrtGetDeviceCount(uint32_t* count) {
  int code = 0, n = 0;
  if (uninitialised("aclrtGetDeviceCount", &code)) return code;
  code = simrt::get_device_count(kAcl, "aclrtGetDeviceCount", &n);
  if (code == 0 && count != nullptr) *count = static_cast<uint32_t>(n);
  return done(code);
}

SIMRT_EXPORT int aclrtSetDevice(int32_t device) {
  int code = 0;
  if (uninitialised("aclrtSetDevice", &code)) return code;
  return done(simrt::set_device(kAcl, "aclrtSetDevice", device));
}

SIMRT_EXPORT int aclrtGetDevice(int32_t* device) {
  int code = 0;
  if (uninitialised("aclrtGetDevice", &code)) return code;
  return done(simrt::get_device(kAcl, "aclrtGetDevice", device));
}

SIMRT_EXPORT int aclrtSynchronizeDevice() {
  int code = 0;
  if (uninitialised("aclrtSynchronizeDevice", &code)) return code;
  return done(simrt::device_synchronize(kAcl, "aclrtSynchronizeDevice"));
}

// Process-wide, as the real call: the one name every device has.
SIMRT_EXPORT const char* aclrtGetSocName() {
  static char name[256];
  static std::once_flag once;
  int code = 0;
  if (uninitialised("aclrtGetSocName", &code)) return nullptr;
  std::call_once(once, [] {
    if (simrt::device_get_name(kAcl, "aclrtGetSocName", false, name, sizeof name, 0) != 0) name[0] = '\0';
  });
  return name[0] != '\0' ? name : nullptr;
}

// Any aclrtMemAttr answers the current device's one memory.
SIMRT_EXPORT int aclrtGetMemInfo(int /*attr*/, size_t* free_bytes, size_t* total) {
  int code = 0;
  if (uninitialised("aclrtGetMemInfo", &code)) return code;
  return done(simrt::mem_get_info(kAcl, "aclrtGetMemInfo", free_bytes, total));
}

SIMRT_EXPORT int aclrtGetDeviceInfo(uint32_t device, int attr, int64_t* value) {
  int code = 0, v = 0;
  if (uninitialised("aclrtGetDeviceInfo", &code)) return code;
  code = simrt::device_get_attribute(kAcl, "aclrtGetDeviceInfo", &v, attr, static_cast<int>(device));
  if (code == 0 && value != nullptr) *value = v;
  return done(code);
}

SIMRT_EXPORT int aclrtDeviceCanAccessPeer(int32_t* can, int32_t device, int32_t peer) {
  int code = 0;
  if (uninitialised("aclrtDeviceCanAccessPeer", &code)) return code;
  return done(simrt::device_can_access_peer(kAcl, "aclrtDeviceCanAccessPeer", can, device, peer));
}

SIMRT_EXPORT int aclrtDeviceEnablePeerAccess(int32_t peer, uint32_t flags) {
  int code = 0;
  if (uninitialised("aclrtDeviceEnablePeerAccess", &code)) return code;
  return done(simrt::device_enable_peer_access(kAcl, "aclrtDeviceEnablePeerAccess", peer, flags));
}

// aclrtMemMallocPolicy does not change where simulated memory comes from.
SIMRT_EXPORT int aclrtMalloc(void** ptr, size_t size, int /*policy*/) {
  int code = 0;
  if (uninitialised("aclrtMalloc", &code)) return code;
  return done(simrt::malloc_device(kAcl, "aclrtMalloc", ptr, size));
}

SIMRT_EXPORT int aclrtFree(void* ptr) {
  int code = 0;
  if (uninitialised("aclrtFree", &code)) return code;
  return done(simrt::free_device(kAcl, "aclrtFree", ptr));
}

SIMRT_EXPORT int aclrtMallocHost(void** ptr, size_t size) {
  int code = 0;
  if (uninitialised("aclrtMallocHost", &code)) return code;
  return done(simrt::host_alloc(kAcl, "aclrtMallocHost", ptr, size, 0));
}

SIMRT_EXPORT int aclrtFreeHost(void* ptr) {
  int code = 0;
  if (uninitialised("aclrtFreeHost", &code)) return code;
  return done(simrt::free_host(kAcl, "aclrtFreeHost", ptr));
}

SIMRT_EXPORT int aclrtMemcpy(void* dst, size_t dest_max, const void* src, size_t count, int kind) {
  return copy("aclrtMemcpy", dst, dest_max, src, count, kind, nullptr, true);
}

SIMRT_EXPORT int aclrtMemcpyAsync(void* dst, size_t dest_max, const void* src, size_t count, int kind, void* stream) {
  return copy("aclrtMemcpyAsync", dst, dest_max, src, count, kind, stream, false);
}

SIMRT_EXPORT int aclrtMemsetAsync(void* ptr, size_t max_count, int32_t value, size_t count, void* stream) {
  int code = 0;
  if (uninitialised("aclrtMemsetAsync", &code)) return code;
  if (max_count < count)
    return rule("aclrtMemsetAsync", "maxCount (%zu) is less than count (%zu): the destination must hold the set",
                max_count, count);
  return done(simrt::memset_async(kAcl, "aclrtMemsetAsync", ptr, value, count, stream));
}

SIMRT_EXPORT int aclrtCreateStream(void** stream) {
  int code = 0;
  if (uninitialised("aclrtCreateStream", &code)) return code;
  return done(simrt::stream_create(kAcl, "aclrtCreateStream", stream, kNonBlocking, kAcl.priority_least));
}

// The flag (ACL_STREAM_FAST_LAUNCH and friends) changes nothing simulated.
SIMRT_EXPORT int aclrtCreateStreamWithConfig(void** stream, uint32_t priority, uint32_t /*flag*/) {
  int code = 0;
  if (uninitialised("aclrtCreateStreamWithConfig", &code)) return code;
  return done(simrt::stream_create(kAcl, "aclrtCreateStreamWithConfig", stream, kNonBlocking,
                                   static_cast<int>(priority > 0x7fffffffu ? 0x7fffffffu : priority)));
}

SIMRT_EXPORT int aclrtDeviceGetStreamPriorityRange(int32_t* least, int32_t* greatest) {
  int code = 0;
  if (uninitialised("aclrtDeviceGetStreamPriorityRange", &code)) return code;
  return done(simrt::device_get_stream_priority_range(kAcl, "aclrtDeviceGetStreamPriorityRange", least, greatest));
}

SIMRT_EXPORT int aclrtDestroyStream(void* stream) {
  int code = 0;
  if (uninitialised("aclrtDestroyStream", &code)) return code;
  return done(simrt::stream_destroy(kAcl, "aclrtDestroyStream", stream));
}

// aclrtStreamStatus through the out-parameter: COMPLETE 0, NOT_READY 1.
SIMRT_EXPORT int aclrtStreamQuery(void* stream, int* status) {
  int code = 0;
  if (uninitialised("aclrtStreamQuery", &code)) return code;
  if (status == nullptr) return rule("aclrtStreamQuery", "status is NULL");
  code = simrt::stream_query(kAcl, "aclrtStreamQuery", stream);
  if (code != 0 && code != kNotReady) return done(code);
  *status = code == kNotReady ? 1 : 0;
  return 0;
}

SIMRT_EXPORT int aclrtSynchronizeStream(void* stream) {
  int code = 0;
  if (uninitialised("aclrtSynchronizeStream", &code)) return code;
  return done(simrt::stream_synchronize(kAcl, "aclrtSynchronizeStream", stream));
}

SIMRT_EXPORT int aclrtStreamWaitEvent(void* stream, void* event) {
  int code = 0;
  if (uninitialised("aclrtStreamWaitEvent", &code)) return code;
  return done(simrt::stream_wait_event(kAcl, "aclrtStreamWaitEvent", stream, event, 0));
}

SIMRT_EXPORT int aclrtLaunchHostFunc(void* stream, void (*fn)(void*), void* args) {
  int code = 0;
  if (uninitialised("aclrtLaunchHostFunc", &code)) return code;
  return done(simrt::launch_host_func(kAcl, "aclrtLaunchHostFunc", stream, fn, args));
}

// CANN: aclrtCreateEvent's events both synchronise and time.
SIMRT_EXPORT int aclrtCreateEvent(void** event) {
  return create_event("aclrtCreateEvent", event, kEventSync | kEventTimeLine);
}

SIMRT_EXPORT int aclrtCreateEventWithFlag(void** event, uint32_t flag) {
  return create_event("aclrtCreateEventWithFlag", event, flag);
}

SIMRT_EXPORT int aclrtRecordEvent(void* event, void* stream) {
  int code = 0;
  if (uninitialised("aclrtRecordEvent", &code)) return code;
  return done(simrt::event_record(kAcl, "aclrtRecordEvent", event, stream));
}

// aclrtEventRecordedStatus through the out-parameter: NOT_READY 0, COMPLETE 1.
SIMRT_EXPORT int aclrtQueryEventStatus(void* event, int* status) {
  int code = 0;
  if (uninitialised("aclrtQueryEventStatus", &code)) return code;
  if (status == nullptr) return rule("aclrtQueryEventStatus", "status is NULL");
  code = simrt::event_query(kAcl, "aclrtQueryEventStatus", event);
  if (code != 0 && code != kNotReady) return done(code);
  *status = code == kNotReady ? 0 : 1;
  return 0;
}

SIMRT_EXPORT int aclrtSynchronizeEvent(void* event) {
  int code = 0;
  if (uninitialised("aclrtSynchronizeEvent", &code)) return code;
  return done(simrt::event_synchronize(kAcl, "aclrtSynchronizeEvent", event));
}

SIMRT_EXPORT int aclrtEventElapsedTime(float* ms, void* start, void* end) {
  int code = 0;
  if (uninitialised("aclrtEventElapsedTime", &code)) return code;
  bool timed = false;
  {
    std::lock_guard<std::mutex> lock(g_events_mu);
    timed = timed_events()->count(start) != 0 && timed_events()->count(end) != 0;
  }
  if (!timed)
    return rule("aclrtEventElapsedTime", "both events must be created with ACL_EVENT_TIME_LINE to be timed");
  return done(simrt::event_elapsed_time(kAcl, "aclrtEventElapsedTime", ms, start, end));
}

SIMRT_EXPORT int aclrtDestroyEvent(void* event) {
  int code = 0;
  if (uninitialised("aclrtDestroyEvent", &code)) return code;
  code = simrt::event_destroy(kAcl, "aclrtDestroyEvent", event);
  if (code == 0) {
    std::lock_guard<std::mutex> lock(g_events_mu);
    timed_events()->erase(event);
  }
  return done(code);
}
