// streams: stream and event semantics. Asynchronous states are made
// observable with the testing extension's stream_enqueue_delay.
#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

using Bytes = std::vector<unsigned char>;

void default_stream_stable(Ctx& c) {
  c.need_devices(1);
  std::vector<flagos_stream_t> first;
  for (int d = 0; d < c.device_count; ++d) first.push_back(default_stream(c, d));
  for (int d = 0; d < c.device_count; ++d) {
    c.expect(default_stream(c, d) == first[d], strf("device %d: a second call gave another handle", d));
    for (int e = 0; e < d; ++e)
      c.expect(first[d] != first[e], strf("devices %d and %d share a default stream", e, d));
  }
  flagos_stream_t other = nullptr;
  std::thread t([&] { c.api->get_default_stream(0, &other); });
  t.join();
  c.expect(other == first[0], "another thread got another default stream");
}

void create_destroy(Ctx& c) {
  c.need_devices(1);
  for (int i = 0; i < 100; ++i) {
    Stream s(c, i % c.device_count);
    c.expect_status(c.api->stream_query(s.get()), FLAGOS_SUCCESS, "stream_query(new stream)");
    c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize(new stream)");
  }
  c.note("100 streams created, queried, synchronized, destroyed");
}

// Priorities outside the range are clamped, not refused.
void priorities_clamped(Ctx& c) {
  c.need_devices(1);
  const auto& p = c.props[0];
  int64_t hi = p.stream_priority_highest, lo = p.stream_priority_lowest;
  for (int64_t prio : {int64_t{INT32_MIN}, hi - 1, hi, int64_t{0}, lo, lo + 1, int64_t{INT32_MAX}}) {
    prio = std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, prio));
    Stream s(c, 0, static_cast<int32_t>(prio));
    c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  }
  c.note(strf("range [%d (highest), %d (lowest)] plus INT32_MIN/INT32_MAX",
              p.stream_priority_highest, p.stream_priority_lowest));
}

// "Never blocks": the time spent in a call while a long delay is pending.
void non_blocking(Ctx& c) {
  c.need_devices(1);
  c.need_testing();
  Stream a(c, 0), b(c, 0);
  Event e(c, 0);
  double t0 = now_ms();
  delay(c, a.get(), 300);
  double t_delay = now_ms() - t0;
  c.ok(c.api->event_record(e.get(), a.get()), "event_record");
  t0 = now_ms();
  flagos_status_t sq = c.api->stream_query(a.get());
  flagos_status_t eq = c.api->event_query(e.get());
  double t_query = now_ms() - t0;
  t0 = now_ms();
  c.ok(c.api->stream_wait_event(b.get(), e.get()), "stream_wait_event");
  double t_wait = now_ms() - t0;
  c.ok(c.api->stream_synchronize(b.get()), "stream_synchronize");
  c.expect(t_delay < 100, strf("stream_enqueue_delay blocked %.0f ms", t_delay));
  c.expect(t_query < 100, strf("stream_query + event_query blocked %.0f ms", t_query));
  c.expect(t_wait < 100, strf("stream_wait_event blocked %.0f ms", t_wait));
  c.expect(sq == FLAGOS_NOT_READY && eq == FLAGOS_NOT_READY, "queries did not report NOT_READY");
  c.note(strf("delay %.2f ms, queries %.2f ms, wait_event %.2f ms", t_delay, t_query, t_wait));
}

void stream_query_states(Ctx& c) {
  c.need_devices(1);
  c.need_testing();
  Stream s(c, 0);
  double t0 = now_ms();
  delay(c, s.get(), 50);
  c.expect_status(c.api->stream_query(s.get()), FLAGOS_NOT_READY, "stream_query during a delay");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  double waited = now_ms() - t0;
  c.expect_status(c.api->stream_query(s.get()), FLAGOS_SUCCESS, "stream_query after synchronize");
  c.expect(waited >= 45, strf("stream_synchronize returned after %.1f ms of a 50 ms delay", waited));
  c.note(strf("synchronize returned after %.1f ms", waited));
}

void event_query_states(Ctx& c) {
  c.need_devices(1);
  c.need_testing();
  Stream s(c, 0);
  Event e(c, 0);
  double t0 = now_ms();
  delay(c, s.get(), 50);
  c.ok(c.api->event_record(e.get(), s.get()), "event_record");
  c.expect_status(c.api->event_query(e.get()), FLAGOS_NOT_READY, "event_query during a delay");
  c.ok(c.api->event_synchronize(e.get()), "event_synchronize");
  double waited = now_ms() - t0;
  c.expect_status(c.api->event_query(e.get()), FLAGOS_SUCCESS, "event_query after synchronize");
  c.expect(waited >= 45, strf("event_synchronize returned after %.1f ms of a 50 ms delay", waited));
  c.note(strf("synchronize returned after %.1f ms", waited));
}

