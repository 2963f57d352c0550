#include "pointers.h"

#include <cuda_runtime_api.h>

#include "errors.h"

namespace flagos_cuda {

Pointer classify(const void* p) {
  Pointer out;
  if (p == nullptr) return out;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // older runtimes fail for unregistered host memory
    return out;
  }
  switch (a.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
      out.memory = Memory::kDevice;
      out.device = a.device;
      break;
    case cudaMemoryTypeHost:
      out.memory = Memory::kPinned;
      break;
    default:
      break;
  }
  return out;
}

flagos_status_t expect_device(const char* fn, const char* what, const void* p, int32_t device) {
  Pointer ptr = classify(p);
  if (ptr.memory != Memory::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is not device memory", fn, what, p);
  if (ptr.device != device)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is memory of device %d, not of device %d",
                fn, what, p, ptr.device, device);
  return FLAGOS_SUCCESS;
}

flagos_status_t expect_host(const char* fn, const char* what, const void* p, bool* pinned) {
  Pointer ptr = classify(p);
  if (ptr.memory == Memory::kDevice)
    return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: %s %p is device memory (of device %d), not host memory",
                fn, what, p, ptr.device);
  *pinned = ptr.memory == Memory::kPinned;
  return FLAGOS_SUCCESS;
}

}  // namespace flagos_cuda
