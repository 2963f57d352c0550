// A flagos stream: a device and a CUDA stream. Every stream is created with
// cudaStreamNonBlocking, the device's default stream too: work the core or
// torch's CUDA kernels put on a flagos stream never synchronizes implicitly
// with CUDA's legacy NULL stream.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "device_scope.h"
#include "flagos/abi.h"

namespace flagos_cuda {

class Stream {
 public:
  // A created stream (stream_create made `created`).
  Stream(int32_t device, cudaStream_t created) : device_(device), is_default_(false), stream_(created) {}
  // A device's default stream: its CUDA stream is made at first use, because
  // get_default_stream must not create a device context.
  explicit Stream(int32_t device) : device_(device), is_default_(true), stream_(nullptr) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int32_t device() const { return device_; }
  bool is_default() const { return is_default_; }

  // The CUDA stream, made now for a default stream never used before. Call
  // inside a DeviceScope of device().
  flagos_status_t cuda(const char* fn, cudaStream_t* out);
  // For calls that enqueue work: makes device() current for `scope` and
  // gives the CUDA stream (see cuda()).
  flagos_status_t enter(const char* fn, DeviceScope& scope, cudaStream_t* out) {
    flagos_status_t st = scope.enter(fn, device_);
    return st == FLAGOS_SUCCESS ? cuda(fn, out) : st;
  }
  // The CUDA stream if it exists; nullptr for an unused default stream, on
  // which nothing can be pending.
  cudaStream_t existing() const { return stream_.load(std::memory_order_acquire); }

 private:
  const int32_t device_;
  const bool is_default_;
  std::atomic<cudaStream_t> stream_;
  std::mutex create_mutex_;
};

}  // namespace flagos_cuda
