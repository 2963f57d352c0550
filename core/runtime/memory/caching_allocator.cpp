// The public side of CachingAllocator: locking, argument checks and stats.
// The block bookkeeping (segments, split, merge, deferred frees) is in
// caching_allocator_blocks.cpp.
#include "memory/caching_allocator.h"

#include <algorithm>
#include <sstream>

#include "memory/size_policy.h"

namespace flagos::memory {
namespace {

std::string pointer_text(const void* ptr) {
  std::ostringstream out;
  out << ptr;
  return out.str();
}

}  // namespace

CachingAllocator::CachingAllocator(std::shared_ptr<const plugin::Plugin> plugin,
                                   flagos_device_t device, AllocatorConfig config)
    : plugin_(std::move(plugin)), device_(device), config_(config), events_(plugin_), deferred_(*plugin_, events_) {}

// Only the bookkeeping goes: the memory itself is deliberately not returned.
CachingAllocator::~CachingAllocator() {
  for (auto& [address, head] : segments_) {
    for (Block* block = head; block != nullptr;) {
      Block* next = block->next;
      delete block;
      block = next;
    }
  }
}

void* CachingAllocator::allocate(size_t size, flagos_stream_t stream) {
  if (size == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (captures_.empty()) process_events();  // event queries break a capture
  const size_t rounded = size_policy::block_size(size);
  const Pool p = size_policy::pool_for(rounded);
  PrivatePool* owner = capture_pool(stream);
  Block* block = take_cached(owner, p, stream, rounded);
  if (block == nullptr) block = new_segment(owner, p, stream, rounded, size);
  block = split(block, rounded);
  block->state = Block::State::Live;
  block->requested = size;
  live_.emplace(block->ptr, block);
  const auto bytes = static_cast<int64_t>(block->size);
  update(stats_.allocation, p, 1);
  update(stats_.allocated_bytes, p, bytes);
  update(stats_.active, p, 1);
  update(stats_.active_bytes, p, bytes);
  update(stats_.requested_bytes, p, static_cast<int64_t>(size));
  return block->ptr;
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end())
    throw Error("free of " + pointer_text(ptr) + ", which is not a live block of the " +
                plugin_->name() + " device " + std::to_string(device_) +
                " allocator (freed twice, or allocated elsewhere)");
  Block* block = it->second;
  live_.erase(it);
  block->state = Block::State::Pending;
  update(stats_.allocation, block->pool, -1);
  update(stats_.allocated_bytes, block->pool, -static_cast<int64_t>(block->size));
  update(stats_.requested_bytes, block->pool, -static_cast<int64_t>(block->requested));
  block->requested = 0;
  if (!config_.caching)
    release_uncached(block, lock);
  else if (!block->stream_uses.empty() && !captures_.empty())
    deferred_until_no_capture_.push_back(block);  // its events are recorded after the capture
  else if (!block->stream_uses.empty())
    defer_free(block);
  else
    finish_free(block);
}

void CachingAllocator::record_stream(void* ptr, flagos_stream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  Block* block = find_live(ptr);
  if (block == nullptr)
    throw Error("record_stream on " + pointer_text(ptr) + ", which is not inside a live block of "
                "the " + plugin_->name() + " device " + std::to_string(device_) + " allocator");
  std::vector<flagos_stream_t>& uses = block->stream_uses;
  if (stream != block->stream && std::find(uses.begin(), uses.end(), stream) == uses.end())
    uses.push_back(stream);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!captures_.empty()) return;  // it would wait on events and free segments
  synchronize_events();
  release_cached_segments();
  events_.clear();
}

DeviceStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peak();
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_accumulated();
}

size_t CachingAllocator::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<size_t>(stats_.reserved_bytes[static_cast<int>(Pool::Aggregate)].current);
}

size_t CachingAllocator::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<size_t>(stats_.allocated_bytes[static_cast<int>(Pool::Aggregate)].current);
}

std::vector<CachingAllocator::SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SegmentInfo> segments;
  segments.reserve(segments_.size());
  for (const auto& [address, head] : segments_) {
    SegmentInfo info{address, 0, 0, head->pool == Pool::Large, head->stream, {}};
    for (const Block* block = head; block != nullptr; block = block->next) {
      const bool in_use = block->state != Block::State::Cached;
      info.total_size += block->size;
      if (in_use) info.allocated_size += block->size;
      info.blocks.emplace_back(block->size, in_use);
    }
    segments.push_back(std::move(info));
  }
  return segments;
}

bool CachingAllocator::owns(const void* ptr) const { return base_of(ptr) != nullptr; }

void* CachingAllocator::base_of(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Block* block = find_live(ptr);
  return block != nullptr ? block->ptr : nullptr;
}

// Exact block starts are the common case (a hash lookup); interior pointers
// walk the blocks of the segment that starts at or below them.
Block* CachingAllocator::find_live(const void* ptr) const {
  if (ptr == nullptr) return nullptr;
  if (auto it = live_.find(const_cast<void*>(ptr)); it != live_.end()) return it->second;
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  auto it = segments_.upper_bound(p);
  if (it == segments_.begin()) return nullptr;
  for (Block* block = std::prev(it)->second; block != nullptr; block = block->next)
    if (block->contains(p)) return block->state == Block::State::Live ? block : nullptr;
  return nullptr;
}

void CachingAllocator::set_memory_fraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0))
    throw Error("set_per_process_memory_fraction: the fraction must be in [0, 1], got " + std::to_string(fraction));
  size_t limit = 0;
  if (fraction < 1.0) {
    const flagos_plugin_api_t& api = plugin_->api();
    uint64_t free_bytes = 0, total_bytes = 0;
    if (!FLAGOS_HAS_FN(flagos_plugin_api_t, &api, mem_get_info))
      throw Error("set_per_process_memory_fraction: plugin '" + plugin_->name() +
                  "' has no mem_get_info, so device " + std::to_string(device_) + "'s total memory is unknown");
    plugin_->check(api.mem_get_info(device_, &free_bytes, &total_bytes), "mem_get_info");
    // At least one byte: a fraction of 0 still caps (nothing may be reserved).
    limit = std::max<size_t>(1, static_cast<size_t>(fraction * static_cast<double>(total_bytes)));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  fraction_ = fraction;
  limit_ = limit;
}

double CachingAllocator::memory_fraction() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fraction_;
}

flagos_status_t CachingAllocator::mem_alloc_capped(size_t bytes, void** ptr) {
  const size_t reserved = static_cast<size_t>(stats_.reserved_bytes[static_cast<int>(Pool::Aggregate)].current);
  if (limit_ > 0 && reserved + bytes > limit_) return FLAGOS_ERROR_OUT_OF_MEMORY;
  return plugin_->api().mem_alloc(device_, bytes, ptr);
}

OutOfMemory CachingAllocator::out_of_memory(size_t requested) const {
  MemoryInfo info;
  const flagos_plugin_api_t& api = plugin_->api();
  if (FLAGOS_HAS_FN(flagos_plugin_api_t, &api, mem_get_info))
    info.known = api.mem_get_info(device_, &info.free_bytes, &info.total_bytes) == FLAGOS_SUCCESS;
  const int agg = static_cast<int>(Pool::Aggregate);
  return OutOfMemory(plugin_->name(), device_, requested, info,
                     static_cast<size_t>(stats_.reserved_bytes[agg].current),
                     static_cast<size_t>(stats_.allocated_bytes[agg].current), limit_);
}

}  // namespace flagos::memory
