// The core's allocator statistics (memory/stats.h) in c10's shapes, and sums
// of c10 statistics: the field list is written once, here, for every copy and
// every sum (flagos figures, and torch's CUDA figures added on CUDA-ABI plugins).
#pragma once

#include <c10/core/CachingDeviceAllocator.h>

#include <cstddef>

#include "memory/stats.h"

namespace flagos::device {

inline void copy_stat(const memory::Stat& from, c10::CachingAllocator::Stat& to) {
  to.current = from.current;
  to.peak = from.peak;
  to.allocated = from.allocated;
  to.freed = from.freed;
}

inline void add_stat(const c10::CachingAllocator::Stat& from, c10::CachingAllocator::Stat& to) {
  to.current += from.current;
  to.peak += from.peak;  // an upper bound of the combined peak
  to.allocated += from.allocated;
  to.freed += from.freed;
}

// Calls stat(from_field, to_field) for every per-pool counter and
// count(from_field, to_field) for every scalar counter the two share.
template <typename From, typename To, typename StatFn, typename CountFn>
void zip_device_stats(const From& from, To& to, StatFn stat, CountFn count) {
  auto pools = [&](const auto& f, auto& t) {
    for (std::size_t i = 0; i < t.size(); ++i) stat(f[i], t[i]);
  };
  pools(from.allocation, to.allocation);
  pools(from.segment, to.segment);
  pools(from.active, to.active);
  pools(from.inactive_split, to.inactive_split);
  pools(from.allocated_bytes, to.allocated_bytes);
  pools(from.reserved_bytes, to.reserved_bytes);
  pools(from.active_bytes, to.active_bytes);
  pools(from.inactive_split_bytes, to.inactive_split_bytes);
  pools(from.requested_bytes, to.requested_bytes);
  count(from.num_alloc_retries, to.num_alloc_retries);
  count(from.num_ooms, to.num_ooms);
  count(from.num_sync_all_streams, to.num_sync_all_streams);
  count(from.num_device_alloc, to.num_device_alloc);
  count(from.num_device_free, to.num_device_free);
}

inline c10::CachingDeviceAllocator::DeviceStats to_c10(const memory::DeviceStats& s) {
  c10::CachingDeviceAllocator::DeviceStats out;
  zip_device_stats(s, out, copy_stat, [](int64_t from, int64_t& to) { to = from; });
  copy_stat(s.oversize_allocations, out.oversize_allocations);
  copy_stat(s.oversize_segments, out.oversize_segments);
  out.max_split_size = s.max_split_size;
  return out;
}

inline void add_to(const c10::CachingDeviceAllocator::DeviceStats& from,
                   c10::CachingDeviceAllocator::DeviceStats& to) {
  zip_device_stats(from, to, add_stat, [](int64_t from_count, int64_t& to_count) { to_count += from_count; });
}

}  // namespace flagos::device
