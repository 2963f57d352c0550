// Horizon Robotics BPU: hbUCP* in libhbucp.so and hb_bpu_core_num in
// libbpu.so, both in /usr/hobot/lib (no SDK variable: that folder, the system
// path, or the plugin's runtime= option). Not a GPU runtime: the BPU runs
// compiled models; its memory is system memory the CPU maps cached. Calls,
// struct and values as Horizon's hobot/hb_ucp_sys.h, hobot/hb_ucp_status.h
// and hb_bpu.h declare them (a public third-party stub gets the flush flag
// values and hbUCPMallocCached's parameters wrong; never copy from it).
// There are no streams, events, pinned memory, peers or memset: the adapter
// below keeps runtime.h's CUDA-shaped contract over host memcpy/memset with
// cache maintenance, every operation complete at the call. Unverified on
// hardware.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "../runtime.h"
#include "../vendor.h"
#include "flagos/kit/runtime_library.hpp"

namespace flagos_cudalike {
namespace {

const char* const kRuntime[] = {"libhbucp.so", nullptr};
const char* const kNoEnv[] = {nullptr};
const char* const kNoSubdirs[] = {nullptr};
const char* const kFixed[] = {"/usr/hobot/lib", nullptr};
const char* const kCoreLibrary = "libbpu.so";  // hb_bpu_core_num

// hb_ucp_sys.h: 24 bytes, stable across UCP releases.
struct hbUCPSysMem {
  uint64_t phyAddr;
  void* virAddr;
  uint64_t memSize;
};
static_assert(sizeof(hbUCPSysMem) == 24, "hbUCPSysMem is 24 bytes");

// hb_ucp_sys.h hbUCPSysMemFlushFlag.
constexpr int32_t HB_SYS_MEM_CACHE_INVALIDATE = 1;  // memory -> CPU cache, before the CPU reads
constexpr int32_t HB_SYS_MEM_CACHE_CLEAN = 2;       // CPU cache -> memory, after the CPU writes

// hb_ucp_status.h hbUCPStatus, the codes this plugin meets or returns.
constexpr int HB_UCP_INVALID_ARGUMENT = -100001;
constexpr int HB_UCP_API_USE_ERROR = -100002;
constexpr int HB_UCP_INIT_FAILED = -100003;
constexpr int HB_UCP_UNKNOWN_ERROR = -100004;
constexpr int HB_UCP_TASK_TIMEOUT = -200002;
constexpr int HB_UCP_MEM_ALLOC_FAIL = -400001;
constexpr int HB_UCP_MEM_FREE_FAIL = -400002;
constexpr int HB_UCP_MEM_FLUSH_FAIL = -400003;
constexpr int HB_UCP_MEM_INVALIDATE_FAIL = -400004;
constexpr int HB_UCP_MEM_IS_INVALID = -400005;

using CoreNum = int32_t (*)(void);                                   // hb_bpu.h
using MallocCached = int32_t (*)(hbUCPSysMem*, uint64_t, int32_t);  // size, deviceId (reserved)
using MemFlush = int32_t (*)(const hbUCPSysMem*, int32_t);
using Free = int32_t (*)(hbUCPSysMem*);
using ErrorDesc = const char* (*)(int32_t);  // hb_ucp_status.h, optional

CoreNum g_core_num = nullptr;
MallocCached g_malloc_cached = nullptr;
MemFlush g_mem_flush = nullptr;
Free g_free = nullptr;
ErrorDesc g_error_desc = nullptr;

// One lock for every call into the runtime and the block table: there are no
// streams to order work, and a flush of a whole block must not interleave
// with another thread's copy into the same block (an INVALIDATE between its
// memcpy and its CLEAN would discard that copy).
std::mutex& lock() {
  static auto* m = new std::mutex;  // leaked: used by frees at exit
  return *m;
}

// Device pointers are the blocks' virAddr (host-mapped, cached), by base.
std::map<uintptr_t, hbUCPSysMem>& blocks() {
  static auto* m = new std::map<uintptr_t, hbUCPSysMem>;
  return *m;
}
uint64_t g_held = 0;  // bytes allocated through this plugin, for mem_get_info

// ---- devices --------------------------------------------------------------

// All BPU cores are one device: UCP memory is SoC-wide and cores are a
// scheduling choice (hb_bpu_core_num() is 0 without the driver).
int get_device_count(int* count) {
  *count = g_core_num() > 0 ? 1 : 0;
  return 0;
}
int set_device(int device) { return device == 0 ? 0 : HB_UCP_INVALID_ARGUMENT; }
int get_device(int* device) {
  *device = 0;
  return 0;
}
int device_synchronize() { return 0; }  // every operation completed at its call

// No UCP call reports memory: the BPU allocates from system memory, so the
// total is the machine's physical memory and free is that less what this
// process holds through the plugin (other processes' use is not seen).
uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}
int mem_get_info(size_t* free_bytes, size_t* total_bytes) {
  const uint64_t total = physical_memory();
  std::lock_guard<std::mutex> guard(lock());
  *total_bytes = total;
  *free_bytes = g_held < total ? total - g_held : 0;
  return 0;
}

// ---- memory ---------------------------------------------------------------

int malloc_block(void** ptr, size_t size) {
  hbUCPSysMem mem{};
  std::lock_guard<std::mutex> guard(lock());
  int err = g_malloc_cached(&mem, size, 0);
  if (err != 0) return err;
  if (mem.virAddr == nullptr) return HB_UCP_MEM_ALLOC_FAIL;
  blocks()[reinterpret_cast<uintptr_t>(mem.virAddr)] = mem;
  g_held += mem.memSize;
  *ptr = mem.virAddr;
  return 0;
}

int free_block(void* ptr) {
  std::lock_guard<std::mutex> guard(lock());
  auto it = blocks().find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks().end()) return HB_UCP_MEM_IS_INVALID;
  int err = g_free(&it->second);
  if (err != 0) return err;
  g_held -= it->second.memSize;
  blocks().erase(it);
  return 0;
}

