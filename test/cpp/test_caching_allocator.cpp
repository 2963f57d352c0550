// The caching device allocator against the real host plugin in strict mode
// (device memory is PROT_NONE to the core, so any dereference crashes) with a
// 64 MiB device, so that running out of memory is cheap to provoke.
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>
#include <unistd.h>

#include "catch.hpp"
#include "error.h"
#include "memory/caching_allocator.h"
#include "plugin/loader.h"
#include "test_support.h"

using flagos::memory::AllocatorConfig;
using flagos::memory::CachingAllocator;
using flagos::memory::DeviceStats;
using flagos::memory::OutOfMemory;
using flagos::memory::Pool;
using flagos::plugin::Plugin;
namespace fs = std::filesystem;

namespace flagos::test {

// The host plugin with strict=1 and memory_mb=64, loaded from a private copy
// of the library. The plugin fixes its options at its first load in a
// process and the loader hands out one Plugin per file, so loading the shared
// file would force these options on the other tests of a whole-binary run
// (or theirs on these). Also used by test_host_cache.cpp.
std::shared_ptr<const plugin::Plugin> memory_test_plugin() {
  static const std::shared_ptr<const plugin::Plugin> loaded = [] {
    struct TempDir {  // the copy may go once loaded: the mapping stays
      fs::path path = fs::temp_directory_path() /
                      ("flagos_memory_test_" + std::to_string(::getpid()));
      ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
      }
    } dir;
    const fs::path copy = dir.path / "libflagos_host.so";
    fs::create_directories(dir.path);
    fs::copy_file(host_plugin(), copy, fs::copy_options::overwrite_existing);
    return plugin::load({"host", copy.string(), plugin::Origin::BuildDir},
                        {{"strict", "1"}, {"memory_mb", "64"}});
  }();
  return loaded;
}

}  // namespace flagos::test

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr int kAgg = static_cast<int>(Pool::Aggregate);
constexpr int kSmall = static_cast<int>(Pool::Small);
constexpr int kLarge = static_cast<int>(Pool::Large);

std::shared_ptr<const Plugin> host() { return flagos::test::memory_test_plugin(); }
const flagos_plugin_api_t& api() { return host()->api(); }

flagos_stream_t default_stream() {
  flagos_stream_t stream = nullptr;
  host()->check(api().get_default_stream(0, &stream), "get_default_stream");
  return stream;
}

// A second stream of device 0, destroyed with the scope.
struct SideStream {
  flagos_stream_t handle = nullptr;
  SideStream() { host()->check(api().stream_create(0, 0, &handle), "stream_create"); }
  ~SideStream() { api().stream_destroy(handle); }
  // Keeps the stream busy for `ms` milliseconds (testing extension).
  void delay(int ms) const {
    auto* ext = reinterpret_cast<const flagos_testing_ext_t*>(
        host()->find_extension(FLAGOS_EXTENSION_TESTING));
    REQUIRE(ext != nullptr);
    host()->check(ext->stream_enqueue_delay(handle, uint64_t(ms) * 1000), "delay");
  }
  void synchronize() const { host()->check(api().stream_synchronize(handle), "sync"); }
  bool busy() const { return api().stream_query(handle) == FLAGOS_NOT_READY; }
};

// An allocator on device 0 that gives its memory back at the end of the test,
// so that later tests in the same process start from an empty device.
struct TestAllocator : CachingAllocator {
  explicit TestAllocator(AllocatorConfig config = {})
      : CachingAllocator(host(), 0, config) {}
  ~TestAllocator() { empty_cache(); }
};

void* at(void* base, size_t offset) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(base) + offset);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("the allocator test plugin is strict, so the core cannot touch device memory",
          "[allocator]") {
  flagos_device_properties_t props{};
  props.struct_size = sizeof props;
  host()->check(api().get_device_properties(0, &props), "get_device_properties");
  CHECK((props.capabilities & FLAGOS_CAP_HOST_ADDRESSABLE) == 0);
  CHECK(props.total_memory == 64 * kMiB);
}

TEST_CASE("a freed block is handed out again on its stream", "[allocator]") {
  TestAllocator alloc;
  void* first = alloc.allocate(1000, default_stream());
  REQUIRE(first != nullptr);
  alloc.free(first);
  CHECK(alloc.allocate(1000, default_stream()) == first);
  CHECK(alloc.stats().num_device_alloc == 1);
  alloc.free(first);
}

