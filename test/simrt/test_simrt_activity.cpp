// The simulated activity tracer (libcupti.so.13, libmupti.so) against the
// runtime it observes: records of the engine's copies and memsets, with
// CUPTI's layouts (cupti_activity.h, CUDA 13), correlation and stream ids.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "test_support.h"

using namespace simrt_test;

namespace {

using Requested = void (*)(uint8_t**, size_t*, size_t*);
using Completed = void (*)(void*, uint32_t, uint8_t*, size_t, size_t);

// The tracer's calls, resolved by prefix as a plugin resolves them.
struct Tracer {
#define SIMRT_TRACER_LIST(X)                                              \
  X(int, GetVersion, uint32_t*)                                           \
  X(int, GetResultString, int, const char**)                              \
  X(int, ActivityRegisterCallbacks, Requested, Completed)                 \
  X(int, ActivityEnable, int)                                             \
  X(int, ActivityDisable, int)                                            \
  X(int, ActivityFlushAll, uint32_t)                                      \
  X(int, ActivityGetNextRecord, uint8_t*, size_t, void**)                 \
  X(int, ActivityGetNumDroppedRecords, void*, uint32_t, size_t*)          \
  X(int, ActivityPushExternalCorrelationId, int, uint64_t)                \
  X(int, ActivityPopExternalCorrelationId, int, uint64_t*)                \
  X(int, GetStreamIdEx, void*, void*, uint8_t, uint32_t*)                 \
  X(int, GetTimestamp, uint64_t*)                                         \
  X(int, ActivityRegisterTimestampCallback, uint64_t (*)())
#define SIMRT_FN(ret, name, ...) ret (*name)(__VA_ARGS__) = nullptr;
  SIMRT_TRACER_LIST(SIMRT_FN)
#undef SIMRT_FN
  explicit Tracer(const std::string& path, const std::string& prefix) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
#define SIMRT_LOAD(ret, name, ...) name = reinterpret_cast<decltype(name)>(symbol(lib, prefix + #name));
    SIMRT_TRACER_LIST(SIMRT_LOAD)
#undef SIMRT_LOAD
  }
};

// CUpti_ActivityKind, CUptiResult and CUpti_ExternalCorrelationKind values.
constexpr int kMemcpy = 1, kMemset = 2, kRuntime = 5, kExternal = 39;
constexpr int kMaxLimitReached = 12, kInvalidOperation = 7, kQueueEmpty = 18, kInvalidStream = 20;
constexpr int kCustom2 = 5;

template <class T>
T at(const std::vector<uint8_t>& r, size_t off) {
  T v;
  std::memcpy(&v, r.data() + off, sizeof v);
  return v;
}

// What the completed callback saw: each record copied out, in buffer order.
struct Sink {
  Tracer* tracer = nullptr;
  std::vector<std::vector<uint8_t>> records;
  int buffers = 0;
};
Sink g_sink;

void requested(uint8_t** buf, size_t* size, size_t* max) {
  *size = 1024;  // ten copies' worth: the tests also cross buffers
  *buf = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max = 0;
}

void completed(void*, uint32_t, uint8_t* buf, size_t, size_t valid) {
  ++g_sink.buffers;
  void* rec = nullptr;
  while (g_sink.tracer->ActivityGetNextRecord(buf, valid, &rec) == 0) {
    auto* p = static_cast<uint8_t*>(rec);
    uint32_t kind = 0;
    std::memcpy(&kind, p, 4);
    size_t n = kind == kMemcpy ? 96 : kind == kMemset ? 88 : 24;
    g_sink.records.emplace_back(p, p + n);
  }
  std::free(buf);
}

std::atomic<uint64_t> g_ticks{1000000};
uint64_t fake_clock() { return g_ticks += 10; }

std::vector<std::vector<uint8_t>> of_kind(uint32_t kind) {
  std::vector<std::vector<uint8_t>> out;
  for (auto& r : g_sink.records)
    if (at<uint32_t>(r, 0) == kind) out.push_back(r);
  return out;
}

