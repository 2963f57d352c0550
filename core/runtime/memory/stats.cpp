#include "memory/stats.h"

#include <algorithm>

namespace flagos::memory {
namespace {

// Applies `fn` to every Stat of `s`, so that resets cannot miss a new field.
template <typename Fn>
void for_each_stat(DeviceStats& s, Fn fn) {
  for (PoolStats* group : {&s.allocation, &s.segment, &s.active, &s.inactive_split,
                           &s.allocated_bytes, &s.reserved_bytes, &s.active_bytes,
                           &s.inactive_split_bytes, &s.requested_bytes})
    for (Stat& stat : *group) fn(stat);
  fn(s.oversize_allocations);
  fn(s.oversize_segments);
}

}  // namespace

void Stat::increase(int64_t amount) {
  current += amount;
  peak = std::max(peak, current);
  allocated += amount;
}

void Stat::decrease(int64_t amount) {
  current -= amount;
  freed += amount;
}

void update(PoolStats& stats, Pool pool, int64_t delta) {
  auto apply = [delta](Stat& s) { delta >= 0 ? s.increase(delta) : s.decrease(-delta); };
  apply(stats[static_cast<int>(Pool::Aggregate)]);
  if (pool != Pool::Aggregate) apply(stats[static_cast<int>(pool)]);
}

void DeviceStats::reset_peak() {
  for_each_stat(*this, [](Stat& s) { s.reset_peak(); });
}

void DeviceStats::reset_accumulated() {
  for_each_stat(*this, [](Stat& s) { s.reset_accumulated(); });
  num_alloc_retries = num_ooms = num_sync_all_streams = num_device_alloc = num_device_free = 0;
}

}  // namespace flagos::memory
