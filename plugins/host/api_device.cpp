#include <string>

#include "api.h"
#include "devices.h"
#include "errors.h"
#include "fork_guard.h"
#include "handles.h"
#include "memory.h"
#include "options.h"

namespace flagos_host {

const char* api_last_error_message() { return last_error(); }

flagos_status_t api_device_count(int32_t* count) {
  return guarded("device_count", [&] {
    if (count == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "device_count: count is NULL");
    *count = device_count();
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_get_device_properties(flagos_device_t device,
                                          flagos_device_properties_t* props) {
  static const char* fn = "get_device_properties";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    if (props == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: props is NULL", fn);
    if (props->struct_size < sizeof(size_t))
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: props->struct_size %zu is too small", fn,
                  props->struct_size);
    fill_properties(device, props);
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_get_device(flagos_device_t* device) {
  return guarded("get_device", [&] {
    if (device == nullptr) return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "get_device: device is NULL");
    *device = current_device();
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_set_device(flagos_device_t device) {
  return guarded("set_device", [&] {
    flagos_status_t st = check_device("set_device", device);
    if (st == FLAGOS_SUCCESS) set_current_device(device);
    return st;
  });
}

flagos_status_t api_device_synchronize(flagos_device_t device) {
  static const char* fn = "device_synchronize";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = require_workers(fn);
    if (st != FLAGOS_SUCCESS) return st;
    flagos_status_t first = FLAGOS_SUCCESS;
    std::string message;  // later streams' failures must not overwrite the first
    for (auto& s : device_streams(device)) {
      st = s->synchronize(fn);
      if (st != FLAGOS_SUCCESS && first == FLAGOS_SUCCESS) {
        first = st;
        message = last_error();
      }
    }
    return first == FLAGOS_SUCCESS ? first : fail(first, "%s", message.c_str());
  });
}

flagos_status_t api_mem_get_info(flagos_device_t device, uint64_t* free_bytes,
                                 uint64_t* total_bytes) {
  static const char* fn = "mem_get_info";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    if (free_bytes == nullptr || total_bytes == nullptr)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: free_bytes or total_bytes is NULL", fn);
    uint64_t total = options().capacity_bytes;
    uint64_t used = used_bytes(device);
    *free_bytes = used < total ? total - used : 0;
    *total_bytes = total;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t api_device_can_access_peer(flagos_device_t device, flagos_device_t peer,
                                           int32_t* can_access) {
  static const char* fn = "device_can_access_peer";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, peer);
    if (st != FLAGOS_SUCCESS) return st;
    if (can_access == nullptr)
      return fail(FLAGOS_ERROR_INVALID_ARGUMENT, "%s: can_access is NULL", fn);
    *can_access = device != peer ? 1 : 0;  // all host devices share RAM
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_host
