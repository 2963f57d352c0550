// TsingMicro TX8 (Kuiper SDK): tx* in libhpgr.so under /usr/local/kuiper/lib
// ($KUIPER_PATH, the variable the SDK's environment sets). Its header,
// tx_runtime.h, is not public: the call shapes are those the upstream
// torch_fl csrc/runtime/accelerator/tsingmicro/{device,memory,stream}.cc and
// FlagCX flagcx/adaptor/device/tsmicro_adaptor.cc use, and the rules those of
// a public reverse-engineering note of the Kuiper SDK. Unverified on hardware.
//
// The runtime is near-CUDA but not CUDA-shaped, so an adapter fills the
// layer's table: uint32_t device ids and counts, uint64_t sizes; streams
// without flags or priorities (no FLAGOS_CAP_STREAM_PRIORITY); events without
// flags, every one timed (the layer itself refuses to time an event created
// without FLAGOS_EVENT_TIMING); no peer API (no FLAGOS_CAP_PEER_ACCESS); no
// attribute call and a device name only inside the txDeviceProperty struct,
// which is avoided: a generic name, memory from txMemGetInfo. txMemcpy*
// rejects host-to-host copies; the layer copies host memory itself. Copies
// between devices stage through page-locked host memory (txSend/txRecv, the
// runtime's P2P calls, address tiles, not devices).
#include <algorithm>
#include <climits>
#include <cstdint>

#include "../runtime.h"
#include "../vendor.h"
#include "flagos/kit/runtime_library.hpp"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libhpgr.so", nullptr};
const char* const kEnv[] = {"KUIPER_PATH", nullptr};
const char* const kSubdirs[] = {"lib", nullptr};
const char* const kFixed[] = {"/usr/local/kuiper/lib", nullptr};

// Error codes. Only the families are public (the note: 0x42 memory and
// memcpy, 0x43 device, 0x44 system, 0x46 generic invalid value, OOM, invalid
// handle, not ready, device failed) and one value, 0x43000003 (device
// manager initialisation failed). The others are those of the simulated
// runtime (test/simrt/vendors/tsingmicro.cpp), named as upstream names them
// where it does; verify them against tx_runtime.h on hardware.
constexpr int kInvalidValue = 0x46000001;
constexpr int kInvalidDevice = 0x43000002;
constexpr int kNotReady = 0x46000004;  // TX_ERROR_NOT_READY

// txMemcpyKind (upstream memory.cc: "0=H2H, 1=H2D, 2=D2H, 3=D2D").
constexpr int kHostToDevice = 1, kDeviceToHost = 2, kDeviceToDevice = 3;
// The page-locked buffer a copy between devices goes through, at most.
constexpr uint64_t kStagingBytes = uint64_t{16} << 20;

const ErrorCode kTxErrors[] = {
    {kInvalidValue, FLAGOS_ERROR_INVALID_ARGUMENT},
    {0x46000002, FLAGOS_ERROR_OUT_OF_MEMORY},
    {0x46000003, FLAGOS_ERROR_INVALID_HANDLE},  // TX_ERROR_INVALID_HANDLE
    {0x46000007, FLAGOS_ERROR_INVALID_STATE},   // not permitted (a call inside a host function)
    {0x46000008, FLAGOS_ERROR_UNSUPPORTED},
    {0x42000001, FLAGOS_ERROR_INVALID_ARGUMENT},  // memcpy kind
    {0x43000001, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},  // no device
    {kInvalidDevice, FLAGOS_ERROR_INVALID_DEVICE},
    {0x43000003, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},  // device manager init failed (documented)
    {0x44000002, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},  // logger init failed (documented)
    {0, FLAGOS_SUCCESS},
};

// The tx calls whose shapes differ from the layer's.
using Count = int (*)(uint32_t*);
using SetDevice = int (*)(uint32_t);
using MemInfo = int (*)(uint64_t*, uint64_t*);
using Alloc = int (*)(void**, uint64_t);
using Copy = int (*)(void*, const void*, uint64_t, int, rt_stream);
using SyncCopy = int (*)(void*, const void*, uint64_t, int);
using Set = int (*)(void*, int, uint64_t, rt_stream);
using StreamCreate = int (*)(rt_stream*);
using WaitEvent = int (*)(rt_stream, rt_event);
using EventCreate = int (*)(rt_event*);

