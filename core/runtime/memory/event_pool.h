// Reusable plugin events for deferred frees. Allocators record one event per
// stream that used a freed block and poll it on later allocations; creating a
// fresh event for every free would cost a plugin round trip each time.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "plugin/plugin.h"

namespace flagos::memory {

class EventPool {
 public:
  // Keeps at most `max_idle` idle events per device; extra ones are destroyed.
  explicit EventPool(std::shared_ptr<const plugin::Plugin> plugin, size_t max_idle = 64);
  // Does not destroy idle events: pools live as long as their allocator,
  // normally the process, and no plugin call should run at exit.
  ~EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // An event of `device` recorded on `stream` now (FLAGOS_EVENT_DEFAULT flags).
  // The caller owns it until it hands it back with release(). Thread-safe.
  // Throws flagos::Error when event_create or event_record fails (nothing leaks).
  flagos_event_t record(flagos_device_t device, flagos_stream_t stream);

  // Takes back an event from record(). Thread-safe; never throws (a failing
  // event_destroy of a surplus event is ignored: the handle is gone either way).
  void release(flagos_device_t device, flagos_event_t event) noexcept;

  // Blocks until the work enqueued so far on each of `streams` (all of
  // `device`) completed: records an event on each, then waits for it. Unlike
  // stream_synchronize it does not wait for work enqueued later by other
  // threads. Thread-safe. Throws flagos::Error; events return to the pool.
  void wait_for(flagos_device_t device, const std::vector<flagos_stream_t>& streams);

  // Destroys every idle event (empty_cache). Thread-safe; never throws.
  void clear() noexcept;

 private:
  std::shared_ptr<const plugin::Plugin> plugin_;
  size_t max_idle_;
  std::mutex mutex_;
  std::unordered_map<flagos_device_t, std::vector<flagos_event_t>> idle_;
};

}  // namespace flagos::memory
