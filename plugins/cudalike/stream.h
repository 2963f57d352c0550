// A flagos stream: a runtime stream of one device. Created streams are
// non-blocking, so that work torch's CUDA kernels put on a flagos stream
// never synchronizes implicitly with the runtime's legacy NULL stream.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "device_scope.h"
#include "flagos/abi.h"
#include "runtime.h"

namespace flagos_cudalike {

class Stream {
 public:
  // A created stream (stream_create made `created`).
  Stream(int32_t device, rt_stream created) : device_(device), is_default_(false), stream_(created) {}
  // A device's default stream: its runtime stream is made at first use,
  // because get_default_stream must not create a device context.
  explicit Stream(int32_t device) : device_(device), is_default_(true), stream_(nullptr) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int32_t device() const { return device_; }
  bool is_default() const { return is_default_; }

  // The runtime stream, made now for a default stream never used before.
  // Call inside a DeviceScope of device().
  flagos_status_t native(const char* fn, rt_stream* out);
  // For calls that enqueue work: makes device() current for `scope` and
  // gives the runtime stream (see native()).
  flagos_status_t enter(const char* fn, DeviceScope& scope, rt_stream* out) {
    flagos_status_t st = scope.enter(fn, device_);
    return st == FLAGOS_SUCCESS ? native(fn, out) : st;
  }
  // The runtime stream if it exists; nullptr for an unused default stream,
  // on which nothing can be pending.
  rt_stream existing() const { return stream_.load(std::memory_order_acquire); }

 private:
  const int32_t device_;
  const bool is_default_;
  std::atomic<rt_stream> stream_;
  std::mutex create_mutex_;
};

// A flagos event: a runtime event of one device, plus what the runtime does
// not report (whether it can time, and whether it was ever recorded), so
// that event_elapsed_ms can answer INVALID_STATE as the ABI asks.
struct Event {
  Event(int32_t device, bool timing, rt_event event) : device(device), timing(timing), event(event) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  const int32_t device;
  const bool timing;
  const rt_event event;
  std::atomic<bool> recorded{false};
};

}  // namespace flagos_cudalike
