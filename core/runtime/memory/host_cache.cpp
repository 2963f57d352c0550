#include "memory/host_cache.h"

#include <algorithm>
#include <sstream>

#include "error.h"

namespace flagos::memory {
namespace {

constexpr size_t kMinClass = 512;

// Power-of-two classes keep the number of distinct cached sizes small, so a
// freed block is likely to fit the next request. Saturates on absurd sizes
// (host_alloc then fails as out of memory).
size_t size_class(size_t size) {
  size_t c = kMinClass;
  while (c < size) {
    if (c > SIZE_MAX / 2) return SIZE_MAX;
    c <<= 1;
  }
  return c;
}

std::string pointer_text(const void* ptr) {
  std::ostringstream out;
  out << ptr;
  return out.str();
}

}  // namespace

HostCache::HostCache(std::shared_ptr<const plugin::Plugin> plugin)
    : plugin_(std::move(plugin)), events_(plugin_), deferred_(*plugin_, events_) {}

HostCache::~HostCache() = default;

bool HostCache::supported() const {
  const flagos_plugin_api_t& api = plugin_->api();
  return FLAGOS_HAS_FN(flagos_plugin_api_t, &api, host_alloc) &&
         FLAGOS_HAS_FN(flagos_plugin_api_t, &api, host_free);
}

void* HostCache::allocate(size_t size) {
  if (!supported())
    throw Error("plugin '" + plugin_->name() + "' has no pinned host memory (host_alloc)");
  if (size == 0) return nullptr;
  const size_t cls = size_class(size);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    if (void* ptr = take_cached(cls)) return ptr;
  }
  auto block = std::make_unique<Block>();  // before host_alloc, so bad_alloc leaks nothing
  block->ptr = host_alloc(cls);            // unlocked: pinning can take long
  block->size = cls;
  block->live = true;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto bytes = static_cast<int64_t>(cls);
  ++stats_.num_host_alloc;
  stats_.segments.increase(1);
  stats_.reserved_bytes.increase(bytes);
  stats_.allocations.increase(1);
  stats_.allocated_bytes.increase(bytes);
  void* ptr = block->ptr;
  blocks_.emplace(reinterpret_cast<uintptr_t>(ptr), std::move(block));
  return ptr;
}

void HostCache::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end() || !it->second->live)
    throw Error("free of " + pointer_text(ptr) + ", which is not a live pinned block of plugin '" +
                plugin_->name() + "' (freed twice, or allocated elsewhere)");
  Block* block = it->second.get();
  block->live = false;
  stats_.allocations.decrease(1);
  stats_.allocated_bytes.decrease(static_cast<int64_t>(block->size));
  std::vector<StreamUse> uses;
  uses.swap(block->uses);
  deferred_.add(block, uses);
  if (block->pending_events == 0) cached_[block->size].push_back(block);
}

void HostCache::record_event(void* ptr, flagos_stream_t stream, flagos_device_t device) {
  std::lock_guard<std::mutex> lock(mutex_);
  Block* block = find(ptr);
  if (block == nullptr || !block->live) return;
  const StreamUse use{stream, device};
  if (std::find(block->uses.begin(), block->uses.end(), use) == block->uses.end())
    block->uses.push_back(use);
}

bool HostCache::is_pinned(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return find(ptr) != nullptr;
}

void HostCache::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events();
  release_cached();
  events_.clear();
}

HostCache::Stats HostCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void HostCache::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Stat* s : {&stats_.allocations, &stats_.segments, &stats_.allocated_bytes,
                  &stats_.reserved_bytes})
    s->reset_peak();
}

void HostCache::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Stat* s : {&stats_.allocations, &stats_.segments, &stats_.allocated_bytes,
                  &stats_.reserved_bytes})
    s->reset_accumulated();
  stats_.num_host_alloc = stats_.num_host_free = 0;
}

HostCache::Block* HostCache::find(const void* ptr) const {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) return nullptr;
  --it;
  return p - it->first < it->second->size ? it->second.get() : nullptr;
}

// A cached block of exactly `size_class`, marked live; nullptr when none.
void* HostCache::take_cached(size_t size_class) {
  auto it = cached_.find(size_class);
  if (it == cached_.end() || it->second.empty()) return nullptr;
  Block* block = it->second.back();
  it->second.pop_back();
  block->live = true;
  stats_.allocations.increase(1);
  stats_.allocated_bytes.increase(static_cast<int64_t>(block->size));
  return block->ptr;
}

// Called without mutex_ held (empty_cache takes it).
void* HostCache::host_alloc(size_t size_class) {
  const flagos_plugin_api_t& api = plugin_->api();
  void* ptr = nullptr;
  flagos_status_t status = api.host_alloc(size_class, &ptr);
  if (status == FLAGOS_ERROR_OUT_OF_HOST_MEMORY) {
    empty_cache();
    status = api.host_alloc(size_class, &ptr);
  }
  plugin_->check(status, "host_alloc");
  return ptr;
}

// Caches the freed blocks whose events completed; never blocks.
void HostCache::process_events() {
  deferred_.poll([this](Block* block) { cached_[block->size].push_back(block); });
}

void HostCache::release_cached() {
  for (auto& [size, blocks] : cached_) {
    while (!blocks.empty()) {
      Block* block = blocks.back();
      plugin_->check(plugin_->api().host_free(block->ptr), "host_free");
      blocks.pop_back();
      ++stats_.num_host_free;
      stats_.segments.decrease(1);
      stats_.reserved_bytes.decrease(static_cast<int64_t>(size));
      blocks_.erase(reinterpret_cast<uintptr_t>(block->ptr));
    }
  }
  cached_.clear();
}

}  // namespace flagos::memory