// "An event never recorded imposes no wait"; queries succeed.
void never_recorded(Ctx& c) {
  c.need_devices(1);
  Event e(c, 0);
  Stream s(c, 0);
  c.expect_status(c.api->event_query(e.get()), FLAGOS_SUCCESS, "event_query(never recorded)");
  c.expect_status(c.api->event_synchronize(e.get()), FLAGOS_SUCCESS, "event_synchronize(never recorded)");
  c.ok(c.api->stream_wait_event(s.get(), e.get()), "stream_wait_event(never recorded)");
  c.expect_status(c.api->stream_query(s.get()), FLAGOS_SUCCESS,
                  "stream_query after waiting on a never-recorded event");
}

// "Re-recording replaces the captured point."
void rerecord(Ctx& c) {
  c.need_devices(1);
  c.need_testing();
  Stream slow(c, 0), idle(c, 0);
  Event e(c, 0);
  delay(c, slow.get(), 200);
  c.ok(c.api->event_record(e.get(), slow.get()), "event_record(slow stream)");
  c.expect_status(c.api->event_query(e.get()), FLAGOS_NOT_READY, "event_query (slow)");
  c.ok(c.api->event_record(e.get(), idle.get()), "event_record(idle stream)");
  c.ok(c.api->stream_synchronize(idle.get()), "stream_synchronize(idle)");
  c.expect_status(c.api->event_query(e.get()), FLAGOS_SUCCESS,
                  "event_query after re-recording on an idle stream");
  c.ok(c.api->stream_synchronize(slow.get()), "stream_synchronize(slow)");
}

// ---- timing ---------------------------------------------------------------------

// FLAGOS_EVENT_TIMING "needs FLAGOS_CAP_EVENT_TIMING".
void timing_flag(Ctx& c) {
  c.need_devices(1);
  flagos_event_t e = nullptr;
  flagos_status_t s = c.api->event_create(0, FLAGOS_EVENT_TIMING, &e);
  if (s == FLAGOS_SUCCESS) c.api->event_destroy(e);
  if (c.has_cap(FLAGOS_CAP_EVENT_TIMING)) {
    c.expect_status(s, FLAGOS_SUCCESS, "event_create(TIMING) with the capability");
  } else {
    c.expect_status(s, FLAGOS_ERROR_UNSUPPORTED, "event_create(TIMING) without the capability");
    c.expect(e == nullptr, "event_create wrote *event although it failed");
  }
}

void need_timing(Ctx& c) {
  c.need_cap(FLAGOS_CAP_EVENT_TIMING, "FLAGOS_CAP_EVENT_TIMING");
  NEED_FN(c, event_elapsed_ms);
}

void elapsed_around_delay(Ctx& c) {
  need_timing(c);
  c.need_testing();
  Stream s(c, 0);
  Event a(c, 0, FLAGOS_EVENT_TIMING), b(c, 0, FLAGOS_EVENT_TIMING);
  c.ok(c.api->event_record(a.get(), s.get()), "event_record(start)");
  delay(c, s.get(), 30);
  c.ok(c.api->event_record(b.get(), s.get()), "event_record(end)");
  c.ok(c.api->event_synchronize(b.get()), "event_synchronize");
  float ms = 0, back = 0;
  c.ok(c.api->event_elapsed_ms(a.get(), b.get(), &ms), "event_elapsed_ms(start, end)");
  c.ok(c.api->event_elapsed_ms(b.get(), a.get(), &back), "event_elapsed_ms(end, start)");
  c.expect(ms >= 29.0f && ms < 10000.0f, strf("%.3f ms around a 30 ms delay", ms));
  c.expect(back <= -29.0f, strf("end-to-start gave %.3f ms, expected negative", back));
  c.note(strf("%.3f ms around a 30 ms delay; reversed %.3f ms", ms, back));
}

void elapsed_not_ready(Ctx& c) {
  need_timing(c);
  c.need_testing();
  Stream s(c, 0);
  Event a(c, 0, FLAGOS_EVENT_TIMING), b(c, 0, FLAGOS_EVENT_TIMING);
  c.ok(c.api->event_record(a.get(), s.get()), "event_record(start)");
  delay(c, s.get(), 200);
  c.ok(c.api->event_record(b.get(), s.get()), "event_record(end)");
  float ms = -12345.0f;
  c.expect_status(c.api->event_elapsed_ms(a.get(), b.get(), &ms), FLAGOS_NOT_READY,
                  "event_elapsed_ms before the end event completed");
  c.expect(ms == -12345.0f, "event_elapsed_ms wrote *milliseconds with NOT_READY");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
}

