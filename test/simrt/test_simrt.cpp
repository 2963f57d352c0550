// The simulated runtimes against their own contract: each vendor library from
// the SDK-like layout, loaded with dlopen as a plugin would load it. Core
// behaviour here; rules and per-process scenarios in test_simrt_rules.cpp.
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

using namespace simrt_test;

TEST_CASE("round trip through device memory, pageable and pinned") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    int n = 0;
    REQUIRE(r.GetDeviceCount(&n) == 0);
    REQUIRE(n == 2);
    REQUIRE(r.SetDevice(0) == 0);
    char in[256], out[256] = {};
    for (int i = 0; i < 256; ++i) in[i] = static_cast<char>(i);
    void *d1 = nullptr, *d2 = nullptr, *s = nullptr;
    REQUIRE(r.Malloc(&d1, sizeof in) == 0);
    REQUIRE(r.Malloc(&d2, sizeof in) == 0);
    REQUIRE(r.Memcpy(d1, in, sizeof in, kH2D) == 0);
    REQUIRE(r.Memcpy(out, d1, sizeof out, kD2H) == 0);  // same legacy stream: ordered
    CHECK(std::memcmp(out, in, sizeof in) == 0);
    // The D2H into pageable memory returned complete, so a non-blocking stream
    // may now read d1.
    REQUIRE(r.StreamCreateWithFlags(&s, 0x1) == 0);
    REQUIRE(r.MemcpyAsync(d2, d1, sizeof in, kD2D, s) == 0);
    char* host = static_cast<char*>(pinned(v, sizeof in));
    REQUIRE(r.MemcpyAsync(host, d2, sizeof in, kD2H, s) == 0);
    REQUIRE(r.StreamSynchronize(s) == 0);
    CHECK(std::memcmp(host, in, sizeof in) == 0);
    size_t free_b = 0, total = 0;
    REQUIRE(r.MemGetInfo(&free_b, &total) == 0);
    CHECK(total == (2048ull << 20));
    CHECK(free_b < total);
    unpin(v, host);
    REQUIRE(r.StreamDestroy(s) == 0);
    REQUIRE(r.Free(d1) == 0);
    REQUIRE(r.Free(d2) == 0);
    CHECK(r.Free(d1) == 1);  // double free: not a live allocation
    CHECK(r.GetLastError() == 1);
  }
}

TEST_CASE("streams run in order, and Query is NotReady while work is pending") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    REQUIRE(r.SetDevice(0) == 0);
    void *s = nullptr, *d = nullptr;
    REQUIRE(r.StreamCreateWithPriority(&s, 0x1, -100) == 0);  // clamped, not an error
    REQUIRE(r.Malloc(&d, 64) == 0);
    Gate gate;
    REQUIRE(r.LaunchHostFunc(s, &Gate::hold, &gate) == 0);
    REQUIRE(r.MemsetAsync(d, 1, 64, s) == 0);
    REQUIRE(r.MemsetAsync(d, 7, 64, s) == 0);
    char* host = static_cast<char*>(pinned(v, 64));
    std::memset(host, 0, 64);
    REQUIRE(r.MemcpyAsync(host, d, 64, kD2H, s) == 0);  // pinned: truly asynchronous
    CHECK(r.StreamQuery(s) == 600);
    CHECK(r.GetLastError() == 0);  // NotReady is a status, not an error
    CHECK(host[0] == 0);
    gate.open = true;
    REQUIRE(r.StreamSynchronize(s) == 0);
    CHECK(r.StreamQuery(s) == 0);
    CHECK(host[0] == 7);
    CHECK(host[63] == 7);
    // A pageable source is staged at the call: the caller may reuse it at once.
    Gate g1;
    char src[64];
    std::memset(src, 5, sizeof src);
    REQUIRE(r.LaunchHostFunc(s, &Gate::hold, &g1) == 0);
    REQUIRE(r.MemcpyAsync(d, src, sizeof src, kH2D, s) == 0);
    std::memset(src, 6, sizeof src);
    g1.open = true;
    REQUIRE(r.MemcpyAsync(host, d, 64, kD2H, s) == 0);
    REQUIRE(r.StreamSynchronize(s) == 0);
    CHECK(host[10] == 5);
    // The legacy (NULL) stream waits for blocking streams, not non-blocking ones.
    void *blocking = nullptr;
    REQUIRE(r.StreamCreateWithFlags(&blocking, 0) == 0);
    Gate g3;
    REQUIRE(r.LaunchHostFunc(blocking, &Gate::hold, &g3) == 0);
    REQUIRE(r.MemsetAsync(d, 1, 64, nullptr) == 0);
    CHECK(r.StreamQuery(nullptr) == 600);
    g3.open = true;
    REQUIRE(r.StreamSynchronize(nullptr) == 0);
    REQUIRE(r.StreamDestroy(blocking) == 0);
    // Destroying a stream with pending work is legal: the work still runs.
    Gate g2;
    REQUIRE(r.LaunchHostFunc(s, &Gate::hold, &g2) == 0);
    REQUIRE(r.MemsetAsync(d, 9, 64, s) == 0);
    REQUIRE(r.StreamDestroy(s) == 0);
    CHECK(r.StreamQuery(s) == 400);  // the handle is gone at once
    g2.open = true;
    REQUIRE(r.Free(d) == 0);  // implicit sync waits for the destroyed stream's work
    unpin(v, host);
  }
}

