#include "tracer.h"

#include <cxxabi.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "activity_records.h"
#include "errors.h"
#include "handles.h"
#include "tracer_library.h"

struct flagos_profiler_s {
  uint64_t max_records = 0;
  bool started = false;
  // Filled by the buffer callback while this profiler is the active one:
  // each span with its kernel's demangled name (the tracer's own string is
  // not kept), "" for copies and memsets.
  std::vector<std::pair<flagos_cudalike::activity::Span, std::string>> spans;
  std::unordered_map<uint32_t, uint64_t> external;  // tracer correlation -> the core's id
  uint64_t dropped = 0;
  // What the last collect handed over (the ABI keeps it valid until the next).
  std::vector<flagos_activity_record_t> handed;
  std::deque<std::string> handed_names;
};

namespace flagos_cudalike {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;
constexpr uint64_t kDefaultMaxRecords = 1u << 20;
const uint32_t kKinds[] = {activity::kConcurrentKernel, activity::kMemcpy,  activity::kMemset,
                           activity::kRuntime,          activity::kDriver, activity::kExternalCorrelation};

struct Global {
  std::mutex mutex;
  std::set<flagos_profiler_t> live;
  flagos_profiler_t active = nullptr;  // receives records
  bool callbacks_registered = false;
  std::atomic<bool> monotonic{false};  // the tracer took CLOCK_MONOTONIC as its clock
  // (device, tracer stream id) -> handle, for streams destroyed while a profiler ran.
  std::map<std::pair<int32_t, uint32_t>, flagos_stream_t> gone;
};

Global& g() {
  static Global* s = new Global;  // leaked: CUPTI may call back during exit
  return *s;
}

int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

uint64_t tracer_clock() { return static_cast<uint64_t>(monotonic_ns()); }

std::string demangled(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

void buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// Copies what the active profiler wants out of a finished buffer, then frees it.
void buffer_completed(void*, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  const TracerLibrary* lib = loaded_tracer_library();
  Global& s = g();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    flagos_profiler_t p = s.active;
    void* record = nullptr;
    while (p != nullptr && lib != nullptr && valid > 0 && lib->next_record(buffer, valid, &record) == kTracerSuccess) {
      activity::Span span;
      int ext_kind = 0;
      uint64_t ext_id = 0;
      uint32_t corr = 0;
      if (activity::external(record, &ext_kind, &ext_id, &corr)) {
        if (ext_kind == activity::kExternalKind) p->external[corr] = ext_id;
      } else if (activity::span(record, &span)) {
        if (p->spans.size() >= p->max_records) {
          ++p->dropped;
          continue;
        }
        std::string name = span.name != nullptr ? demangled(span.name) : std::string();
        span.name = nullptr;  // the tracer's storage
        p->spans.emplace_back(span, std::move(name));
      }
    }
  }
  std::free(buffer);
}

flagos_status_t find_live(const char* fn, flagos_profiler_t p) {
  if (p == nullptr) return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: profiler is NULL", fn);
  if (g().live.count(p) == 0)
    return fail(FLAGOS_ERROR_INVALID_HANDLE, "%s: %p is not a live profiler of this plugin", fn,
                static_cast<void*>(p));
  return FLAGOS_SUCCESS;
}

// Hands buffers holding finished records to buffer_completed. Never under g().mutex.
void flush(const TracerLibrary* lib) { lib->flush_all(0); }

// The plugin stream each (device, tracer stream id) names: live streams now, plus
// those destroyed while this profile ran.
std::map<std::pair<int32_t, uint32_t>, flagos_stream_t> stream_ids(const TracerLibrary* lib) {
  std::map<std::pair<int32_t, uint32_t>, flagos_stream_t> ids;
  streams().for_each([&](const std::shared_ptr<Stream>& s) {
    rt_stream native = s->existing();
    uint32_t id = 0;
    if (native != nullptr && lib->stream_id(nullptr, native, 0, &id) == kTracerSuccess)
      ids[{s->device(), id}] = reinterpret_cast<flagos_stream_t>(s.get());
  });
  std::lock_guard<std::mutex> lock(g().mutex);
  ids.insert(g().gone.begin(), g().gone.end());
  return ids;
}

int32_t copy_kind(int tracer_kind) {
  switch (tracer_kind) {
    case activity::kCopyHtoD: return FLAGOS_MEMCPY_HOST_TO_DEVICE;
    case activity::kCopyDtoH: return FLAGOS_MEMCPY_DEVICE_TO_HOST;
    case activity::kCopyDtoD:
    case activity::kCopyPtoP: return FLAGOS_MEMCPY_DEVICE_TO_DEVICE;
    case activity::kCopyHtoH: return FLAGOS_MEMCPY_HOST_TO_HOST;
    default: return -1;
  }
}

thread_local std::vector<std::pair<uint64_t, bool>> t_correlation;  // id, mirrored into the tracer

}  // namespace

