#include <cuda_runtime_api.h>

#include <atomic>

#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "errors.h"
#include "fork_guard.h"
#include "pointers.h"

namespace flagos_cuda {
namespace {

// Until the first allocation no pointer can be ours, and classifying one
// would initialise CUDA for nothing.
std::atomic<bool> g_allocated{false};

}  // namespace

flagos_status_t api_mem_alloc(flagos_device_t device, uint64_t size, void** ptr) {
  static const char* fn = "mem_alloc";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, ptr, "ptr");
    if (st != FLAGOS_SUCCESS) return st;
    if (size == 0) {
      *ptr = nullptr;
      return FLAGOS_SUCCESS;
    }
    // Also keeps sizes that overflow CUDA's rounding away from cudaMalloc.
    uint64_t total = properties(device).total_memory;
    if (size > total)
      return fail(FLAGOS_ERROR_OUT_OF_MEMORY, "%s: %llu bytes requested on device %d, which has %llu in all",
                  fn, static_cast<unsigned long long>(size), device, static_cast<unsigned long long>(total));
    DeviceScope scope;
    st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, size);
    if (err != cudaSuccess)
      return cuda_fail(fn, err, "cudaMalloc(%llu bytes) on device %d", static_cast<unsigned long long>(size),
                       device);
    g_allocated.store(true);
    *ptr = p;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_mem_free(flagos_device_t device, void* ptr) {
  static const char* fn = "mem_free";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st != FLAGOS_SUCCESS || ptr == nullptr) return st;
    DeviceScope scope;
    st = scope.enter(fn, device);
    if (st == FLAGOS_SUCCESS) st = expect_device(fn, "ptr", ptr, device);
    if (st != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaFree(ptr);  // waits for work still using the block
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaFree(%p) on device %d", ptr, device);
  });
}

flagos_status_t api_host_alloc(uint64_t size, void** ptr) {
  static const char* fn = "host_alloc";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, ptr, "ptr");
    if (st != FLAGOS_SUCCESS) return st;
    if (size == 0) {
      *ptr = nullptr;
      return FLAGOS_SUCCESS;
    }
    if (device_count() == 0)
      return fail(FLAGOS_ERROR_RUNTIME_UNAVAILABLE, "%s: no CUDA device, so no page-locked memory", fn);
    // Page-locking needs a context: the caller's current device's. Portable
    // memory is then usable by async copies on every device.
    int32_t device = 0;
    st = current_device(fn, &device);
    DeviceScope scope;
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return fail(FLAGOS_ERROR_OUT_OF_HOST_MEMORY, "%s: cudaHostAlloc(%llu bytes) failed: %s", fn,
                  static_cast<unsigned long long>(size), cudaGetErrorString(err));
    }
    if (err != cudaSuccess)
      return cuda_fail(fn, err, "cudaHostAlloc(%llu bytes)", static_cast<unsigned long long>(size));
    g_allocated.store(true);
    *ptr = p;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_host_free(void* ptr) {
  static const char* fn = "host_free";
  return guarded(fn, [&] {
    if (ptr == nullptr) return FLAGOS_SUCCESS;
    flagos_status_t st = runtime_ready(fn);
    if (st != FLAGOS_SUCCESS) return st;
    cudaError_t err = cudaFreeHost(ptr);
    return err == cudaSuccess ? FLAGOS_SUCCESS : cuda_fail(fn, err, "cudaFreeHost(%p)", ptr);
  });
}

flagos_status_t api_pointer_get_attributes(const void* ptr, int32_t* kind, flagos_device_t* device) {
  static const char* fn = "pointer_get_attributes";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, kind, "kind");
    if (st == FLAGOS_SUCCESS) st = need(fn, device, "device");
    Pointer p;
    if (st == FLAGOS_SUCCESS && ptr != nullptr && g_allocated.load()) {
      st = runtime_ready(fn);
      if (st == FLAGOS_SUCCESS) p = classify(ptr);
    }
    if (st != FLAGOS_SUCCESS) return st;
    *kind = p.memory == Memory::kDevice   ? FLAGOS_POINTER_DEVICE
            : p.memory == Memory::kPinned ? FLAGOS_POINTER_PINNED_HOST
                                          : FLAGOS_POINTER_UNKNOWN;
    *device = p.memory == Memory::kDevice ? p.device : -1;
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_cuda
