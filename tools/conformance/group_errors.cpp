// errors: the error rules at the top of plugin_api.h — ordinals, NULL
// out-pointers, destroying NULL, bad enums, and the last-error message.
#include <cstring>
#include <thread>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

// Out-parameters are written only on success: every failing call below gets
// this value and must leave it there.
void* const kSentinel = reinterpret_cast<void*>(static_cast<uintptr_t>(0x5e5e5e5e));

template <class T>
T sentinel() {
  return reinterpret_cast<T>(kSentinel);
}

// ---- bad ordinals ------------------------------------------------------------

struct OrdinalCase {
  const char* fn;
  int min_devices;
  // Calls the function with ordinal `bad`; records wrong out-param writes.
  flagos_status_t (*call)(Ctx& c, int32_t bad);
};

flagos_status_t bad_props(Ctx& c, int32_t bad) {
  flagos_device_properties_t p;
  std::memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  flagos_status_t s = c.api->get_device_properties(bad, &p);
  c.expect(s == FLAGOS_SUCCESS || (p.name[0] == 0 && p.total_memory == 0),
           "get_device_properties wrote properties for a bad ordinal");
  return s;
}

flagos_status_t bad_set_device(Ctx& c, int32_t bad) {
  flagos_device_t before = -1, after = -2;
  c.ok(c.api->get_device(&before), "get_device");
  flagos_status_t s = c.api->set_device(bad);
  c.ok(c.api->get_device(&after), "get_device");
  c.expect(s == FLAGOS_SUCCESS || before == after, "a failed set_device changed the current device");
  return s;
}

flagos_status_t bad_sync(Ctx& c, int32_t bad) { return c.api->device_synchronize(bad); }

flagos_status_t bad_mem_get_info(Ctx& c, int32_t bad) {
  NEED_FN(c, mem_get_info);
  uint64_t f = 7, t = 7;
  flagos_status_t s = c.api->mem_get_info(bad, &f, &t);
  c.expect(s == FLAGOS_SUCCESS || (f == 7 && t == 7), "mem_get_info wrote outputs on failure");
  return s;
}

flagos_status_t bad_peer_query(Ctx& c, int32_t bad) {
  NEED_FN(c, device_can_access_peer);
  int32_t a = 7, b = 7;
  flagos_status_t s1 = c.api->device_can_access_peer(bad, 0, &a);
  flagos_status_t s2 = c.api->device_can_access_peer(0, bad, &b);
  c.expect(s1 == s2, strf("device_can_access_peer(%d, 0) and (0, %d) disagree: %s vs %s", bad, bad,
                          st(s1).c_str(), st(s2).c_str()));
  c.expect(a == 7 && b == 7, "device_can_access_peer wrote *can_access on failure");
  return s1 != FLAGOS_ERROR_INVALID_DEVICE ? s1 : s2;
}

flagos_status_t bad_mem_alloc(Ctx& c, int32_t bad) {
  void* p = kSentinel;
  flagos_status_t s = c.api->mem_alloc(bad, 16, &p);
  c.expect(s == FLAGOS_SUCCESS || p == kSentinel, "mem_alloc wrote *ptr on failure");
  return s;
}

flagos_status_t bad_mem_free(Ctx& c, int32_t bad) {
  void* p = nullptr;
  c.ok(c.api->mem_alloc(0, 64, &p), "mem_alloc(0, 64)");
  flagos_status_t s = c.api->mem_free(bad, p);
  if (s != FLAGOS_SUCCESS) c.ok(c.api->mem_free(0, p), "mem_free(0, p)");  // still owned
  return s;
}

flagos_status_t bad_default_stream(Ctx& c, int32_t bad) {
  flagos_stream_t s0 = sentinel<flagos_stream_t>();
  flagos_status_t s = c.api->get_default_stream(bad, &s0);
  c.expect(s == FLAGOS_SUCCESS || s0 == sentinel<flagos_stream_t>(),
           "get_default_stream wrote *stream on failure");
  return s;
}

flagos_status_t bad_stream_create(Ctx& c, int32_t bad) {
  flagos_stream_t st0 = sentinel<flagos_stream_t>();
  flagos_status_t s = c.api->stream_create(bad, 0, &st0);
  if (s == FLAGOS_SUCCESS) c.api->stream_destroy(st0);
  else c.expect(st0 == sentinel<flagos_stream_t>(), "stream_create wrote *stream on failure");
  return s;
}

flagos_status_t bad_event_create(Ctx& c, int32_t bad) {
  flagos_event_t e = sentinel<flagos_event_t>();
  flagos_status_t s = c.api->event_create(bad, FLAGOS_EVENT_DEFAULT, &e);
  if (s == FLAGOS_SUCCESS) c.api->event_destroy(e);
  else c.expect(e == sentinel<flagos_event_t>(), "event_create wrote *event on failure");
  return s;
}

