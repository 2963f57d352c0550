#include "profiler.h"

#include <time.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "flagos/kit/handle_table.hpp"
#include "handles.h"
#include "kit.h"

namespace flagos_host {
namespace {

constexpr uint64_t kDefaultMaxRecords = 1u << 20;

int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The correlation ids pushed on this thread, innermost last.
thread_local std::vector<uint64_t> t_correlation;

uint64_t current_correlation() { return t_correlation.empty() ? 0 : t_correlation.back(); }

struct Profiler {
  uint64_t max_records = kDefaultMaxRecords;
  // Guarded by recorder_mutex(): what was recorded since the last collect.
  std::vector<flagos_activity_record_t> pending;
  uint64_t dropped = 0;
  // Handed out by the last collect; owned here until the next one.
  std::vector<flagos_activity_record_t> published;
};

using ProfilerTable = kit::HandleTable<flagos_profiler_t, Profiler>;

// Leaked on purpose, like the stream table: no destructor runs at exit.
ProfilerTable& profilers() {
  static ProfilerTable* t = new ProfilerTable("profiler");
  return *t;
}

// Guards the started profiler and every profiler's pending records.
std::mutex& recorder_mutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}
std::shared_ptr<Profiler>& started() {  // with recorder_mutex() held
  static auto* p = new std::shared_ptr<Profiler>;
  return *p;
}
std::atomic<uint32_t> g_flags{0};  // FLAGOS_PROFILE_* of the started profiler; 0: none

void append(const flagos_activity_record_t& r) {
  std::lock_guard<std::mutex> lock(recorder_mutex());
  const std::shared_ptr<Profiler>& p = started();
  if (!p) return;  // stopped while the work ran
  if (p->pending.size() >= p->max_records) {
    ++p->dropped;
    return;
  }
  p->pending.push_back(r);
}

flagos_activity_record_t make_record(int32_t kind, int32_t device) {
  flagos_activity_record_t r{};
  r.struct_size = sizeof(r);
  r.kind = kind;
  r.device = device;
  r.copy_kind = -1;
  return r;
}

flagos_status_t api_clock_now(int64_t* now) {
  return guarded("clock_now", [&] {
    flagos_status_t st = kit::need("clock_now", now, "now_ns");
    if (st == FLAGOS_SUCCESS) *now = now_ns();
    return st;
  });
}

flagos_status_t api_profiler_create(const flagos_profiler_options_t* options,
                                    flagos_profiler_t* out) {
  static const char* fn = "profiler_create";
  return guarded(fn, [&] {
    flagos_status_t st = kit::need(fn, out, "profiler");
    if (st != FLAGOS_SUCCESS) return st;
    auto p = std::make_shared<Profiler>();
    if (options != nullptr &&
        FLAGOS_HAS_MEMBER(flagos_profiler_options_t, options, max_records) &&
        options->max_records != 0)
      p->max_records = options->max_records;
    *out = profilers().add(std::move(p));
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_profiler_start(flagos_profiler_t profiler, uint32_t flags) {
  static const char* fn = "profiler_start";
  return guarded(fn, [&] {
    std::shared_ptr<Profiler> p;
    flagos_status_t st = profilers().find(fn, profiler, &p);
    if (st != FLAGOS_SUCCESS) return st;
    constexpr uint32_t known = FLAGOS_PROFILE_STREAM_WORK | FLAGOS_PROFILE_MEMORY;
    if (flags & ~known)
      return fail(FLAGOS_ERROR_UNSUPPORTED, "%s: unknown flags 0x%x", fn, flags & ~known);
    std::lock_guard<std::mutex> lock(recorder_mutex());
    if (started())
      return fail(FLAGOS_ERROR_INVALID_STATE, "%s: profiler %p is already started", fn,
                  (void*)started().get());
    p->pending.clear();
    p->dropped = 0;
    started() = p;
    g_flags.store(flags == 0 ? known : flags, std::memory_order_release);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t stop_locked(const char* fn, const std::shared_ptr<Profiler>& p) {
  if (started() != p)
    return fail(FLAGOS_ERROR_INVALID_STATE, "%s: profiler %p is not started", fn, (void*)p.get());
  g_flags.store(0, std::memory_order_release);
  started().reset();
  return FLAGOS_SUCCESS;
}

flagos_status_t api_profiler_stop(flagos_profiler_t profiler) {
  static const char* fn = "profiler_stop";
  return guarded(fn, [&] {
    std::shared_ptr<Profiler> p;
    flagos_status_t st = profilers().find(fn, profiler, &p);
    if (st != FLAGOS_SUCCESS) return st;
    std::lock_guard<std::mutex> lock(recorder_mutex());
    return stop_locked(fn, p);
  });
}

flagos_status_t api_profiler_collect(flagos_profiler_t profiler,
                                     const flagos_activity_record_t** records, size_t* count,
                                     size_t* stride, uint64_t* dropped) {
  static const char* fn = "profiler_collect";
  return guarded(fn, [&] {
    flagos_status_t st = kit::need(fn, records, "records");
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, count, "count");
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, stride, "stride");
    std::shared_ptr<Profiler> p;
    if (st == FLAGOS_SUCCESS) st = profilers().find(fn, profiler, &p);
    if (st != FLAGOS_SUCCESS) return st;
    std::vector<flagos_activity_record_t> taken;
    uint64_t lost;
    {
      std::lock_guard<std::mutex> lock(recorder_mutex());
      taken.swap(p->pending);
      lost = p->dropped;
      p->dropped = 0;
    }
    p->published = std::move(taken);  // names are string literals: nothing else to keep
    *records = p->published.empty() ? nullptr : p->published.data();
    *count = p->published.size();
    *stride = sizeof(flagos_activity_record_t);
    if (dropped != nullptr) *dropped = lost;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_profiler_destroy(flagos_profiler_t profiler) {
  static const char* fn = "profiler_destroy";
  return guarded(fn, [&] {
    if (profiler == nullptr) return FLAGOS_SUCCESS;
    std::shared_ptr<Profiler> p;
    flagos_status_t st = profilers().take(fn, profiler, &p);
    if (st != FLAGOS_SUCCESS) return st;
    std::lock_guard<std::mutex> lock(recorder_mutex());
    if (started() == p) stop_locked(fn, p);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_push_correlation(uint64_t id) {
  static const char* fn = "push_correlation";
  return guarded(fn, [&] {
    if (id == 0) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: id 0 is reserved for none", fn);
    t_correlation.push_back(id);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_pop_correlation(uint64_t* id) {
  static const char* fn = "pop_correlation";
  return guarded(fn, [&] {
    if (t_correlation.empty())
      return fail(FLAGOS_ERROR_INVALID_STATE, "%s: no correlation id is pushed on this thread", fn);
    if (id != nullptr) *id = t_correlation.back();
    t_correlation.pop_back();
    return FLAGOS_SUCCESS;
  });
}

flagos_profiler_ext_t& profiler_ext() {
  static flagos_profiler_ext_t ext = [] {
    flagos_profiler_ext_t e{};
    e.base.struct_size = sizeof(flagos_profiler_ext_t);
    e.base.type = FLAGOS_EXTENSION_PROFILER;
    e.base.version = FLAGOS_PROFILER_EXT_VERSION;
    e.base.next = nullptr;
    e.clock_now = api_clock_now;
    e.profiler_create = api_profiler_create;
    e.profiler_start = api_profiler_start;
    e.profiler_stop = api_profiler_stop;
    e.profiler_collect = api_profiler_collect;
    e.profiler_destroy = api_profiler_destroy;
    e.push_correlation = api_push_correlation;
    e.pop_correlation = api_pop_correlation;
    return e;
  }();
  return ext;
}

}  // namespace

const flagos_extension_t* profiler_extension() { return &profiler_ext().base; }

void set_profiler_next(const flagos_extension_t* next) { profiler_ext().base.next = next; }

std::vector<std::mutex*> profiler_mutexes() {
  return {&profilers().mutex(), &recorder_mutex()};
}

bool tracing_stream_work() {
  return (g_flags.load(std::memory_order_relaxed) & FLAGOS_PROFILE_STREAM_WORK) != 0;
}

bool tracing_memory() {
  return (g_flags.load(std::memory_order_relaxed) & FLAGOS_PROFILE_MEMORY) != 0;
}

Task traced_task(const char* fn, Stream* stream, const TaskTrace& trace, Task task) {
  if (trace.kind < 0) return task;
  flagos_activity_record_t r = make_record(trace.kind, stream->device());
  r.stream = to_handle(stream);
  r.correlation_id = current_correlation();
  r.bytes = trace.bytes;
  r.copy_kind = trace.copy_kind;
  r.name = fn;
  return [r, task = std::move(task)]() mutable {
    r.begin_ns = now_ns();
    flagos_status_t st = task();
    r.end_ns = now_ns();
    append(r);
    return st;
  };
}

void trace_memory(int32_t device, const void* addr, int64_t bytes) {
  flagos_activity_record_t r = make_record(FLAGOS_ACTIVITY_MEMORY, device);
  r.correlation_id = current_correlation();
  r.begin_ns = r.end_ns = now_ns();
  r.bytes = bytes;
  r.name = bytes >= 0 ? "mem_alloc" : "mem_free";
  r.address = reinterpret_cast<uint64_t>(addr);
  append(r);
}

}  // namespace flagos_host
