// stress: many threads using the plugin at once ("every function is
// thread-safe"); every result is verified. Bounded to a few seconds.
#include <atomic>
#include <memory>
#include <vector>

#include "framework.h"
#include "helpers.h"

namespace conformance {
namespace {

constexpr int kThreads = 8;
constexpr double kDeadlineMs = 30000;  // a sanity bound; the normal run is far shorter
constexpr uint64_t kMaxSize = 65536;

struct Tally {
  std::atomic<int> done{0}, bad{0};
  std::mutex mu;
  std::string first_bad;
  void fail(const std::string& why) {
    if (bad++ == 0) {
      std::lock_guard<std::mutex> lock(mu);
      first_bad = why;
    }
  }
};

// One iteration: alloc, H2D, event, D2H, verify, free, on the thread's stream.
void roundtrip_once(Ctx& c, int t, int i, flagos_stream_t s, flagos_event_t e,
                    unsigned char* src, unsigned char* dst, int32_t dev, Tally& tally) {
  uint64_t size = 1 + (static_cast<uint64_t>(t) * 7919 + static_cast<uint64_t>(i) * 104729) % kMaxSize;
  DevBuf d(c, dev, size);
  fill_pattern(src, size, static_cast<uint64_t>(t) << 32 | static_cast<uint64_t>(i));
  c.ok(c.api->memcpy_async(d.get(), src, size, FLAGOS_MEMCPY_HOST_TO_DEVICE, s), "H2D");
  c.ok(c.api->event_record(e, s), "event_record");
  if (i % 2) {
    c.ok(c.api->event_synchronize(e), "event_synchronize");
  } else {
    flagos_status_t q;
    while ((q = c.api->event_query(e)) == FLAGOS_NOT_READY) {
    }
    c.ok(q, "event_query");
  }
  c.ok(c.api->memcpy_async(dst, d.get(), size, FLAGOS_MEMCPY_DEVICE_TO_HOST, s), "D2H");
  c.ok(c.api->stream_synchronize(s), "stream_synchronize");
  std::string diff = compare_bytes(dst, src, size);
  if (!diff.empty()) tally.fail(strf("thread %d iteration %d: ", t, i) + diff);
}

void roundtrip_threads(Ctx& c) {
  c.need_devices(1);
  const int iters = 200;
  bool pinned = c.has_cap(FLAGOS_CAP_PINNED_HOST) && HAS_FN(c, host_alloc) && HAS_FN(c, host_free);
  HostKind kind = pinned ? HostKind::kPinned : HostKind::kPageable;
  Tally tally;
  double t0 = now_ms();
  run_threads(c, kThreads, [&](int t) {
    int32_t dev = t % c.device_count;
    c.ok(c.api->set_device(dev), "set_device");
    Stream s(c, dev);
    Event e(c, dev);
    HostBuf src(c, kind, kMaxSize), dst(c, kind, kMaxSize);
    for (int i = 0; i < iters && now_ms() - t0 < kDeadlineMs; ++i, ++tally.done)
      roundtrip_once(c, t, i, s.get(), e.get(), src.data(), dst.data(), dev, tally);
    flagos_device_t cur = -1;
    c.ok(c.api->get_device(&cur), "get_device");
    c.expect(cur == dev, strf("thread %d: current device became %d", t, cur));
  });
  double ms = now_ms() - t0;
  c.expect(tally.bad == 0, strf("%d of %d round trips wrong; first: ", tally.bad.load(), tally.done.load()) +
                               tally.first_bad);
  c.expect(tally.done == kThreads * iters, strf("only %d of %d iterations ran within %.0f s",
                                                tally.done.load(), kThreads * iters, kDeadlineMs / 1000));
  c.note(strf("%d threads x %d iterations (%s host memory, %d device(s)) in %.0f ms", kThreads, iters,
              host_kind_name(kind), c.device_count, ms));
}

// All threads enqueue onto ONE stream; each thread's own writes stay in order.
void shared_stream(Ctx& c) {
  c.need_devices(1);
  const int iters = 50;
  const uint64_t slice = 16384;
  Stream s(c, 0);
  DevBuf d(c, 0, slice * kThreads);
  run_threads(c, kThreads, [&](int t) {
    std::vector<unsigned char> src(slice);
    for (int i = 0; i < iters; ++i) {
      fill_pattern(src.data(), slice, static_cast<uint64_t>(t) * 1000 + i);
      c.ok(c.api->memcpy_async(d.at(slice * t), src.data(), slice, FLAGOS_MEMCPY_HOST_TO_DEVICE, s.get()),
           "memcpy_async");
      if (i % 10 == 0) c.ok(c.api->memset_async(d.at(slice * t), 0xEE, slice / 2, s.get()), "memset_async");
    }
  });
  c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
  std::vector<unsigned char> got(slice * kThreads), want(slice);
  download(c, got.data(), d.get(), got.size());
  for (int t = 0; t < kThreads; ++t) {
    fill_pattern(want.data(), slice, static_cast<uint64_t>(t) * 1000 + iters - 1);
    std::string diff = compare_bytes(got.data() + slice * t, want.data(), slice);
    c.expect(diff.empty(), strf("thread %d's slice is not its last write: ", t) + diff);
  }
  c.note(strf("%d threads x %d copies on one stream", kThreads, iters));
}

// Creation and destruction of every object kind from all threads at once.
void object_churn(Ctx& c) {
  c.need_devices(1);
  const int iters = 300;
  double t0 = now_ms();
  run_threads(c, kThreads, [&](int t) {
    for (int i = 0; i < iters && now_ms() - t0 < kDeadlineMs; ++i) {
      int32_t dev = (t + i) % c.device_count;
      c.ok(c.api->set_device(dev), "set_device");
      Stream s(c, dev, i % 3 - 1);
      Event e(c, dev);
      DevBuf b(c, dev, 1 + (i * 37) % 5000);
      c.ok(c.api->memset_async(b.get(), static_cast<uint8_t>(i), b.size(), s.get()), "memset_async");
      c.ok(c.api->event_record(e.get(), s.get()), "event_record");
      flagos_status_t q = c.api->event_query(e.get());
      c.require(q == FLAGOS_SUCCESS || q == FLAGOS_NOT_READY, "event_query returned " + st(q));
      c.ok(c.api->stream_synchronize(s.get()), "stream_synchronize");
      flagos_device_t cur = -1;
      c.ok(c.api->get_device(&cur), "get_device");
      c.require(cur == dev, strf("thread %d: current device %d, set %d", t, cur, dev));
    }
  });
  c.note(strf("%d threads x %d stream/event/alloc lifecycles in %.0f ms", kThreads, iters, now_ms() - t0));
}

}  // namespace

Group stress_group() {
  Group g("stress", "concurrent alloc/copy/event/verify on 8 threads; shared stream; object churn");
  g.add("threads-roundtrip", roundtrip_threads)
      .add("shared-stream", shared_stream)
      .add("object-churn", object_churn);
  return g;
}

}  // namespace conformance