// The block holding [p, p + n), under lock(); nullptr when none holds it all
// (a copy may start inside a block).
const hbUCPSysMem* block_of(const void* p, size_t n) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  auto it = blocks().upper_bound(at);
  if (it == blocks().begin()) return nullptr;
  --it;
  const uint64_t offset = at - it->first;
  return offset < it->second.memSize && n <= it->second.memSize - offset ? &it->second : nullptr;
}

// How a copy keeps the CPU cache and the device's memory coherent. Flushes
// cover whole blocks: the struct the allocator returned is the one argument
// the vendor documents. A destination is invalidated before the CPU writes
// it too: a write that does not cover whole cache lines merges into what
// the lines hold, which must be the device's bytes, not stale ones.
struct Coherence {
  int32_t invalidate;  // the flag that makes the CPU see the device's bytes
  int32_t clean;       // the flag that makes the device see the CPU's writes
  bool invalidate_sources;
  bool clean_destinations;
};
constexpr Coherence kCoherence = {HB_SYS_MEM_CACHE_INVALIDATE, HB_SYS_MEM_CACHE_CLEAN, true, true};

// The copy and the memset, run at the call under lock(); a device end must
// lie inside one block.
int copy_with(const Coherence& c, void* dst, const void* src, size_t n, bool dst_device, bool src_device) {
  std::lock_guard<std::mutex> guard(lock());
  const hbUCPSysMem* from = src_device ? block_of(src, n) : nullptr;
  const hbUCPSysMem* to = dst_device ? block_of(dst, n) : nullptr;
  if ((src_device && from == nullptr) || (dst_device && to == nullptr)) return HB_UCP_INVALID_ARGUMENT;
  int err = 0;
  if (from != nullptr && c.invalidate_sources && (err = g_mem_flush(from, c.invalidate)) != 0) return err;
  if (to != nullptr && to != from && (err = g_mem_flush(to, c.invalidate)) != 0) return err;
  std::memmove(dst, src, n);
  if (to != nullptr && c.clean_destinations && (err = g_mem_flush(to, c.clean)) != 0) return err;
  return 0;
}

int memset_with(const Coherence& c, void* dst, int value, size_t n) {
  std::lock_guard<std::mutex> guard(lock());
  const hbUCPSysMem* to = block_of(dst, n);
  if (to == nullptr) return HB_UCP_INVALID_ARGUMENT;
  int err = g_mem_flush(to, c.invalidate);
  if (err != 0) return err;
  std::memset(dst, value, n);
  return c.clean_destinations ? g_mem_flush(to, c.clean) : 0;
}

// The kinds are this table's own numbering (memcpy_kind below): UCP has none.
bool src_is_device(int kind) { return kind == 2 || kind == 3; }
bool dst_is_device(int kind) { return kind == 1 || kind == 3; }