TEST_CASE("two small allocations are split from one 2 MiB segment", "[allocator]") {
  TestAllocator alloc;
  void* a = alloc.allocate(4096, default_stream());
  void* b = alloc.allocate(4000, default_stream());  // rounded to 4096
  CHECK(b == at(a, 4096));
  DeviceStats s = alloc.stats();
  CHECK(s.segment[kAgg].current == 1);
  CHECK(s.segment[kSmall].current == 1);
  CHECK(s.allocation[kAgg].current == 2);
  CHECK(s.reserved_bytes[kAgg].current == int64_t(2 * kMiB));
  CHECK(s.allocated_bytes[kAgg].current == 8192);
  CHECK(s.requested_bytes[kAgg].current == 8096);
  CHECK(s.inactive_split[kAgg].current == 1);
  CHECK(s.inactive_split_bytes[kAgg].current == int64_t(2 * kMiB - 8192));
  auto segments = alloc.snapshot();
  REQUIRE(segments.size() == 1);
  CHECK(segments[0].address == reinterpret_cast<uintptr_t>(a));
  CHECK(segments[0].total_size == 2 * kMiB);
  CHECK(segments[0].allocated_size == 8192);
  CHECK_FALSE(segments[0].is_large);
  using Blocks = std::vector<std::pair<size_t, bool>>;
  CHECK(segments[0].blocks == Blocks{{4096, true}, {4096, true}, {2 * kMiB - 8192, false}});
  alloc.free(a);
  alloc.free(b);
}

TEST_CASE("freed neighbours merge so that a larger request fits their segment", "[allocator]") {
  TestAllocator alloc;
  const flagos_stream_t s = default_stream();
  // 6 MiB requests share a 20 MiB large segment.
  void* a = alloc.allocate(6 * kMiB, s);
  void* b = alloc.allocate(6 * kMiB, s);
  void* c = alloc.allocate(6 * kMiB, s);
  CHECK(b == at(a, 6 * kMiB));
  CHECK(c == at(a, 12 * kMiB));
  CHECK(alloc.stats().segment[kLarge].current == 1);
  alloc.free(b);  // the middle first: no neighbour is free yet
  CHECK(alloc.stats().inactive_split[kAgg].current == 2);
  alloc.free(a);
  alloc.free(c);
  DeviceStats st = alloc.stats();
  CHECK(st.inactive_split[kAgg].current == 0);  // one whole free segment again
  CHECK(st.inactive_split_bytes[kAgg].current == 0);
  auto segments = alloc.snapshot();
  REQUIRE(segments.size() == 1);
  CHECK(segments[0].blocks == std::vector<std::pair<size_t, bool>>{{20 * kMiB, false}});
  void* big = alloc.allocate(18 * kMiB, s);
  CHECK(big == a);
  CHECK(alloc.stats().num_device_alloc == 1);
  alloc.free(big);
}

