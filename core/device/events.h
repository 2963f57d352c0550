// The event object behind a c10 event pointer (void*): the plugin event plus
// what the generic torch.Event API needs to answer clearly (timing enabled?
// recorded yet?). Created by the guard's record(), destroyed by destroyEvent.
#pragma once

#include <cstdint>

#include "flagos/flagos.h"

namespace flagos::device {

struct Event {
  flagos_event_t handle = nullptr;
  int32_t device = 0;
  bool timing = false;
  bool recorded = false;
};

Event* create_event(int32_t device, bool timing);
void destroy_event(Event* event) noexcept;
void record_event(Event* event, flagos_stream_t stream);
bool query_event(const Event* event);
void synchronize_event(const Event* event);
// Milliseconds from start to end; waits for both. ValueError-style
// flagos::Error when either lacks timing or was never recorded.
double elapsed_ms(const Event* start, const Event* end);

}  // namespace flagos::device