int memcpy_async(void* dst, const void* src, size_t n, int kind, rt_stream) {
  return copy_with(kCoherence, dst, src, n, dst_is_device(kind), src_is_device(kind));
}
int memset_async(void* dst, int value, size_t n, rt_stream) { return memset_with(kCoherence, dst, value, n); }

// ---- streams and events -----------------------------------------------------

// Streams are sentinels, one fresh address per create, so that destroying
// one never invalidates another; work never waits on them.
std::set<rt_stream>& live_streams() {
  static auto* s = new std::set<rt_stream>;
  return *s;
}

int stream_create(rt_stream* s, unsigned, int priority) {
  if (priority != 0) return HB_UCP_INVALID_ARGUMENT;  // the range is 0..0
  *s = new char;
  std::lock_guard<std::mutex> guard(lock());
  live_streams().insert(*s);
  return 0;
}
int stream_destroy(rt_stream s) {
  std::lock_guard<std::mutex> guard(lock());
  if (live_streams().erase(s) == 0) return HB_UCP_INVALID_ARGUMENT;
  delete static_cast<char*>(s);
  return 0;
}
int stream_done(rt_stream) { return 0; }  // query, synchronize: nothing is ever pending
int stream_wait_event(rt_stream, rt_event, unsigned) { return 0; }

// An event is the host steady_clock when it was recorded: the work before it
// completed at its call, so the host clock times it.
struct HostEvent {
  bool timing;
  std::chrono::steady_clock::time_point at;
};

int event_create(rt_event* e, unsigned flags) {
  *e = new HostEvent{(flags & 0x2u) == 0, std::chrono::steady_clock::now()};
  return 0;
}
int event_record(rt_event e, rt_stream) {
  std::lock_guard<std::mutex> guard(lock());
  static_cast<HostEvent*>(e)->at = std::chrono::steady_clock::now();
  return 0;
}
int event_done(rt_event) { return 0; }  // query, synchronize
int event_destroy(rt_event e) {
  delete static_cast<HostEvent*>(e);
  return 0;
}
int event_elapsed_time(float* ms, rt_event start, rt_event end) {
  std::lock_guard<std::mutex> guard(lock());
  const HostEvent* a = static_cast<const HostEvent*>(start);
  const HostEvent* b = static_cast<const HostEvent*>(end);
  if (!a->timing || !b->timing) return HB_UCP_INVALID_ARGUMENT;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return 0;
}

// ---- errors ---------------------------------------------------------------

int get_last_error() { return 0; }  // UCP keeps no last error: each call returns its own

const char* error_name(int code) {
  switch (code) {
    case 0: return "HB_UCP_SUCCESS";
    case HB_UCP_INVALID_ARGUMENT: return "HB_UCP_INVALID_ARGUMENT";
    case HB_UCP_API_USE_ERROR: return "HB_UCP_API_USE_ERROR";
    case HB_UCP_INIT_FAILED: return "HB_UCP_INIT_FAILED";
    case HB_UCP_UNKNOWN_ERROR: return "HB_UCP_UNKNOWN_ERROR";
    case HB_UCP_TASK_TIMEOUT: return "HB_UCP_TASK_TIMEOUT";
    case HB_UCP_MEM_ALLOC_FAIL: return "HB_UCP_MEM_ALLOC_FAIL";
    case HB_UCP_MEM_FREE_FAIL: return "HB_UCP_MEM_FREE_FAIL";
    case HB_UCP_MEM_FLUSH_FAIL: return "HB_UCP_MEM_FLUSH_FAIL";
    case HB_UCP_MEM_INVALIDATE_FAIL: return "HB_UCP_MEM_INVALIDATE_FAIL";
    case HB_UCP_MEM_IS_INVALID: return "HB_UCP_MEM_IS_INVALID";
    default: return nullptr;
  }
}

const char* error_string(int code) { return g_error_desc != nullptr ? g_error_desc(code) : nullptr; }

