// Allocator statistics, shaped like PyTorch's CUDA caching-allocator stats so
// that the torch glue can copy them field by field into
// c10::CachingDeviceAllocator::DeviceStats. Plain values: no locking here, the
// owning allocator guards them with its own mutex and hands out copies.
#pragma once

#include <array>
#include <cstdint>

namespace flagos::memory {

// Index into the per-pool arrays below; Aggregate is the sum of the others.
enum class Pool : int { Aggregate = 0, Small = 1, Large = 2 };

// One counter: its current value, the highest value since reset_peak(), and
// the totals ever added / removed since reset_accumulated().
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t amount);
  void decrease(int64_t amount);
  void reset_peak() { peak = current; }
  void reset_accumulated() { allocated = freed = 0; }
};

using PoolStats = std::array<Stat, 3>;

// Adds `delta` (may be negative) to both the Aggregate entry and `pool`'s.
void update(PoolStats& stats, Pool pool, int64_t delta);

// Meanings as in PyTorch's CUDA caching allocator:
//  allocation / allocated_bytes   blocks handed out to callers (until free())
//  segment / reserved_bytes       regions obtained from the plugin's mem_alloc
//  active / active_bytes          blocks handed out or waiting for a deferred free
//  inactive_split(_bytes)         cached free blocks that are parts of a split segment
//  requested_bytes                the sizes callers asked for, before rounding
struct DeviceStats {
  PoolStats allocation, segment, active, inactive_split, allocated_bytes, reserved_bytes,
      active_bytes, inactive_split_bytes, requested_bytes;
  int64_t num_alloc_retries = 0, num_ooms = 0, num_sync_all_streams = 0, num_device_alloc = 0,
          num_device_free = 0;
  // Always 0: no max_split_size setting exists, so nothing is "oversize".
  Stat oversize_allocations, oversize_segments;
  // -1 means unlimited (PyTorch reports SIZE_MAX cast to int64 the same way).
  int64_t max_split_size = -1;

  void reset_peak();         // every Stat's peak back to its current value
  void reset_accumulated();  // every Stat's totals and every counter back to 0
};

}  // namespace flagos::memory
