#include "driver_state.h"

#include <dlfcn.h>

#include <string>

#include "errors.h"
#include "vendor.h"

namespace flagos_cudalike {

bool driver_initialised_here() {
  const Vendor& v = vendor();
  if (v.driver.sonames == nullptr) return false;
  using DeviceGetCount = int (*)(int*);
  const std::string symbol = std::string(v.driver_prefix) + "DeviceGetCount";
  for (const char* const* soname = v.driver.sonames; *soname != nullptr; ++soname) {
    void* lib = dlopen(*soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib == nullptr) continue;
    auto count_fn = reinterpret_cast<DeviceGetCount>(dlsym(lib, symbol.c_str()));
    int count = 0;
    // Before the driver's init call this fails (CUDA_ERROR_NOT_INITIALIZED).
    const bool initialised = count_fn != nullptr && count_fn(&count) == 0;
    dlclose(lib);
    return initialised;
  }
  return false;
}

bool primary_context_active(int device) {
  const Runtime& r = rt();
  if (r.drv_primary_ctx_get_state == nullptr) return true;
  int handle = device;
  unsigned flags = 0;
  int active = 0;
  if (r.drv_device_get != nullptr && r.drv_device_get(&handle, device) != 0) return true;
  if (r.drv_primary_ctx_get_state(handle, &flags, &active) != 0) return true;
  return active != 0;
}

}  // namespace flagos_cudalike