// hb_bpu_core_num from libbpu.so: beside libhbucp.so (both live in
// /usr/hobot/lib), else through the system loader; libhbucp.so itself may
// already bring it in as a dependency.
CoreNum find_core_num(void* library) {
  if (auto fn = flagos::kit::symbol<CoreNum>(library, "hb_bpu_core_num")) return fn;
  Dl_info info{};
  std::string folder;
  if (dladdr(reinterpret_cast<void*>(g_malloc_cached), &info) != 0 && info.dli_fname != nullptr) {
    folder = info.dli_fname;
    const size_t slash = folder.rfind('/');
    folder = slash == std::string::npos ? std::string() : folder.substr(0, slash + 1);
  }
  void* core = nullptr;
  if (!folder.empty()) core = dlopen((folder + kCoreLibrary).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (core == nullptr) core = dlopen(kCoreLibrary, RTLD_NOW | RTLD_LOCAL);
  return flagos::kit::symbol<CoreNum>(core, "hb_bpu_core_num");
}

const char* adapt(void* library, Runtime* rt) {
  g_malloc_cached = flagos::kit::symbol<MallocCached>(library, "hbUCPMallocCached");
  if (g_malloc_cached == nullptr) return "hbUCPMallocCached";
  g_mem_flush = flagos::kit::symbol<MemFlush>(library, "hbUCPMemFlush");
  if (g_mem_flush == nullptr) return "hbUCPMemFlush";
  g_free = flagos::kit::symbol<Free>(library, "hbUCPFree");
  if (g_free == nullptr) return "hbUCPFree";
  g_error_desc = flagos::kit::symbol<ErrorDesc>(library, "hbUCPGetErrorDesc");
  g_core_num = find_core_num(library);
  if (g_core_num == nullptr) return "hb_bpu_core_num (libbpu.so)";
  rt->get_device_count = &get_device_count;
  rt->set_device = &set_device;
  rt->get_device = &get_device;
  rt->device_synchronize = &device_synchronize;
  rt->mem_get_info = &mem_get_info;
  rt->malloc = &malloc_block;
  rt->free = &free_block;
  rt->memcpy_async = &memcpy_async;
  rt->memset_async = &memset_async;
  rt->stream_create_with_priority = &stream_create;
  rt->stream_destroy = &stream_destroy;
  rt->stream_query = &stream_done;
  rt->stream_synchronize = &stream_done;
  rt->stream_wait_event = &stream_wait_event;
  rt->event_create_with_flags = &event_create;
  rt->event_record = &event_record;
  rt->event_query = &event_done;
  rt->event_synchronize = &event_done;
  rt->event_destroy = &event_destroy;
  rt->event_elapsed_time = &event_elapsed_time;
  rt->get_last_error = &get_last_error;
  rt->get_error_name = &error_name;
  rt->get_error_string = &error_string;
  return nullptr;
}

const ErrorCode kErrors[] = {
    {HB_UCP_INVALID_ARGUMENT, FLAGOS_ERROR_INVALID_ARGUMENT},
    {HB_UCP_API_USE_ERROR, FLAGOS_ERROR_INVALID_STATE},
    {HB_UCP_INIT_FAILED, FLAGOS_ERROR_RUNTIME_UNAVAILABLE},
    {HB_UCP_MEM_ALLOC_FAIL, FLAGOS_ERROR_OUT_OF_MEMORY},
    {HB_UCP_MEM_IS_INVALID, FLAGOS_ERROR_INVALID_ARGUMENT},
    {0, FLAGOS_SUCCESS},
};

Vendor make_bpu() {
  Vendor v = {
      "bpu", "Horizon Robotics BPU", "hbUCP",
      {kRuntime, kNoEnv, kNoSubdirs, nullptr, kFixed, true, false},
      {nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
      nullptr, nullptr,
      nullptr, -1, nullptr,  // no page-locked host memory
      nullptr, nullptr,      // name: the display name; memory: mem_get_info
      nullptr,
      {0, 1, 2, 3},  // the adapter's own numbering: UCP copies are the CPU's memcpy
      0x1, 0x2,      // the adapter's own flags: stream flags ignored, 0x2 = no timing
      -1, -1, -1, -1, -1, -1,  // no attribute call
      "bpu",
      HB_UCP_TASK_TIMEOUT,  // never answered: nothing is pending after a call
      kErrors,
      false,
      false,
  };
  v.adapt = &adapt;
  v.calls_by_prefix = false;
  v.pinned_host = false;
  v.synchronous = true;
  v.count_call = "hb_bpu_core_num";
  return v;
}

}  // namespace

FLAGOS_CUDALIKE_VENDOR_BUILT_BY(make_bpu)

}  // namespace flagos_cudalike
