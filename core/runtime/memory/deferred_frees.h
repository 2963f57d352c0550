// Freed blocks that streams may still be using: each waits for one event per
// stream, recorded at free time. Shared by the device and the pinned host
// allocator; `BlockT` only needs an `int pending_events` member.
// Not thread-safe: the owning allocator's mutex guards it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "memory/event_pool.h"
#include "plugin/plugin.h"

namespace flagos::memory {

// A stream that uses a block, and its device (the event's device).
using StreamUse = std::pair<flagos_stream_t, flagos_device_t>;

template <typename BlockT>
class DeferredFrees {
 public:
  // Both must outlive this object (they are members of the same allocator).
  DeferredFrees(const plugin::Plugin& plugin, EventPool& events)
      : plugin_(plugin), events_(events) {}

  // Records an event on each stream of `uses` for `block`, adding to
  // block->pending_events. Throws flagos::Error when a recording fails; the
  // block then keeps one pending count forever (a stream that could not be
  // tracked may still use it, so it must never be reused).
  void add(BlockT* block, const std::vector<StreamUse>& uses) {
    try {
      entries_.reserve(entries_.size() + uses.size());
      for (const auto& [stream, device] : uses) {
        entries_.push_back({events_.record(device, stream), device, block});
        ++block->pending_events;
      }
    } catch (...) {
      ++block->pending_events;
      throw;
    }
  }

  // Calls on_done(block) for each block whose last event completed. Never
  // blocks. Throws flagos::Error when event_query reports a device error.
  template <typename OnDone>
  void poll(OnDone on_done) {
    for (size_t i = 0; i < entries_.size();) {
      const Entry entry = entries_[i];
      const flagos_status_t status = plugin_.api().event_query(entry.event);
      if (status == FLAGOS_NOT_READY) {
        ++i;
        continue;
      }
      plugin_.check(status, "event_query");
      entries_[i] = entries_.back();
      entries_.pop_back();
      events_.release(entry.device, entry.event);
      if (--entry.block->pending_events == 0) on_done(entry.block);
    }
  }

  // Blocks until every recorded event completed (poll() then finds them all).
  void wait_all() {
    for (const Entry& entry : entries_)
      plugin_.check(plugin_.api().event_synchronize(entry.event), "event_synchronize");
  }

 private:
  struct Entry {
    flagos_event_t event;
    flagos_device_t device;
    BlockT* block;
  };
  const plugin::Plugin& plugin_;
  EventPool& events_;
  std::vector<Entry> entries_;
};

}  // namespace flagos::memory
