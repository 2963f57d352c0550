// device: device enumeration, the per-thread current device, and properties.
#include <cstring>
#include <thread>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

flagos_device_t current(Ctx& c) {
  flagos_device_t d = -1;
  c.ok(c.api->get_device(&d), "get_device");
  return d;
}

// "The value is stable for the process lifetime", on every thread.
void count_stable(Ctx& c) {
  int bad = 0;
  std::mutex mu;
  run_threads(c, 4, [&](int) {
    for (int i = 0; i < 200; ++i) {
      int32_t n = -1;
      if (c.api->device_count(&n) != FLAGOS_SUCCESS || n != c.device_count) {
        std::lock_guard<std::mutex> lock(mu);
        ++bad;
      }
    }
  });
  c.require(bad == 0, strf("%d of 800 calls failed or disagreed with %d", bad, c.device_count));
  c.note(strf("%d device(s), 800 calls on 4 threads", c.device_count));
}

void current_starts_at_zero(Ctx& c) {
  flagos_device_t d = -1;
  flagos_status_t s = FLAGOS_ERROR_UNKNOWN;
  std::thread t([&] { s = c.api->get_device(&d); });
  t.join();
  c.ok(s, "get_device on a new thread");
  c.expect(d == 0, strf("a new thread's current device is %d, expected 0", d));
}

void set_then_get(Ctx& c) {
  c.need_devices(1);
  for (int32_t d = c.device_count - 1; d >= 0; --d) {
    c.ok(c.api->set_device(d), strf("set_device(%d)", d));
    flagos_device_t got = current(c);
    c.expect(got == d, strf("get_device after set_device(%d) returned %d", d, got));
  }
}

// Thread A's set_device must be invisible to thread B and the reverse.
void current_per_thread(Ctx& c) {
  c.need_devices(2);
  Barrier bar(2);
  flagos_device_t b_first = -1, a_last = -1, b_last = -1;
  run_threads(c, 2, [&](int t) {
    if (t == 0) c.ok(c.api->set_device(1), "set_device(1) on A");
    bar.wait();
    if (t == 1) {
      b_first = current(c);
      c.ok(c.api->set_device(1), "set_device(1) on B");
    }
    bar.wait();
    if (t == 0) c.ok(c.api->set_device(0), "set_device(0) on A");
    bar.wait();
    (t == 0 ? a_last : b_last) = current(c);
  });
  c.expect(b_first == 0, strf("B saw device %d after A set 1", b_first));
  c.expect(a_last == 0, strf("A saw device %d after setting 0", a_last));
  c.expect(b_last == 1, strf("B saw device %d after A set 0 (B had set 1)", b_last));
}

// Runs `call`, then checks the current device is still `want`.
#define STEP(call, what)                                                        \
  do {                                                                          \
    c.ok(call, what);                                                           \
    flagos_device_t now_dev = current(c);                                       \
    c.expect(now_dev == want, strf("%s changed the current device to %d", what, now_dev)); \
  } while (0)

void exercise_device0(Ctx& c, flagos_device_t want) {
  flagos_device_properties_t p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  int32_t n = 0;
  STEP(c.api->get_device_properties(0, &p), "get_device_properties(0)");
  STEP(c.api->device_count(&n), "device_count");
  void* d = nullptr;
  STEP(c.api->mem_alloc(0, 4096, &d), "mem_alloc(0)");
  unsigned char host[4096] = {};
  STEP(c.api->memcpy_sync(d, host, sizeof host, FLAGOS_MEMCPY_HOST_TO_DEVICE), "memcpy_sync");
  flagos_stream_t s = nullptr, s0 = nullptr;
  STEP(c.api->get_default_stream(0, &s0), "get_default_stream(0)");
  STEP(c.api->stream_create(0, 0, &s), "stream_create(0)");
  STEP(c.api->memset_async(d, 1, sizeof host, s), "memset_async");
  STEP(c.api->memcpy_async(host, d, sizeof host, FLAGOS_MEMCPY_DEVICE_TO_HOST, s), "memcpy_async");
  flagos_event_t e = nullptr;
  STEP(c.api->event_create(0, FLAGOS_EVENT_DEFAULT, &e), "event_create(0)");
  STEP(c.api->event_record(e, s), "event_record");
  STEP(c.api->stream_wait_event(s0, e), "stream_wait_event");
  STEP(c.api->event_synchronize(e), "event_synchronize");
  STEP(c.api->stream_synchronize(s0), "stream_synchronize");
  STEP(c.api->device_synchronize(0), "device_synchronize(0)");
  STEP(c.api->event_destroy(e), "event_destroy");
  STEP(c.api->stream_destroy(s), "stream_destroy");
  STEP(c.api->mem_free(0, d), "mem_free(0)");
  if (HAS_FN(c, mem_get_info)) {
    uint64_t f, t;
    STEP(c.api->mem_get_info(0, &f, &t), "mem_get_info(0)");
  }
}
#undef STEP

// "No function changes the calling thread's current device, except
// set_device": work on device 0 while another device is current.
void calls_keep_current(Ctx& c) {
  c.need_devices(1);
  flagos_device_t want = c.device_count - 1;
  c.ok(c.api->set_device(want), "set_device");
  exercise_device0(c, want);
  c.ok(c.api->set_device(0), "set_device(0)");
  if (want == 0) c.note("one device: only a reset to another ordinal could be seen");
}

bool nul_terminated(const char* s, size_t n) { return std::memchr(s, 0, n) != nullptr; }