TEST_CASE("stats are exact through a sequence of allocations and frees", "[allocator]") {
  TestAllocator alloc;
  const flagos_stream_t s = default_stream();
  // Big first: a later 12 MiB request would fit the medium one's 20 MiB segment.
  void* big = alloc.allocate(12 * kMiB + 1, s); // block 12 MiB + 512 in a 14 MiB segment
  void* medium = alloc.allocate(3 * kMiB, s);   // block 3 MiB in a 20 MiB segment
  void* small = alloc.allocate(1000, s);        // block 1 KiB in a 2 MiB segment
  const int64_t allocated = 1024 + 3 * kMiB + 12 * kMiB + 512;
  DeviceStats st = alloc.stats();
  CHECK(st.allocated_bytes[kAgg].current == allocated);
  CHECK(st.allocated_bytes[kSmall].current == 1024);
  CHECK(st.allocated_bytes[kLarge].current == allocated - 1024);
  CHECK(st.reserved_bytes[kAgg].current == int64_t((2 + 20 + 14) * kMiB));
  CHECK(st.requested_bytes[kAgg].current == int64_t(1000 + 3 * kMiB + 12 * kMiB + 1));
  CHECK(st.active[kAgg].current == 3);
  CHECK(st.active_bytes[kAgg].current == allocated);
  CHECK(st.num_device_alloc == 3);
  CHECK(alloc.allocated_bytes() == size_t(allocated));
  CHECK(alloc.reserved_bytes() == 36 * kMiB);

  alloc.free(big);
  st = alloc.stats();
  CHECK(st.allocated_bytes[kAgg].current == allocated - int64_t(12 * kMiB + 512));
  CHECK(st.allocated_bytes[kAgg].peak == allocated);
  CHECK(st.reserved_bytes[kAgg].current == int64_t(36 * kMiB));  // cached, not released
  CHECK(st.allocation[kAgg].peak == 3);
  alloc.reset_peak_stats();
  st = alloc.stats();
  CHECK(st.allocated_bytes[kAgg].peak == st.allocated_bytes[kAgg].current);
  CHECK(st.allocation[kAgg].peak == 2);

  alloc.free(small);
  alloc.free(medium);
  alloc.empty_cache();
  st = alloc.stats();
  for (const auto* group : {&st.allocation, &st.segment, &st.active, &st.inactive_split,
                            &st.allocated_bytes, &st.reserved_bytes, &st.active_bytes,
                            &st.inactive_split_bytes, &st.requested_bytes})
    for (const auto& stat : *group) CHECK(stat.current == 0);
  CHECK(st.allocated_bytes[kAgg].allocated == allocated);
  CHECK(st.allocated_bytes[kAgg].freed == allocated);
  CHECK(st.num_device_free == 3);
  alloc.reset_accumulated_stats();
  st = alloc.stats();
  CHECK(st.allocated_bytes[kAgg].allocated == 0);
  CHECK(st.num_device_alloc == 0);
  CHECK(st.num_device_free == 0);
  CHECK(st.max_split_size == -1);
}

TEST_CASE("a block used by another stream is reused only after that stream's work", "[allocator]") {
  TestAllocator alloc;
  SideStream side;
  void* p = alloc.allocate(4096, default_stream());
  alloc.record_stream(p, side.handle);
  side.delay(500);
  alloc.free(p);
  CHECK(alloc.stats().active[kAgg].current == 1);  // pending, still active
  void* other = alloc.allocate(4096, default_stream());
  CHECK(side.busy());  // the check above ran while the event was pending
  CHECK(other != p);
  side.synchronize();
  void* again = alloc.allocate(4096, default_stream());
  CHECK(again == p);
  alloc.free(other);
  alloc.free(again);
  CHECK(alloc.stats().active[kAgg].current == 0);
}

TEST_CASE("reuse on the allocation stream is immediate even while it is busy", "[allocator]") {
  TestAllocator alloc;
  SideStream busy;
  void* p = alloc.allocate(8192, busy.handle);
  busy.delay(300);
  alloc.free(p);
  CHECK(alloc.allocate(8192, busy.handle) == p);
  alloc.free(p);
  void* q = alloc.allocate(8192, default_stream());  // a cached block never changes stream
  CHECK(q != p);
  CHECK(busy.busy());
  busy.synchronize();
  alloc.free(q);
}

TEST_CASE("empty_cache returns wholly free segments and keeps split ones in use", "[allocator]") {
  TestAllocator alloc;
  const flagos_stream_t s = default_stream();
  void* kept = alloc.allocate(12 * kMiB, s);  // a segment of its own
  void* small = alloc.allocate(512, s);
  void* medium = alloc.allocate(3 * kMiB, s);
  alloc.free(small);
  alloc.free(medium);
  CHECK(alloc.reserved_bytes() == (12 + 2 + 20) * kMiB);
  alloc.empty_cache();
  CHECK(alloc.reserved_bytes() == alloc.allocated_bytes());
  CHECK(alloc.reserved_bytes() == 12 * kMiB);
  CHECK(alloc.stats().num_device_free == 2);
  CHECK(alloc.snapshot().size() == 1);
  alloc.free(kept);
}