struct Lib { const Vendor& runtime; const char* tracer; const char* prefix; const char* upper; };

}  // namespace

TEST_CASE("activity: memset and copy records, external correlation, stream ids") {
  const Lib libs[] = {{kVendors[0], "cuda/lib64/libcupti.so.13", "cupti", "CUPTI"},
                      {kVendors[3], "musa/lib/libmupti.so", "mupti", "MUPTI"}};
  for (const Lib& l : libs) {
    INFO(l.tracer);
    Rt& r = rt(l.runtime);
    Tracer t(root() + "/" + l.tracer, l.prefix);
    g_sink = Sink{};
    g_sink.tracer = &t;
    uint32_t version = 0;
    REQUIRE(t.GetVersion(&version) == 0);
    CHECK(version == 130001);
    const char* text = nullptr;
    REQUIRE(t.GetResultString(kMaxLimitReached, &text) == 0);
    CHECK(std::string(text) == std::string(l.upper) + "_ERROR_MAX_LIMIT_REACHED");
    CHECK(t.GetResultString(4242, &text) == 1);

    REQUIRE(r.SetDevice(0) == 0);
    void *s = nullptr, *a = nullptr, *b = nullptr;
    REQUIRE(r.StreamCreateWithFlags(&s, 0x1) == 0);
    REQUIRE(r.Malloc(&a, 256) == 0);
    REQUIRE(r.Malloc(&b, 256) == 0);

    // Before any callback: records have nowhere to go, and are counted.
    size_t dropped = 99;
    REQUIRE(t.ActivityEnable(kMemset) == 0);
    REQUIRE(r.MemsetAsync(a, 1, 256, s) == 0);
    REQUIRE(r.StreamSynchronize(s) == 0);
    CHECK(t.ActivityFlushAll(0) == kInvalidOperation);
    REQUIRE(t.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == 0);
    CHECK(dropped == 1);
    REQUIRE(t.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == 0);
    CHECK(dropped == 0);  // reset by the read

    REQUIRE(t.ActivityRegisterTimestampCallback(&fake_clock) == 0);
    uint64_t ts0 = 0;
    REQUIRE(t.GetTimestamp(&ts0) == 0);
    CHECK(ts0 > 1000000);
    CHECK(ts0 < 2000000);
    REQUIRE(t.ActivityRegisterCallbacks(&requested, &completed) == 0);
    // External correlation comes with API records (the runtime's here), as in CUPTI.
    for (int k : {kMemcpy, kMemset, kRuntime, kExternal}) REQUIRE(t.ActivityEnable(k) == 0);
    uint64_t last = 0;
    REQUIRE(t.ActivityPushExternalCorrelationId(kCustom2, 42) == 0);
    REQUIRE(t.ActivityPushExternalCorrelationId(kCustom2, 99) == 0);
    REQUIRE(t.ActivityPopExternalCorrelationId(kCustom2, &last) == 0);
    CHECK(last == 99);

    // A pending op is not in a flush: its record is written when it completes.
    Gate gate;
    REQUIRE(r.LaunchHostFunc(s, &Gate::hold, &gate) == 0);
    REQUIRE(r.MemsetAsync(a, 7, 256, s) == 0);
    REQUIRE(r.MemcpyAsync(b, a, 256, kD2D, s) == 0);
    REQUIRE(t.ActivityFlushAll(1) == 0);
    CHECK(of_kind(kMemset).empty());
    CHECK(of_kind(kExternal).size() == 2);  // written at enqueue
    gate.open = true;
    REQUIRE(r.StreamSynchronize(s) == 0);
    REQUIRE(t.ActivityFlushAll(0) == 0);
    REQUIRE(t.ActivityPopExternalCorrelationId(kCustom2, &last) == 0);
    CHECK(last == 42);
    CHECK(t.ActivityPopExternalCorrelationId(kCustom2, &last) == kQueueEmpty);

    uint32_t sid = 0, legacy = 0, other = 0;
    REQUIRE(t.GetStreamIdEx(nullptr, s, 0, &sid) == 0);
    REQUIRE(t.GetStreamIdEx(nullptr, nullptr, 0, &legacy) == 0);
    REQUIRE(r.SetDevice(1) == 0);
    REQUIRE(t.GetStreamIdEx(nullptr, nullptr, 0, &other) == 0);
    REQUIRE(r.SetDevice(0) == 0);
    CHECK(sid != 0);
    CHECK(sid != legacy);
    CHECK(legacy != other);  // a legacy stream per device
    CHECK(t.GetStreamIdEx(nullptr, reinterpret_cast<void*>(0xdead0), 0, &other) == kInvalidStream);

    auto sets = of_kind(kMemset), copies = of_kind(kMemcpy), externals = of_kind(kExternal);
    REQUIRE(sets.size() == 1);
    REQUIRE(copies.size() == 1);
    REQUIRE(externals.size() == 2);
    const auto &set = sets[0], &copy = copies[0];
    CHECK(at<uint32_t>(set, 4) == 7);     // value
    CHECK(at<uint64_t>(set, 8) == 256);   // bytes
    CHECK(at<uint32_t>(set, 32) == 0);    // deviceId
    CHECK(at<uint32_t>(set, 36) == 1);    // contextId: device + 1
    CHECK(at<uint32_t>(set, 40) == sid);  // streamId
    CHECK(at<uint8_t>(copy, 4) == 8);     // CUPTI_ACTIVITY_MEMCPY_KIND_DTOD
    CHECK(at<uint8_t>(copy, 5) == 3);     // src, dst: CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
    CHECK(at<uint8_t>(copy, 6) == 3);
    CHECK(at<uint8_t>(copy, 7) == 1);     // CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC
    CHECK(at<uint64_t>(copy, 8) == 256);
    CHECK(at<uint32_t>(copy, 40) == sid);
    for (const auto* rec : {&set, &copy}) {
      uint64_t start = at<uint64_t>(*rec, 16), end = at<uint64_t>(*rec, 24);
      CHECK(start > ts0);  // from the registered clock
      CHECK(start <= end);
      CHECK(end < 2000000);
    }
    CHECK(at<uint64_t>(set, 24) <= at<uint64_t>(copy, 16));  // stream order
    uint32_t set_corr = at<uint32_t>(set, 44), copy_corr = at<uint32_t>(copy, 44);
    CHECK(set_corr != 0);
    CHECK(copy_corr != set_corr);
    CHECK(at<uint32_t>(externals[0], 16) == set_corr);
    CHECK(at<uint32_t>(externals[1], 16) == copy_corr);
    for (const auto& x : externals) {
      CHECK(at<uint32_t>(x, 4) == kCustom2);
      CHECK(at<uint64_t>(x, 8) == 42);
    }
    // Each external record comes before the record it correlates.
    CHECK(at<uint32_t>(g_sink.records.front(), 0) == kExternal);

    // No stack, no external records; a disabled kind, no records.
    g_sink.records.clear();
    REQUIRE(t.ActivityDisable(kMemset) == 0);
    REQUIRE(r.MemsetAsync(a, 0, 256, s) == 0);
    REQUIRE(r.MemcpyAsync(b, a, 256, kD2D, s) == 0);
    REQUIRE(r.StreamSynchronize(s) == 0);
    REQUIRE(t.ActivityFlushAll(1) == 0);
    REQUIRE(g_sink.records.size() == 1);
    CHECK(at<uint32_t>(g_sink.records[0], 0) == kMemcpy);
    // More records than one buffer holds: the full one is handed back at once.
    int before = g_sink.buffers;
    for (int i = 0; i < 25; ++i) REQUIRE(r.MemcpyAsync(b, a, 256, kD2D, s) == 0);
    REQUIRE(r.StreamSynchronize(s) == 0);
    REQUIRE(t.ActivityFlushAll(1) == 0);
    CHECK(g_sink.records.size() == 26);
    CHECK(g_sink.buffers - before == 3);  // ten 96-byte records per 1024 bytes

    for (int k : {kMemcpy, kMemset, kExternal}) REQUIRE(t.ActivityDisable(k) == 0);
    REQUIRE(r.StreamDestroy(s) == 0);
    REQUIRE(r.Free(a) == 0);
    REQUIRE(r.Free(b) == 0);
  }
}