int64_t tracer_now_ns() {
  const TracerLibrary* lib = loaded_tracer_library();
  uint64_t ts = 0;
  if (lib != nullptr && !g().monotonic.load() && lib->timestamp(&ts) == kTracerSuccess)
    return static_cast<int64_t>(ts);
  return monotonic_ns();
}

flagos_status_t tracer_create(const char* fn, uint64_t max_records, flagos_profiler_t* out) {
  flagos_status_t st = FLAGOS_SUCCESS;
  const TracerLibrary* lib = load_tracer_library(fn, &st);
  if (lib == nullptr) return st;
  Global& s = g();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.callbacks_registered) {
    // The clock before anything is enabled (and before the core reads
    // clock_now next to its own clocks): records made earlier keep CUPTI's.
    if (lib->register_clock != nullptr && lib->register_clock(&tracer_clock) == kTracerSuccess)
      s.monotonic.store(true);
    int r = lib->register_callbacks(&buffer_requested, &buffer_completed);
    if (r != kTracerSuccess) return tracer_fail(fn, "ActivityRegisterCallbacks", r);
    s.callbacks_registered = true;
  }
  auto* p = new flagos_profiler_s;
  p->max_records = max_records != 0 ? max_records : kDefaultMaxRecords;
  s.live.insert(p);
  *out = p;
  return FLAGOS_SUCCESS;
}

flagos_status_t tracer_start(const char* fn, flagos_profiler_t p, uint32_t flags) {
  const TracerLibrary* lib = loaded_tracer_library();
  Global& s = g();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    flagos_status_t st = find_live(fn, p);
    if (st != FLAGOS_SUCCESS) return st;
    if (flags & ~FLAGOS_PROFILE_STREAM_WORK)
      return fail(FLAGOS_ERROR_UNSUPPORTED,
                  "%s: flags 0x%x: this plugin records stream work only (FLAGOS_PROFILE_STREAM_WORK); "
                  "device memory is reported by the core's allocator", fn, flags);
    if (s.active != nullptr)
      return fail(FLAGOS_ERROR_INVALID_STATE, "%s: %s", fn,
                  s.active == p ? "this profiler is started already" : "another profiler is started");
  }
  flush(lib);  // what finished before this start belongs to no profiler
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.active != nullptr || s.live.count(p) == 0)  // another start, or a destroy, while flushing
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: another profiler started, or this one was destroyed", fn);
  for (size_t i = 0; i < sizeof kKinds / sizeof kKinds[0]; ++i) {
    int r = lib->activity_enable(static_cast<int>(kKinds[i]));
    if (r != kTracerSuccess) {
      for (size_t j = 0; j < i; ++j) lib->activity_disable(static_cast<int>(kKinds[j]));
      return tracer_fail(fn, "ActivityEnable", r);
    }
  }
  p->spans.clear();
  p->external.clear();
  p->dropped = 0;
  s.gone.clear();
  p->started = true;
  s.active = p;
  return FLAGOS_SUCCESS;
}

flagos_status_t tracer_stop(const char* fn, flagos_profiler_t p) {
  const TracerLibrary* lib = loaded_tracer_library();
  Global& s = g();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    flagos_status_t st = find_live(fn, p);
    if (st != FLAGOS_SUCCESS) return st;
    if (!p->started) return fail(FLAGOS_ERROR_INVALID_STATE, "%s: the profiler is not started", fn);
    for (uint32_t kind : kKinds) lib->activity_disable(static_cast<int>(kind));
  }
  flush(lib);  // what finished while started still reaches this profiler
  std::lock_guard<std::mutex> lock(s.mutex);
  p->started = false;
  s.active = nullptr;
  return FLAGOS_SUCCESS;
}

