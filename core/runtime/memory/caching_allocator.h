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
  BlockPool& pool(Pool p) { return p == Pool::Small ? small_blocks_ : large_blocks_; }
  Block* find_live(const void* ptr) const;
  Block* take_cached(Pool p, flagos_stream_t stream, size_t size);
  Block* new_segment(Pool p, flagos_stream_t stream, size_t size, size_t requested);
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
  OutOfMemory out_of_memory(size_t requested) const;

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
};

}  // namespace flagos::memory
