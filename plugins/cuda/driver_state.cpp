#include "driver_state.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>

#if CUDART_VERSION < 12000
#error "plugins/cuda needs the CUDA 12.0 runtime or newer"
#endif

namespace flagos_cuda {
namespace {

// Driver API signatures (cuda.h), declared here so that only the runtime is
// needed to build: CUresult is an int-sized enum and CUdevice an int.
using CuDeviceGetCount = int (*)(int* count);
using CuDeviceGet = int (*)(int* device, int ordinal);
using CuDevicePrimaryCtxGetState = int (*)(int device, unsigned int* flags, int* active);

constexpr int kCudaSuccess = 0;

struct DriverEntries {
  CuDeviceGet device_get = nullptr;
  CuDevicePrimaryCtxGetState primary_ctx_get_state = nullptr;
};

void* entry_point(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  // 12000: the signatures above, which have not changed since CUDA 12.0.
  cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found);
#else
  cudaError_t err = cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &found);
#endif
  if (err != cudaSuccess) cudaGetLastError();
  return err == cudaSuccess && found == cudaDriverEntryPointSuccess ? fn : nullptr;
}

const DriverEntries& entries() {
  static DriverEntries e;
  static std::once_flag once;
  std::call_once(once, [] {
    e.device_get = reinterpret_cast<CuDeviceGet>(entry_point("cuDeviceGet"));
    e.primary_ctx_get_state =
        reinterpret_cast<CuDevicePrimaryCtxGetState>(entry_point("cuDevicePrimaryCtxGetState"));
  });
  return e;
}

}  // namespace

bool driver_initialised_here() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  auto count_fn = reinterpret_cast<CuDeviceGetCount>(dlsym(lib, "cuDeviceGetCount"));
  int count = 0;
  // Before cuInit this returns CUDA_ERROR_NOT_INITIALIZED.
  bool initialised = count_fn != nullptr && count_fn(&count) == kCudaSuccess;
  dlclose(lib);
  return initialised;
}

bool primary_context_active(int device) {
  const DriverEntries& e = entries();
  if (e.device_get == nullptr || e.primary_ctx_get_state == nullptr) return true;
  int handle = 0;
  unsigned int flags = 0;
  int active = 0;
  if (e.device_get(&handle, device) != kCudaSuccess) return true;
  if (e.primary_ctx_get_state(handle, &flags, &active) != kCudaSuccess) return true;
  return active != 0;
}

}  // namespace flagos_cuda