TEST_CASE("events: ordering across streams and elapsed time") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    REQUIRE(r.SetDevice(0) == 0);
    void *a = nullptr, *b = nullptr, *e0 = nullptr, *e1 = nullptr, *never = nullptr, *notime = nullptr;
    REQUIRE(r.StreamCreateWithFlags(&a, 0x1) == 0);
    REQUIRE(r.StreamCreateWithFlags(&b, 0x1) == 0);
    REQUIRE(r.EventCreateWithFlags(&e0, 0) == 0);
    REQUIRE(r.EventCreateWithFlags(&e1, 0) == 0);
    REQUIRE(r.EventCreateWithFlags(&never, 0) == 0);
    REQUIRE(r.EventCreateWithFlags(&notime, 0x2) == 0);
    CHECK(r.EventQuery(never) == 0);  // never recorded: complete
    REQUIRE(r.StreamWaitEvent(b, never, 0) == 0);  // and imposes no wait
    REQUIRE(r.StreamSynchronize(b) == 0);

    Gate gate;
    REQUIRE(r.EventRecord(e0, a) == 0);
    REQUIRE(r.LaunchHostFunc(a, &Gate::hold, &gate) == 0);
    REQUIRE(r.EventRecord(e1, a) == 0);
    REQUIRE(r.EventRecord(notime, a) == 0);
    float ms = -1;
    CHECK(r.EventElapsedTime(&ms, e0, e1) == 600);
    REQUIRE(r.StreamWaitEvent(b, e1, 0) == 0);  // b now waits for a's gate
    void* d = nullptr;
    REQUIRE(r.Malloc(&d, 16) == 0);
    REQUIRE(r.MemsetAsync(d, 3, 16, b) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(r.EventQuery(e1) == 600);
    CHECK(r.StreamQuery(b) == 600);
    gate.open = true;
    REQUIRE(r.EventSynchronize(e1) == 0);
    REQUIRE(r.StreamSynchronize(b) == 0);
    REQUIRE(r.EventElapsedTime(&ms, e0, e1) == 0);
    CHECK(ms >= 15.0f);
    CHECK(ms < 5000.0f);

    CHECK(r.EventElapsedTime(&ms, e0, notime) == 400);
    CHECK(error_text(r, 400).find("DisableTiming") != std::string::npos);
    CHECK(r.EventElapsedTime(&ms, e0, never) == 400);
    CHECK(error_text(r, 400).find("never recorded") != std::string::npos);
    CHECK(std::string(r.GetErrorName(400)).find("Handle") != std::string::npos);

    // Events of another device may be waited on; recording needs the same device.
    void* s1 = nullptr;
    REQUIRE(r.SetDevice(1) == 0);
    REQUIRE(r.StreamCreateWithFlags(&s1, 0) == 0);
    REQUIRE(r.StreamWaitEvent(s1, e1, 0) == 0);
    CHECK(r.EventRecord(e0, s1) == 400);
    REQUIRE(r.StreamDestroy(s1) == 0);
    REQUIRE(r.SetDevice(0) == 0);

    for (void* e : {e0, e1, never, notime}) REQUIRE(r.EventDestroy(e) == 0);
    CHECK(r.EventDestroy(e0) == 400);
    CHECK(r.StreamDestroy(e1) == 400);  // an event is not a stream
    REQUIRE(r.StreamDestroy(a) == 0);
    REQUIRE(r.StreamDestroy(b) == 0);
    REQUIRE(r.Free(d) == 0);
  }
}

