// profiler: FLAGOS_EXTENSION_PROFILER (flagos/ext/profiler.h), run only when
// the plugin chains it. Work of known size is enqueued on a created stream
// while a profiler runs; the records must name that stream, the sizes, the
// correlation id pushed on the enqueuing thread, and timestamps on the
// plugin's clock inside the window the work ran in.
#include <time.h>

#include <cstdlib>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

using Prof = flagos_profiler_ext_t;

const Prof& need_profiler(Ctx& c) {
  const Prof* e = &need_extension<Prof>(c, FLAGOS_EXTENSION_PROFILER, "profiler",
                                        FLAGOS_PROFILER_EXT_SIZE_1_4);
  c.need_devices(1);
  return *e;
}

int64_t plugin_now(Ctx& c, const Prof& p) {
  int64_t now = 0;
  c.ok(p.clock_now(&now), "clock_now");
  return now;
}

int64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// A created profiler, destroyed on scope exit.
struct Profiler {
  Ctx& c;
  const Prof& p;
  flagos_profiler_t h = nullptr;
  Profiler(Ctx& ctx, const Prof& ext) : c(ctx), p(ext) {
    flagos_status_t st = p.profiler_create(nullptr, &h);
    if (st == FLAGOS_ERROR_RUNTIME_UNAVAILABLE) c.skip("no device tracer here: " + c.last_error());
    c.ok(st, "profiler_create");
    c.require(h != nullptr, "profiler_create succeeded without a profiler");
  }
  ~Profiler() { p.profiler_destroy(h); }
  std::vector<flagos_activity_record_t> collect() {
    const flagos_activity_record_t* records = nullptr;
    size_t count = 0, stride = 0;
    uint64_t dropped = 0;
    c.ok(p.profiler_collect(h, &records, &count, &stride, &dropped), "profiler_collect");
    std::vector<flagos_activity_record_t> out;
    if (count == 0) return out;
    c.require(records != nullptr, "profiler_collect: records NULL with a count");
    c.require(stride >= FLAGOS_ACTIVITY_RECORD_SIZE_1_4,
              strf("profiler_collect: stride %zu < %zu", stride,
                   static_cast<size_t>(FLAGOS_ACTIVITY_RECORD_SIZE_1_4)));
    for (size_t i = 0; i < count; ++i) {
      const auto* r = reinterpret_cast<const flagos_activity_record_t*>(
          reinterpret_cast<const char*>(records) + i * stride);
      c.expect(r->struct_size >= FLAGOS_ACTIVITY_RECORD_SIZE_1_4,
               strf("record %zu: struct_size %zu too small", i, r->struct_size));
      c.expect(r->name != nullptr, strf("record %zu: name is NULL", i));
      out.push_back(*r);
    }
    return out;
  }
};

const flagos_activity_record_t* find(const std::vector<flagos_activity_record_t>& rs, int32_t kind,
                                     flagos_stream_t s, int64_t bytes) {
  for (const auto& r : rs)
    if (r.kind == kind && r.stream == s && r.bytes == bytes) return &r;
  return nullptr;
}

void extension_table(Ctx& c) {
  const Prof& p = need_profiler(c);
  c.expect(p.clock_now && p.profiler_create && p.profiler_start && p.profiler_stop &&
               p.profiler_collect && p.profiler_destroy && p.push_correlation &&
               p.pop_correlation,
           "profiler: a function is NULL");
  c.expect_status(p.clock_now(nullptr), FLAGOS_ERROR_INVALID_ARGUMENT, "clock_now(NULL)");
}

// The plugin clock is monotonic and runs at CLOCK_MONOTONIC's rate.
void clock_rate(Ctx& c) {
  const Prof& p = need_profiler(c);
  const int64_t p0 = plugin_now(c, p), m0 = monotonic_ns();
  sleep_ms(50);
  const int64_t p1 = plugin_now(c, p), m1 = monotonic_ns();
  c.expect(p1 > p0, "clock_now went backwards or stood still over 50 ms");
  const double ratio = static_cast<double>(p1 - p0) / static_cast<double>(m1 - m0);
  c.expect(ratio > 0.9 && ratio < 1.1,
           strf("the plugin clock ran %.3fx CLOCK_MONOTONIC's rate over 50 ms", ratio));
}

