#include "stream.h"

#include "errors.h"

namespace flagos_cuda {

flagos_status_t Stream::cuda(const char* fn, cudaStream_t* out) {
  cudaStream_t s = existing();
  if (s == nullptr) {
    std::lock_guard<std::mutex> lock(create_mutex_);
    s = stream_.load(std::memory_order_relaxed);
    if (s == nullptr) {
      // Priority 0 is the normal (lowest) priority, as torch's default stream.
      cudaError_t err = cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0);
      if (err != cudaSuccess)
        return cuda_fail(fn, err, "cudaStreamCreateWithPriority (default stream of device %d)",
                         device_);
      stream_.store(s, std::memory_order_release);
    }
  }
  *out = s;
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_cuda
