// CUPTI's timestamps: CLOCK_REALTIME in nanoseconds (what CUPTI uses on
// Linux, cupti_activity.h), or, once a client registered one, its callback.
#pragma once

#include <cstdint>

namespace simrt::activity {

using ClockFn = uint64_t (*)();

void set_clock(ClockFn fn);  // every later timestamp comes from fn
uint64_t now();

}  // namespace simrt::activity