TEST_CASE("activity: rules of the API (external-id stacks, buffer alignment, kinds)") {
  Tracer t(root() + "/cuda/lib64/libcupti.so.13", "cupti");
  uint64_t last = 0;
  for (int kind = 1; kind <= 5; ++kind) CHECK(t.ActivityPopExternalCorrelationId(kind, &last) == kQueueEmpty);
  CHECK(t.ActivityPushExternalCorrelationId(0, 1) == 1);
  CHECK(t.ActivityPushExternalCorrelationId(6, 1) == 1);
  CHECK(t.ActivityPopExternalCorrelationId(6, &last) == 1);
  REQUIRE(t.ActivityPushExternalCorrelationId(3, 5) == 0);
  CHECK(t.ActivityPopExternalCorrelationId(3, nullptr) == 0);  // lastId may be NULL
  CHECK(t.ActivityEnable(0) == 21);   // CUPTI_ERROR_INVALID_KIND
  CHECK(t.ActivityEnable(55) == 21);
  CHECK(t.ActivityEnable(3) == 0);    // KERNEL: accepted, never recorded (no kernels)
  CHECK(t.ActivityDisable(3) == 0);
  CHECK(t.GetTimestamp(nullptr) == 1);
  CHECK(t.ActivityRegisterCallbacks(nullptr, &completed) == 1);

  // GetNextRecord: an 8-byte aligned buffer, or the rule's line on stderr.
  alignas(8) uint8_t buf[64] = {};
  void* rec = nullptr;
  CHECK(t.ActivityGetNextRecord(buf, 0, &rec) == kMaxLimitReached);
  CHECK(t.ActivityGetNextRecord(buf, sizeof buf, &rec) == 21);  // kind 0: not a record
  std::string log = "/tmp/simrt_activity_" + std::to_string(getpid()) + ".txt";
  int saved = dup(2), fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, 2);
  int rc = t.ActivityGetNextRecord(buf + 4, sizeof buf - 4, &rec);
  dup2(saved, 2);
  close(fd);
  close(saved);
  std::ifstream f(log);
  std::string err((std::istreambuf_iterator<char>(f)), {});
  unlink(log.c_str());
  CHECK(rc == 1);
  CHECK(err.find("[simrt] cuptiActivityGetNextRecord: buffer") != std::string::npos);
  CHECK(err.find("not 8-byte aligned") != std::string::npos);
}

TEST_CASE("activity: each SDK's tracer observes its own runtime instance") {
  Rt ppu(root() + "/ppu/CUDA_SDK/lib64/libcudart.so.13", "cuda");
  Tracer ppu_tracer(root() + "/ppu/CUDA_SDK/lib64/libcupti.so.13", "cupti");
  Tracer cuda_tracer(root() + "/cuda/lib64/libcupti.so.13", "cupti");
  void* s = nullptr;
  REQUIRE(ppu.StreamCreateWithFlags(&s, 0) == 0);
  uint32_t id = 0;
  CHECK(ppu_tracer.GetStreamIdEx(nullptr, s, 0, &id) == 0);
  CHECK(id != 0);
  CHECK(cuda_tracer.GetStreamIdEx(nullptr, s, 0, &id) == kInvalidStream);
  REQUIRE(ppu.StreamDestroy(s) == 0);
  CHECK(ppu_tracer.GetStreamIdEx(nullptr, s, 0, &id) == kInvalidStream);  // destroyed
}
