#include "stream.h"

#include "errors.h"
#include "vendor.h"

namespace flagos_cudalike {

flagos_status_t Stream::native(const char* fn, rt_stream* out) {
  rt_stream s = existing();
  if (s == nullptr) {
    std::lock_guard<std::mutex> lock(create_mutex_);
    s = stream_.load(std::memory_order_relaxed);
    if (s == nullptr) {
      // Priority 0 is the normal (lowest) priority, as torch's default stream.
      int err = rt().stream_create_with_priority(&s, vendor().stream_non_blocking, 0);
      if (err != 0)
        return rt_fail(fn, err, "StreamCreateWithPriority (default stream of device %d)", device_);
      stream_.store(s, std::memory_order_release);
    }
  }
  *out = s;
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_cudalike