// Copies and memsets on a created stream: one record each, on that stream,
// with their sizes, inside the window they ran in.
void stream_work(Ctx& c) {
  const Prof& p = need_profiler(c);
  const uint64_t n = 1 << 16;
  DevBuf a(c, 0, n), b(c, 0, n);
  Stream s(c, 0);
  Profiler prof(c, p);
  const int64_t before = plugin_now(c, p);
  c.ok(p.profiler_start(prof.h, FLAGOS_PROFILE_STREAM_WORK), "profiler_start");
  c.ok(c.api->memset_async(a.get(), 0x3c, n, s.get()), "memset_async");
  c.ok(c.api->memcpy_async(b.get(), a.get(), n / 2, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, s.get()),
       "memcpy_async D2D");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  c.ok(p.profiler_stop(prof.h), "profiler_stop");
  const int64_t after = plugin_now(c, p);
  const auto rs = prof.collect();
  const auto* set = find(rs, FLAGOS_ACTIVITY_MEMSET, s.get(), n);
  const auto* copy = find(rs, FLAGOS_ACTIVITY_MEMCPY, s.get(), n / 2);
  c.require(set != nullptr, strf("no MEMSET record of %llu bytes on the stream (%zu records)",
                                 (unsigned long long)n, rs.size()));
  c.require(copy != nullptr, "no MEMCPY record of the D2D copy on the stream");
  c.expect(copy->copy_kind == FLAGOS_MEMCPY_DEVICE_TO_DEVICE || copy->copy_kind == -1,
           strf("MEMCPY record: copy_kind %d for a D2D copy", copy->copy_kind));
  for (const auto* r : {set, copy}) {
    c.expect(r->device == 0, strf("record on device %d, work ran on device 0", r->device));
    c.expect(r->begin_ns <= r->end_ns, "record ends before it begins");
    c.expect(r->begin_ns >= before && r->end_ns <= after,
             "record outside the window between profiler_start and profiler_stop");
  }
  c.expect(set->end_ns <= copy->begin_ns, "the copy's record begins before the memset's ends "
                                          "(a stream runs its work in order)");
  c.expect(prof.collect().empty(), "a second collect returned the same records again");
}

// The correlation id innermost on the enqueuing thread at enqueue is the
// record's; none pushed gives 0. The stack is per thread.
void correlation(Ctx& c) {
  const Prof& p = need_profiler(c);
  const uint64_t n = 4096;
  DevBuf a(c, 0, n);
  Stream s(c, 0);
  Profiler prof(c, p);
  c.ok(p.profiler_start(prof.h, 0), "profiler_start");
  c.ok(p.push_correlation(7), "push_correlation(7)");
  c.ok(p.push_correlation(42), "push_correlation(42)");
  c.ok(c.api->memset_async(a.get(), 1, 1, s.get()), "memset_async under 42");
  uint64_t popped = 0;
  c.ok(p.pop_correlation(&popped), "pop_correlation");
  c.expect(popped == 42, strf("pop_correlation gave %llu, 42 was innermost", (unsigned long long)popped));
  c.ok(c.api->memset_async(a.get(), 2, 2, s.get()), "memset_async under 7");
  c.ok(p.pop_correlation(nullptr), "pop_correlation");
  c.ok(c.api->memset_async(a.get(), 3, 3, s.get()), "memset_async under none");
  // Another thread's push does not leak into this one's.
  run_threads(c, 1, [&](int) { c.ok(p.push_correlation(99), "push_correlation on another thread"); });
  c.ok(c.api->memset_async(a.get(), 4, 4, s.get()), "memset_async after another thread pushed");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  c.ok(p.profiler_stop(prof.h), "profiler_stop");
  const auto rs = prof.collect();
  const uint64_t want[] = {42, 7, 0, 0};
  for (int i = 0; i < 4; ++i) {
    const auto* r = find(rs, FLAGOS_ACTIVITY_MEMSET, s.get(), i + 1);
    if (!c.expect(r != nullptr, strf("no record of the memset of %d bytes", i + 1))) continue;
    c.expect(r->correlation_id == want[i],
             strf("memset of %d bytes: correlation %llu, want %llu", i + 1,
                  (unsigned long long)r->correlation_id, (unsigned long long)want[i]));
  }
  c.expect_status(p.push_correlation(0), FLAGOS_ERROR_INVALID_ARGUMENT, "push_correlation(0)");
  c.expect_status(p.pop_correlation(nullptr), FLAGOS_ERROR_INVALID_STATE,
                  "pop_correlation with nothing pushed");
}

