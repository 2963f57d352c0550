#include "memory/event_pool.h"

#include <utility>

namespace flagos::memory {

EventPool::EventPool(std::shared_ptr<const plugin::Plugin> plugin, size_t max_idle)
    : plugin_(std::move(plugin)), max_idle_(max_idle) {}

flagos_event_t EventPool::record(flagos_device_t device, flagos_stream_t stream) {
  flagos_event_t event = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<flagos_event_t>& idle = idle_[device];
    if (!idle.empty()) {
      event = idle.back();
      idle.pop_back();
    }
  }
  const flagos_plugin_api_t& api = plugin_->api();
  if (event == nullptr)
    plugin_->check(api.event_create(device, FLAGOS_EVENT_DEFAULT, &event), "event_create");
  flagos_status_t status = api.event_record(event, stream);
  if (status != FLAGOS_SUCCESS) {
    release(device, event);
    plugin_->check(status, "event_record");
  }
  return event;
}

void EventPool::release(flagos_device_t device, flagos_event_t event) noexcept {
  if (event == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<flagos_event_t>& idle = idle_[device];
    if (idle.size() < max_idle_) {
      idle.push_back(event);
      return;
    }
  }
  plugin_->api().event_destroy(event);
}

void EventPool::wait_for(flagos_device_t device, const std::vector<flagos_stream_t>& streams) {
  std::vector<flagos_event_t> events;
  flagos_status_t status = FLAGOS_SUCCESS;
  try {
    for (flagos_stream_t stream : streams) events.push_back(record(device, stream));
    for (flagos_event_t event : events) {
      status = plugin_->api().event_synchronize(event);
      if (status != FLAGOS_SUCCESS) break;
    }
  } catch (...) {
    for (flagos_event_t event : events) release(device, event);
    throw;
  }
  for (flagos_event_t event : events) release(device, event);
  plugin_->check(status, "event_synchronize");
}

void EventPool::clear() noexcept {
  std::unordered_map<flagos_device_t, std::vector<flagos_event_t>> idle;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle.swap(idle_);
  }
  for (auto& [device, events] : idle)
    for (flagos_event_t event : events) plugin_->api().event_destroy(event);
}

}  // namespace flagos::memory
