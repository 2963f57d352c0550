// The device memory allocator: one per device, torch-free, wrapped by the
// torch glue as a c10::DeviceAllocator. It caches plugin mem_alloc segments
// and carves blocks out of them (the algorithm of PyTorch's CUDA caching
// allocator), because vendor allocation calls are slow and often synchronise
// the device. It only does bookkeeping: device memory is never dereferenced,
// all device work is plugin calls.
//
// Stream semantics: a block belongs to the stream it was allocated on; freeing
// it makes it reusable at once on that stream (stream order makes that safe).
// Streams added by record_stream() delay reuse until the work they had
// enqueued at free() time completed (tracked with plugin events).
//
// Graph capture (private pools, as CUDA's allocator has them): while a graph
// captures on a stream, allocations on that stream come from the graph's
// private pool, and blocks of a private pool, once freed, are cached in it
// alone, so memory a graph's replays use is never handed to other code
// while the graph lives. Pools are shared between graphs by id; each
// capture is one user, and a pool with no users returns its free segments.
// While any capture is underway the allocator records, queries and waits
// on no event and frees no segment: a capture forbids those calls.
//
// Threading: every public member is thread-safe (one mutex per allocator).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memory/block.h"
#include "memory/deferred_frees.h"
#include "memory/event_pool.h"
#include "memory/out_of_memory.h"
#include "memory/stats.h"
#include "plugin/plugin.h"

namespace flagos::memory {

// A graph's private pool: its cached blocks, and how many graphs use it.
struct PrivatePool {
  int use_count = 1;
  size_t segments = 0;  // segments it owns; the pool goes when none is left and unused
  BlockPool small_blocks, large_blocks;
};

// A private pool's id (torch's MempoolId_t): {graph uid, 0} or {0, handle uid}.
using PoolId = std::pair<uint64_t, uint64_t>;

struct AllocatorConfig {
  // false (FLAGOS_USE_CACHING_ALLOCATOR=0): every allocate is a plugin
  // mem_alloc and every free a mem_free, once the block's streams are done.
  bool caching = true;
};

class CachingAllocator {
 public:
  // `plugin` is kept alive by the allocator; `device` must be one of its devices.
  CachingAllocator(std::shared_ptr<const plugin::Plugin> plugin, flagos_device_t device,
                   AllocatorConfig config);
  // Releases nothing: allocators live for the process and no plugin call
  // should run at exit. Call empty_cache() first to give memory back.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Device memory of >= size bytes, usable in stream order on `stream` (the
  // allocation stream); owned by the caller until free(). size 0 -> nullptr.
  // Throws OutOfMemory when the plugin is out of memory even after the cache
  // was returned and the allocation retried once (num_alloc_retries,
  // num_ooms), flagos::Error for other plugin failures.
  void* allocate(size_t size, flagos_stream_t stream);

  // Takes back a block from allocate(). nullptr is a no-op. Reuse on the
  // allocation stream is immediate; with record_stream() streams the block is
  // reusable once events recorded on them now have completed. In non-caching
  // mode blocks until those streams and the allocation stream reached this
  // point, then mem_frees. Throws flagos::Error for a pointer that is not a
  // live block (unknown or already freed) or a plugin failure (the block is
  // then never reused).
  void free(void* ptr);

  // Marks that `stream` uses the live block holding `ptr` (any address inside
  // it). The allocation stream itself needs no mark. Throws flagos::Error for
  // a pointer that is not inside a live block of this allocator.
  void record_stream(void* ptr, flagos_stream_t stream);

  // Waits for every deferred free's events, then mem_frees every cached
  // segment that is wholly free (split segments stay) and destroys idle
  // events. Throws flagos::Error on a plugin failure.
  void empty_cache();

  // ---- graph capture (caching_allocator_pools.cpp) ----
  // From now until end_allocate_to_pool(id), allocations on `stream` come
  // from private pool `id`, made now or given one more user. Throws
  // flagos::Error in non-caching mode (its frees synchronize) and when
  // `stream` already allocates to a pool.
  void begin_allocate_to_pool(PoolId id, flagos_stream_t stream);
  // Stops routing to pool `id`; frees deferred during the capture record
  // their events once no capture is left.
  void end_allocate_to_pool(PoolId id);
  // One user of pool `id` less (a graph reset). With none left, its free
  // segments go back to the plugin (at once, or at the next empty_cache
  // when a capture is underway) and the rest as their blocks are freed.
  void release_pool(PoolId id);

