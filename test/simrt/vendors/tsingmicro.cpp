// libhpgr.so: TsingMicro's Kuiper runtime (tx_runtime.h, installed under
// /usr/local/kuiper). No public header exists. The call shapes are those
// the upstream torch_fl csrc/runtime/accelerator/tsingmicro/{device,memory,
// stream}.cc and FlagCX flagcx/adaptor/device/tsmicro_adaptor.cc call:
// uint32_t device ids and counts, uint64_t sizes, txMemcpyKind 0..3, streams
// without flags or priorities, events without flags, txStreamWaitEvent
// without flags. A public reverse-engineering note of the Kuiper SDK
// ("Observed HPGR tx_runtime.h Interface") adds the rules enforced here and
// the error-code families (0x42 memory and memcpy, 0x43 device, 0x46
// generic); of their values it documents only 0x43000003, a device-manager
// initialisation failure. Every other number below is the simulator's own,
// placed in its documented family. Unverified on hardware.
#include <climits>
#include <cstdint>

#include "exports.h"

namespace {

using txError_t = int;  // an enum in tx_runtime.h: int-sized
using txStream_t = void*;
using txEvent_t = void*;
using txHostFn_t = void (*)(void*);

const simrt::Vendor kTx = {
    "tsingmicro", "tx", "TsingMicro", "txMemcpyKind",
    {{0, "TX_SUCCESS"},
     {0x46000001, "TX_ERROR_INVALID_VALUE"},
     {0x46000002, "TX_ERROR_OUT_OF_MEMORY"},
     {0x43000003, "TX_ERROR_DEVICE_INIT"},  // the note's device-manager init failure
     {0x42000001, "TX_ERROR_INVALID_MEMCPY_KIND"},
     {0x43000001, "TX_ERROR_NO_DEVICE"},
     {0x43000002, "TX_ERROR_INVALID_DEVICE"},
     {0x46000003, "TX_ERROR_INVALID_HANDLE"},  // named by FlagCX's adaptor
     {0x46000004, "TX_ERROR_NOT_READY"},       // named by both callers
     {0x46000006, nullptr},                    // no peer API, so no PeerAccessAlreadyEnabled
     {0x46000007, "TX_ERROR_NOT_PERMITTED"},
     {0x46000008, "TX_ERROR_NOT_SUPPORTED"}},
    /*kinds h2h,h2d,d2h,d2d; no "default"*/ 0, 1, 2, 3, -1,
    /*txStreamCreate takes no flags*/ 0, 0,
    /*txEventCreate takes no flags: every event times*/ 0, 0, 0,
    /*txMallocHost takes no flags*/ 0,
    /*no attribute call*/ {-1, -1, -1, -1, -1, -1},
    /*no priorities*/ 0, 0,
    /*reported cc, cluster count (never asked)*/ 0, 0, 16,
};

// Host-to-host is rejected by txMemcpy and txMemcpyAsync (the
// reverse-engineering note, section 5.4: "H2D, D2H, D2D supported; H2H
// rejected"): a caller copies host memory itself.
constexpr int kHostToHost = 0;
const char* const kHostToHostRule =
    "host-to-host copies (txMemcpyHostToHost, kind 0) are rejected: the caller copies host memory itself";

// A device id no int ordinal can name is never a device.
bool bad_id(uint32_t device, const char* symbol, int* code) {
  if (device <= static_cast<uint32_t>(INT_MAX)) return false;
  *code = simrt::rule_violation(kTx, symbol, simrt::Err::InvalidDevice, "device id is not an ordinal");
  return true;
}

}  // namespace

SIMRT_EXPORT txError_t txGetDeviceCount(uint32_t* count) {
  int n = 0;
  int rc = simrt::get_device_count(kTx, "txGetDeviceCount", count == nullptr ? nullptr : &n);
  if (rc == 0) *count = static_cast<uint32_t>(n);
  return rc;
}

SIMRT_EXPORT txError_t txSetDevice(uint32_t device) {
  int rc = 0;
  if (bad_id(device, "txSetDevice", &rc)) return rc;
  return simrt::set_device(kTx, "txSetDevice", static_cast<int>(device));
}

SIMRT_EXPORT txError_t txGetDevice(uint32_t* device) {
  int d = 0;
  int rc = simrt::get_device(kTx, "txGetDevice", device == nullptr ? nullptr : &d);
  if (rc == 0) *device = static_cast<uint32_t>(d);
  return rc;
}

SIMRT_EXPORT txError_t txDeviceSynchronize(void) { return simrt::device_synchronize(kTx, "txDeviceSynchronize"); }

SIMRT_EXPORT txError_t txMemGetInfo(uint64_t* free_bytes, uint64_t* total) {
  size_t f = 0, t = 0;
  int rc = simrt::mem_get_info(kTx, "txMemGetInfo", free_bytes == nullptr ? nullptr : &f,
                               total == nullptr ? nullptr : &t);
  if (rc == 0) *free_bytes = f, *total = t;
  return rc;
}

