#include "api.h"
#include "device_scope.h"
#include "devices.h"
#include "driver_state.h"
#include "errors.h"
#include "flagos/kit/checks.hpp"
#include "flagos/kit/properties.hpp"

namespace flagos_cudalike {

using flagos::kit::need;

const char* Plugin::last_error_message() { return flagos::kit::last_error(); }

flagos_status_t Plugin::device_count(int32_t* count) {
  static const char* fn = "device_count";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, count, "count");
    if (st == FLAGOS_SUCCESS) *count = flagos_cudalike::device_count();
    return st;
  });
}

flagos_status_t Plugin::get_device_properties(flagos_device_t device, flagos_device_properties_t* props) {
  static const char* fn = "get_device_properties";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    return st != FLAGOS_SUCCESS ? st : flagos::kit::write_properties(fn, properties(device), props);
  });
}

flagos_status_t Plugin::get_device(flagos_device_t* device) {
  static const char* fn = "get_device";
  return guarded(fn, [&] {
    flagos_status_t st = need(fn, device, "device");
    return st == FLAGOS_SUCCESS ? current_device(fn, device) : st;
  });
}

flagos_status_t Plugin::set_device(flagos_device_t device) {
  static const char* fn = "set_device";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    return st != FLAGOS_SUCCESS ? st : set_current_device(fn, device);
  });
}

flagos_status_t Plugin::device_synchronize(flagos_device_t device) {
  static const char* fn = "device_synchronize";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    DeviceScope scope;
    if (st == FLAGOS_SUCCESS) st = runtime_ready(fn);
    if (st != FLAGOS_SUCCESS) return st;
    // No context: nothing was ever enqueued there, and synchronizing would create one.
    if (!primary_context_active(device)) return FLAGOS_SUCCESS;
    st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    int err = rt().device_synchronize();
    return err == 0 ? FLAGOS_SUCCESS : rt_fail(fn, err, "DeviceSynchronize (device %d)", device);
  });
}

flagos_status_t Plugin::mem_get_info(flagos_device_t device, uint64_t* free_bytes, uint64_t* total_bytes) {
  static const char* fn = "mem_get_info";
  return guarded(fn, [&] {
    DeviceScope scope;
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = need(fn, free_bytes, "free_bytes");
    if (st == FLAGOS_SUCCESS) st = need(fn, total_bytes, "total_bytes");
    if (st == FLAGOS_SUCCESS) st = scope.enter(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    size_t free_now = 0, total = 0;
    int err = rt().mem_get_info(&free_now, &total);
    if (err != 0) return rt_fail(fn, err, "MemGetInfo (device %d)", device);
    *free_bytes = free_now;
    *total_bytes = total;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t Plugin::device_can_access_peer(flagos_device_t device, flagos_device_t peer,
                                               int32_t* can_access) {
  static const char* fn = "device_can_access_peer";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, peer);
    if (st == FLAGOS_SUCCESS) st = need(fn, can_access, "can_access");
    if (st == FLAGOS_SUCCESS) *can_access = can_access_peer(device, peer);
    return st;
  });
}

}  // namespace flagos_cudalike