// Either ordinal bad, the other one valid: the ordinal check must come first.
flagos_status_t bad_peer_copy(Ctx& c, int32_t bad) {
  NEED_FN(c, memcpy_peer_async);
  DevBuf a(c, 0, 64), b(c, 0, 64);
  flagos_stream_t s0 = default_stream(c, 0);
  flagos_status_t s1 = c.api->memcpy_peer_async(a.get(), bad, b.get(), 0, 64, s0);
  flagos_status_t s2 = c.api->memcpy_peer_async(a.get(), 0, b.get(), bad, 64, s0);
  c.ok(c.api->stream_synchronize(s0), "stream_synchronize");
  c.expect(s1 == s2, strf("bad dst_device gives %s, bad src_device gives %s", st(s1).c_str(),
                          st(s2).c_str()));
  return s1 != FLAGOS_ERROR_INVALID_DEVICE ? s1 : s2;
}

const OrdinalCase kOrdinalCases[] = {
    {"get_device_properties", 0, bad_props},
    {"set_device", 0, bad_set_device},
    {"device_synchronize", 0, bad_sync},
    {"mem_get_info", 0, bad_mem_get_info},
    {"device_can_access_peer", 1, bad_peer_query},
    {"mem_alloc", 0, bad_mem_alloc},
    {"mem_free", 1, bad_mem_free},
    {"get_default_stream", 0, bad_default_stream},
    {"stream_create", 0, bad_stream_create},
    {"event_create", 0, bad_event_create},
    {"memcpy_peer_async", 1, bad_peer_copy},
};

void check_ordinals(Ctx& c, const OrdinalCase& oc) {
  c.need_devices(oc.min_devices);
  for (int32_t bad : {int32_t{-1}, c.device_count, int32_t{1} << 30}) {
    flagos_status_t s = oc.call(c, bad);
    c.expect_status(s, FLAGOS_ERROR_INVALID_DEVICE, strf("%s(%d)", oc.fn, bad));
  }
  c.note(strf("ordinals -1, %d, %d", c.device_count, 1 << 30));
}

// ---- NULL out-pointers ---------------------------------------------------------

struct NullCase {
  const char* fn;
  int min_devices;
  flagos_status_t (*call)(Ctx& c);
};

flagos_status_t null_count(Ctx& c) { return c.api->device_count(nullptr); }
flagos_status_t null_props(Ctx& c) { return c.api->get_device_properties(0, nullptr); }
flagos_status_t null_get_device(Ctx& c) { return c.api->get_device(nullptr); }

flagos_status_t null_mem_get_info(Ctx& c) {
  NEED_FN(c, mem_get_info);
  uint64_t v = 0;
  flagos_status_t s1 = c.api->mem_get_info(0, nullptr, &v);
  flagos_status_t s2 = c.api->mem_get_info(0, &v, nullptr);
  c.expect(s1 == s2, "NULL free_bytes and NULL total_bytes give different codes");
  return s1 != FLAGOS_ERROR_INVALID_ARGUMENT ? s1 : s2;
}

flagos_status_t null_peer_query(Ctx& c) {
  NEED_FN(c, device_can_access_peer);
  return c.api->device_can_access_peer(0, 0, nullptr);
}

flagos_status_t null_mem_alloc(Ctx& c) { return c.api->mem_alloc(0, 16, nullptr); }

flagos_status_t null_host_alloc(Ctx& c) {
  NEED_FN(c, host_alloc);
  return c.api->host_alloc(16, nullptr);
}

flagos_status_t null_pointer_attrs(Ctx& c) {
  int local = 0;
  int32_t kind = 0;
  flagos_device_t dev = 0;
  flagos_status_t s1 = c.api->pointer_get_attributes(&local, nullptr, &dev);
  flagos_status_t s2 = c.api->pointer_get_attributes(&local, &kind, nullptr);
  c.expect(s1 == s2, "NULL kind and NULL device give different codes");
  return s1 != FLAGOS_ERROR_INVALID_ARGUMENT ? s1 : s2;
}

flagos_status_t null_default_stream(Ctx& c) { return c.api->get_default_stream(0, nullptr); }
flagos_status_t null_stream_create(Ctx& c) { return c.api->stream_create(0, 0, nullptr); }
flagos_status_t null_event_create(Ctx& c) {
  return c.api->event_create(0, FLAGOS_EVENT_DEFAULT, nullptr);
}

flagos_status_t null_native_handle(Ctx& c) {
  NEED_FN(c, stream_native_handle);
  Stream s(c, 0);
  void* native = nullptr;
  if (c.api->stream_native_handle(s.get(), &native) == FLAGOS_ERROR_UNSUPPORTED)
    c.skip("stream_native_handle is UNSUPPORTED for a valid out-pointer");
  return c.api->stream_native_handle(s.get(), nullptr);
}

