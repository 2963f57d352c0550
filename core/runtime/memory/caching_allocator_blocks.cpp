// CachingAllocator's block bookkeeping: segments from the plugin, splitting,
// merging, the pools of cached blocks and deferred frees. Every function here
// runs with mutex_ held (release_uncached drops it around blocking calls).
#include "memory/caching_allocator.h"
#include "memory/size_policy.h"

namespace flagos::memory {

// The smallest cached block of `stream` holding `size` bytes, out of its pool
// (`owner`'s when a graph captures on `stream`).
Block* CachingAllocator::take_cached(PrivatePool* owner, Pool p, flagos_stream_t stream,
                                     size_t size) {
  Block key;
  key.stream = stream;
  key.size = size;
  BlockPool& blocks = pool(owner, p);
  auto it = blocks.lower_bound(&key);
  if (it == blocks.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  uncache(block);
  return block;
}

// A fresh segment as one block (in no pool). On OOM the cache goes back to
// the plugin and mem_alloc is retried once before OutOfMemory is thrown;
// not during a capture, which forbids the waits and frees that takes.
Block* CachingAllocator::new_segment(PrivatePool* owner, Pool p, flagos_stream_t stream,
                                     size_t size, size_t requested) {
  const size_t bytes = config_.caching ? size_policy::segment_size(size) : size;
  auto block = std::make_unique<Block>();  // before mem_alloc, so bad_alloc leaks nothing
  void* ptr = nullptr;
  flagos_status_t status = mem_alloc_capped(bytes, &ptr);
  if (status == FLAGOS_ERROR_OUT_OF_MEMORY && !captures_.empty()) {
    ++stats_.num_ooms;
    throw out_of_memory(requested);
  }
  if (status == FLAGOS_ERROR_OUT_OF_MEMORY) {
    synchronize_events();  // completed deferred frees may already fit
    if (Block* cached = take_cached(owner, p, stream, size)) return cached;
    release_cached_segments();
    ++stats_.num_alloc_retries;
    status = mem_alloc_capped(bytes, &ptr);
    if (status == FLAGOS_ERROR_OUT_OF_MEMORY) {
      ++stats_.num_ooms;
      throw out_of_memory(requested);
    }
  }
  plugin_->check(status, "mem_alloc");
  ++stats_.num_device_alloc;
  update(stats_.segment, p, 1);
  update(stats_.reserved_bytes, p, static_cast<int64_t>(bytes));
  block->ptr = ptr;
  block->size = bytes;
  block->stream = stream;
  block->pool = p;
  block->owner = owner;
  if (owner != nullptr) ++owner->segments;
  segments_.emplace(block->address(), block.get());
  return block.release();
}

// Cuts `block` (in no pool) to `size` bytes when the remainder is worth
// keeping; the remainder goes to the pool. Returns the front part.
Block* CachingAllocator::split(Block* block, size_t size) {
  if (!size_policy::should_split(block->pool, block->size, size)) return block;
  auto* rest = new Block;
  rest->ptr = reinterpret_cast<void*>(block->address() + size);  // arithmetic only
  rest->size = block->size - size;
  rest->stream = block->stream;
  rest->pool = block->pool;
  rest->owner = block->owner;
  rest->prev = block;
  rest->next = block->next;
  if (rest->next != nullptr) rest->next->prev = rest;
  block->next = rest;
  block->size = size;
  cache(rest);
  return block;
}

// Pool membership and the inactive_split stats change together, here only.
void CachingAllocator::cache(Block* block) {
  block->state = Block::State::Cached;
  pool(block).insert(block);
  if (block->is_split()) {
    update(stats_.inactive_split, block->pool, 1);
    update(stats_.inactive_split_bytes, block->pool, static_cast<int64_t>(block->size));
  }
}

void CachingAllocator::uncache(Block* block) {
  pool(block).erase(block);
  if (block->is_split()) {
    update(stats_.inactive_split, block->pool, -1);
    update(stats_.inactive_split_bytes, block->pool, -static_cast<int64_t>(block->size));
  }
}

// Absorbs `neighbour` into `block` when it is cached; deletes it.
void CachingAllocator::merge(Block* block, Block* neighbour) {
  if (neighbour == nullptr || neighbour->state != Block::State::Cached) return;
  uncache(neighbour);
  if (neighbour == block->prev) {
    block->ptr = neighbour->ptr;
    block->prev = neighbour->prev;
    if (block->prev != nullptr)
      block->prev->next = block;
    else
      segments_[block->address()] = block;  // block now starts the segment
  } else {
    block->next = neighbour->next;
    if (block->next != nullptr) block->next->prev = block;
  }
  block->size += neighbour->size;
  delete neighbour;
}

// A freed block whose streams are done: merge with free neighbours and cache.
void CachingAllocator::finish_free(Block* block) {
  update(stats_.active, block->pool, -1);
  update(stats_.active_bytes, block->pool, -static_cast<int64_t>(block->size));
  merge(block, block->prev);
  merge(block, block->next);
  cache(block);
}

// One event per recorded stream; the block is cached when all completed.
void CachingAllocator::defer_free(Block* block) {
  std::vector<StreamUse> uses;
  for (flagos_stream_t stream : block->stream_uses) uses.emplace_back(stream, device_);
  block->stream_uses.clear();
  deferred_.add(block, uses);
}

// Non-caching mode: waits (unlocked) until every stream that used the block
// reached this point, as mem_free requires, then returns the segment.
void CachingAllocator::release_uncached(Block* block, std::unique_lock<std::mutex>& lock) {
  std::vector<flagos_stream_t> streams{block->stream};
  streams.insert(streams.end(), block->stream_uses.begin(), block->stream_uses.end());
  block->stream_uses.clear();
  block->pending_events = 1;  // stays Pending (unusable) if anything below throws
  void* ptr = block->ptr;
  lock.unlock();
  events_.wait_for(device_, streams);
  plugin_->check(plugin_->api().mem_free(device_, ptr), "mem_free");
  lock.lock();
  update(stats_.active, block->pool, -1);
  update(stats_.active_bytes, block->pool, -static_cast<int64_t>(block->size));
  forget_segment(block);
}

// Drops a segment's only block after its mem_free.
void CachingAllocator::forget_segment(Block* block) {
  segments_.erase(block->address());
  if (block->owner != nullptr) --block->owner->segments;
  ++stats_.num_device_free;
  update(stats_.segment, block->pool, -1);
  update(stats_.reserved_bytes, block->pool, -static_cast<int64_t>(block->size));
  delete block;
}

// Caches the deferred frees whose events completed; never blocks.
void CachingAllocator::process_events() {
  deferred_.poll([this](Block* block) { finish_free(block); });
}

// Blocks until every deferred free completed, then caches those blocks.
void CachingAllocator::synchronize_events() {
  ++stats_.num_sync_all_streams;
  deferred_.wait_all();
  process_events();
}

// mem_frees every cached block that is a whole segment, in the shared pools
// and in private pools no graph uses any more.
void CachingAllocator::release_cached_segments() {
  release_free_segments(small_blocks_);
  release_free_segments(large_blocks_);
  for (auto& [id, pool] : graph_pools_) {
    if (pool->use_count > 0) continue;
    release_free_segments(pool->small_blocks);
    release_free_segments(pool->large_blocks);
  }
  drop_unused_pools();
}

void CachingAllocator::release_free_segments(BlockPool& blocks) {
  for (auto it = blocks.begin(); it != blocks.end();) {
    Block* block = *it;
    if (block->is_split()) {
      ++it;
      continue;
    }
    plugin_->check(plugin_->api().mem_free(device_, block->ptr), "mem_free");
    it = blocks.erase(it);
    forget_segment(block);
  }
}

}  // namespace flagos::memory