Count g_get_device_count = nullptr;
SetDevice g_set_device = nullptr;
Count g_get_device = nullptr;
MemInfo g_mem_get_info = nullptr;
Alloc g_malloc = nullptr;
Alloc g_malloc_host = nullptr;
Copy g_memcpy_async = nullptr;
SyncCopy g_memcpy = nullptr;
int (*g_stream_synchronize)(rt_stream) = nullptr;
int (*g_free_host)(void*) = nullptr;
Set g_memset_async = nullptr;
StreamCreate g_stream_create = nullptr;
WaitEvent g_stream_wait_event = nullptr;
EventCreate g_event_create = nullptr;

int get_device_count(int* count) {
  uint32_t n = 0;
  int err = g_get_device_count(&n);
  if (err == 0) *count = n > static_cast<uint32_t>(INT_MAX) ? INT_MAX : static_cast<int>(n);
  return err;
}

int set_device(int device) { return device < 0 ? kInvalidDevice : g_set_device(static_cast<uint32_t>(device)); }

int get_device(int* device) {
  uint32_t d = 0;
  int err = g_get_device(&d);
  if (err == 0) *device = static_cast<int>(d);
  return err;
}

int mem_get_info(size_t* free_bytes, size_t* total) {
  uint64_t f = 0, t = 0;
  int err = g_mem_get_info(&f, &t);
  if (err == 0) *free_bytes = static_cast<size_t>(f), *total = static_cast<size_t>(t);
  return err;
}

int malloc_device(void** ptr, size_t size) { return g_malloc(ptr, static_cast<uint64_t>(size)); }
int malloc_host(void** ptr, size_t size) { return g_malloc_host(ptr, static_cast<uint64_t>(size)); }

// Never host-to-host: the layer runs those on the host (txMemcpy rejects them).
int memcpy_async(void* dst, const void* src, size_t size, int kind, rt_stream s) {
  return g_memcpy_async(dst, src, static_cast<uint64_t>(size), kind, s);
}

// No peer API: after the stream's earlier work, through page-locked host
// memory in chunks, complete on return (the ABI allows a staged copy). The
// blocking txMemcpy runs on the current device, so each half switches to the
// device its pointer belongs to; the caller's device is current again after.
int memcpy_peer(void* dst, int dst_device, const void* src, int src_device, size_t size, rt_stream s) {
  if (size == 0) return 0;
  if (src_device == dst_device) return g_memcpy_async(dst, src, size, kDeviceToDevice, s);
  if (src_device < 0 || dst_device < 0) return kInvalidDevice;
  uint32_t current = 0;
  int err = g_get_device(&current);
  if (err == 0) err = g_stream_synchronize(s);
  if (err != 0) return err;
  void* staging = nullptr;
  const uint64_t chunk = std::min<uint64_t>(size, kStagingBytes);
  if ((err = g_malloc_host(&staging, chunk)) != 0) return err;
  char* to = static_cast<char*>(dst);
  const char* from = static_cast<const char*>(src);
  for (uint64_t done = 0; err == 0 && done < size; done += chunk) {
    const uint64_t n = std::min<uint64_t>(chunk, size - done);
    err = g_set_device(static_cast<uint32_t>(src_device));
    if (err == 0) err = g_memcpy(staging, from + done, n, kDeviceToHost);
    if (err == 0) err = g_set_device(static_cast<uint32_t>(dst_device));
    if (err == 0) err = g_memcpy(to + done, staging, n, kHostToDevice);
  }
  const int restored = g_set_device(current);
  const int freed = g_free_host(staging);
  return err != 0 ? err : restored != 0 ? restored : freed;
}

int memset_async(void* ptr, int value, size_t size, rt_stream s) {
  return g_memset_async(ptr, value, static_cast<uint64_t>(size), s);
}

// txStreamCreate under cudaStreamCreateWithPriority's contract: no flags
// (the table's stream_non_blocking is 0) and priority 0 only (the device
// table reports the range 0..0).
int stream_create(rt_stream* s, unsigned flags, int priority) {
  if (flags != 0 || priority != 0) return kInvalidValue;
  return g_stream_create(s);
}

int stream_wait_event(rt_stream s, rt_event e, unsigned flags) {
  return flags != 0 ? kInvalidValue : g_stream_wait_event(s, e);
}

// txEventCreate takes no flags: every event times, whatever is asked.
int event_create(rt_event* e, unsigned) { return g_event_create(e); }

