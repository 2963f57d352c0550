#include "clock.h"

#include <time.h>

#include <atomic>

namespace simrt::activity {
namespace {
std::atomic<ClockFn> g_clock{nullptr};
}  // namespace

void set_clock(ClockFn fn) { g_clock.store(fn); }

uint64_t now() {
  if (ClockFn fn = g_clock.load()) return fn();
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace simrt::activity