TEST_CASE("out of memory throws OutOfMemory with the figures and the allocator recovers",
          "[allocator]") {
  TestAllocator alloc;
  const flagos_stream_t s = default_stream();
  void* held = alloc.allocate(30 * kMiB, s);
  try {
    alloc.allocate(40 * kMiB, s);
    FAIL("allocated 70 MiB on a 64 MiB device");
  } catch (const OutOfMemory& e) {
    CHECK(e.requested == 40 * kMiB);
    CHECK(e.device == 0);
    CHECK(e.memory_info_known);
    CHECK(e.free_bytes == 34 * kMiB);
    CHECK(e.total_bytes == 64 * kMiB);
    CHECK(e.reserved == 30 * kMiB);
    CHECK(e.allocated == 30 * kMiB);
    const std::string what = e.what();
    CHECK(contains(what, "[flagos] out of memory on host device 0: tried to allocate 40.00 MiB; "
                         "34.00 MiB free of 64.00 MiB total, 30.00 MiB reserved by torch_fl "
                         "(30.00 MiB allocated); "));
    CHECK(contains(what, "reduce the batch size"));
  }
  DeviceStats st = alloc.stats();
  CHECK(st.num_ooms == 1);
  CHECK(st.num_alloc_retries == 1);
  CHECK(alloc.reserved_bytes() == 30 * kMiB);
  void* more = alloc.allocate(20 * kMiB, s);
  CHECK(more != nullptr);
  alloc.free(more);
  alloc.free(held);
  CHECK_THROWS_AS(alloc.allocate(100 * kMiB, s), flagos::Error);  // OutOfMemory is an Error
  CHECK_THROWS_AS(alloc.allocate(SIZE_MAX, s), OutOfMemory);      // rounding must not wrap
  CHECK(alloc.stats().num_ooms == 3);
}

TEST_CASE("a memory fraction caps the reserved bytes without asking the plugin", "[allocator]") {
  TestAllocator alloc;
  const flagos_stream_t s = default_stream();
  CHECK(alloc.memory_fraction() == 1.0);
  alloc.set_memory_fraction(0.5);  // 32 MiB of the 64 MiB device
  void* a = alloc.allocate(20 * kMiB, s);
  const uint64_t allocs = alloc.stats().num_device_alloc;
  try {
    alloc.allocate(14 * kMiB, s);
    FAIL("reserved 34 MiB under a 32 MiB cap");
  } catch (const OutOfMemory& e) {
    CHECK(e.limit == 32 * kMiB);
    CHECK(e.free_bytes == 44 * kMiB);  // the device has room: the cap refused
    CHECK(contains(e.what(), "this process may reserve 32.00 MiB (torch.flagos.set_per_process_memory_fraction)"));
  }
  CHECK(alloc.stats().num_device_alloc == allocs);
  void* b = alloc.allocate(12 * kMiB, s);  // 32 MiB: at the cap, within it
  alloc.set_memory_fraction(1.0);
  void* c = alloc.allocate(14 * kMiB, s);
  CHECK(alloc.reserved_bytes() == 46 * kMiB);
  CHECK_THROWS_WITH(alloc.set_memory_fraction(1.5),
                    "[flagos] set_per_process_memory_fraction: the fraction must be in [0, 1], got 1.500000");
  for (void* p : {a, b, c}) alloc.free(p);
}

TEST_CASE("the out-of-memory message without mem_get_info, and byte formatting", "[allocator]") {
  using flagos::memory::format_bytes;
  CHECK(format_bytes(512) == "512 bytes");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(20 * kMiB) == "20.00 MiB");
  CHECK(format_bytes(uint64_t{3} << 30) == "3.00 GiB");
  OutOfMemory e("fake", 1, 2 * kMiB, flagos::memory::MemoryInfo{}, 0, 0);
  CHECK(std::string(e.what()) ==
        "[flagos] out of memory on fake device 1: tried to allocate 2.00 MiB; free and total "
        "memory unknown (the plugin has no mem_get_info), 0 bytes reserved by torch_fl (0 bytes "
        "allocated); free tensors that are no longer needed or reduce the batch size");
  CHECK_FALSE(e.memory_info_known);
  CHECK(e.free_bytes == 0);
}

TEST_CASE("out of memory with fragmented segments suggests empty_cache", "[allocator]") {
  TestAllocator alloc;
  void* held = alloc.allocate(6 * kMiB, default_stream());  // 14 MiB of its segment stay cached
  try {
    alloc.allocate(50 * kMiB, default_stream());
    FAIL("allocated 70 MiB on a 64 MiB device");
  } catch (const OutOfMemory& e) {
    CHECK(contains(e.what(), "14.00 MiB is reserved but unallocated"));
    CHECK(contains(e.what(), "torch.flagos.empty_cache()"));
    CHECK(contains(e.what(), "FLAGOS_USE_CACHING_ALLOCATOR=0"));
  }
  alloc.free(held);
}

