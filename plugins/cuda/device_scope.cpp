#include "device_scope.h"

#include <cuda_runtime_api.h>

#include "devices.h"
#include "driver_state.h"
#include "errors.h"
#include "fork_guard.h"

namespace flagos_cuda {
namespace {

// The device set_device chose while it had no context (-1: none pending).
thread_local int32_t t_pending = -1;

}  // namespace

flagos_status_t current_device(const char* fn, int32_t* device) {
  if (t_pending >= 0) {
    *device = t_pending;
    return FLAGOS_SUCCESS;
  }
  // Before the plugin used the runtime, asking CUDA would initialise it here
  // (see fork_guard.h); a thread that chose nothing is on device 0.
  if (device_count() == 0 || !runtime_used()) {
    *device = 0;
    return FLAGOS_SUCCESS;
  }
  int cuda_device = 0;
  cudaError_t err = cudaGetDevice(&cuda_device);
  if (err != cudaSuccess) return cuda_fail(fn, err, "cudaGetDevice");
  *device = cuda_device;
  return FLAGOS_SUCCESS;
}

flagos_status_t set_current_device(const char* fn, int32_t device) {
  if (!runtime_used()) {
    t_pending = device;
    return FLAGOS_SUCCESS;
  }
  flagos_status_t st = runtime_ready(fn);
  if (st != FLAGOS_SUCCESS) return st;
  if (!primary_context_active(device)) {
    t_pending = device;
    return FLAGOS_SUCCESS;
  }
  cudaError_t err = cudaSetDevice(device);
  if (err != cudaSuccess) return cuda_fail(fn, err, "cudaSetDevice(%d)", device);
  t_pending = -1;
  return FLAGOS_SUCCESS;
}

flagos_status_t DeviceScope::enter(const char* fn, int32_t device) {
  flagos_status_t st = runtime_ready(fn);
  if (st != FLAGOS_SUCCESS) return st;
  int current = 0;
  cudaError_t err = cudaGetDevice(&current);
  if (err != cudaSuccess) return cuda_fail(fn, err, "cudaGetDevice");
  if (current != device) {
    err = cudaSetDevice(device);
    if (err != cudaSuccess) return cuda_fail(fn, err, "cudaSetDevice(%d)", device);
    previous_ = current;
  }
  device_ = device;
  return FLAGOS_SUCCESS;
}

DeviceScope::~DeviceScope() {
  if (device_ < 0) return;
  // The thread's chosen device now has a context and is CUDA's current one.
  if (t_pending == device_) {
    t_pending = -1;
    return;
  }
  if (previous_ < 0) return;
  if (primary_context_active(previous_)) {
    if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
  } else if (t_pending < 0) {
    t_pending = previous_;  // remembered instead of creating its context
  }
}

}  // namespace flagos_cuda
