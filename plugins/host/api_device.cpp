#include <string>

#include "api.h"
#include "devices.h"
#include "flagos/kit/fork_guard.hpp"
#include "flagos/kit/properties.hpp"
#include "handles.h"
#include "kit.h"
#include "memory.h"
#include "options.h"

namespace flagos_host {

const char* HostPlugin::last_error_message() { return last_error(); }

flagos_status_t HostPlugin::device_count(int32_t* count) {
  return guarded("device_count", [&] {
    flagos_status_t st = kit::need("device_count", count, "count");
    if (st == FLAGOS_SUCCESS) *count = flagos_host::device_count();
    return st;
  });
}

flagos_status_t HostPlugin::get_device_properties(flagos_device_t device,
                                                  flagos_device_properties_t* props) {
  static const char* fn = "get_device_properties";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    return st != FLAGOS_SUCCESS ? st : kit::write_properties(fn, properties(device), props);
  });
}

flagos_status_t HostPlugin::get_device(flagos_device_t* device) {
  return guarded("get_device", [&] {
    flagos_status_t st = kit::need("get_device", device, "device");
    if (st == FLAGOS_SUCCESS) *device = current_device();
    return st;
  });
}

flagos_status_t HostPlugin::set_device(flagos_device_t device) {
  return guarded("set_device", [&] {
    flagos_status_t st = check_device("set_device", device);
    if (st == FLAGOS_SUCCESS) set_current_device(device);
    return st;
  });
}

flagos_status_t HostPlugin::device_synchronize(flagos_device_t device) {
  static const char* fn = "device_synchronize";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::fork_guard().check(fn);
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

flagos_status_t HostPlugin::mem_get_info(flagos_device_t device, uint64_t* free_bytes,
                                         uint64_t* total_bytes) {
  static const char* fn = "mem_get_info";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, free_bytes, "free_bytes");
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, total_bytes, "total_bytes");
    if (st != FLAGOS_SUCCESS) return st;
    uint64_t total = options().capacity_bytes;
    uint64_t used = used_bytes(device);
    *free_bytes = used < total ? total - used : 0;
    *total_bytes = total;
    return FLAGOS_SUCCESS;
  });
}

flagos_status_t HostPlugin::device_can_access_peer(flagos_device_t device, flagos_device_t peer,
                                                   int32_t* can_access) {
  static const char* fn = "device_can_access_peer";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = check_device(fn, peer);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, can_access, "can_access");
    if (st != FLAGOS_SUCCESS) return st;
    *can_access = device != peer ? 1 : 0;  // all host devices share RAM
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_host
