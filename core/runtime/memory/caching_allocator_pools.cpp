// CachingAllocator's graph private pools (caching_allocator.h, "Graph
// capture"): routing a capturing stream's allocations to its pool, the
// pools' users, and handing back what unused pools cache.
#include <algorithm>

#include "memory/caching_allocator.h"

namespace flagos::memory {
namespace {

std::string pool_text(PoolId id) {
  return "(" + std::to_string(id.first) + ", " + std::to_string(id.second) + ")";
}

}  // namespace

void CachingAllocator::begin_allocate_to_pool(PoolId id, flagos_stream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!config_.caching)
    throw Error("graph capture needs the caching allocator: with FLAGOS_USE_CACHING_ALLOCATOR=0 "
                "every free waits for the device, which a capture forbids");
  for (const auto& [s, pool] : captures_)
    if (s == stream)
      throw Error("a graph already captures on this stream, into pool " + pool_text(pool));
  auto it = graph_pools_.find(id);
  if (it == graph_pools_.end())
    graph_pools_.emplace(id, std::make_unique<PrivatePool>());
  else
    ++it->second->use_count;
  captures_.emplace_back(stream, id);
}

void CachingAllocator::end_allocate_to_pool(PoolId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(captures_.begin(), captures_.end(),
                         [&](const auto& c) { return c.second == id; });
  if (it != captures_.end()) captures_.erase(it);
  if (!captures_.empty()) return;
  std::vector<Block*> blocks;
  blocks.swap(deferred_until_no_capture_);
  for (Block* block : blocks) defer_free(block);
}

void CachingAllocator::release_pool(PoolId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = graph_pools_.find(id);
  if (it == graph_pools_.end() || it->second->use_count == 0) return;
  PrivatePool& pool = *it->second;
  if (--pool.use_count > 0 || !captures_.empty()) return;
  release_free_segments(pool.small_blocks);
  release_free_segments(pool.large_blocks);
  drop_unused_pools();
}

// With mutex_ held.
PrivatePool* CachingAllocator::capture_pool(flagos_stream_t stream) const {
  for (const auto& [s, id] : captures_)
    if (s == stream) return graph_pools_.at(id).get();
  return nullptr;
}

// A pool no graph uses whose segments all went back: forgotten. One whose
// blocks are still live stays until they are freed and released.
void CachingAllocator::drop_unused_pools() {
  for (auto it = graph_pools_.begin(); it != graph_pools_.end();) {
    if (it->second->use_count == 0 && it->second->segments == 0)
      it = graph_pools_.erase(it);
    else
      ++it;
  }
}

}  // namespace flagos::memory