  // ---- per-process limit (torch.cuda.set_per_process_memory_fraction) ----
  // Caps this allocator's reserved bytes at `fraction` of the device's total
  // memory (mem_get_info): a segment past the cap is out of memory, after
  // the cache went back, as when the plugin itself runs out. 1 lifts the cap;
  // memory already reserved stays. Throws flagos::Error for a fraction
  // outside [0, 1] and, for one below 1, a plugin without mem_get_info.
  void set_memory_fraction(double fraction);
  double memory_fraction() const;

  DeviceStats stats() const;  // a consistent copy
  void reset_peak_stats();
  void reset_accumulated_stats();
  size_t reserved_bytes() const;   // stats().reserved_bytes[Aggregate].current
  size_t allocated_bytes() const;  // stats().allocated_bytes[Aggregate].current

  // One entry per segment, for memory_summary and snapshots. Blocks waiting
  // for a deferred free count as allocated (they cannot be reused yet).
  struct SegmentInfo {
    uintptr_t address;
    size_t total_size, allocated_size;
    bool is_large;
    flagos_stream_t stream;
    std::vector<std::pair<size_t, bool>> blocks;  // (size, allocated) in address order
  };
  std::vector<SegmentInfo> snapshot() const;

  // Whether `ptr` (any address inside a block) lies in a live block of this
  // allocator, i.e. of this device.
  bool owns(const void* ptr) const;
  // The start of the live block holding `ptr`, or nullptr.
  void* base_of(const void* ptr) const;

  flagos_device_t device() const { return device_; }
  const AllocatorConfig& config() const { return config_; }

 private:
  BlockPool& pool(PrivatePool* owner, Pool p) {
    if (owner != nullptr) return p == Pool::Small ? owner->small_blocks : owner->large_blocks;
    return p == Pool::Small ? small_blocks_ : large_blocks_;
  }
  BlockPool& pool(const Block* b) { return pool(b->owner, b->pool); }
  Block* find_live(const void* ptr) const;
  PrivatePool* capture_pool(flagos_stream_t stream) const;
  Block* take_cached(PrivatePool* owner, Pool p, flagos_stream_t stream, size_t size);
  Block* new_segment(PrivatePool* owner, Pool p, flagos_stream_t stream, size_t size,
                     size_t requested);
  Block* split(Block* block, size_t size);
  void cache(Block* block);
  void uncache(Block* block);
  void merge(Block* block, Block* neighbour);
  void finish_free(Block* block);
  void defer_free(Block* block);
  void release_uncached(Block* block, std::unique_lock<std::mutex>& lock);
  void forget_segment(Block* block);
  void process_events();
  void synchronize_events();
  void release_cached_segments();
  void release_free_segments(BlockPool& blocks);
  void drop_unused_pools();
  OutOfMemory out_of_memory(size_t requested) const;
  // The plugin's mem_alloc, or out of memory without calling it when the
  // segment would pass the per-process cap.
  flagos_status_t mem_alloc_capped(size_t bytes, void** ptr);

  std::shared_ptr<const plugin::Plugin> plugin_;
  const flagos_device_t device_;
  const AllocatorConfig config_;
  mutable std::mutex mutex_;
  BlockPool small_blocks_, large_blocks_;       // Cached blocks
  std::unordered_map<void*, Block*> live_;      // Live blocks by start address
  std::map<uintptr_t, Block*> segments_;        // first block of each segment
  EventPool events_;
  DeferredFrees<Block> deferred_;  // after events_, which it uses
  DeviceStats stats_;
  std::map<PoolId, std::unique_ptr<PrivatePool>> graph_pools_;
  std::vector<std::pair<flagos_stream_t, PoolId>> captures_;  // streams allocating to a pool
  std::vector<Block*> deferred_until_no_capture_;  // freed with stream uses during a capture
  double fraction_ = 1.0;  // set_memory_fraction's
  size_t limit_ = 0;       // its cap in bytes; 0: none
};

}  // namespace flagos::memory
