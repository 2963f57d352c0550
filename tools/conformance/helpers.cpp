#include "helpers.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace conformance {

std::string strf(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string st(flagos_status_t s) { return strf("%s (%d)", flagos_status_name(s), s); }

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

void sleep_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

void fill_pattern(void* p, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;  // xorshift64
    x ^= x >> 7;
    x ^= x << 17;
    b[i] = static_cast<unsigned char>(x >> 24);
  }
}

uint64_t checksum(const void* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

std::string compare_bytes(const void* got, const void* want, size_t n) {
  if (n == 0 || std::memcmp(got, want, n) == 0) return "";
  auto* g = static_cast<const unsigned char*>(got);
  auto* w = static_cast<const unsigned char*>(want);
  size_t i = 0;
  while (g[i] == w[i]) ++i;
  return strf("checksum %016llx != %016llx; first difference at byte %zu of %zu: 0x%02x, expected 0x%02x",
              static_cast<unsigned long long>(checksum(got, n)),
              static_cast<unsigned long long>(checksum(want, n)), i, n, g[i], w[i]);
}

// ---- owners ------------------------------------------------------------------

DevBuf::DevBuf(Ctx& c, int32_t device, uint64_t size) : c_(c), device_(device), size_(size) {
  c.ok(c.api->mem_alloc(device, size, &p_), strf("mem_alloc(%d, %llu)", device,
                                                 static_cast<unsigned long long>(size)));
}

DevBuf::~DevBuf() {
  flagos_status_t s = c_.api->mem_free(device_, p_);
  c_.expect(s == FLAGOS_SUCCESS, "mem_free returned " + st(s));
}

const char* host_kind_name(HostKind k) { return k == HostKind::kPinned ? "pinned" : "pageable"; }

HostBuf::HostBuf(Ctx& c, HostKind kind, uint64_t size) : c_(c), kind_(kind), size_(size) {
  if (kind == HostKind::kPageable) {
    p_ = static_cast<unsigned char*>(std::malloc(size ? size : 1));
    if (!p_) c.fail("runner out of host memory");
    return;
  }
  c.need_cap(FLAGOS_CAP_PINNED_HOST, "FLAGOS_CAP_PINNED_HOST");
  NEED_FN(c, host_alloc);
  void* p = nullptr;
  c.ok(c.api->host_alloc(size, &p), strf("host_alloc(%llu)", static_cast<unsigned long long>(size)));
  p_ = static_cast<unsigned char*>(p);
}

HostBuf::~HostBuf() {
  if (kind_ == HostKind::kPageable) {
    std::free(p_);
    return;
  }
  flagos_status_t s = HAS_FN(c_, host_free) ? c_.api->host_free(p_) : FLAGOS_ERROR_UNSUPPORTED;
  c_.expect(s == FLAGOS_SUCCESS, "host_free returned " + st(s));
}

Stream::Stream(Ctx& c, int32_t device, int32_t priority) : c_(c) {
  c.ok(c.api->stream_create(device, priority, &s_), strf("stream_create(%d, %d)", device, priority));
  c.require(s_ != nullptr, "stream_create returned SUCCESS and a NULL stream");
}

Stream::~Stream() {
  if (!s_) return;
  flagos_status_t s = c_.api->stream_destroy(s_);
  c_.expect(s == FLAGOS_SUCCESS, "stream_destroy returned " + st(s));
}

Event::Event(Ctx& c, int32_t device, uint32_t flags) : c_(c) {
  c.ok(c.api->event_create(device, flags, &e_), strf("event_create(%d, %u)", device, flags));
  c.require(e_ != nullptr, "event_create returned SUCCESS and a NULL event");
}

Event::~Event() {
  if (!e_) return;
  flagos_status_t s = c_.api->event_destroy(e_);
  c_.expect(s == FLAGOS_SUCCESS, "event_destroy returned " + st(s));
}

flagos_stream_t default_stream(Ctx& c, int32_t device) {
  flagos_stream_t s = nullptr;
  c.ok(c.api->get_default_stream(device, &s), strf("get_default_stream(%d)", device));
  c.require(s != nullptr, "get_default_stream returned SUCCESS and a NULL stream");
  return s;
}

void upload(Ctx& c, void* dev, const void* host, uint64_t n) {
  c.ok(c.api->memcpy_sync(dev, host, n, FLAGOS_MEMCPY_HOST_TO_DEVICE), "memcpy_sync(H2D)");
}

void download(Ctx& c, void* host, const void* dev, uint64_t n) {
  c.ok(c.api->memcpy_sync(host, dev, n, FLAGOS_MEMCPY_DEVICE_TO_HOST), "memcpy_sync(D2H)");
}

void delay(Ctx& c, flagos_stream_t stream, double ms) {
  const flagos_testing_ext_t& t = c.need_testing();
  c.ok(t.stream_enqueue_delay(stream, static_cast<uint64_t>(ms * 1000.0)), "stream_enqueue_delay");
}

// ---- threads -----------------------------------------------------------------

void run_threads(Ctx& c, int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&c, &fn, i] {
      try {
        fn(i);
      } catch (const CheckFail& f) {
        c.expect(false, strf("thread %d: ", i) + f.reason);
      } catch (const CheckSkip& s) {
        c.expect(false, strf("thread %d skipped: ", i) + s.reason);
      } catch (const std::exception& e) {
        c.expect(false, strf("thread %d: exception: ", i) + e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
}

void Barrier::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  unsigned gen = generation_;
  if (++waiting_ == n_) {
    waiting_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  // Bounded: a thread that failed before reaching the barrier must not hang
  // the others forever.
  if (!cv_.wait_for(lock, std::chrono::seconds(20), [&] { return gen != generation_; }))
    throw CheckFail{"barrier timed out (another thread stopped early)"};
}

}  // namespace conformance