TEST_CASE("devices: pointers belong to their device's streams, and peers") {
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    char in[32] = "peer", out[32] = {};
    void *d0 = nullptr, *d1 = nullptr, *s0 = nullptr;
    REQUIRE(r.SetDevice(0) == 0);
    REQUIRE(r.Malloc(&d0, 32) == 0);
    REQUIRE(r.StreamCreateWithFlags(&s0, 0x1) == 0);
    REQUIRE(r.SetDevice(1) == 0);
    int cur = -1;
    REQUIRE(r.GetDevice(&cur) == 0);
    CHECK(cur == 1);
    REQUIRE(r.Malloc(&d1, 32) == 0);
    REQUIRE(r.Memcpy(d1, in, 32, kH2D) == 0);
    // A pageable H2D Memcpy may return once staged (CUDA documents it): other
    // streams see the data only after a sync.
    REQUIRE(r.DeviceSynchronize() == 0);
    CHECK(r.MemcpyAsync(d0, d1, 32, kD2D, s0) == 1);  // d1 is device 1's
    CHECK(error_text(r, 1).find("MemcpyPeerAsync") != std::string::npos);
    REQUIRE(r.MemcpyPeerAsync(d0, 0, d1, 1, 32, s0) == 0);
    REQUIRE(r.StreamSynchronize(s0) == 0);
    REQUIRE(r.Memcpy(out, d0, 32, kD2H) == 0);
    CHECK(std::strcmp(out, "peer") == 0);
    int can = -1;
    REQUIRE(r.DeviceCanAccessPeer(&can, 1, 0) == 0);
    CHECK(can == 1);
    REQUIRE(r.DeviceCanAccessPeer(&can, 1, 1) == 0);
    CHECK(can == 0);
    int first = r.DeviceEnablePeerAccess(0, 0);
    CHECK((first == 0 || first == 704));  // 704 when an earlier run enabled it
    CHECK(r.DeviceEnablePeerAccess(0, 0) == 704);
    CHECK(r.SetDevice(2) == 101);
    CHECK(r.GetLastError() == 101);
    // A new thread starts on device 0.
    std::thread([&] { int d = -1; r.GetDevice(&d); cur = d; }).join();
    CHECK(cur == 0);
    int least = 1, greatest = 1;
    REQUIRE(r.DeviceGetStreamPriorityRange(&least, &greatest) == 0);
    CHECK(least == 0);
    CHECK(greatest == (std::string(v.name) == "dcu" ? -1 : -5));
    REQUIRE(r.DeviceSynchronize() == 0);
    REQUIRE(r.Free(d1) == 0);
    REQUIRE(r.SetDevice(0) == 0);
    REQUIRE(r.Free(d0) == 0);
    REQUIRE(r.StreamDestroy(s0) == 0);
  }
}

TEST_CASE("device attributes use each vendor's ids") {
  struct Ids { const char* name; int major, minor, sms, bus; };
  const Ids ids[] = {{"cuda", 75, 76, 16, 33}, {"musa", 75, 76, 16, 33}, {"dcu", 23, 61, 63, 67},
                     {"metax", 21, 22, 16, 24}};
  for (const Vendor& v : kVendors) {
    INFO(v.name);
    Rt& r = rt(v);
    for (const Ids& id : ids) {
      if (std::string(id.name) != v.name) continue;
      int value = -1;
      CHECK(r.DeviceGetAttribute(&value, id.major, 0) == 0);
      CHECK(value > 0);
      CHECK(r.DeviceGetAttribute(&value, id.sms, 1) == 0);
      CHECK(value > 0);
      int b0 = -1, b1 = -1;
      CHECK(r.DeviceGetAttribute(&b0, id.bus, 0) == 0);
      CHECK(r.DeviceGetAttribute(&b1, id.bus, 1) == 0);
      CHECK(b0 != b1);
      CHECK(r.DeviceGetAttribute(&value, 99999, 0) == 1);
      CHECK(r.DeviceGetAttribute(&value, id.major, 5) == 101);
    }
  }
  char name[64] = {};
  auto hip_name = reinterpret_cast<int (*)(char*, int, int)>(rt(kVendors[2]).sym("hipDeviceGetName"));
  REQUIRE(hip_name(name, sizeof name, 0) == 0);
  CHECK(std::string(name) == "Simulated DCU Device");
  auto mc_name = reinterpret_cast<int (*)(char*, int, int)>(rt(kVendors[1]).sym("mcDeviceGetName"));
  REQUIRE(mc_name(name, 10, 1) == 0);
  CHECK(std::string(name) == "Simulated");  // truncated to len, NUL-terminated
}

TEST_CASE("concurrent use from many threads") {
  const Vendor& v = kVendors[0];
  Rt& r = rt(v);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      r.SetDevice(t % 2);
      for (int i = 0; i < 40; ++i) {
        void *s = nullptr, *e = nullptr, *d = nullptr;
        uint32_t in = t * 1000 + i, out = 0;
        if (r.StreamCreateWithFlags(&s, i % 2) || r.EventCreateWithFlags(&e, 0x2) ||
            r.Malloc(&d, sizeof in) || r.MemcpyAsync(d, &in, sizeof in, kH2D, s) ||
            r.EventRecord(e, s) || r.StreamWaitEvent(nullptr, e, 0) ||
            r.MemcpyAsync(&out, d, sizeof out, kD2H, s) || out != in || r.Free(d) ||
            r.EventDestroy(e) || r.StreamDestroy(s))
          ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == 0);
}

