// The engine observer behind the activity API: at enqueue it takes a
// correlation id and writes the external-correlation records; it wraps the op
// so that, when the op has run on its stream, its MEMCPY or MEMSET record is
// written with the times it ran. Kernels: the engine runs none, and host
// functions are not kernels (CUPTI does not record them), so none are written.
#pragma once

#include <atomic>
#include <mutex>

#include "../engine/observer.h"
#include "buffers.h"

namespace simrt::activity {

class Tracer final : public OpObserver {
 public:
  // One per library, never destroyed: stream workers may run its wrappers at exit.
  static Tracer& get();

  // Enables or disables `kind`; the first enable starts observing the
  // runtime instance `key`.
  void enable(const char* key, int kind, bool on);
  Buffers& buffers() { return buffers_; }

  std::function<void()> enqueued(const OpDesc& op, std::function<void()> fn) override;

 private:
  bool enabled(int kind) const { return (enabled_.load() >> kind) & 1; }

  std::atomic<uint64_t> enabled_{0};  // bit k: CUpti_ActivityKind k (all < 64)
  std::once_flag observing_;
  Buffers buffers_;
};

}  // namespace simrt::activity
