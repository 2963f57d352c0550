// The caching allocator's graph private pools (caching_allocator.h, "Graph
// capture") against the strict host plugin of test_caching_allocator.cpp,
// with real captures through the plugin's graphs extension.
#include "catch.hpp"
#include "memory/caching_allocator.h"
#include "plugin/plugin.h"

namespace flagos::test {
std::shared_ptr<const plugin::Plugin> memory_test_plugin();  // test_caching_allocator.cpp
}

namespace {

using flagos::memory::AllocatorConfig;
using flagos::memory::CachingAllocator;
using flagos::memory::PoolId;
using flagos::memory::Pool;

constexpr int kAgg = static_cast<int>(Pool::Aggregate);

std::shared_ptr<const flagos::plugin::Plugin> host() { return flagos::test::memory_test_plugin(); }

const flagos_graphs_ext_t& graphs() {
  auto* ext = reinterpret_cast<const flagos_graphs_ext_t*>(
      host()->find_extension(FLAGOS_EXTENSION_GRAPHS));
  REQUIRE(ext != nullptr);
  return *ext;
}

struct Stream {
  flagos_stream_t handle = nullptr;
  Stream() { host()->check(host()->api().stream_create(0, 0, &handle), "stream_create"); }
  ~Stream() { host()->api().stream_destroy(handle); }
};

struct Allocator : CachingAllocator {
  Allocator() : CachingAllocator(host(), 0, AllocatorConfig{}) {}
  ~Allocator() { empty_cache(); }
  int64_t reserved() const { return stats().reserved_bytes[kAgg].current; }
};

// A capture on `s` into pool `id`, ended (and its graph dropped) on scope exit.
struct Capture {
  Allocator& alloc;
  flagos_stream_t s;
  PoolId id;
  Capture(Allocator& a, flagos_stream_t stream, PoolId pool) : alloc(a), s(stream), id(pool) {
    alloc.begin_allocate_to_pool(id, s);
    host()->check(graphs().capture_begin(s), "capture_begin");
  }
  ~Capture() {
    flagos_graph_t g = nullptr;
    CHECK(graphs().capture_end(s, &g) == FLAGOS_SUCCESS);
    graphs().graph_destroy(g);
    alloc.end_allocate_to_pool(id);
  }
};

}  // namespace

TEST_CASE("a block freed during a capture is never handed to code outside the graph",
          "[allocator][graphs]") {
  Allocator alloc;
  Stream s;
  void* freed = nullptr;
  {
    Capture c(alloc, s.handle, {7, 0});
    freed = alloc.allocate(4096, s.handle);
    alloc.free(freed);
    CHECK(alloc.allocate(4096, s.handle) == freed);  // reused inside its own pool
    alloc.free(freed);
  }
  void* outside = alloc.allocate(4096, s.handle);
  CHECK(outside != freed);
  alloc.free(outside);
  alloc.release_pool({7, 0});
}

TEST_CASE("a pool shared by two graphs goes back to the plugin with its last user",
          "[allocator][graphs]") {
  Allocator alloc;
  Stream s;
  alloc.empty_cache();
  const int64_t before = alloc.reserved();
  for (int i = 0; i < 2; ++i) {
    Capture c(alloc, s.handle, {0, 9});
    alloc.free(alloc.allocate(1 << 20, s.handle));
  }
  CHECK(alloc.reserved() > before);
  alloc.release_pool({0, 9});
  CHECK(alloc.reserved() > before);  // one user left
  alloc.release_pool({0, 9});
  CHECK(alloc.reserved() == before);
}

TEST_CASE("a block still live when its pool is released goes back once freed and emptied",
          "[allocator][graphs]") {
  Allocator alloc;
  Stream s;
  alloc.empty_cache();
  const int64_t before = alloc.reserved();
  void* kept = nullptr;
  {
    Capture c(alloc, s.handle, {11, 0});
    kept = alloc.allocate(3000, s.handle);
  }
  alloc.release_pool({11, 0});
  CHECK(alloc.reserved() > before);
  alloc.free(kept);
  alloc.empty_cache();
  CHECK(alloc.reserved() == before);
}

TEST_CASE("a free with stream uses during a capture records its events after it",
          "[allocator][graphs]") {
  Allocator alloc;
  Stream capturing, other;
  void* block = alloc.allocate(8192, other.handle);
  {
    Capture c(alloc, capturing.handle, {13, 0});
    alloc.record_stream(block, capturing.handle);
    alloc.free(block);                           // an event now would be captured
    alloc.free(alloc.allocate(100, capturing.handle));  // and polling it would break the capture
    int32_t status = -1;
    host()->check(graphs().capture_status(capturing.handle, &status, nullptr), "capture_status");
    CHECK(status == FLAGOS_CAPTURE_ACTIVE);
  }
  host()->check(host()->api().stream_synchronize(capturing.handle), "stream_synchronize");
  alloc.free(alloc.allocate(100, other.handle));  // polls the event recorded after the capture
  CHECK(alloc.allocate(8192, other.handle) == block);
  alloc.free(block);
  alloc.release_pool({13, 0});
}