SIMRT_EXPORT txError_t txMalloc(void** ptr, uint64_t size) {
  return simrt::malloc_device(kTx, "txMalloc", ptr, static_cast<size_t>(size));
}

SIMRT_EXPORT txError_t txFree(void* ptr) { return simrt::free_device(kTx, "txFree", ptr); }

SIMRT_EXPORT txError_t txMallocHost(void** ptr, uint64_t size) {
  return simrt::host_alloc(kTx, "txMallocHost", ptr, static_cast<size_t>(size), 0);
}

SIMRT_EXPORT txError_t txFreeHost(void* ptr) { return simrt::free_host(kTx, "txFreeHost", ptr); }

SIMRT_EXPORT txError_t txMemcpy(void* dst, const void* src, uint64_t size, int kind) {
  if (kind == kHostToHost)
    return simrt::rule_violation(kTx, "txMemcpy", simrt::Err::InvalidMemcpyDirection, kHostToHostRule);
  return simrt::memcpy_sync(kTx, "txMemcpy", dst, src, static_cast<size_t>(size), kind);
}

SIMRT_EXPORT txError_t txMemcpyAsync(void* dst, const void* src, uint64_t size, int kind, txStream_t stream) {
  if (kind == kHostToHost)
    return simrt::rule_violation(kTx, "txMemcpyAsync", simrt::Err::InvalidMemcpyDirection, kHostToHostRule);
  return simrt::memcpy_async(kTx, "txMemcpyAsync", dst, src, static_cast<size_t>(size), kind, stream);
}

// Blocking: on the current device's default stream, complete on return.
SIMRT_EXPORT txError_t txMemset(void* ptr, int value, uint64_t size) {
  int rc = simrt::memset_async(kTx, "txMemset", ptr, value, static_cast<size_t>(size), nullptr);
  return rc != 0 ? rc : simrt::stream_synchronize(kTx, "txMemset", nullptr);
}

SIMRT_EXPORT txError_t txMemsetAsync(void* ptr, int value, uint64_t size, txStream_t stream) {
  return simrt::memset_async(kTx, "txMemsetAsync", ptr, value, static_cast<size_t>(size), stream);
}

// No flags and no priority: the shape is the rule (no txStreamCreateWithFlags,
// txStreamCreateWithPriority or txDeviceGetStreamPriorityRange exists).
SIMRT_EXPORT txError_t txStreamCreate(txStream_t* stream) {
  return simrt::stream_create(kTx, "txStreamCreate", stream, 0, 0);
}

SIMRT_EXPORT txError_t txStreamDestroy(txStream_t stream) {
  return simrt::stream_destroy(kTx, "txStreamDestroy", stream);
}

SIMRT_EXPORT txError_t txStreamQuery(txStream_t stream) { return simrt::stream_query(kTx, "txStreamQuery", stream); }

SIMRT_EXPORT txError_t txStreamSynchronize(txStream_t stream) {
  return simrt::stream_synchronize(kTx, "txStreamSynchronize", stream);
}

SIMRT_EXPORT txError_t txStreamWaitEvent(txStream_t stream, txEvent_t event) {
  return simrt::stream_wait_event(kTx, "txStreamWaitEvent", stream, event, 0);
}

SIMRT_EXPORT txError_t txLaunchHostFunc(txStream_t stream, txHostFn_t fn, void* user) {
  return simrt::launch_host_func(kTx, "txLaunchHostFunc", stream, fn, user);
}

// No flags: every event records a time.
SIMRT_EXPORT txError_t txEventCreate(txEvent_t* event) { return simrt::event_create(kTx, "txEventCreate", event, 0); }

SIMRT_EXPORT txError_t txEventRecord(txEvent_t event, txStream_t stream) {
  return simrt::event_record(kTx, "txEventRecord", event, stream);
}

SIMRT_EXPORT txError_t txEventQuery(txEvent_t event) { return simrt::event_query(kTx, "txEventQuery", event); }

SIMRT_EXPORT txError_t txEventSynchronize(txEvent_t event) {
  return simrt::event_synchronize(kTx, "txEventSynchronize", event);
}

SIMRT_EXPORT txError_t txEventDestroy(txEvent_t event) { return simrt::event_destroy(kTx, "txEventDestroy", event); }

SIMRT_EXPORT txError_t txEventElapsedTime(float* ms, txEvent_t start, txEvent_t end) {
  return simrt::event_elapsed_time(kTx, "txEventElapsedTime", ms, start, end);
}

SIMRT_EXPORT const char* txGetErrorString(txError_t error) { return simrt::get_error_string(kTx, error); }
