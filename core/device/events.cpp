#include "events.h"

#include "device/runtime.h"
#include "diag/log.h"
#include "error.h"

namespace flagos::device {

Event* create_event(int32_t device, bool timing) {
  const auto& plugin = active_plugin();
  auto* event = new Event{nullptr, device, timing, false};
  flagos_status_t status = plugin.api().event_create(
      device, timing ? FLAGOS_EVENT_TIMING : FLAGOS_EVENT_DEFAULT, &event->handle);
  if (status != FLAGOS_SUCCESS) {
    delete event;
    plugin.check(status, "event_create");
  }
  return event;
}

void destroy_event(Event* event) noexcept {
  if (!event) return;
  auto plugin = plugin::active();
  if (plugin && event->handle && plugin->api().event_destroy(event->handle) != FLAGOS_SUCCESS)
    diag::warn_once("event_destroy", "plugin '" + plugin->name() + "': event_destroy failed: " +
                                         plugin->api().last_error_message());
  delete event;
}

void record_event(Event* event, flagos_stream_t stream) {
  const auto& plugin = active_plugin();
  plugin.check(plugin.api().event_record(event->handle, stream), "event_record");
  event->recorded = true;
}

bool query_event(const Event* event) {
  if (!event || !event->recorded) return true;
  const auto& plugin = active_plugin();
  flagos_status_t status = plugin.api().event_query(event->handle);
  plugin.check(status, "event_query");
  return status == FLAGOS_SUCCESS;
}

void synchronize_event(const Event* event) {
  if (!event || !event->recorded) return;
  const auto& plugin = active_plugin();
  plugin.check(plugin.api().event_synchronize(event->handle), "event_synchronize");
}

double elapsed_ms(const Event* start, const Event* end) {
  if (!start || !end || !start->timing || !end->timing)
    throw Error("Both events must be created with argument 'enable_timing=True'.");
  if (!start->recorded || !end->recorded)
    throw Error("Both events must be recorded before calculating elapsed time.");
  synchronize_event(start);
  synchronize_event(end);
  const auto& plugin = active_plugin();
  if (!plugin.api().event_elapsed_ms)
    throw Error("plugin '" + plugin.name() + "' does not implement event timing (event_elapsed_ms)");
  float ms = 0;
  plugin.check(plugin.api().event_elapsed_ms(start->handle, end->handle, &ms), "event_elapsed_ms");
  return ms;
}

}  // namespace flagos::device