flagos_status_t tracer_collect(const char* fn, flagos_profiler_t p, const flagos_activity_record_t** records,
                               size_t* count, uint64_t* dropped) {
  const TracerLibrary* lib = loaded_tracer_library();
  Global& s = g();
  bool started = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    flagos_status_t st = find_live(fn, p);
    if (st != FLAGOS_SUCCESS) return st;
    started = p->started;
  }
  if (started) flush(lib);
  const auto ids = stream_ids(lib);
  std::lock_guard<std::mutex> lock(s.mutex);
  p->handed.clear();
  p->handed_names.clear();
  for (const auto& [span, kernel] : p->spans) {
    // Work on streams that are not this plugin's (native CUDA work of the
    // same process, a library's private stream) is not flagos activity.
    auto it = ids.find({static_cast<int32_t>(span.device), span.stream});
    if (it == ids.end()) continue;
    flagos_activity_record_t r{};
    r.struct_size = sizeof r;
    r.device = it->first.first;
    r.stream = it->second;
    auto ext = p->external.find(span.correlation);
    r.correlation_id = ext != p->external.end() ? ext->second : 0;
    r.begin_ns = static_cast<int64_t>(span.start);
    r.end_ns = static_cast<int64_t>(span.end < span.start ? span.start : span.end);
    r.bytes = static_cast<int64_t>(span.bytes);  // 0 for kernels
    r.copy_kind = -1;
    if (span.kind == activity::kConcurrentKernel) {
      r.kind = FLAGOS_ACTIVITY_KERNEL;
      p->handed_names.push_back(kernel);
    } else if (span.kind == activity::kMemcpy) {
      r.kind = FLAGOS_ACTIVITY_MEMCPY;
      r.copy_kind = copy_kind(span.copy_kind);
      p->handed_names.push_back("memcpy_async");
    } else {
      r.kind = FLAGOS_ACTIVITY_MEMSET;
      p->handed_names.push_back("memset_async");
    }
    r.name = p->handed_names.back().c_str();
    p->handed.push_back(r);
  }
  uint64_t lost = p->dropped;
  size_t tracer_lost = 0;
  if (lib->dropped_records != nullptr && lib->dropped_records(nullptr, 0, &tracer_lost) == kTracerSuccess)
    lost += tracer_lost;
  p->spans.clear();
  p->dropped = 0;
  *records = p->handed.empty() ? nullptr : p->handed.data();
  *count = p->handed.size();
  if (dropped != nullptr) *dropped = lost;
  return FLAGOS_SUCCESS;
}

flagos_status_t tracer_destroy(const char* fn, flagos_profiler_t p) {
  if (p == nullptr) return FLAGOS_SUCCESS;
  bool started = false;
  {
    std::lock_guard<std::mutex> lock(g().mutex);
    flagos_status_t st = find_live(fn, p);
    if (st != FLAGOS_SUCCESS) return st;
    started = p->started;
  }
  if (started) tracer_stop(fn, p);
  std::lock_guard<std::mutex> lock(g().mutex);
  g().live.erase(p);
  delete p;
  return FLAGOS_SUCCESS;
}

flagos_status_t tracer_push(uint64_t id) {
  if (id == 0) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "push_correlation: id 0 is reserved for none");
  const TracerLibrary* lib = loaded_tracer_library();
  const bool mirrored =
      lib != nullptr && lib->push_external_id(activity::kExternalKind, id) == kTracerSuccess;
  t_correlation.emplace_back(id, mirrored);
  return FLAGOS_SUCCESS;
}

flagos_status_t tracer_pop(uint64_t* id) {
  if (t_correlation.empty())
    return fail(FLAGOS_ERROR_INVALID_STATE, "pop_correlation: nothing is pushed on this thread");
  const auto [top, mirrored] = t_correlation.back();
  t_correlation.pop_back();
  if (mirrored) {
    uint64_t ignored = 0;
    loaded_tracer_library()->pop_external_id(activity::kExternalKind, &ignored);
  }
  if (id != nullptr) *id = top;
  return FLAGOS_SUCCESS;
}

void tracer_forget_stream(flagos_stream_t handle, const Stream& stream) {
  const TracerLibrary* lib = loaded_tracer_library();
  if (lib == nullptr) return;
  rt_stream native = stream.existing();
  uint32_t id = 0;
  if (native == nullptr || lib->stream_id(nullptr, native, 0, &id) != kTracerSuccess) return;
  std::lock_guard<std::mutex> lock(g().mutex);
  if (g().active != nullptr) g().gone[{stream.device(), id}] = handle;
}

}  // namespace flagos_cudalike