void elapsed_unrecorded(Ctx& c) {
  need_timing(c);
  Stream s(c, 0);
  Event a(c, 0, FLAGOS_EVENT_TIMING), never(c, 0, FLAGOS_EVENT_TIMING);
  c.ok(c.api->event_record(a.get(), s.get()), "event_record");
  c.ok(c.api->event_synchronize(a.get()), "event_synchronize");
  float ms = 0;
  c.expect_status(c.api->event_elapsed_ms(a.get(), never.get(), &ms), FLAGOS_ERROR_INVALID_STATE,
                  "event_elapsed_ms(recorded, never recorded)");
  c.expect_status(c.api->event_elapsed_ms(never.get(), a.get(), &ms), FLAGOS_ERROR_INVALID_STATE,
                  "event_elapsed_ms(never recorded, recorded)");
}

// Events without FLAGOS_EVENT_TIMING: INVALID_STATE (UNSUPPORTED tolerated).
void elapsed_non_timing(Ctx& c) {
  c.need_devices(1);
  NEED_FN(c, event_elapsed_ms);
  Stream s(c, 0);
  Event a(c, 0), b(c, 0);
  c.ok(c.api->event_record(a.get(), s.get()), "event_record");
  c.ok(c.api->event_record(b.get(), s.get()), "event_record");
  c.ok(c.api->event_synchronize(b.get()), "event_synchronize");
  float ms = 0;
  flagos_status_t r = c.api->event_elapsed_ms(a.get(), b.get(), &ms);
  c.expect(r == FLAGOS_ERROR_INVALID_STATE || r == FLAGOS_ERROR_UNSUPPORTED,
           "event_elapsed_ms on events without TIMING returned " + st(r));
  c.note(std::string("returned ") + flagos_status_name(r));
}

// ---- ordering and lifetime -----------------------------------------------------------

// Stream B copies what stream A writes after a delay; B must wait for A.
void wait_event_orders(Ctx& c) {
  c.need_devices(1);
  c.need_testing();
  const uint64_t n = 1 << 20;
  DevBuf src(c, 0, n), dst(c, 0, n);
  Bytes zero(n, 0), got(n), want(n, 0x5A);
  upload(c, src.get(), zero.data(), n);
  upload(c, dst.get(), zero.data(), n);
  Stream a(c, 0), b(c, 0);
  Event e(c, 0);
  delay(c, a.get(), 50);
  c.ok(c.api->memset_async(src.get(), 0x5A, n, a.get()), "memset_async on A");
  c.ok(c.api->event_record(e.get(), a.get()), "event_record on A");
  c.ok(c.api->stream_wait_event(b.get(), e.get()), "stream_wait_event(B, e)");
  c.ok(c.api->memcpy_async(dst.get(), src.get(), n, FLAGOS_MEMCPY_DEVICE_TO_DEVICE, b.get()), "D2D on B");
  c.expect_status(c.api->stream_query(b.get()), FLAGOS_NOT_READY, "stream_query(B) while A is delayed");
  c.ok(c.api->stream_synchronize(b.get()), "stream_synchronize(B)");
  download(c, got.data(), dst.get(), n);
  std::string diff = compare_bytes(got.data(), want.data(), n);
  c.require(diff.empty(), "B did not see A's data: " + diff);
}

// "Works across devices": a stream of device 1 waits on an event of device 0.
void wait_event_cross_device(Ctx& c) {
  c.need_devices(2);
  c.need_testing();
  Stream a(c, 0), b(c, 1);
  Event e(c, 0), f(c, 1);
  double t0 = now_ms();
  delay(c, a.get(), 100);
  c.ok(c.api->event_record(e.get(), a.get()), "event_record on device 0");
  c.ok(c.api->stream_wait_event(b.get(), e.get()), "stream_wait_event(device 1 stream, device 0 event)");
  c.ok(c.api->event_record(f.get(), b.get()), "event_record on device 1");
  c.expect_status(c.api->event_query(f.get()), FLAGOS_NOT_READY, "device 1 event while device 0 is delayed");
  c.ok(c.api->event_synchronize(f.get()), "event_synchronize(device 1)");
  double waited = now_ms() - t0;
  c.expect(waited >= 90, strf("device 1 finished after %.1f ms of a 100 ms delay on device 0", waited));
  c.expect_status(c.api->event_query(e.get()), FLAGOS_SUCCESS, "device 0 event after device 1 finished");
  c.note(strf("device 1 waited %.1f ms", waited));
}