// tx keeps its last error per thread, but no public source names a getter:
// the layer's resets have nothing to clear.
int get_last_error() { return 0; }

using flagos::kit::require_symbol;

const char* adapt(void* library, Runtime* rt) {
  const char* missing = nullptr;
  require_symbol(library, "txGetDeviceCount", &g_get_device_count, &missing);
  require_symbol(library, "txSetDevice", &g_set_device, &missing);
  require_symbol(library, "txGetDevice", &g_get_device, &missing);
  require_symbol(library, "txMemGetInfo", &g_mem_get_info, &missing);
  require_symbol(library, "txMalloc", &g_malloc, &missing);
  require_symbol(library, "txMallocHost", &g_malloc_host, &missing);
  require_symbol(library, "txMemcpyAsync", &g_memcpy_async, &missing);
  require_symbol(library, "txMemcpy", &g_memcpy, &missing);
  require_symbol(library, "txStreamSynchronize", &g_stream_synchronize, &missing);
  require_symbol(library, "txFreeHost", &g_free_host, &missing);
  require_symbol(library, "txMemsetAsync", &g_memset_async, &missing);
  require_symbol(library, "txStreamCreate", &g_stream_create, &missing);
  require_symbol(library, "txStreamWaitEvent", &g_stream_wait_event, &missing);
  require_symbol(library, "txEventCreate", &g_event_create, &missing);
  // The same shapes as the layer's (handles as void*, txError_t an int enum).
  require_symbol(library, "txDeviceSynchronize", &rt->device_synchronize, &missing);
  require_symbol(library, "txFree", &rt->free, &missing);
  require_symbol(library, "txStreamDestroy", &rt->stream_destroy, &missing);
  require_symbol(library, "txStreamQuery", &rt->stream_query, &missing);
  require_symbol(library, "txEventRecord", &rt->event_record, &missing);
  require_symbol(library, "txEventQuery", &rt->event_query, &missing);
  require_symbol(library, "txEventSynchronize", &rt->event_synchronize, &missing);
  require_symbol(library, "txEventDestroy", &rt->event_destroy, &missing);
  require_symbol(library, "txEventElapsedTime", &rt->event_elapsed_time, &missing);
  if (missing != nullptr) return missing;
  rt->get_error_string = flagos::kit::symbol<const char* (*)(int)>(library, "txGetErrorString");
  rt->launch_host_func = flagos::kit::symbol<int (*)(rt_stream, rt_host_fn, void*)>(library, "txLaunchHostFunc");
  rt->get_device_count = &get_device_count;
  rt->set_device = &set_device;
  rt->get_device = &get_device;
  rt->mem_get_info = &mem_get_info;
  rt->malloc = &malloc_device;
  rt->host_alloc_plain = &malloc_host;
  rt->host_alloc_flags = nullptr;
  rt->memcpy_async = &memcpy_async;
  rt->memcpy_peer_async = &memcpy_peer;
  rt->memset_async = &memset_async;
  rt->stream_synchronize = g_stream_synchronize;
  rt->host_free = g_free_host;
  rt->stream_create_with_priority = &stream_create;
  rt->stream_wait_event = &stream_wait_event;
  rt->event_create_with_flags = &event_create;
  rt->get_last_error = &get_last_error;
  return nullptr;
}

Vendor make_tsingmicro() {
  Vendor v = {
      "tsingmicro", "TsingMicro TX8", "tx",
      {kRuntime, kEnv, kSubdirs, nullptr, kFixed, true, false},
      {nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
      nullptr, nullptr,
      "txMallocHost", -1 /* (void**, uint64_t) */, "txFreeHost",
      nullptr, nullptr,  // name and memory: no scalar getter (txGetDeviceProperty fills a struct)
      nullptr,
      {0, 1, 2, 3},  // txMemcpyHostToHost .. DeviceToDevice (upstream memory.cc: "0=H2H, 1=H2D, 2=D2H, 3=D2D")
      0 /* txStreamCreate: no flags */, 0 /* txEventCreate: no flags */,
      -1, -1, -1, -1, -1, -1,  // no attribute call
      "tx8",
      kNotReady, kTxErrors,
      false,
      false,
  };
  v.adapt = &adapt;
  v.calls_by_prefix = false;
  return v;
}

}  // namespace

FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make_tsingmicro)

}  // namespace flagos_cudalike
