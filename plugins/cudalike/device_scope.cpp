#include "device_scope.h"

#include "devices.h"
#include "driver_state.h"
#include "errors.h"
#include "flagos/kit/fork_guard.hpp"

namespace flagos_cudalike {
namespace {

// The device set_device chose while it had no context (-1: none pending).
thread_local int32_t t_pending = -1;

}  // namespace

flagos_status_t current_device(const char* fn, int32_t* device) {
  if (t_pending >= 0) {
    *device = t_pending;
    return FLAGOS_SUCCESS;
  }
  // Before the plugin used the runtime, asking it would initialise it here
  // (see probe.h); a thread that chose nothing is on device 0.
  if (device_count() == 0 || !flagos::kit::fork_guard().used()) {
    *device = 0;
    return FLAGOS_SUCCESS;
  }
  flagos_status_t st = runtime_ready(fn);
  if (st != FLAGOS_SUCCESS) return st;
  int rt_device = 0;
  int err = rt().get_device(&rt_device);
  if (err != 0) return rt_fail(fn, err, "GetDevice");
  *device = rt_device;
  return FLAGOS_SUCCESS;
}

flagos_status_t set_current_device(const char* fn, int32_t device) {
  if (!flagos::kit::fork_guard().used()) {
    t_pending = device;
    return FLAGOS_SUCCESS;
  }
  flagos_status_t st = runtime_ready(fn);
  if (st != FLAGOS_SUCCESS) return st;
  if (!primary_context_active(device)) {
    t_pending = device;
    return FLAGOS_SUCCESS;
  }
  int err = rt().set_device(device);
  if (err != 0) return rt_fail(fn, err, "SetDevice(%d)", device);
  t_pending = -1;
  return FLAGOS_SUCCESS;
}

flagos_status_t DeviceScope::enter(const char* fn, int32_t device) {
  flagos_status_t st = runtime_ready(fn);
  if (st != FLAGOS_SUCCESS) return st;
  int current = 0;
  int err = rt().get_device(&current);
  if (err != 0) return rt_fail(fn, err, "GetDevice");
  if (current != device) {
    err = rt().set_device(device);
    if (err != 0) return rt_fail(fn, err, "SetDevice(%d)", device);
    previous_ = current;
  }
  device_ = device;
  return FLAGOS_SUCCESS;
}

DeviceScope::~DeviceScope() {
  if (device_ < 0) return;
  // The thread's chosen device now has a context and is the runtime's current one.
  if (t_pending == device_) {
    t_pending = -1;
    return;
  }
  if (previous_ < 0) return;
  if (primary_context_active(previous_)) {
    if (rt().set_device(previous_) != 0) rt().get_last_error();
  } else if (t_pending < 0) {
    t_pending = previous_;  // remembered instead of creating its context
  }
}

}  // namespace flagos_cudalike