void check_props(Ctx& c, int d, const flagos_device_properties_t& p) {
  std::string at = strf("device %d: ", d);
  c.expect(nul_terminated(p.name, sizeof p.name), at + "name not NUL-terminated");
  c.expect(p.name[0] != 0, at + "name is empty");
  c.expect(nul_terminated(p.arch, sizeof p.arch), at + "arch not NUL-terminated");
  uint64_t a = p.alloc_alignment;
  c.expect(a != 0 && (a & (a - 1)) == 0, at + strf("alloc_alignment %llu is not a power of two",
                                                   static_cast<unsigned long long>(a)));
  c.expect(p.total_memory > 0, at + "total_memory is 0");
  bool prio = (p.capabilities & FLAGOS_CAP_STREAM_PRIORITY) != 0;
  c.expect(prio || (p.stream_priority_lowest == 0 && p.stream_priority_highest == 0),
           at + "priority range set without FLAGOS_CAP_STREAM_PRIORITY");
  c.expect(p.stream_priority_highest <= p.stream_priority_lowest,
           at + strf("highest priority %d is numerically above lowest %d",
                     p.stream_priority_highest, p.stream_priority_lowest));
  bool cuda = (p.capabilities & FLAGOS_CAP_CUDA_ABI) != 0;
  c.expect(cuda ? p.interop_device_index >= 0 : p.interop_device_index == -1,
           at + strf("interop_device_index %d with CUDA_ABI %s", p.interop_device_index,
                     cuda ? "set" : "clear"));
  c.expect(p.reserved0 == 0, at + "reserved0 is not 0");
  const uint64_t known = (FLAGOS_CAP_STREAM_PRIORITY << 1) - 1;  // bits of ABI 1.0
  c.expect(c.api->abi_minor > FLAGOS_ABI_MINOR || (p.capabilities & ~known) == 0,
           at + "capability bits unknown to ABI 1.0 are set");
}

void properties_sane(Ctx& c) {
  c.need_devices(1);
  for (int d = 0; d < c.device_count; ++d) check_props(c, d, c.props[d]);
  const flagos_device_properties_t& p = c.props[0];
  c.note(strf("device 0: '%s' arch '%s', %llu MiB, alignment %llu, caps 0x%llx", p.name, p.arch,
              static_cast<unsigned long long>(p.total_memory >> 20),
              static_cast<unsigned long long>(p.alloc_alignment),
              static_cast<unsigned long long>(p.capabilities)));
}

void properties_stable(Ctx& c) {
  c.need_devices(1);
  for (int d = 0; d < c.device_count; ++d) {
    flagos_device_properties_t p;
    std::memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    c.ok(c.api->get_device_properties(d, &p), strf("get_device_properties(%d)", d));
    c.expect(std::memcmp(&p, &c.props[d], sizeof p) == 0,
             strf("device %d: a second call returned different properties", d));
  }
}

// A declared capability promises the members that serve it.
void capabilities_backed(Ctx& c) {
  c.need_devices(1);
  for (int d = 0; d < c.device_count; ++d) {
    std::string at = strf("device %d: ", d);
    if (c.has_cap(FLAGOS_CAP_PINNED_HOST, d))
      c.expect(HAS_FN(c, host_alloc) && HAS_FN(c, host_free), at + "PINNED_HOST without host_alloc/host_free");
    if (c.has_cap(FLAGOS_CAP_EVENT_TIMING, d))
      c.expect(HAS_FN(c, event_elapsed_ms), at + "EVENT_TIMING without event_elapsed_ms");
    if (c.has_cap(FLAGOS_CAP_CUDA_ABI, d)) {
      c.expect(HAS_FN(c, stream_native_handle), at + "CUDA_ABI without stream_native_handle");
      // Triton, torch's attention choice and Inductor read it: 0 means the
      // runtime's capability query failed (a wrong attribute id, say).
      c.expect(c.props[d].capability_major >= 1, at + strf("CUDA_ABI with compute capability %d.%d", c.props[d].capability_major,
                                                c.props[d].capability_minor));
    }
    if (c.has_cap(FLAGOS_CAP_PEER_ACCESS, d))
      c.expect(HAS_FN(c, memcpy_peer_async), at + "PEER_ACCESS without memcpy_peer_async");
  }
  if (HAS_FN(c, host_alloc)) c.expect(HAS_FN(c, host_free), "host_alloc without host_free");
  if (c.device_count >= 2)
    c.expect(HAS_FN(c, memcpy_peer_async), "several devices but no memcpy_peer_async");
}

void peer_query(Ctx& c) {
  c.need_devices(1);
  NEED_FN(c, device_can_access_peer);
  std::string matrix;
  for (int d = 0; d < c.device_count; ++d)
    for (int p = 0; p < c.device_count; ++p) {
      int32_t v = -1;
      c.ok(c.api->device_can_access_peer(d, p, &v), strf("device_can_access_peer(%d, %d)", d, p));
      c.expect(v == 0 || v == 1, strf("device_can_access_peer(%d, %d) gave %d", d, p, v));
      matrix += strf("%s%d->%d:%d", matrix.empty() ? "" : " ", p, d, v);
    }
  c.note(matrix);
}

}  // namespace

Group device_group() {
  Group g("device", "device count, per-thread current device, properties, capabilities");
  g.add("count-stable", count_stable)
      .add("current-starts-at-zero", current_starts_at_zero)
      .add("set-then-get", set_then_get)
      .add("current-is-per-thread", current_per_thread)
      .add("calls-keep-current-device", calls_keep_current)
      .add("properties-sane", properties_sane)
      .add("properties-stable", properties_stable)
      .add("capabilities-backed", capabilities_backed)
      .add("peer-access-query", peer_query);
  return g;
}

}  // namespace conformance