flagos_status_t null_elapsed(Ctx& c) {
  c.need_cap(FLAGOS_CAP_EVENT_TIMING, "FLAGOS_CAP_EVENT_TIMING");
  NEED_FN(c, event_elapsed_ms);
  Event a(c, 0, FLAGOS_EVENT_TIMING), b(c, 0, FLAGOS_EVENT_TIMING);
  flagos_stream_t s = default_stream(c, 0);
  c.ok(c.api->event_record(a.get(), s), "event_record");
  c.ok(c.api->event_record(b.get(), s), "event_record");
  c.ok(c.api->event_synchronize(b.get()), "event_synchronize");
  return c.api->event_elapsed_ms(a.get(), b.get(), nullptr);
}

const NullCase kNullCases[] = {
    {"device_count", 0, null_count},
    {"get_device_properties", 1, null_props},
    {"get_device", 0, null_get_device},
    {"mem_get_info", 1, null_mem_get_info},
    {"device_can_access_peer", 1, null_peer_query},
    {"mem_alloc", 1, null_mem_alloc},
    {"host_alloc", 0, null_host_alloc},
    {"pointer_get_attributes", 0, null_pointer_attrs},
    {"get_default_stream", 1, null_default_stream},
    {"stream_create", 1, null_stream_create},
    {"event_create", 1, null_event_create},
    {"stream_native_handle", 1, null_native_handle},
    {"event_elapsed_ms", 1, null_elapsed},
};

void check_null_out(Ctx& c, const NullCase& nc) {
  c.need_devices(nc.min_devices);
  c.expect_status(nc.call(c), FLAGOS_ERROR_INVALID_ARGUMENT, std::string(nc.fn) + "(..., NULL)");
}

// ---- destroying NULL, bad enums -----------------------------------------------------

void null_destroy_stream(Ctx& c) {
  c.expect_status(c.api->stream_destroy(nullptr), FLAGOS_SUCCESS, "stream_destroy(NULL)");
}

void null_destroy_event(Ctx& c) {
  c.expect_status(c.api->event_destroy(nullptr), FLAGOS_SUCCESS, "event_destroy(NULL)");
}

void null_mem_free(Ctx& c) {
  c.need_devices(1);
  c.expect_status(c.api->mem_free(0, nullptr), FLAGOS_SUCCESS, "mem_free(0, NULL)");
}

void null_host_free(Ctx& c) {
  NEED_FN(c, host_free);
  c.expect_status(c.api->host_free(nullptr), FLAGOS_SUCCESS, "host_free(NULL)");
}

// An unknown memcpy kind is a bad enum: INVALID_ARGUMENT, nothing copied.
void bad_kind_sync(Ctx& c) {
  unsigned char src[16], dst[16];
  std::memset(src, 1, sizeof src);
  std::memset(dst, 2, sizeof dst);
  for (int32_t kind : {-1, 4, 1000}) {
    flagos_status_t s = c.api->memcpy_sync(dst, src, sizeof dst, kind);
    c.expect_status(s, FLAGOS_ERROR_INVALID_ARGUMENT, strf("memcpy_sync(kind=%d)", kind));
  }
  c.expect(dst[0] == 2 && dst[15] == 2, "a rejected memcpy_sync copied data");
}

void bad_kind_async(Ctx& c) {
  c.need_devices(1);
  unsigned char src[16], dst[16];
  std::memset(src, 1, sizeof src);
  std::memset(dst, 2, sizeof dst);
  flagos_stream_t s0 = default_stream(c, 0);
  for (int32_t kind : {-1, 4, 1000}) {
    flagos_status_t s = c.api->memcpy_async(dst, src, sizeof dst, kind, s0);
    c.expect_status(s, FLAGOS_ERROR_INVALID_ARGUMENT, strf("memcpy_async(kind=%d)", kind));
  }
  c.ok(c.api->stream_synchronize(s0), "stream_synchronize");
  c.expect(dst[0] == 2 && dst[15] == 2, "a rejected memcpy_async copied data");
}

// ---- last_error_message ---------------------------------------------------------

// Two different failures that need no device.
flagos_status_t fail_invalid_device(Ctx& c) {
  void* p = nullptr;
  return c.api->mem_alloc(-1, 16, &p);
}
flagos_status_t fail_invalid_argument(Ctx& c) { return c.api->device_count(nullptr); }

void msg_set_on_failure(Ctx& c) {
  for (auto fail : {fail_invalid_device, fail_invalid_argument}) {
    flagos_status_t s = fail(c);
    c.require(s != FLAGOS_SUCCESS, "the provoked failure returned SUCCESS");
    const char* m = c.api->last_error_message();
    c.expect(m != nullptr, "last_error_message returned NULL after " + st(s));
    c.expect(m && *m, "last_error_message is empty after " + st(s));
    if (m && *m) c.note(std::string(flagos_status_name(s)) + ": \"" + m + "\"");
  }
}

