// A flagos event: a CUDA event of one device, plus what CUDA does not report
// (whether it can time, and whether it was ever recorded), so that
// event_elapsed_ms can answer INVALID_STATE as the ABI asks.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

namespace flagos_cuda {

struct Event {
  Event(int32_t device, bool timing, cudaEvent_t event)
      : device(device), timing(timing), event(event) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  const int32_t device;
  const bool timing;
  const cudaEvent_t event;
  std::atomic<bool> recorded{false};
};

}  // namespace flagos_cuda
