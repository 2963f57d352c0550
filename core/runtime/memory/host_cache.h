// The pinned host memory allocator: one per process, torch-free, wrapped by
// the torch glue as an at::HostAllocator. Pinned memory is slow to obtain
// (page locking, often a device synchronisation), so freed blocks are cached
// by power-of-two size class and reused. An async copy may still read or
// write a block after free(), so blocks that copies used (record_event) are
// reused only once events recorded on those copies' streams completed.
//
// Threading: every public member is thread-safe (one mutex; host_alloc runs
// outside it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "memory/deferred_frees.h"
#include "memory/event_pool.h"
#include "memory/stats.h"
#include "plugin/plugin.h"

namespace flagos::memory {

class HostCache {
 public:
  // `plugin` is kept alive by the cache; it may lack host_alloc (see supported()).
  explicit HostCache(std::shared_ptr<const plugin::Plugin> plugin);
  // Releases nothing (process lifetime; no plugin call at exit). Call
  // empty_cache() first to give memory back.
  ~HostCache();
  HostCache(const HostCache&) = delete;
  HostCache& operator=(const HostCache&) = delete;

  // Whether the plugin has host_alloc and host_free.
  bool supported() const;

  // Pinned memory of >= size bytes (the size rounded up to a power of two, at
  // least 512 B), owned by the caller until free(): a cached block of that
  // size class whose events completed, else a new host_alloc (after an
  // OUT_OF_HOST_MEMORY the cache is emptied and host_alloc retried once).
  // size 0 -> nullptr. Throws flagos::Error when unsupported ("plugin '<name>'
  // has no pinned host memory (host_alloc)") or on a plugin failure.
  void* allocate(size_t size);

  // Returns a block from allocate() to the cache; reusable once the events
  // of its record_event() streams, recorded now, completed. nullptr is a
  // no-op. Throws flagos::Error for a pointer that is not a live block start
  // of this cache, or when an event cannot be recorded (the block is then
  // never reused).
  void free(void* ptr);

  // Marks that an async copy enqueued on `stream` (of `device`) uses the live
  // block holding `ptr` (any address inside it). A pointer that is not inside
  // a live block of this cache is ignored: callers need not check first.
  void record_event(void* ptr, flagos_stream_t stream, flagos_device_t device);

  // Whether `ptr` lies inside a live or cached block of this cache.
  bool is_pinned(const void* ptr) const;

  // host_frees every cached block whose events completed; blocks still
  // waiting for copies stay. Throws flagos::Error on a plugin failure.
  void empty_cache();

  // allocations / allocated_bytes: blocks handed out (until free());
  // segments / reserved_bytes: blocks obtained with host_alloc and held.
  struct Stats {
    Stat allocations, segments, allocated_bytes, reserved_bytes;
    int64_t num_host_alloc = 0, num_host_free = 0;
  };
  Stats stats() const;  // a consistent copy
  void reset_peak_stats();
  void reset_accumulated_stats();  // also zeroes num_host_alloc / num_host_free

 private:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;  // the size class
    bool live = false;
    int pending_events = 0;
    std::vector<StreamUse> uses;  // record_event() streams
  };

  Block* find(const void* ptr) const;  // the block holding ptr, live or not
  void* take_cached(size_t size_class);
  void* host_alloc(size_t size_class);
  void process_events();
  void release_cached();

  std::shared_ptr<const plugin::Plugin> plugin_;
  mutable std::mutex mutex_;
  std::map<uintptr_t, std::unique_ptr<Block>> blocks_;  // every block held, by address
  std::map<size_t, std::vector<Block*>> cached_;        // reusable blocks by size class
  EventPool events_;
  DeferredFrees<Block> deferred_;  // frees waiting for copies; after events_
  Stats stats_;
};

}  // namespace flagos::memory
