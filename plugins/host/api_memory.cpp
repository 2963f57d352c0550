#include "api.h"
#include "devices.h"
#include "kit.h"
#include "memory.h"
#include "copy.h"
#include "profiler.h"

namespace flagos_host {

flagos_status_t HostPlugin::mem_alloc(flagos_device_t device, uint64_t size, void** ptr) {
  static const char* fn = "mem_alloc";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, ptr, "ptr");
    if (st == FLAGOS_SUCCESS) st = alloc_device(fn, device, size, ptr);
    if (st == FLAGOS_SUCCESS && size > 0 && tracing_memory()) trace_memory(device, *ptr, (int64_t)size);
    return st;
  });
}

flagos_status_t HostPlugin::mem_free(flagos_device_t device, void* ptr) {
  static const char* fn = "mem_free";
  return guarded(fn, [&] {
    flagos_status_t st = check_device(fn, device);
    if (st != FLAGOS_SUCCESS) return st;
    int64_t size = 0;
    Endpoint e;
    if (ptr != nullptr && tracing_memory() &&
        resolve_device(fn, "ptr", ptr, 1, device, &e) == FLAGOS_SUCCESS)
      size = (int64_t)e.block->size;
    st = free_device(fn, device, ptr);
    if (st == FLAGOS_SUCCESS && size > 0) trace_memory(device, ptr, -size);
    return st;
  });
}

flagos_status_t HostPlugin::host_alloc(uint64_t size, void** ptr) {
  static const char* fn = "host_alloc";
  return guarded(fn, [&] {
    flagos_status_t st = kit::need(fn, ptr, "ptr");
    return st != FLAGOS_SUCCESS ? st : alloc_pinned(fn, size, ptr);
  });
}

flagos_status_t HostPlugin::host_free(void* ptr) {
  return guarded("host_free", [&] { return free_pinned("host_free", ptr); });
}

flagos_status_t HostPlugin::pointer_get_attributes(const void* ptr, int32_t* kind,
                                                   flagos_device_t* device) {
  static const char* fn = "pointer_get_attributes";
  return guarded(fn, [&] {
    flagos_status_t st = kit::need(fn, kind, "kind");
    if (st == FLAGOS_SUCCESS) st = kit::need(fn, device, "device");
    if (st != FLAGOS_SUCCESS) return st;
    std::shared_ptr<Block> b = ptr != nullptr ? find_block(ptr) : nullptr;
    if (!b) {
      *kind = FLAGOS_POINTER_UNKNOWN;
      *device = -1;
    } else if (b->kind == BlockKind::kDevice) {
      *kind = FLAGOS_POINTER_DEVICE;
      *device = b->device;
    } else {
      *kind = FLAGOS_POINTER_PINNED_HOST;
      *device = -1;
    }
    return FLAGOS_SUCCESS;
  });
}

}  // namespace flagos_host