// "Successful calls leave it alone."
void msg_kept_on_success(Ctx& c) {
  fail_invalid_device(c);
  const std::string want = c.last_error();
  int32_t n = 0;
  flagos_device_t d = 0;
  int32_t kind = 0;
  c.ok(c.api->device_count(&n), "device_count");
  c.expect(c.last_error() == want, "device_count (SUCCESS) changed the message");
  c.ok(c.api->get_device(&d), "get_device");
  c.expect(c.last_error() == want, "get_device (SUCCESS) changed the message");
  c.ok(c.api->pointer_get_attributes(&n, &kind, &d), "pointer_get_attributes");
  c.expect(c.last_error() == want, "pointer_get_attributes (SUCCESS) changed the message");
  if (c.device_count > 0) {
    flagos_stream_t s = default_stream(c, 0);
    c.ok(c.api->stream_query(s), "stream_query(default)");
    c.expect(c.last_error() == want, "stream_query (SUCCESS) changed the message");
    DevBuf b(c, 0, 256);
    c.expect(c.last_error() == want, "mem_alloc (SUCCESS) changed the message");
  }
}

void msg_fresh_thread(Ctx& c) {
  bool was_null = false;
  std::string m;
  std::thread t([&] {
    const char* p = c.api->last_error_message();
    was_null = p == nullptr;
    if (p) m = p;
  });
  t.join();
  c.require(!was_null, "last_error_message returned NULL on a thread with no failure");
  c.expect(m.empty(), "a thread that never failed sees \"" + m + "\" (expected \"\")");
}

// Thread 0 fails, then thread 1 fails, then both read: each must still see
// its own message. Then both fail and read in a free-running loop.
void msg_per_thread(Ctx& c) {
  constexpr int kRounds = 50, kLoops = 2000;
  Barrier bar(2);
  std::string own[2][kRounds];
  int wrong[2] = {0, 0}, unstable[2] = {0, 0};
  run_threads(c, 2, [&](int t) {
    auto fail = t == 0 ? fail_invalid_device : fail_invalid_argument;
    for (int r = 0; r < kRounds; ++r) {
      if (t == 0) {
        fail(c);
        own[0][r] = c.last_error();
      }
      bar.wait();
      if (t == 1) {  // fails after thread 0 did
        fail(c);
        own[1][r] = c.last_error();
      }
      bar.wait();
      if (c.last_error() != own[t][r]) ++wrong[t];
      bar.wait();
    }
    for (int i = 0; i < kLoops; ++i) {
      fail(c);
      std::string m1 = c.last_error();
      int32_t n;
      c.api->device_count(&n);
      if (c.last_error() != m1) ++unstable[t];
    }
  });
  bool distinct = false;
  for (int r = 0; r < kRounds; ++r) distinct = distinct || own[0][r] != own[1][r];
  if (!distinct && !wrong[0] && !wrong[1]) c.skip("both errors give the same message text");
  for (int t = 0; t < 2; ++t) {
    c.expect(!wrong[t], strf("thread %d saw the other thread's message in %d/%d rounds", t,
                             wrong[t], kRounds));
    c.expect(!unstable[t], strf("thread %d's message changed under it in %d/%d loops", t,
                                unstable[t], kLoops));
  }
  c.note(strf("%d phased rounds, %d free-running loops per thread", kRounds, kLoops));
}

}  // namespace

Group errors_group() {
  Group g("errors", "bad ordinals, NULL out-pointers, NULL destroy, bad enums, last error");
  for (const OrdinalCase& oc : kOrdinalCases)
    g.add(std::string("bad-ordinal.") + oc.fn, [&oc](Ctx& c) { check_ordinals(c, oc); });
  for (const NullCase& nc : kNullCases)
    g.add(std::string("null-out.") + nc.fn, [&nc](Ctx& c) { check_null_out(c, nc); });
  g.add("destroy-null.stream_destroy", null_destroy_stream)
      .add("destroy-null.event_destroy", null_destroy_event)
      .add("destroy-null.mem_free", null_mem_free)
      .add("destroy-null.host_free", null_host_free)
      .add("bad-enum.memcpy_sync", bad_kind_sync)
      .add("bad-enum.memcpy_async", bad_kind_async)
      .add("last-error.set-on-failure", msg_set_on_failure)
      .add("last-error.kept-on-success", msg_kept_on_success)
      .add("last-error.empty-on-fresh-thread", msg_fresh_thread)
      .add("last-error.per-thread", msg_per_thread);
  return g;
}

}  // namespace conformance
