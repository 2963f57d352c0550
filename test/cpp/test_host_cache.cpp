// The pinned host cache against the real host plugin: size classes, reuse,
// reuse deferred behind a busy stream, interior-pointer lookups, empty_cache.
#include <cstring>

#include "catch.hpp"
#include "error.h"
#include "memory/host_cache.h"
#include "plugin/loader.h"
#include "test_support.h"

using flagos::memory::HostCache;
using flagos::plugin::Origin;

namespace flagos::test {
// The host plugin loaded from a private copy (test_caching_allocator.cpp).
std::shared_ptr<const plugin::Plugin> memory_test_plugin();
}  // namespace flagos::test

namespace {

std::shared_ptr<const flagos::plugin::Plugin> host() { return flagos::test::memory_test_plugin(); }

// A stream of device 0 kept busy by the testing extension for `ms`.
flagos_stream_t busy_stream(int ms) {
  const auto& api = host()->api();
  flagos_stream_t stream = nullptr;
  host()->check(api.stream_create(0, 0, &stream), "stream_create");
  auto* testing = reinterpret_cast<const flagos_testing_ext_t*>(
      host()->find_extension(FLAGOS_EXTENSION_TESTING));
  REQUIRE(testing != nullptr);
  host()->check(testing->stream_enqueue_delay(stream, uint64_t(ms) * 1000), "delay");
  return stream;
}

void finish(flagos_stream_t stream) {
  host()->check(host()->api().stream_synchronize(stream), "stream_synchronize");
  host()->api().stream_destroy(stream);
}

char* offset(void* p, size_t n) { return static_cast<char*>(p) + n; }

// A cache that returns what it holds at the end of the test.
struct TestCache : HostCache {
  TestCache() : HostCache(host()) {}
  ~TestCache() { empty_cache(); }
};

}  // namespace

TEST_CASE("pinned blocks come in power-of-two classes and are usable host memory",
          "[host_cache]") {
  TestCache cache;
  REQUIRE(cache.supported());
  CHECK(cache.allocate(0) == nullptr);
  void* p = cache.allocate(1000);
  REQUIRE(p != nullptr);
  std::memset(p, 0x5a, 1000);  // pinned memory is ordinary host memory
  CHECK(static_cast<unsigned char*>(p)[999] == 0x5a);
  void* tiny = cache.allocate(1);
  HostCache::Stats s = cache.stats();
  CHECK(s.allocated_bytes.current == 1024 + 512);
  CHECK(s.reserved_bytes.current == 1024 + 512);
  CHECK(s.allocations.current == 2);
  CHECK(s.segments.current == 2);
  CHECK(s.num_host_alloc == 2);
  cache.free(p);
  cache.free(tiny);
}

TEST_CASE("a freed pinned block is reused for the same size class", "[host_cache]") {
  TestCache cache;
  void* p = cache.allocate(1000);
  cache.free(p);
  CHECK(cache.stats().allocated_bytes.current == 0);
  CHECK(cache.stats().reserved_bytes.current == 1024);
  void* same_class = cache.allocate(700);
  CHECK(same_class == p);
  void* bigger = cache.allocate(2000);
  CHECK(bigger != p);
  CHECK(cache.stats().num_host_alloc == 2);
  cache.free(same_class);
  cache.free(bigger);
}

TEST_CASE("a pinned block used by a pending copy is reused only after its stream",
          "[host_cache]") {
  TestCache cache;
  void* p = cache.allocate(4096);
  flagos_stream_t stream = busy_stream(500);
  cache.record_event(offset(p, 100), stream, 0);  // any address inside the block
  cache.free(p);
  void* other = cache.allocate(4096);
  CHECK(host()->api().stream_query(stream) == FLAGOS_NOT_READY);
  CHECK(other != p);
  cache.empty_cache();  // the pending block must survive it
  CHECK(cache.is_pinned(p));
  finish(stream);
  CHECK(cache.allocate(4096) == p);
  cache.free(p);
  cache.free(other);
}

TEST_CASE("is_pinned finds interior pointers of live and cached blocks", "[host_cache]") {
  TestCache cache;
  void* p = cache.allocate(4096);
  CHECK(cache.is_pinned(p));
  CHECK(cache.is_pinned(offset(p, 4095)));
  int stack_value = 0;
  CHECK_FALSE(cache.is_pinned(&stack_value));
  CHECK_FALSE(cache.is_pinned(nullptr));
  cache.free(p);
  CHECK(cache.is_pinned(offset(p, 10)));  // cached blocks are still pinned memory
  cache.empty_cache();
  CHECK_FALSE(cache.is_pinned(p));
}

TEST_CASE("empty_cache host_frees cached blocks and keeps live ones", "[host_cache]") {
  TestCache cache;
  void* live = cache.allocate(8192);
  cache.free(cache.allocate(1 << 20));
  cache.free(cache.allocate(512));
  cache.empty_cache();
  HostCache::Stats s = cache.stats();
  CHECK(s.num_host_free == 2);
  CHECK(s.segments.current == 1);
  CHECK(s.reserved_bytes.current == 8192);
  CHECK(s.reserved_bytes.peak == 8192 + (1 << 20) + 512);
  cache.reset_peak_stats();
  CHECK(cache.stats().reserved_bytes.peak == 8192);
  cache.reset_accumulated_stats();
  s = cache.stats();
  CHECK(s.num_host_alloc == 0);
  CHECK(s.num_host_free == 0);
  CHECK(s.allocated_bytes.allocated == 0);
  CHECK(s.allocated_bytes.current == 8192);
  cache.free(live);
}

TEST_CASE("pinned frees of foreign or freed pointers are errors", "[host_cache]") {
  TestCache cache;
  int stack_value = 0;
  CHECK_THROWS_AS(cache.free(&stack_value), flagos::Error);
  cache.record_event(&stack_value, nullptr, 0);  // not ours: ignored
  cache.free(nullptr);
  void* p = cache.allocate(64);
  CHECK_THROWS_AS(cache.free(offset(p, 8)), flagos::Error);  // not a block start
  cache.free(p);
  CHECK_THROWS_AS(cache.free(p), flagos::Error);
}

TEST_CASE("a plugin without host_alloc is reported, not crashed on", "[host_cache]") {
  auto fake = flagos::plugin::load({"fake_ok", flagos::test::fake_plugin("ok"), Origin::Explicit},
                                   {});
  HostCache cache(fake);
  CHECK_FALSE(cache.supported());
  try {
    cache.allocate(16);
    FAIL("allocated pinned memory from a plugin without host_alloc");
  } catch (const flagos::Error& e) {
    CHECK(std::string(e.what()) == "[flagos] plugin '" + fake->name() +
                                       "' has no pinned host memory (host_alloc)");
  }
  CHECK_FALSE(cache.is_pinned(&cache));
}
