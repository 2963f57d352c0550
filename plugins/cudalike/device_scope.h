// The calling thread's current device, and the scoped switch every call on an
// explicit device runs in. The current device is the runtime's (GetDevice),
// so flagos and a vendor torch agree on it, except that set_device to a
// device with no context yet is only remembered for the thread (SetDevice
// would create the context, and set_device must be lazy); it becomes the
// runtime's current device at the first call that uses that device.
#pragma once

#include "flagos/abi.h"

namespace flagos_cudalike {

// The thread's current device (0 on a fresh thread). Lock-free.
flagos_status_t current_device(const char* fn, int32_t* device);
// `device` must be valid.
flagos_status_t set_current_device(const char* fn, int32_t device);

// Makes a device the runtime's current one until the scope ends, then gives
// the caller back its current device without creating a context for it.
class DeviceScope {
 public:
  DeviceScope() = default;
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope();

  // Checks that the runtime is usable here (runtime_ready) and switches. On
  // failure the scope is inert and the status (with message) is returned.
  flagos_status_t enter(const char* fn, int32_t device);

 private:
  int32_t device_ = -1;
  int32_t previous_ = -1;  // the runtime's current device before enter, if it differed
};

}  // namespace flagos_cudalike
