// Events. Each event_record makes a new Marker, enqueued on the stream; the
// event points at its latest marker, so re-recording replaces the captured
// point while waits already enqueued keep the marker they captured. Markers
// are shared, so destroying an event with a record pending is harmless.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "flagos/abi.h"

namespace flagos_host {

class Capture;  // capture.h

using Clock = std::chrono::steady_clock;

// One recorded point in a stream.
class Marker {
 public:
  explicit Marker(uint64_t generation) : generation_(generation) {}
  uint64_t generation() const { return generation_; }

  // Called by the worker when the stream reaches the marker.
  void complete(flagos_status_t stream_status);
  bool done();
  // Blocks until done; returns the stream's sticky status at that point.
  flagos_status_t wait();
  // Valid once done().
  Clock::time_point when();
  flagos_status_t status();

 private:
  const uint64_t generation_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Clock::time_point when_;
  flagos_status_t status_ = FLAGOS_SUCCESS;
};

class Event {
 public:
  Event(int32_t device, uint32_t flags) : device_(device), flags_(flags) {}
  int32_t device() const { return device_; }
  bool timing() const;

  // A fresh marker for the next record (the generation counts records).
  std::shared_ptr<Marker> next_marker();
  // Makes `m` the captured point, unless a newer record already published.
  void publish(std::shared_ptr<Marker> m);
  // The latest captured point, or null when never recorded.
  std::shared_ptr<Marker> latest();

  // Stream capture: event_record on a capturing stream. Until a launch
  // records it (publish), the event reads as never recorded.
  void record_in_capture(const std::shared_ptr<Capture>& capture);
  // The capture holding the latest record while it is still underway, or null.
  std::shared_ptr<Capture> capture_underway();

 private:
  const int32_t device_;
  const uint32_t flags_;
  std::mutex mu_;
  uint64_t generation_ = 0;
  std::shared_ptr<Marker> latest_;
  std::weak_ptr<Capture> captured_;  // the capture of the latest record, if any
};

}  // namespace flagos_host