// "Legal with work pending: the work still completes."
void destroy_pending_stream(Ctx& c) {
  c.need_devices(1);
  const uint64_t n = 1 << 20;
  DevBuf d(c, 0, n);
  Bytes zero(n, 0), got(n), want(n, 0x6B);
  upload(c, d.get(), zero.data(), n);
  Event e(c, 0);
  Stream s(c, 0);
  if (c.testing) delay(c, s.get(), 50);
  c.ok(c.api->memset_async(d.get(), 0x6B, n, s.get()), "memset_async");
  c.ok(c.api->event_record(e.get(), s.get()), "event_record");
  c.ok(c.api->stream_destroy(s.release()), "stream_destroy with work pending");
  c.ok(c.api->event_synchronize(e.get()), "event_synchronize after the stream was destroyed");
  c.ok(c.api->device_synchronize(0), "device_synchronize");
  download(c, got.data(), d.get(), n);
  c.require(compare_bytes(got.data(), want.data(), n).empty(), "the destroyed stream's work was lost");
}

void destroy_pending_event(Ctx& c) {
  c.need_devices(1);
  Stream s(c, 0);
  Event e(c, 0);
  if (c.testing) delay(c, s.get(), 50);
  c.ok(c.api->event_record(e.get(), s.get()), "event_record");
  c.ok(c.api->event_destroy(e.release()), "event_destroy with recorded work pending");
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
}

// "Blocks until all work on every stream of device completed."
void device_sync_waits(Ctx& c) {
  c.need_devices(1);
  c.need_testing();
  Stream a(c, 0), b(c, 0);
  flagos_stream_t s0 = default_stream(c, 0);
  double t0 = now_ms();
  delay(c, a.get(), 50);
  delay(c, b.get(), 80);
  delay(c, s0, 30);
  c.ok(c.api->device_synchronize(0), "device_synchronize");
  double waited = now_ms() - t0;
  c.expect(waited >= 75, strf("device_synchronize returned after %.1f ms (longest delay 80 ms)", waited));
  c.expect_status(c.api->stream_query(a.get()), FLAGOS_SUCCESS, "stream_query(A) after device_synchronize");
  c.expect_status(c.api->stream_query(b.get()), FLAGOS_SUCCESS, "stream_query(B) after device_synchronize");
  c.expect_status(c.api->stream_query(s0), FLAGOS_SUCCESS, "stream_query(default) after device_synchronize");
  c.note(strf("returned after %.1f ms", waited));
}

void native_handle(Ctx& c) {
  c.need_devices(1);
  NEED_FN(c, stream_native_handle);
  Stream s(c, 0);
  void* h = nullptr;
  flagos_status_t r = c.api->stream_native_handle(s.get(), &h);
  if (c.has_cap(FLAGOS_CAP_CUDA_ABI)) {
    c.ok(r, "stream_native_handle with FLAGOS_CAP_CUDA_ABI");
    c.expect(h != nullptr, "NULL native handle for a created stream");
  } else {
    c.expect(r == FLAGOS_SUCCESS || r == FLAGOS_ERROR_UNSUPPORTED, "stream_native_handle returned " + st(r));
  }
  c.note(std::string("returned ") + flagos_status_name(r));
}

}  // namespace

Group streams_group() {
  Group g("streams", "stream and event states, timing, wait ordering, destruction with work pending");
  g.add("default-stream-stable", default_stream_stable)
      .add("create-destroy", create_destroy)
      .add("priorities-clamped", priorities_clamped)
      .add("non-blocking-calls", non_blocking)
      .add("stream-query-states", stream_query_states)
      .add("event-query-states", event_query_states)
      .add("event-never-recorded", never_recorded)
      .add("event-rerecord-replaces", rerecord)
      .add("timing-flag-vs-capability", timing_flag)
      .add("elapsed-around-delay", elapsed_around_delay)
      .add("elapsed-before-completion", elapsed_not_ready)
      .add("elapsed-never-recorded", elapsed_unrecorded)
      .add("elapsed-non-timing-events", elapsed_non_timing)
      .add("wait-event-orders-streams", wait_event_orders)
      .add("wait-event-cross-device", wait_event_cross_device)
      .add("destroy-stream-with-pending-work", destroy_pending_stream)
      .add("destroy-event-with-pending-work", destroy_pending_event)
      .add("device-synchronize-waits", device_sync_waits)
      .add("native-handle", native_handle);
  return g;
}

}  // namespace conformance