TEST_CASE("an allocation that fails returns the cache to the plugin and retries", "[allocator]") {
  TestAllocator alloc;
  SideStream side;
  alloc.free(alloc.allocate(40 * kMiB, default_stream()));  // 40 MiB cached on the default stream
  void* p = alloc.allocate(30 * kMiB, side.handle);        // cannot use it: another stream
  DeviceStats st = alloc.stats();
  CHECK(st.num_alloc_retries == 1);
  CHECK(st.num_ooms == 0);
  CHECK(st.num_device_free == 1);
  CHECK(alloc.reserved_bytes() == 30 * kMiB);
  alloc.free(p);
}

TEST_CASE("without caching every allocation and free is a plugin call", "[allocator]") {
  TestAllocator alloc(AllocatorConfig{false});
  const flagos_stream_t s = default_stream();
  void* a = alloc.allocate(1000, s);
  void* b = alloc.allocate(3 * kMiB, s);
  DeviceStats st = alloc.stats();
  CHECK(st.num_device_alloc == 2);
  CHECK(alloc.reserved_bytes() == alloc.allocated_bytes());
  CHECK(alloc.allocated_bytes() == 1024 + 3 * kMiB);
  alloc.free(a);
  CHECK(alloc.stats().num_device_free == 1);
  void* c = alloc.allocate(1000, s);
  CHECK(alloc.stats().num_device_alloc == 3);
  CHECK(alloc.reserved_bytes() == alloc.allocated_bytes());

  // free() waits for a stream that uses the block before mem_free.
  SideStream side;
  alloc.record_stream(b, side.handle);
  side.delay(300);
  const auto start = std::chrono::steady_clock::now();
  alloc.free(b);
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(200));
  alloc.free(c);
  st = alloc.stats();
  CHECK(st.num_device_free == 3);
  CHECK(st.reserved_bytes[kAgg].current == 0);
  CHECK(st.active[kAgg].current == 0);
}

TEST_CASE("pointer checks: owns, base_of, unknown and double frees", "[allocator]") {
  TestAllocator alloc;
  CHECK(alloc.allocate(0, default_stream()) == nullptr);
  alloc.free(nullptr);
  void* p = alloc.allocate(4096, default_stream());
  CHECK(alloc.owns(p));
  CHECK(alloc.owns(at(p, 4095)));
  CHECK(alloc.base_of(at(p, 100)) == p);
  CHECK_FALSE(alloc.owns(at(p, 4096)));  // the cached remainder is not live
  int host_value = 0;
  CHECK_FALSE(alloc.owns(&host_value));
  CHECK_THROWS_AS(alloc.free(&host_value), flagos::Error);
  CHECK_THROWS_AS(alloc.record_stream(&host_value, default_stream()), flagos::Error);
  alloc.free(p);
  CHECK_FALSE(alloc.owns(p));
  try {
    alloc.free(p);
    FAIL("a double free was accepted");
  } catch (const flagos::Error& e) {
    CHECK(contains(e.what(), "not a live block of the host device 0 allocator"));
  }
}

TEST_CASE("four threads allocating and freeing leave exact stats", "[allocator]") {
  TestAllocator alloc;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&alloc, t] {
      std::mt19937 rng(t);
      std::uniform_int_distribution<size_t> size(1, 3 * kMiB / 2);
      std::vector<void*> held;
      for (int i = 0; i < 2000; ++i) {
        held.push_back(alloc.allocate(size(rng), default_stream()));
        if (held.size() > 2 || rng() % 2) {
          alloc.free(held.front());
          held.erase(held.begin());
        }
      }
      for (void* p : held) alloc.free(p);
    });
  }
  for (auto& thread : threads) thread.join();
  DeviceStats st = alloc.stats();
  CHECK(st.allocation[kAgg].current == 0);
  CHECK(st.allocated_bytes[kAgg].current == 0);
  CHECK(st.active_bytes[kAgg].current == 0);
  CHECK(st.requested_bytes[kAgg].current == 0);
  CHECK(st.num_ooms == 0);
  alloc.empty_cache();
  CHECK(alloc.reserved_bytes() == 0);
  CHECK(alloc.snapshot().empty());
}