// One started profiler at a time; stop and destroy in any state; nothing is
// recorded while stopped; a destroyed started profiler frees the slot.
void lifecycle(Ctx& c) {
  const Prof& p = need_profiler(c);
  DevBuf a(c, 0, 4096);
  Stream s(c, 0);
  {
    Profiler one(c, p), two(c, p);
    c.expect_status(p.profiler_stop(one.h), FLAGOS_ERROR_INVALID_STATE, "profiler_stop before start");
    c.ok(p.profiler_start(one.h, 0), "profiler_start");
    c.expect_status(p.profiler_start(one.h, 0), FLAGOS_ERROR_INVALID_STATE, "profiler_start twice");
    c.expect_status(p.profiler_start(two.h, 0), FLAGOS_ERROR_INVALID_STATE,
                    "profiler_start of a second profiler while one runs");
    c.ok(p.profiler_stop(one.h), "profiler_stop");
    c.ok(c.api->memset_async(a.get(), 1, 64, s.get()), "memset_async while stopped");
    c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
    c.expect(find(one.collect(), FLAGOS_ACTIVITY_MEMSET, s.get(), 64) == nullptr,
             "work enqueued while stopped was recorded");
    c.ok(p.profiler_start(two.h, 0), "profiler_start of the second after the first stopped");
    // `two` is destroyed while started at scope exit.
  }
  Profiler three(c, p);
  c.ok(p.profiler_start(three.h, 0), "profiler_start after a started profiler was destroyed");
  c.ok(p.profiler_stop(three.h), "profiler_stop");
  c.expect_status(p.profiler_destroy(nullptr), FLAGOS_SUCCESS, "profiler_destroy(NULL)");
  const flagos_activity_record_t* records = nullptr;
  size_t count = 0, stride = 0;
  c.expect_status(p.profiler_collect(three.h, nullptr, &count, &stride, nullptr),
                  FLAGOS_ERROR_INVALID_ARGUMENT, "profiler_collect(records NULL)");
  c.ok(p.profiler_collect(three.h, &records, &count, &stride, nullptr),
       "profiler_collect(dropped NULL)");
}

// MEMORY records, where the plugin records them: an allocation and its free.
void memory(Ctx& c) {
  const Prof& p = need_profiler(c);
  Profiler prof(c, p);
  flagos_status_t st = p.profiler_start(prof.h, FLAGOS_PROFILE_MEMORY);
  if (st == FLAGOS_ERROR_UNSUPPORTED) c.skip("the plugin does not record memory: " + c.last_error());
  c.ok(st, "profiler_start(FLAGOS_PROFILE_MEMORY)");
  const uint64_t n = 1 << 20;
  void* ptr = nullptr;
  c.ok(c.api->mem_alloc(0, n, &ptr), "mem_alloc");
  c.ok(c.api->mem_free(0, ptr), "mem_free");
  c.ok(p.profiler_stop(prof.h), "profiler_stop");
  bool alloc = false, freed = false;
  for (const auto& r : prof.collect()) {
    if (r.kind != FLAGOS_ACTIVITY_MEMORY || r.address != reinterpret_cast<uint64_t>(ptr)) continue;
    c.expect(r.begin_ns == r.end_ns && r.stream == nullptr, "a MEMORY record is not an instant");
    alloc = alloc || r.bytes == static_cast<int64_t>(n);
    freed = freed || r.bytes == -static_cast<int64_t>(n);
  }
  c.expect(alloc, "no MEMORY record of the allocation with its size");
  c.expect(freed, "no MEMORY record of the free with its negative size");
}

}  // namespace

Group profiler_group() {
  Group g("profiler", "FLAGOS_EXTENSION_PROFILER: clock, stream work records, correlation, lifecycle");
  g.add("extension-table", extension_table)
      .add("clock-rate", clock_rate)
      .add("stream-work", stream_work)
      .add("correlation", correlation)
      .add("lifecycle", lifecycle)
      .add("memory", memory);
  return g;
}

}  // namespace conformance
